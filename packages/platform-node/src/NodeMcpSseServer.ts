/**
 * A standalone Node HTTP server speaking the HTTP+SSE transport (MCP
 * 2024-11-05) for the `McpServer` in context: `McpSseServer.layerRoute` on
 * its own `NodeHttpServer`, on `127.0.0.1` and an ephemeral port unless told
 * otherwise. Closing the layer's scope ends every stream and closes the
 * server. With `auth` (`McpResourceServer.Options`) both routes need a bearer
 * token; the resource defaults to the bound address plus `ssePath`.
 *
 * @since 0.1.0
 */
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpServer from "@effect-mcp/core/McpServer"
import * as McpSseServer from "@effect-mcp/core/McpSseServer"
import * as Effect from "effect/Effect"
import type * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import type * as NodeMcpHttpServer from "./NodeMcpHttpServer.ts"

/**
 * Where to listen, the route options, and the server's limits (see
 * `NodeMcpHttpServer.ServerLimits`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends McpSseServer.Options, NodeMcpHttpServer.ServerLimits {
  /** Default `0`: an ephemeral port, read it from `HttpServer.address`. */
  readonly port?: number | undefined
  /** Default `127.0.0.1`. On a loopback host, Host and Origin are checked by default. */
  readonly host?: string | undefined
}

/**
 * The server, providing its `HttpServer` (for its address).
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options?: Options
): Layer.Layer<HttpServer.HttpServer, McpError.McpError, McpServer.McpServer> =>
  // the HTTP server (`node:http`, `effect/http`) is loaded when the layer is built, not with this module
  Layer.unwrap(Effect.map(
    Effect.promise(() =>
      Promise.all([
        import("node:http"),
        import("@effect/platform-node/NodeHttpServer"),
        import("effect/http/HttpRouter"),
        import("./internal/httpServerLimits.ts")
      ])
    ),
    ([Http, NodeHttpServer, HttpRouter, Limits]) => {
      const server = Limits.createServer(Http, options)
      const serving = HttpRouter.serve(McpSseServer.layerRoute(options), {
        disableLogger: true,
        disableListenLog: true
      }).pipe(
        Layer.provideMerge(
          NodeHttpServer.layerServer(() => server, {
            port: options?.port ?? 0,
            host: options?.host ?? "127.0.0.1",
            // an event stream never ends by itself: do not wait for it
            disablePreemptiveShutdown: true
          })
        )
      )
      // Released first: stop listening and cut every connection. An event
      // stream is never done, and a client that aborted one (undici's fetch)
      // can leave its connection open for seconds, which `close` would wait for.
      const cut = Layer.effectDiscard(Effect.addFinalizer(() =>
        Effect.sync(() => {
          server.close()
          server.closeAllConnections()
        })
      ))
      return Layer.catchTag(
        cut.pipe(Layer.provideMerge(serving)),
        "ServeError",
        (error) =>
          Layer.unwrap(Effect.fail(McpError.transport("the SSE server could not listen", { cause: error.cause })))
      )
    }
  ))
