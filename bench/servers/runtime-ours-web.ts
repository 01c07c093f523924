/**
 * effect-mcp's server of `bench/runtimes.ts` as a web-standard handler:
 * `McpHttpServer.toWebHandler` (JSON answers, Host limited to 127.0.0.1 as
 * `NodeMcpHttpServer` limits it on loopback) serving an `McpServer` with the
 * `echo` tool of `http-ours.ts` (Schema input), served by `runtime-serve.ts`
 * on the runtime that runs this file: `Bun.serve`, `Deno.serve`, or node:http
 * through an adapter. Prints `{"url":…}` and exits when stdin ends.
 *
 *   node --conditions=development bench/servers/runtime-ours-web.ts
 *   bun --no-install --conditions=development bench/servers/runtime-ours-web.ts
 *   deno run --allow-net=127.0.0.1 --unstable-no-legacy-abort --node-modules-dir=manual --conditions=development bench/servers/runtime-ours-web.ts
 */
import * as McpHttpServer from "@effect-mcp/core/McpHttpServer"
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpTool from "@effect-mcp/core/McpTool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { serve } from "./runtime-serve.ts"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const { dispose, handler } = McpHttpServer.toWebHandler(
  McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "0.0.0" }))),
  { path: "/mcp", responseMode: "json", allowedHosts: ["127.0.0.1"] }
)

void serve(handler, dispose)
