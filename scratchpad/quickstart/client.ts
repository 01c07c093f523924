/**
 * A client: starts the server whose command line it is given, lists its tools,
 * calls one and reads a resource; closing it stops the server.
 *
 *   node client.js node server.js
 */
import { McpClient, McpContent } from "@effect-mcp/core"
import { NodeMcpRuntime, NodeMcpStdio } from "@effect-mcp/platform-node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const [command = "node", ...args] = process.argv.slice(2)

const Client = McpClient.layer({ clientInfo: { name: "notes-client", version: "1.0.0" } }).pipe(
  Layer.provide([NodeMcpStdio.layerClient({ command, args })])
)

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const tools = yield* client.tools.get
  yield* Console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`)
  const saved = yield* client.callTool("add_note", { title: "groceries", body: "eggs, milk" })
  yield* Console.log(McpContent.textOf(saved))
  const read = yield* client.readResource("note://groceries")
  yield* Console.log(`note://groceries: ${McpContent.textOf(read)}`)
})

NodeMcpRuntime.runMain(program.pipe(Effect.provide(Client)))
