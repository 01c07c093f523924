/**
 * Waiting for something that happens on its own (a process exits, a socket
 * closes), polled with a bound: real peers, so real time, never a fixed sleep.
 */
import { Effect } from "effect"

/** Runs `effect` until `check` holds, 10 ms apart, at most 200 times; dies if it never does. */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 200; attempt++) {
      const value = yield* effect
      if (check(value)) return value
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.die(new Error("condition never held"))
  })

/** Waits until `check()` holds (10 ms apart, at most 2 s), then asserts it. */
export const waitFor = (check: () => boolean) => Effect.asVoid(eventually(Effect.sync(check), (held) => held))
