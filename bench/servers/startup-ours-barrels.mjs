// The start-up benchmark's effect-mcp stdio server with every import from a
// barrel, `effect`'s included (`import { Effect, Layer, Schema } from "effect"`):
// against `startup-ours.mjs` (the README's way: effect module by module), it
// shows what effect's barrel costs (it loads every top-level module of effect).
//
//   node bench/servers/startup-ours-barrels.mjs
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { Effect, Layer, Schema } from "effect"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

NodeMcpStdio.runServer(
  McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1" })))
)
