/**
 * What an HTTP route answers when its handling dies: a fixed response
 * without detail, the cause in the server log. Interruption is passed on.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"

/** `handler`, with a defect answered by `response()` and logged under `message`. @internal */
export const answerDefects = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  request: HttpServerRequest.HttpServerRequest,
  message: string,
  response: () => HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  Effect.catchCause(
    handler,
    (cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) as Effect.Effect<never> : Effect.as(
        Effect.logError(message, cause).pipe(Effect.annotateLogs({ method: request.method, url: request.url })),
        response()
      )
  )
