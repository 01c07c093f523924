/**
 * The effect-mcp stdio server of the benchmarks: `McpServer` with one `echo`
 * tool (Schema input), served by `NodeMcpStdio.runServer` until the client
 * closes stdin.
 *
 *   node --conditions=development bench/servers/stdio-ours.ts
 */
// imported module by module, the leanest start-up: the package barrels load
// the front module of every transport too (their machinery, effect/http, ws
// or undici, only when a layer is built), and `effect`'s barrel all of effect;
// `npm run bench:startup` measures both
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
  McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "0.0.0" })))
)
