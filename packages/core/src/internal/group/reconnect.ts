/**
 * The group's defaults (the reconnection schedule, the liveness settings),
 * apart from the group itself (`group.ts`, loaded when a group is made) so
 * that importing `McpGroup` loads neither the group nor the client.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/** @internal */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
  Schedule.upTo({ times: 10 })
)

/** @internal */
export const defaultLiveness: {
  readonly interval: Duration.Duration
  readonly timeout: Duration.Duration
  readonly maxMissed: number
} = { interval: Duration.seconds(30), timeout: Duration.seconds(10), maxMissed: 2 }
