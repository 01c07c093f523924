/**
 * MCP over WebSocket, on `effect/socket`: the client transport and the server
 * side, platform-free (the Node bindings are in `NodeMcpWebSocket`).
 *
 * - The subprotocol is `mcp`: a client offers it, a server requires it.
 * - One socket is one MCP session. Each text message is one JSON-RPC message
 *   (or batch); a message that is not JSON is answered with `-32700`.
 * - Close codes 1000, 1001 and 1005 end the session normally (its `incoming`
 *   ends; handlers still running finish); any other code, or an abrupt end
 *   (1006), is a `TransportError` naming the code.
 * - Closing the scope sends a close frame with code 1000.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Socket from "effect/socket/Socket"
import * as Guard from "./internal/http/guard.ts"
import type * as McpAuth from "./McpAuth.ts"
import type * as McpError from "./McpError.ts"
import type * as McpResourceServer from "./McpResourceServer.ts"
import { McpServer } from "./McpServer.ts"
import { McpTransport } from "./McpTransport.ts"

/**
 * The WebSocket subprotocol of MCP.
 *
 * @category constants
 * @since 0.1.0
 */
export const SUBPROTOCOL = "mcp"

// The transport and `effect/socket` are loaded when a transport is made,
// not with this module.
const loadTransport = Effect.promise(() => import("./internal/websocket/transport.ts"))
const loadSocket = Effect.promise(() => import("effect/socket/Socket"))

// -----------------------------------------------------------------------------
// Transport
// -----------------------------------------------------------------------------

/**
 * A transport over a socket, for as long as the scope lasts. Acquiring it
 * opens the socket: a client socket connects and completes its handshake
 * first, and a failure to do so is a `TransportError`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (
  socket: Socket.Socket
) => Effect.Effect<McpTransport["Service"], McpError.McpError, Scope.Scope> = Effect.fn("McpWebSocket.make")(
  (socket: Socket.Socket) => Effect.flatMap(loadTransport, (Internal) => Internal.make(socket))
)

/**
 * The transport over the `Socket` in context, e.g. one from
 * `Socket.layerWebSocket(url, { protocols: "mcp" })`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSocket: Layer.Layer<McpTransport, McpError.McpError, Socket.Socket> = Layer.effect(
  McpTransport,
  Effect.gen(function*() {
    const Socket = yield* loadSocket
    return yield* make(yield* Socket.Socket)
  })
)

/**
 * How a client connects.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClientOptions {
  /** `ws://` or `wss://`. */
  readonly url: string
  /** The subprotocols offered. Default `"mcp"`. */
  readonly protocols?: string | Array<string> | undefined
  /** How long to wait for the opening handshake. Default 10 seconds. */
  readonly openTimeout?: Duration.Input | undefined
  /** Headers of the opening handshake (Node and Bun only; browsers refuse them). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * A client transport: connects to `url` offering the `mcp` subprotocol, and
 * fails with a `TransportError` when the connection cannot be opened (refused,
 * rejected handshake, no subprotocol chosen by the server, timeout).
 * Provide a `Socket.WebSocketConstructor` (`NodeMcpWebSocket.layerClient`
 * does, in Node; `Socket.layerWebSocketConstructorGlobal` in browsers).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerClient = (
  options: ClientOptions
): Layer.Layer<McpTransport, McpError.McpError, Socket.WebSocketConstructor> =>
  Layer.effect(
    McpTransport,
    Effect.flatMap(loadSocket, (Socket) =>
      Effect.flatMap(
        Socket.makeWebSocket(options.url, {
          protocols: options.protocols ?? SUBPROTOCOL,
          openTimeout: options.openTimeout,
          headers: options.headers
        }),
        make
      ))
  )

// -----------------------------------------------------------------------------
// Server
// -----------------------------------------------------------------------------

/**
 * Serves the `McpServer` in context over one accepted socket, until the
 * connection ends (the peer closes it, or the session ends), then closes it.
 * Interrupting it closes the socket with code 1000. Use it as the handler of
 * a `SocketServer`: `server.run(McpWebSocket.serve)`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const serve: (
  socket: Socket.Socket,
  options?: ServeOptions
) => Effect.Effect<void, McpError.McpError, McpServer> = Effect.fn(
  "McpWebSocket.serve"
)(function*(socket: Socket.Socket, options?: ServeOptions) {
  const server = yield* McpServer
  const Internal = yield* loadTransport
  const auth = options?.auth
  const Auth = auth === undefined ? undefined : yield* loadAuth
  yield* Effect.scoped(Effect.gen(function*() {
    const socketTransport = yield* Internal.make(socket)
    const transport = auth === undefined
      ? socketTransport
      : Auth!.withAuth(socketTransport, auth, options?.authenticator)
    const session = yield* Effect.provideService(server.serve, McpTransport, transport)
    const expiresAt = auth?.expiresAt
    if (expiresAt === undefined) return yield* session.awaitClose
    // the connection ends when the token it was opened with expires
    const left = expiresAt * 1000 - (yield* Clock.currentTimeMillis)
    if (left > 0) yield* Effect.timeoutOption(session.awaitClose, Duration.millis(left))
  }))
})

/**
 * How {@link serve} serves a socket.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServeOptions {
  /**
   * The verified token of the opening handshake (see {@link Authenticator}):
   * handlers read it with `McpAuth.CurrentAuth`, and the socket is closed
   * (code 1000) when the token reaches its `expiresAt` (by the `Clock`).
   */
  readonly auth?: McpAuth.AuthInfo | undefined
  /** With `auth`: requests the token lacks a scope for (`methodScopes`, `toolScopes`) are answered with an error. */
  readonly authenticator?: Authenticator | undefined
}

