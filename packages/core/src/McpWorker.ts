/**
 * A Cloudflare Worker (or any runtime whose module exports
 * `{ fetch(request, env, ctx) }`) serving an MCP server over Streamable HTTP:
 * {@link make} is `McpHttpServer.toWebHandler` shaped for Workers.
 *
 * A Worker keeps no process between requests, and isolates come and go: its
 * handler is built in the first `fetch` (a Worker's global scope may not draw
 * random values, which the build does), from that request's `env`; its fibers
 * run on effect's synchronous scheduler (none waits on a timer owned by a
 * request that has ended); the legacy era is served without sessions
 * (`stateless: true`, unless told otherwise), 2026-07-28 requests as always.
 * Give every isolate the same `requestState.secret` (a Worker secret) so that
 * a retry of an input-required round may land on any of them. Work that
 * outlives its request (tasks, held calls) is stopped with it: use the
 * 2026-07-28 era's plain requests, or a task store that is not in memory with
 * the work run where it can outlive a request.
 *
 * @example
 * ```ts
 * import { McpServer, McpTool, McpWorker } from "@effect-mcp/core"
 * import { Effect, Schema } from "effect"
 *
 * const Greet = McpTool.make("greet", {
 *   input: Schema.Struct({ name: Schema.String }),
 *   handler: ({ name }) => Effect.succeed(`Hello, ${name}!`)
 * })
 *
 * export default McpWorker.make(
 *   (env: { readonly SECRET: string }) =>
 *     McpServer.layer({ name: "greeter", version: "1.0.0", requestState: { secret: env.SECRET } }, Greet),
 *   { path: "/mcp" }
 * )
 * ```
 *
 * @since 0.3.0
 */
import * as Layer from "effect/Layer"
import * as Scheduler from "effect/Scheduler"
import * as McpHttpServer from "./McpHttpServer.ts"
import type * as McpServer from "./McpServer.ts"

/**
 * What a Worker is handed besides the request and `env` (as little of it as
 * is used here: no `@cloudflare/workers-types` needed).
 *
 * @category models
 * @since 0.3.0
 */
export interface ExecutionContext {
  readonly waitUntil: (promise: Promise<unknown>) => void
}

/**
 * A Worker module's default export.
 *
 * @category models
 * @since 0.3.0
 */
export interface Worker<Env> {
  readonly fetch: (request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>
}

/**
 * A Worker serving `server` (a layer, or a layer made from the first
 * request's `env`) through `McpHttpServer.toWebHandler` with `options`
 * (`stateless: true` unless given).
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = <Env = unknown, E = never>(
  server: Layer.Layer<McpServer.McpServer, E> | ((env: Env) => Layer.Layer<McpServer.McpServer, E>),
  options?: McpHttpServer.WebHandlerOptions
): Worker<Env> => {
  let web: McpHttpServer.WebHandler | undefined
  return {
    fetch: (request, env) => {
      if (web === undefined) {
        const layer = typeof server === "function" ? server(env) : server
        web = McpHttpServer.toWebHandler(
          // the layer's own fibers and every request's run on the synchronous scheduler
          Layer.provideMerge(layer, Layer.succeed(Scheduler.Scheduler, new Scheduler.MixedScheduler("sync"))),
          { stateless: true, ...options }
        )
      }
      return web.handler(request)
    }
  }
}
