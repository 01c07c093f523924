// The start-up benchmark's effect-mcp stdio server with effect-mcp from its
// package barrels but effect module by module: between `startup-ours.mjs`
// (every import from a barrel, `effect`'s included) and `startup-ours-paths.mjs`
// (no barrel), it splits the cost of our barrels from that of effect's.
//
//   node bench/servers/startup-ours-barrels.mjs
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

NodeMcpStdio.runServer(
  McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1" })))
)
