/**
 * One pub/sub subscription for the life of a scope, kept up: when it fails
 * for good (the connection is lost and not re-established by the client),
 * it subscribes again with backoff. Messages are handled one at a time, in
 * order, by `onMessage`; `onSubscribed` runs each time the subscription is
 * (again) in place, before the first message (to catch up on what was
 * published meanwhile). Used by the relay, the change bus and the task
 * store's watchers.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

const retrySchedule = Schedule.exponential("50 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(2))))
)

/**
 * Subscribes to `channel` in a fiber of the scope; answers once the first
 * subscription is in place (or has failed; the retries go on).
 *
 * @internal
 */
export const subscribe = (
  redis: Redis.Redis["Service"],
  channel: string,
  onMessage: (message: string) => Effect.Effect<void>,
  onSubscribed: Effect.Effect<void> = Effect.void
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ready = yield* Deferred.make<void>()
    const once = Effect.scoped(Effect.gen(function*() {
      const queue = yield* redis.subscribe(channel)
      yield* Deferred.succeed(ready, undefined)
      yield* onSubscribed
      // ends when the subscription fails; interrupted with the scope
      return yield* Effect.forever(Effect.flatMap(Queue.take(queue), (message) => onMessage(message.message)))
    }))
    yield* once.pipe(
      Effect.tapError((error) => Effect.logWarning(`Redis subscription to ${channel} lost; subscribing again`, error)),
      Effect.retry(retrySchedule),
      Effect.forkScoped
    )
    yield* Deferred.await(ready)
  })
