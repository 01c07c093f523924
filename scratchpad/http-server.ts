/**
 * An MCP server over Streamable HTTP on 127.0.0.1 (Host and Origin checked,
 * sessions, SSE answers and resumable streams).
 *
 *   node --conditions=development scratchpad/http-server.ts --port 3000
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Schema } from "effect"

const add = McpTool.make("add", {
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const port = Number(process.argv[process.argv.indexOf("--port") + 1] ?? 0) || 0

const Http = NodeMcpHttpServer.layer({ port, responseMode: "sse" }).pipe(
  Layer.provide(McpServer.register(add).pipe(Layer.provideMerge(McpServer.layer({ name: "adder", version: "1.0.0" }))))
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    yield* Console.log(`listening on ${yield* NodeMcpHttpServer.url()}`)
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
