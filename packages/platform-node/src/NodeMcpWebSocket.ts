/**
 * MCP over WebSocket in Node: a standalone server for the `McpServer` in
 * context (on the `ws` package, through `NodeSocketServer`), and the client
 * transport with `ws` as its WebSocket.
 *
 * @since 0.1.0
 */
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpServer from "@effect-mcp/core/McpServer"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import * as McpWebSocket from "@effect-mcp/core/McpWebSocket"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Result from "effect/Result"
import type * as SocketServer from "effect/socket/SocketServer"

/**
 * Where the server listens and what it accepts.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerOptions {
  /** Default `0`: an ephemeral port, read it from `SocketServer.address`. */
  readonly port?: number | undefined
  /** Default `127.0.0.1`. On a loopback host, Host and Origin are checked by default. */
  readonly host?: string | undefined
  /** Accept only handshakes for this path (e.g. `/mcp`). Default: any path. */
  readonly path?: string | undefined
  /** See `McpWebSocket.HandshakeOptions`. */
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  /** See `McpWebSocket.HandshakeOptions`. */
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  /** The largest accepted message, in bytes; a bigger one closes the socket with 1009. Default 4 MiB. */
  readonly maxMessageBytes?: number | undefined
}

const isLoopbackHost = (host: string): boolean => {
  if (host.toLowerCase() === "localhost") return true
  const ip = NetAddress.ipFromString(host.replace(/^\[(.*)\]$/, "$1"))
  return Result.isSuccess(ip) && NetAddress.isLoopback(ip.success)
}

/**
 * A WebSocket server: every accepted socket is one session of the
 * `McpServer` in context, served by `McpWebSocket.serve`. A handshake that
 * does not offer the `mcp` subprotocol is refused with `400`, one whose Host
 * or Origin is not allowed with `403`. Provides the `SocketServer` (for its
 * `address`; do not `run` another handler on it). Closing the scope closes
 * every socket with code 1000, then the server.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerServer = (
  options?: ServerOptions
): Layer.Layer<SocketServer.SocketServer, McpError.McpError, McpServer.McpServer> =>
  // `ws` and the socket server are loaded when the layer is built, not with this module
  Layer.unwrap(Effect.map(
    Effect.promise(() => Promise.all([import("effect/socket/SocketServer"), import("@effect/platform-node/NodeSocketServer")])),
    ([SocketServer, NodeSocketServer]) =>
      Layer.effect(
        SocketServer.SocketServer,
        Effect.gen(function*() {
          const host = options?.host ?? "127.0.0.1"
          const handshake: McpWebSocket.HandshakeOptions = {
            allowedOrigins: options?.allowedOrigins,
            allowedHosts: options?.allowedHosts,
            loopback: isLoopbackHost(host)
          }
          const server = yield* NodeSocketServer.makeWebSocket({
            port: options?.port ?? 0,
            host,
            ...(options?.path === undefined ? {} : { path: options.path }),
            maxPayload: options?.maxMessageBytes ?? 4 * 1024 * 1024,
            handleProtocols: (protocols) => protocols.has(McpWebSocket.SUBPROTOCOL) ? McpWebSocket.SUBPROTOCOL : false,
            verifyClient: (info, callback) => {
              const verdict = McpWebSocket.checkHandshake(info.req.headers, handshake)
              if (verdict._tag === "Accept") callback(true)
              else callback(false, verdict.status, verdict.message)
            }
          }).pipe(
            Effect.mapError((error) =>
              McpError.transport(`the WebSocket server could not listen: ${McpError.messageOf(error.cause)}`, {
                cause: error.cause
              })
            )
          )
          // each connection runs in a fiber of this one: interrupting it (when
          // the scope closes) closes every socket before the server
          yield* server.run(McpWebSocket.serve).pipe(
            Effect.catchCause((cause) => Effect.logError("the MCP WebSocket server stopped", cause)),
            Effect.forkScoped({ startImmediately: true })
          )
          return server
        })
      )
  ))

// `ws` is loaded when the layer is built, not with this module
const layerWebSocketConstructor = Layer.unwrap(
  Effect.map(Effect.promise(() => import("@effect/platform-node/NodeWS")), (NodeWS) => NodeWS.layerWebSocketConstructor)
)

/**
 * The client transport (`McpWebSocket.layerClient`) with the `ws` package as
 * the WebSocket constructor.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerClient = (
  options: McpWebSocket.ClientOptions
): Layer.Layer<McpTransport.McpTransport, McpError.McpError> =>
  McpWebSocket.layerClient(options).pipe(Layer.provide(layerWebSocketConstructor))
