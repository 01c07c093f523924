/**
 * The values `McpHttpClient` exports beside its constructors: the status
 * error and the default reconnection schedule. Kept apart from the transport
 * (`client.ts`, loaded when a transport is made) so that importing
 * `McpHttpClient` loads no `effect/http` module.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/** @internal */
export class HttpStatusError extends Data.TaggedError("HttpStatusError")<{
  readonly method: string
  readonly url: string
  readonly status: number
  readonly body: string
}> {
  override get message(): string {
    const body = this.body.trim()
    return `${this.method} ${this.url} answered HTTP ${this.status}${body === "" ? "" : `: ${excerpt(body)}`}`
  }
}

const excerpt = (text: string): string => text.length > 300 ? `${text.slice(0, 300)}…` : text

/** @internal */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
  Schedule.upTo({ times: 5 })
)
