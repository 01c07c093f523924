/**
 * The timeouts of a session's outgoing requests: one sweeper fiber fails the
 * replies whose time is up. It sleeps until the nearest deadline, or until a
 * request with a nearer one wakes it; progress only moves deadlines later,
 * so it never needs to wake it. It is started by the first request: an idle
 * session has none.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as McpError from "../../McpError.ts"
import * as Pending from "./pending.ts"

/** @internal */
export const DEFAULT_TIMEOUT = Duration.seconds(60)

/** @internal */
export const toMillis = (input: Duration.Input | undefined, fallback: Duration.Duration): number => {
  const duration = input === undefined ? fallback : Duration.fromInputUnsafe(input)
  return Duration.isFinite(duration) ? Duration.toMillis(duration) : Infinity
}

/** @internal */
export interface Timeouts {
  /** Runs `effect` once the sweeper is started (started now if it is not). */
  readonly started: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Wakes the sweeper if the entry's deadline is nearer than the one it sleeps to. */
  readonly arm: (entry: Pending.Entry) => void
  /** Restarts the idle limits: this side just answered a request of the peer. */
  readonly answered: () => void
}

/** @internal */
export const make = (options: {
  readonly pending: Pending.Pending
  readonly clock: Clock.Clock
  /** The services the sweeper runs with (it is started from whichever fiber sends first). */
  readonly services: Context.Context<never>
  readonly scope: Scope.Scope
  /**
   * `true` while this side is answering a request of the peer, which the
   * peer may be waiting for: idle limits are then pushed back (a client's
   * call is not failed while its server waits for the client's answer to
   * a sampling or elicitation request); total limits still apply.
   */
  readonly answering?: (() => boolean) | undefined
}): Timeouts => {
  const { answering, clock, pending, scope, services } = options
  let sweepAt = Infinity
  let wake: Deferred.Deferred<void> | undefined
  let sweeping = false

  const expire = (entry: Pending.Entry) => {
    const total = entry.totalDeadline <= entry.lastActivity + entry.idle
    Deferred.doneUnsafe(
      entry.reply,
      Effect.fail(McpError.timeout(entry.method, total ? entry.total : entry.idle, total ? "total" : "idle"))
    )
  }

  const sweep: Effect.Effect<void> = Effect.suspend(() => {
    const now = clock.currentTimeMillisUnsafe()
    let next = Infinity
    for (const entry of Ref.getUnsafe(pending).values()) {
      if (Deferred.isDoneUnsafe(entry.reply)) continue
      let deadline = Pending.deadline(entry)
      if (deadline <= now && entry.totalDeadline > now && answering?.() === true) {
        entry.lastActivity = now
        deadline = Pending.deadline(entry)
      }
      if (deadline <= now) expire(entry)
      else if (deadline < next) next = deadline
    }
    sweepAt = next
    wake = Deferred.makeUnsafe()
    const woken = Deferred.await(wake)
    return Effect.andThen(next === Infinity ? woken : Effect.raceFirst(Effect.sleep(next - now), woken), sweep)
  })

  const arm = (entry: Pending.Entry) => {
    const deadline = Pending.deadline(entry)
    if (deadline < sweepAt) {
      sweepAt = deadline
      if (wake !== undefined) Deferred.doneUnsafe(wake, Effect.void)
    }
  }

  // it scans the pending requests when it starts: those registered before it
  // runs are armed too
  const startSweeper = Effect.suspend(() => {
    if (sweeping) return Effect.void
    sweeping = true
    return Effect.asVoid(Effect.forkIn(Effect.updateContext(sweep, (_: Context.Context<never>) => services), scope))
  })

  const started = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    sweeping ? effect : Effect.andThen(startSweeper, effect)

  // an answer sent to the peer is a sign of life of the exchange: the idle limits start again
  const answered = () => {
    const map = Ref.getUnsafe(pending)
    if (map.size === 0) return
    const now = clock.currentTimeMillisUnsafe()
    for (const entry of map.values()) entry.lastActivity = now
  }

  return { started, arm, answered }
}
