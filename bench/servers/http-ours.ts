/**
 * The effect-mcp Streamable HTTP server of the benchmarks:
 * `NodeMcpHttpServer.layer({ port: 0, responseMode: "json" })` on 127.0.0.1
 * serving an `McpServer` with one `echo` tool (Schema input); it answers
 * 2026-07-28 requests on the same endpoint as the 2025 revisions. With the
 * argument `stateless` it is started with `stateless: true` (no 2025
 * sessions). Prints `{"url":…}` on stdout once listening, answers `mem` on
 * stdin (see `control.mjs`) and exits when stdin ends.
 *
 *   node --conditions=development --expose-gc bench/servers/http-ours.ts [stateless] [sse]
 */
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpTool from "@effect-mcp/core/McpTool"
import * as NodeMcpHttpServer from "@effect-mcp/platform-node/NodeMcpHttpServer"
import * as NodeMcpRuntime from "@effect-mcp/platform-node/NodeMcpRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { control } from "./control.mjs"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const stateless = process.argv.includes("stateless")
const responseMode = process.argv.includes("sse") ? "sse" : "json"

const Http = NodeMcpHttpServer.layer({ port: 0, responseMode, stateless }).pipe(
  Layer.provide(
    McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "0.0.0" })))
  )
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    yield* Effect.sync(() => control(url))
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
