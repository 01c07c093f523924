/**
 * The HTTP client transports on Node: `McpHttpClient` (Streamable HTTP, with
 * its fallback to HTTP+SSE) and `McpSseClient` (HTTP+SSE only), over
 * `NodeHttpClient.layerUndici`.
 *
 * Why undici: on 127.0.0.1, one POST with a small JSON body and its answer
 * read took, on Node 22 (the mean of 2,000–4,000 sequential calls after a
 * warm-up, server in the same process): `layerUndici` 0.24–0.27 ms (SSE
 * answer 0.18–0.19 ms), the global `fetch` 0.37–0.49 ms (0.29–0.30 ms),
 * `FetchHttpClient.layer` 0.40–0.44 ms (0.34–0.57 ms), `layerNodeHttp`
 * 0.48–0.53 ms (0.41–0.47 ms). Each layer has its own undici dispatcher,
 * closed with the layer's scope, so a closed client leaves no socket open.
 *
 * @since 0.1.0
 */
import type * as McpError from "@effect-mcp/core/McpError"
import * as McpHttpClient from "@effect-mcp/core/McpHttpClient"
import * as McpSseClient from "@effect-mcp/core/McpSseClient"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"

/**
 * The `HttpClient` the layers below use: `NodeHttpClient.layerUndici`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerHttpClient: Layer.Layer<HttpClient.HttpClient> = Layer.unwrap(
  // undici is loaded when the layer is built, not with this module
  Effect.map(
    Effect.promise(() => import("@effect/platform-node/NodeHttpClient")),
    (NodeHttpClient) => NodeHttpClient.layerUndici
  )
)

/**
 * A Streamable HTTP client transport (falling back to HTTP+SSE for a legacy
 * server), to give to `McpClient.layer`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options: McpHttpClient.Options
): Layer.Layer<McpTransport.McpTransport, McpError.McpError> =>
  McpHttpClient.layer(options).pipe(Layer.provide(layerHttpClient))

/**
 * An HTTP+SSE (2024-11-05) client transport, for a server known to be a
 * legacy one.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSse = (
  options: McpSseClient.Options
): Layer.Layer<McpTransport.McpTransport, McpError.McpError> =>
  McpSseClient.layer(options).pipe(Layer.provide(layerHttpClient))
