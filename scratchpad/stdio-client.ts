/**
 * A client that spawns the example server and talks to it over stdio; closing
 * the client closes the server's stdin, then SIGTERM, then SIGKILL, for the
 * whole process tree.
 *
 *   node --conditions=development scratchpad/stdio-client.ts
 */
import { McpClient } from "@effect-mcp/core"
import { NodeMcpRuntime, NodeMcpStdio } from "@effect-mcp/platform-node"
import { Console, Effect, Layer } from "effect"

const Server = NodeMcpStdio.layerClient({
  command: process.execPath,
  args: ["--conditions=development", "scratchpad/example-server.ts"],
  stderr: "capture"
})

const Client = McpClient.layer({ clientInfo: { name: "stdio-client", version: "1.0.0" } }).pipe(
  Layer.provide(Server)
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    const tools = yield* client.tools.get
    yield* Console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`)
    const forecast = yield* client.callTool("weather", { city: "Lisbon" })
    yield* Console.log(`weather: ${JSON.stringify(forecast.structuredContent)}`)
    const readme = yield* client.readResource("notes://readme")
    yield* Console.log(`readme: ${readme.contents.length} content(s)`)
  }).pipe(Effect.provide(Client))
)
