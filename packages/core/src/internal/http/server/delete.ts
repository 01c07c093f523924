/**
 * DELETE: the client ends its session.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import * as Sessions from "./sessions.ts"
import type * as State from "./state.ts"

/** Answers a DELETE: closes the session the request names. @internal */
export const handle: State.Handler = (state, request, auth) =>
  Effect.gen(function*() {
    const found = Sessions.find(state, request.headers, auth)
    if (Result.isFailure(found)) return found.failure
    yield* Sessions.close(state, found.success)
    return HttpServerResponse.empty({ status: 204 })
  })
