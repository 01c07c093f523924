/**
 * The Streamable HTTP client transport (MCP 2025-03-26 and later) as an
 * `McpTransport` layer, on `effect/http`'s `HttpClient`: give it to
 * `McpClient.layer` or `McpClientSession.layer`, and provide an `HttpClient`
 * (`NodeMcpHttpClient.layer` does both on Node).
 *
 * - Each outgoing frame is one POST with `Accept: application/json,
 *   text/event-stream`, `Content-Type: application/json`, `Mcp-Session-Id`
 *   once the server issued one and `MCP-Protocol-Version` once negotiated.
 *   The answer (a JSON body, or an SSE stream read in the background) is
 *   merged into `incoming`; 202 brings nothing.
 * - After `notifications/initialized`, a GET opens the session's own SSE
 *   stream (405: the server has none, which is fine); the handshake ends
 *   once that GET is answered, so nothing the server sends right after it
 *   is lost.
 * - SSE streams are resumed: when a connection ends before the stream is
 *   done, the transport waits exactly the server's `retry` (or, without one,
 *   the `reconnect` schedule's delay) and reconnects with a GET carrying
 *   `Last-Event-ID`. The schedule bounds consecutive attempts that bring no
 *   event.
 * - A 404 on a request that carries the session id means the server forgot
 *   the session: the transport replays the remembered `initialize` (and
 *   swallows its answer) and `notifications/initialized` in a new session,
 *   then resends the frame. The client above sees only a delay.
 * - When the first POST (`initialize`) is refused with 400, 404 or 405 and
 *   a body that is not a JSON-RPC error, the transport falls back to the
 *   2024-11-05 HTTP+SSE transport at the same URL (see `McpSseClient`), as
 *   the specification's backwards-compatibility section describes.
 * - Closing the scope stops every stream and DELETEs the session (405 is
 *   fine).
 *
 * Like every transport, this one matches no request ids, with one documented
 * exception: the `initialize` exchange, which it must recognise to learn the
 * session id and protocol version and to replay it.
 *
 * HTTP failures are `McpError`s with a `TransportError` reason whose `cause`
 * is an {@link HttpStatusError} carrying the status.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Internal from "./internal/http/client.ts"
import * as ClientCommon from "./internal/http/clientCommon.ts"
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
export const HttpStatusError: typeof ClientCommon.HttpStatusError = ClientCommon.HttpStatusError

/**
 * @category errors
 * @since 0.1.0
 */
export type HttpStatusError = ClientCommon.HttpStatusError

/**
 * The default `reconnect` schedule: exponential from 1 s, doubling, at most
 * 30 s between attempts, 5 attempts.
 *
 * @category constructors
 * @since 0.1.0
 */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Internal.defaultReconnect

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
)((options: Options) => Internal.make(options))

/**
 * The transport as a layer; its scope is the session's.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpTransport, McpError.McpError, HttpClient.HttpClient> =>
  Layer.effect(McpTransport, make(options))
