/**
 * The client side of the HTTP+SSE transport of protocol revision 2024-11-05,
 * for servers that predate Streamable HTTP: a GET to `url` opens an SSE
 * stream whose first event, `endpoint`, names the URL (same origin) that
 * every message is POSTed to; the server's messages arrive on the stream.
 *
 * Acquiring the layer opens the stream and waits for the `endpoint` event.
 * The session lasts as long as the stream: when the server ends it,
 * `incoming` ends; when it fails, `incoming` fails. Once the `initialize`
 * exchange has settled a version, POSTs carry `MCP-Protocol-Version`.
 *
 * `McpHttpClient` falls back to this transport by itself; use this module
 * when the server is known to be a legacy one.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as McpAuth from "./McpAuth.ts"
import type * as McpError from "./McpError.ts"
import type * as McpHttpClient from "./McpHttpClient.ts"
import { McpTransport } from "./McpTransport.ts"

/**
 * How the transport connects.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The URL of the SSE stream (often `…/sse`). */
  readonly url: string | URL
  readonly headers?: McpHttpClient.Headers | undefined
  /**
   * Authorization: the `Authorization` header of every request, and what to
   * do when the server refuses one (`401`, `403 insufficient_scope`). An
   * OAuth client (`NodeMcpOAuth.make` in platform-node) or
   * `McpAuth.bearer(token)`. It takes precedence over an `authorization`
   * in `headers`.
   */
  readonly auth?: McpAuth.ClientAuth | undefined
  /** How long to wait for the `endpoint` event. Default 30 s. */
  readonly endpointTimeout?: Duration.Input | undefined
  /** The largest accepted SSE event, in characters. Default 10 MiB. */
  readonly maxEventSize?: number | undefined
}

/**
 * Opens the stream, waits for the `endpoint` event and returns the
 * transport; closing the scope closes the stream.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (
  options: Options
) => Effect.Effect<McpTransport["Service"], McpError.McpError, HttpClient.HttpClient | Scope.Scope> = Effect.fn(
  "McpSseClient.make"
)((options: Options) =>
  // the transport (`effect/http`) is loaded when one is made, not with this module
  Effect.flatMap(
    Effect.promise(() => import("./internal/sse/client.ts")),
    (Internal) => Internal.makeTransport(options)
  )
)

/**
 * The transport as a layer: acquiring it connects.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpTransport, McpError.McpError, HttpClient.HttpClient> =>
  Layer.effect(McpTransport, make(options))
