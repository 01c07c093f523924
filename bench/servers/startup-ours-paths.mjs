// The start-up benchmark's effect-mcp stdio server imported module by module
// (no barrels): the floor the barrel import of `startup-ours.mjs` is compared with.
//
//   node bench/servers/startup-ours-paths.mjs
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpTool from "@effect-mcp/core/McpTool"
import * as NodeMcpStdio from "@effect-mcp/platform-node/NodeMcpStdio"
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
