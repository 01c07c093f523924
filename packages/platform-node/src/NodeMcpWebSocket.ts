/**
 * MCP over WebSocket in Node: a standalone server for the `McpServer` in
 * context (on the `ws` package, through `NodeSocketServer`), and the client
 * transport with `ws` as its WebSocket.
 *
 * @since 0.1.0
 */
import type * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpResourceServer from "@effect-mcp/core/McpResourceServer"
import type * as McpServer from "@effect-mcp/core/McpServer"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import * as McpWebSocket from "@effect-mcp/core/McpWebSocket"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Socket from "effect/socket/Socket"
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
  /**
   * Protects the server with OAuth bearer tokens (see `McpResourceServer`):
   * a handshake without a valid token is refused with `401` (and a
   * `WWW-Authenticate` challenge) or `403` before the socket opens; handlers
   * read the token with `McpAuth.CurrentAuth`; requests the token lacks a
   * scope for are answered with an error; the socket is closed when the token
   * expires. The resource defaults to `ws://{host}:{port}{path}`. The
   * metadata document is not served here: serve it on an HTTP server
   * (`McpResourceServer.layerMetadata`) at the `resource_metadata` URL.
   */
  readonly auth?: McpResourceServer.Options | undefined
  /**
   * Serve without `auth` on a host that is not loopback. Without it such a
   * server fails to build: anyone who can reach it could use it.
   */
  readonly allowUnauthenticated?: boolean | undefined
  /** The most open connections (handshakes in progress included); beyond it a handshake gets `503`. Default 1000. */
  readonly maxConnections?: number | undefined
}

const isLoopbackHost = (host: string): boolean => {
  if (host.toLowerCase() === "localhost") return true
  const ip = NetAddress.ipFromString(host.replace(/^\[(.*)\]$/, "$1"))
  return Result.isSuccess(ip) && NetAddress.isLoopback(ip.success)
}

/**
 * A WebSocket server: every accepted socket is one session of the
 * `McpServer` in context, served by `McpWebSocket.serve`. A handshake is
 * refused before the socket opens: with `403` when its Host or Origin is not
 * allowed, `400` when it does not offer the `mcp` subprotocol, `503` beyond
 * `maxConnections`, and with `auth` `401` / `403` without a valid token.
 * On a host that is not loopback, building fails without `auth` unless
 * `allowUnauthenticated` is set. Provides the `SocketServer` (for its
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
    Effect.promise(() =>
      Promise.all([import("effect/socket/SocketServer"), import("@effect/platform-node/NodeSocketServer")])
    ),
    ([SocketServer, NodeSocketServer]) =>
      Layer.effect(
        SocketServer.SocketServer,
        Effect.gen(function*() {
          const host = options?.host ?? "127.0.0.1"
          const loopback = isLoopbackHost(host)
          if (!loopback && options?.auth === undefined && options?.allowUnauthenticated !== true) {
            return yield* Effect.fail(McpError.transport(
              `the WebSocket server would serve ${host} without authentication: set auth, or allowUnauthenticated: true`
            ))
          }
          const handshake: McpWebSocket.HandshakeOptions = {
            allowedOrigins: options?.allowedOrigins,
            allowedHosts: options?.allowedHosts,
            loopback
          }
          const maxConnections = Math.max(1, options?.maxConnections ?? 1000)
          const services = yield* Effect.context<never>()
          // handshakes accepted whose socket is not served yet, and sockets served
          const accepted = new Set<unknown>()
          let served = 0
          // set once the server listens (the default resource names its port)
          let authenticator: McpWebSocket.Authenticator | undefined
          const tokens = new WeakMap<object, McpAuth.AuthInfo>()
          const server = yield* NodeSocketServer.makeWebSocket({
            port: options?.port ?? 0,
            host,
            ...(options?.path === undefined ? {} : { path: options.path }),
            maxPayload: options?.maxMessageBytes ?? 4 * 1024 * 1024,
            handleProtocols: (protocols) => protocols.has(McpWebSocket.SUBPROTOCOL) ? McpWebSocket.SUBPROTOCOL : false,
            verifyClient: (info, callback) => {
              const verdict = McpWebSocket.checkHandshake(info.req.headers, handshake)
              if (verdict._tag === "Reject") return callback(false, verdict.status, verdict.message)
              if (accepted.size + served >= maxConnections) {
                return callback(false, 503, "Service Unavailable: too many connections")
              }
              const accept = () => {
                const request = info.req
                accepted.add(request)
                request.socket.once("close", () => accepted.delete(request))
                callback(true)
              }
              if (options?.auth === undefined) return accept()
              if (authenticator === undefined) return callback(false, 503, "Service Unavailable")
              const fiber = Effect.runForkWith(services)(
                authenticator.authenticate(info.req.headers, info.req.url ?? "/")
              )
              fiber.addObserver((exit) => {
                if (exit._tag === "Failure") return callback(false, 500, "Internal Server Error")
                const result = exit.value
                if (result._tag === "Reject") return callback(false, result.status, result.message, result.headers)
                if (result.auth !== undefined) tokens.set(info.req, result.auth)
                accept()
              })
            }
          }).pipe(
            Effect.mapError((error) =>
              McpError.transport(`the WebSocket server could not listen: ${McpError.messageOf(error.cause)}`, {
                cause: error.cause
              })
            )
          )
          if (options?.auth !== undefined) {
            const address = server.address
            const resource = address._tag === "UnixPathAddress"
              ? undefined
              : `ws://${NetAddress.formatInet(address)}${options.path ?? ""}`
            if (options.auth.resource === undefined && resource === undefined) {
              return yield* Effect.fail(McpError.transport("the WebSocket server needs auth.resource"))
            }
            authenticator = yield* McpWebSocket.makeAuthenticator(options.auth, options.auth.resource ?? resource!)
          }
          const handler = (socket: Socket.Socket) =>
            Effect.flatMap(Effect.serviceOption(NodeSocketServer.IncomingMessage), (request) =>
              Effect.suspend(() => {
                const req = Option.getOrUndefined(request)
                accepted.delete(req)
                served++
                const auth = req === undefined ? undefined : tokens.get(req)
                return McpWebSocket.serve(socket, { auth, authenticator }).pipe(
                  Effect.ensuring(Effect.sync(() => {
                    served--
                  }))
                )
              }))
          // each connection runs in a fiber of this one: interrupting it (when
          // the scope closes) closes every socket before the server
          yield* server.run(handler).pipe(
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
