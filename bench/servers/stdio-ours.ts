/**
 * The effect-mcp stdio server of the benchmarks: `McpServer` with one `echo`
 * tool (Schema input), served by `NodeMcpStdio.runServer` until the client
 * closes stdin.
 *
 *   node --conditions=development bench/servers/stdio-ours.ts
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { Effect, Layer, Schema } from "effect"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

NodeMcpStdio.runServer(
  McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "0.0.0" })))
)
