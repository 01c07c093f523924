/**
 * The main demo: an MCP server and client in one process over the in-memory
 * transport. The server answers `tools/list` and `tools/call` with two raw
 * handlers (echo and add); the client initializes, pings, calls both tools and
 * prints what it got.
 */
import { McpClientSession, McpError, McpSchema, McpServerSession, McpTransport } from "@effect-mcp/core"
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer } from "effect"

const tools: ReadonlyArray<McpSchema.Tool> = [
  {
    name: "echo",
    description: "Returns its text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  },
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"]
    }
  }
]

const text = (value: string): McpSchema.CallToolResult => ({ content: [{ type: "text", text: value }] })

const callTool = (params: McpSchema.CallToolRequestParams) => {
  const args = params.arguments ?? {}
  switch (params.name) {
    case "echo":
      return Effect.succeed(text(String(args.text)))
    case "add":
      return typeof args.a === "number" && typeof args.b === "number"
        ? Effect.succeed({ ...text(String(args.a + args.b)), structuredContent: { sum: args.a + args.b } })
        : Effect.fail(McpError.invalidParams("tools/call", "add needs numbers a and b"))
    default:
      return Effect.fail(McpError.protocol(-32602, `Unknown tool: ${params.name}`))
  }
}

const Server = McpServerSession.layer({
  serverInfo: { name: "demo-server", version: "0.1.0" },
  capabilities: { tools: {} },
  instructions: "Try echo and add.",
  handlers: [
    McpServerSession.handler(McpSchema.ListTools, () => Effect.succeed({ tools })),
    McpServerSession.handler(McpSchema.CallTool, callTool)
  ]
})

const Client = McpClientSession.layer({ clientInfo: { name: "demo-client", version: "0.1.0" } })

const program = Effect.gen(function*() {
  const client = yield* McpClientSession.McpClientSession
  yield* Console.log(`connected to ${client.serverInfo.name} ${client.serverInfo.version}`)
  yield* Console.log(`negotiated protocol version: ${client.protocolVersion}`)
  yield* client.ping()
  yield* Console.log("ping: ok")
  const listed = yield* client.request(McpSchema.ListTools, {})
  yield* Console.log(`tools: ${listed.tools.map((tool) => tool.name).join(", ")}`)
  const echo = yield* client.request(McpSchema.CallTool, { name: "echo", arguments: { text: "hello, MCP" } })
  yield* Console.log(`echo -> ${JSON.stringify(echo.content)}`)
  const add = yield* client.request(McpSchema.CallTool, { name: "add", arguments: { a: 2, b: 40 } })
  yield* Console.log(`add -> ${JSON.stringify(add.structuredContent)}`)
})

const main = Effect.gen(function*() {
  const link = yield* McpTransport.makeInMemoryLink
  // the server runs in the background for as long as the program's scope
  yield* Layer.build(Server.pipe(Layer.provide(link.server)))
  yield* program.pipe(Effect.provide(Client.pipe(Layer.provide(link.client))))
}).pipe(Effect.scoped)

NodeMcpRuntime.runMain(main)
