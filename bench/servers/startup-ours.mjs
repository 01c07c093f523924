// The start-up benchmark's effect-mcp stdio server, written the README's way:
// effect-mcp from its package barrels, effect module by module (`effect/Effect`,
// …). Run from the compiled `dist/` (plain `node`, no `--conditions=development`),
// as an installed package would be.
//
//   node bench/servers/startup-ours.mjs
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
