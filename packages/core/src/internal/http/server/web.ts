/**
 * The Streamable HTTP endpoint as a web-standard handler
 * (`(request: Request) => Promise<Response>`): the route of `route.ts` and
 * the health routes in a router of their own, served by effect's
 * `HttpRouter.toWebHandler`. What serves the handler (`Bun.serve`,
 * `Deno.serve`, a Worker's `fetch`, Hono, a Next.js route handler, Node
 * through an adapter) is not ours to know: no `HttpServer` is in context, so
 * the Host/Origin guard has no loopback default and `auth.resource` is
 * required.
 *
 * `dispose` closes the layer: `/readyz` answers `503` at once, then every
 * MCP session ends as on Node (streams end, requests in flight are answered
 * with an error, bounded by `shutdownTimeout`), then the `McpServer` closes.
 *
 * `McpHttpServer.toWebHandler` loads this module when first called.
 *
 * @internal
 */
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import type * as McpHttpServer from "../../../McpHttpServer.ts"
import type * as McpServer from "../../../McpServer.ts"
import { withHealth } from "./health.ts"

/** The handler of `McpHttpServer.toWebHandler`. @internal */
export const make = <E>(
  serverLayer: Layer.Layer<McpServer.McpServer, E>,
  options: McpHttpServer.WebHandlerOptions,
  route: (options: McpHttpServer.Options) => Layer.Layer<never, never, McpServer.McpServer | HttpRouter.HttpRouter>
): McpHttpServer.WebHandler => {
  const app = withHealth(options, (health) =>
    Layer.merge(route(options), health).pipe(
      // what else the server's layer provides (a `Scheduler` on Workers, say) serves the requests too
      Layer.provideMerge(serverLayer)
    ))
  const web = HttpRouter.toWebHandler(app, { disableLogger: options.logRequests !== true })
  return { handler: (request) => web.handler(request), dispose: web.dispose }
}
