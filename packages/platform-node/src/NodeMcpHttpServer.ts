/**
 * A standalone Streamable HTTP MCP server on Node's `http` module: the
 * `McpHttpServer` route served by its own `HttpServer`, on `127.0.0.1` and an
 * ephemeral port unless told otherwise; {@link url} reads the bound address.
 * With `auth` it is an OAuth resource server (`McpResourceServer`) whose
 * resource defaults to {@link url}. `GET /healthz` and `GET /readyz` answer
 * health probes (see {@link HealthOptions}).
 *
 * ```ts
 * NodeMcpRuntime.runMain(Effect.gen(function*() {
 *   yield* Console.error(`listening on ${yield* NodeMcpHttpServer.url()}`)
 *   return yield* Effect.never
 * }).pipe(Effect.provide(NodeMcpHttpServer.layer({ port: 3000 }).pipe(Layer.provide(Server)))))
 * ```
 *
 * @since 0.1.0
 */
import * as McpHttpServer from "@effect-mcp/core/McpHttpServer"
import type * as McpServer from "@effect-mcp/core/McpServer"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"

/**
 * The limits of the Node HTTP server (`node:http`'s settings of the same
 * names), against clients that hold connections open without using them.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerLimits {
  /** How long a client may take to send a request's headers (`408` after). Default 30 seconds (at most `requestTimeout`). */
  readonly headersTimeout?: Duration.Input | undefined
  /**
   * How long a client may take to send a whole request, body included
   * (`408` after); the response (an SSE stream) is not bounded by it.
   * Default 1 minute; `0` for none.
   */
  readonly requestTimeout?: Duration.Input | undefined
  /** How long an idle keep-alive connection is kept open. Default 5 seconds. */
  readonly keepAliveTimeout?: Duration.Input | undefined
  /** The most open connections; a connection beyond it is closed at once. Default 20 000. */
  readonly maxConnections?: number | undefined
}

/**
 * The health routes, answered next to the MCP endpoint (no auth, no Host
 * or Origin check), with `Cache-Control: no-store`:
 *
 * - `GET /healthz` (liveness): `200` while the process serves;
 * - `GET /readyz` (readiness): `200` when ready, `503` once the server is
 *   shutting down (from the moment its layer starts closing, while the MCP
 *   sessions drain), or when `readiness` fails, dies or takes longer than
 *   `readinessTimeout`.
 *
 * @category models
 * @since 0.2.0
 */
export interface HealthOptions extends McpHttpServer.HealthOptions {}

/**
 * Where and how to serve: the route's options plus the listening address,
 * the server's limits and the health routes.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends McpHttpServer.Options, ServerLimits, HealthOptions {
  /** The port; `0` (the default) picks a free one. */
  readonly port?: number | undefined
  /** The address to bind. Default `"127.0.0.1"` (loopback, so Host and Origin are checked). */
  readonly host?: string | undefined
  /** Log every HTTP request with Effect's logger. Default `false`. */
  readonly logRequests?: boolean | undefined
}

/**
 * The server as a layer: listening once built, closed when its scope closes.
 * Closing ends every MCP session first (open streams end cleanly, requests
 * in flight are interrupted and answered with an error), waits at most
 * `shutdownTimeout` (default 1 second) for those last answers to be written,
 * then closes the server: with `NodeMcpRuntime.runMain`, a `SIGTERM` or
 * `SIGINT` exits within that bound.
 *
 * To serve MCP next to your own routes, mount `McpHttpServer.layerRoute` in
 * your `HttpRouter` app instead (see `McpHttpServer.withGracefulShutdown`).
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options?: Options
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError, McpServer.McpServer> =>
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
    ([Http, NodeHttpServer, HttpRouter, Limits]) =>
      // `/readyz` answers 503 while the sessions drain
      McpHttpServer.withHealth(options, (health) =>
        HttpRouter.serve(Layer.merge(McpHttpServer.layerRoute(options), health), {
          disableLogger: options?.logRequests !== true,
          disableListenLog: true
        }).pipe(
          McpHttpServer.withGracefulShutdown,
          Layer.provideMerge(NodeHttpServer.layerServer(() => Limits.createServer(Http, options), {
            port: options?.port ?? 0,
            host: options?.host ?? "127.0.0.1",
            // the MCP sessions have ended (`withGracefulShutdown`) and their answers
            // are written: what is left is interrupted rather than waited for
            disablePreemptiveShutdown: true
          }))
        ))
  ))

/**
 * The URL of the MCP endpoint of the server in context, e.g.
 * `http://127.0.0.1:41234/mcp`.
 *
 * @category accessors
 * @since 0.1.0
 */
export const url: (path?: string) => Effect.Effect<string, never, HttpServer.HttpServer> = Effect.fn(
  "NodeMcpHttpServer.url"
)(function*(path: string = "/mcp") {
  // loaded already when a server is in context
  const { formatAddress, HttpServer: Server } = yield* Effect.promise(() => import("effect/http/HttpServer"))
  const server = yield* Server
  return formatAddress(server.address) + path
})
