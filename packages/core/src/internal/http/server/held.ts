/**
 * Held calls in a cluster: a 2026-07-28 retry whose sealed `requestState`
 * names a call held by another replica is served by that replica (forwarded
 * through the session registry, its answer streamed back), wherever the load
 * balancer sent it. When the holder is gone, its call ended with it: the
 * retry is answered at once with an error saying so, and whether sending the
 * request again is safe (the state says whether the call was idempotent);
 * nothing is run again here.
 *
 * Only a state that opens with this server's key (the cluster's shared
 * secret) is followed; any other is left to the server's usual refusal.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import * as McpError from "../../../McpError.ts"
import * as Bearer from "../../auth/bearer.ts"
import * as RequestState from "../../era/requestState.ts"
import { MCP_METHOD } from "../standardHeaders.ts"
import * as Cluster from "./cluster.ts"
import * as Responses from "./responses.ts"
import { SESSION_ID } from "./sessions.ts"
import type * as State from "./state.ts"

const decoder = new TextDecoder()

interface Retry {
  readonly id: JsonRpc.RequestId
  readonly method: string
  readonly params: Record<string, unknown>
  readonly requestState: string
}

// a modern request retrying with a requestState, or nothing
const retryOf = (bytes: ArrayBuffer): Retry | undefined => {
  const text = decoder.decode(bytes)
  // most requests are not retries: no parse for them
  if (!text.includes("\"requestState\"")) return undefined
  const parsed = Result.try(() => JSON.parse(text) as unknown)
  if (Result.isFailure(parsed) || typeof parsed.success !== "object" || parsed.success === null) return undefined
  const message = parsed.success as Record<string, unknown>
  const params = message.params as Record<string, unknown> | undefined
  const id = message.id
  if (typeof message.method !== "string" || typeof params !== "object" || params === null) return undefined
  if (typeof id !== "string" && typeof id !== "number") return undefined
  return typeof params.requestState === "string"
    ? { id, method: message.method, params, requestState: params.requestState }
    : undefined
}

/**
 * Where a modern POST is served: `undefined` when here; else the answer of
 * the replica holding the call it retries (or the error saying that replica
 * is gone).
 *
 * @internal
 */
export const locate = (
  state: State.State,
  request: HttpServerRequest.HttpServerRequest,
  auth: McpAuth.AuthInfo | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined, never, Scope.Scope> => {
  const registry = state.registry
  if (
    registry === undefined || request.method !== "POST" || request.headers[SESSION_ID] !== undefined ||
    request.headers[MCP_METHOD] === undefined
  ) return Effect.succeed(undefined)
  return Effect.gen(function*() {
    const bytes = yield* Effect.option(
      Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, state.maxBody)
    )
    const retry = bytes._tag === "Some" ? retryOf(bytes.value) : undefined
    if (retry === undefined) return undefined
    const holder = RequestState.peekHolder(retry.requestState)
    if (holder === undefined || holder === registry.replicaId) return undefined
    // followed only when it opens: a forged or foreign state is refused where it landed
    const opened = yield* Effect.exit(RequestState.open(state.server.sealingKey, retry.requestState, {
      request: RequestState.requestDigest(retry.method, retry.params),
      principal: Bearer.principal(auth),
      now: state.clock.currentTimeMillisUnsafe()
    }))
    if (Exit.isFailure(opened)) return undefined
    // a retry may be sent again (the held call runs once whatever comes): a connection that failed
    // (a reused one to a replica just killed) is tried once more, which finds the holder gone
    const forward = Cluster.forward(state, registry, holder, request)
    return yield* forward.pipe(
      Effect.catchIf((error) => !isUnavailable(error), () => forward),
      Effect.catch((error: unknown) =>
        Effect.succeed(
          isUnavailable(error)
            ? holderGone(retry, holder, opened.value.idempotent === true)
            : Responses.error(
              200,
              JsonRpc.ErrorCode.ServerError,
              `the retry could not be served by replica ${holder}, which holds the call (it may have ended with it): ${
                McpError.messageOf(error)
              }`,
              { id: retry.id, data: { holder } }
            )
        )
      )
    )
  })
}

const isUnavailable = (error: unknown): boolean =>
  McpError.isMcpError(error) && error.reason._tag === "ServerUnavailableError"

const holderGone = (retry: Retry, holder: string, idempotent: boolean): HttpServerResponse.HttpServerResponse => {
  const what = retry.method === "tools/call" && typeof retry.params.name === "string"
    ? `tool ${JSON.stringify(retry.params.name)}`
    : retry.method
  const advice = idempotent
    ? `${what} is marked idempotent: sending the request again without requestState is safe`
    : `it may have had effects before it ended: send the request again without requestState only if that is safe`
  // a handler's answer (status 200), as when the held call expires
  return Responses.error(
    200,
    JsonRpc.ErrorCode.InvalidParams,
    `Invalid params: requestState names a call held by replica ${holder}, which is gone: the call ended with it and was not run again; ${advice}`,
    { id: retry.id, data: { holder, idempotent } }
  )
}
