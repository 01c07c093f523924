/**
 * Bearer tokens on the WebSocket server: the check of an opening handshake
 * (the guard of `McpResourceServer`, as on Streamable HTTP), and a
 * transport whose requests carry the handshake's token (`authOf`) and are
 * answered with an error when it lacks a scope their method or tool needs.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpAuth from "../../McpAuth.ts"
import { canonicalResource } from "../../McpAuth.ts"
import type * as McpResourceServer from "../../McpResourceServer.ts"
import { McpTransport } from "../../McpTransport.ts"
import type * as McpWebSocket from "../../McpWebSocket.ts"
import * as Bearer from "../auth/bearer.ts"
import * as Guard from "../http/guard.ts"

/** @internal */
export const makeAuthenticator = (
  options: McpResourceServer.Options,
  resource: string | URL
): Effect.Effect<McpWebSocket.Authenticator> =>
  Clock.clockWith((clock) => {
    const guard = Bearer.make(options, canonicalResource(options.resource ?? resource), clock)
    return Effect.succeed({
      resource: guard.resource,
      metadataUrl: guard.metadataUrl,
      authenticate: (headers, url) => {
        const header = Guard.headerOf(headers)
        return Effect.map(
          guard.authenticate(header("authorization"), { method: "GET", url, proof: header("dpop") }),
          (result): McpWebSocket.Handshake =>
            Bearer.isRefusal(result)
              ? {
                _tag: "Reject",
                status: result.status,
                message: result.message,
                headers: {
                  ...result.headers,
                  ...(result.challenge === undefined ? {} : { "www-authenticate": result.challenge })
                }
              }
              : { _tag: "Accept", auth: result }
        )
      },
      authorize: (auth, message) => guard.authorize(auth, [message])?.message
    })
  })

/**
 * The transport with the handshake's token: `authOf` gives it to every
 * request, and a request the token lacks a scope for is answered with an
 * error instead of reaching the engine.
 *
 * @internal
 */
export const withAuth = (
  transport: McpTransport["Service"],
  auth: McpAuth.AuthInfo,
  authenticator: McpWebSocket.Authenticator | undefined
): McpTransport["Service"] => {
  const refuse = (message: unknown): Effect.Effect<boolean> => {
    if (authenticator === undefined || typeof message !== "object" || message === null) return Effect.succeed(false)
    if (!("method" in message) || !("id" in message)) return Effect.succeed(false)
    const refused = authenticator.authorize(auth, message)
    if (refused === undefined) return Effect.succeed(false)
    const id = (message as { readonly id: JsonRpc.RequestId }).id
    return transport.send(JsonRpc.failure(id, { code: JsonRpc.ErrorCode.ServerError, message: refused })).pipe(
      Effect.ignore,
      Effect.as(true)
    )
  }
  const screen = (frame: unknown): Effect.Effect<unknown> => {
    if (!Array.isArray(frame)) return Effect.map(refuse(frame), (refused) => refused ? undefined : frame)
    return Effect.map(
      Effect.filter(frame, (message) => Effect.map(refuse(message), (refused) => !refused)),
      (kept) => kept.length === 0 ? undefined : kept
    )
  }
  return McpTransport.of({
    ...transport,
    incoming: transport.incoming.pipe(Stream.mapEffect(screen), Stream.filter((frame) => frame !== undefined)),
    authOf: () => auth
  })
}
