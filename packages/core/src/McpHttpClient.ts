/**
 * The Streamable HTTP client transport (MCP 2025-03-26 and later) as an
 * `McpTransport` layer on `effect/http`'s `HttpClient`: one POST per frame,
 * JSON or SSE answers merged into `incoming`, the session's GET stream,
 * resumption with `Last-Event-ID`, a transparent re-initialize when the
 * server forgets the session, and the HTTP+SSE fallback. HTTP failures are
 * `TransportError`s whose `status` is the HTTP status.
 *
 * ```ts
 * McpClient.layer({ clientInfo }).pipe(Layer.provide(McpHttpClient.layer({ url })), Layer.provide(NodeHttpClient.layerUndici))
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as ClientCommon from "./internal/http/clientCommon.ts"
import * as ClientModels from "./internal/http/clientModels.ts"
import type * as McpAuth from "./McpAuth.ts"
import type * as McpError from "./McpError.ts"
import { McpTransport } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Custom headers sent with every request (authorization, ...): fixed, or an
 * Effect run before each request (a token that is refreshed). The
 * protocol's own headers (`Accept`, `Content-Type`, `Mcp-Session-Id`,
 * `MCP-Protocol-Version`, `Last-Event-ID`) take precedence.
 *
 * @category models
 * @since 0.1.0
 */
export type Headers = ClientCommon.HeadersOption

/**
 * How the transport connects.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The MCP endpoint. */
  readonly url: string | URL
  readonly headers?: Headers | undefined
  /**
   * Authorization: the `Authorization` header of every request, and what to
   * do when the server refuses one (`401`, `403 insufficient_scope`). An
   * OAuth client (`NodeMcpOAuth.make` in platform-node) or
   * `McpAuth.bearer(token)`. It takes precedence over an `authorization`
   * in `headers`.
   */
  readonly auth?: McpAuth.ClientAuth | undefined
  /**
   * The delays between attempts to resume an SSE stream when the server gave
   * no `retry`, and how many attempts in a row may bring nothing before the
   * stream is given up. A connection that delivers an event starts the
   * schedule over. Default: exponential from 1 s, doubling, at most 30 s,
   * 5 attempts.
   */
  readonly reconnect?: Schedule.Schedule<unknown, unknown> | undefined
  /** How many times one frame may re-initialize an expired session (404). `0` turns it off. Default 1. */
  readonly maxReinitializations?: number | undefined
  /** Open the session's GET stream after initialization. Default `true`. */
  readonly listen?: boolean | undefined
  /**
   * How long sending `notifications/initialized` waits for the GET stream's
   * first answer, so that what the server sends right after the handshake
   * has a stream to arrive on. Default 2 s.
   */
  readonly listenTimeout?: Duration.Input | undefined
  /** Fall back to the 2024-11-05 HTTP+SSE transport when the first POST is refused. Default `true`. */
  readonly fallbackToSse?: boolean | undefined
  /** For the fallback: how long to wait for the `endpoint` event. Default 30 s. */
  readonly endpointTimeout?: Duration.Input | undefined
  /** How long the DELETE on close may take. Default 5 s. */
  readonly terminateTimeout?: Duration.Input | undefined
  /** The largest accepted SSE event, in characters. Default 10 MiB. */
  readonly maxEventSize?: number | undefined
  /** The largest accepted JSON answer, in bytes: a larger one fails its request with a `TransportError`. Default 64 MiB. */
  readonly maxResponseBytes?: number | undefined
  /** Trace the transport's HTTP requests (a span each). Default `false`. */
  readonly tracing?: boolean | undefined
}

/**
 * The `cause` of the `TransportError` of an HTTP answer with an unexpected
 * status: the method, URL, status and body.
 *
 * @category errors
 * @since 0.1.0
 */
export const HttpStatusError: typeof ClientModels.HttpStatusError = ClientModels.HttpStatusError

/**
 * @category errors
 * @since 0.1.0
 */
export type HttpStatusError = ClientModels.HttpStatusError

/**
 * The default `reconnect` schedule: exponential from 1 s, doubling, at most
 * 30 s between attempts, 5 attempts.
 *
 * @category constructors
 * @since 0.1.0
 */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = ClientModels.defaultReconnect

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * The transport, in the current scope. Nothing is sent until the client
 * sends `initialize`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (
  options: Options
) => Effect.Effect<McpTransport["Service"], McpError.McpError, HttpClient.HttpClient | Scope.Scope> = Effect.fn(
  "McpHttpClient.make"
)((options: Options) =>
  // the transport (`effect/http`) is loaded when one is made, not with this module
  Effect.flatMap(Effect.promise(() => import("./internal/http/client.ts")), (Internal) => Internal.make(options))
)

/**
 * The transport as a layer; its scope is the session's.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpTransport, McpError.McpError, HttpClient.HttpClient> =>
  Layer.effect(McpTransport, make(options))