/**
 * The bearer check of a protected WebSocket endpoint, made by
 * {@link makeAuthenticator}: the checks of `McpResourceServer` (as on
 * Streamable HTTP) applied to the opening handshake.
 *
 * @category models
 * @since 0.1.0
 */
export interface Authenticator {
  /** The canonical resource URL (the audience tokens must name). */
  readonly resource: string
  /** Where its Protected Resource Metadata document is expected (the `resource_metadata` of challenges). */
  readonly metadataUrl: string
  /**
   * Checks the `Authorization` (and `DPoP`) header of a handshake (lower-case
   * names; `url` is the request target): `Accept` with the verified token,
   * or `Reject` with `401` / `403` and the `WWW-Authenticate` challenge in
   * `headers`.
   */
  readonly authenticate: (
    headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
    url: string
  ) => Effect.Effect<Handshake>
  /** Why the token may not make this request (a scope it lacks), if it may not. */
  readonly authorize: (auth: McpAuth.AuthInfo, message: object) => string | undefined
}

const loadAuth = Effect.promise(() => import("./internal/websocket/auth.ts"))

/**
 * The bearer check of a WebSocket endpoint protected as `options` say, for
 * `resource` (the URL clients connect to, unless `options.resource` is set).
 * The Protected Resource Metadata document is not served by the WebSocket
 * server: serve it on an HTTP server (`McpResourceServer.layerMetadata`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeAuthenticator: (
  options: McpResourceServer.Options,
  resource: string | URL
) => Effect.Effect<Authenticator> = Effect.fn("McpWebSocket.makeAuthenticator")(
  function*(options: McpResourceServer.Options, resource: string | URL) {
    const Auth = yield* loadAuth
    return yield* Auth.makeAuthenticator(options, resource)
  }
)

/**
 * What a server accepts in an opening handshake.
 *
 * @category models
 * @since 0.1.0
 */
export interface HandshakeOptions {
  /**
   * Accepted `Origin` values: a full origin (`http://localhost:5173`) or a
   * hostname (any scheme and port), or `"any"`. A handshake without `Origin`
   * (not from a browser) is accepted. Default: the loopback hostnames when
   * `loopback`; otherwise none (every browser origin is refused).
   */
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  /**
   * Accepted `Host` values: a hostname (any port) or `host:port`, or `"any"`.
   * Default: `localhost`, `127.0.0.1` and `[::1]` when `loopback`; otherwise
   * `"any"`.
   */
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  /** The server is bound to a loopback address. */
  readonly loopback?: boolean | undefined
}

/**
 * The verdict on an opening handshake.
 *
 * @category models
 * @since 0.1.0
 */
export type Handshake =
  | { readonly _tag: "Accept"; readonly auth?: McpAuth.AuthInfo | undefined }
  | {
    readonly _tag: "Reject"
    readonly status: 400 | 401 | 403 | 500 | 503
    readonly message: string
    /** Headers of the refusal (`WWW-Authenticate`). */
    readonly headers?: Readonly<Record<string, string>> | undefined
  }

/**
 * Checks an opening handshake's headers (lower-case names): `Host` and
 * `Origin` must pass the DNS-rebinding rules of {@link HandshakeOptions}
 * (the rules of `McpHttpServer`; `403` otherwise), and the `mcp` subprotocol
 * must be offered (`400`).
 *
 * @category guards
 * @since 0.1.0
 */
export const checkHandshake = (
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  options?: HandshakeOptions
): Handshake => {
  const header = Guard.headerOf(headers)
  const refused = Guard.check(header, options ?? {}, options?.loopback === true)
  if (refused !== undefined) return { _tag: "Reject", status: 403, message: refused }
  const offered = (header("sec-websocket-protocol") ?? "").split(",").map((protocol) => protocol.trim())
  return offered.includes(SUBPROTOCOL)
    ? { _tag: "Accept" }
    : { _tag: "Reject", status: 400, message: `The WebSocket subprotocol "${SUBPROTOCOL}" is required` }
}
