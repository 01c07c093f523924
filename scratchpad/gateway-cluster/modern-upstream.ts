/**
 * The modern upstream of the gateway cluster: one MCP server of ours over
 * Streamable HTTP on 127.0.0.1, serving 2026-07-28 only (stateless: no
 * session, a `subscriptions/listen` stream for list changes). Every gateway
 * replica connects to this one process.
 *
 * - `greet` ({name}): `hello <name>`;
 * - `add_tool` ({name}): registers a tool `<name>` (answering its name), so
 *   the server's listeners hear `notifications/tools/list_changed`: how a
 *   test adds a tool at runtime.
 *
 *   PORT=0 node --conditions=development scratchpad/gateway-cluster/modern-upstream.ts
 *
 * Prints `listening <port>` once serving.
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Schema } from "effect"

const greet = McpTool.make("greet", {
  description: "Greets someone",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.succeed(`hello ${name}`)
})

const addTool = McpTool.make("add_tool", {
  description: "Registers a tool of that name: the server's listeners are told the list changed",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) =>
    Effect.flatMap(
      McpServer.McpServer,
      (server) => server.register(McpTool.make(name, { input: Schema.Struct({}), handler: () => Effect.succeed(name) }))
    ).pipe(
      Effect.as(`${name} registered`)
    )
})

const Server = McpServer.register(greet, addTool).pipe(
  Layer.provideMerge(McpServer.layer({
    name: "modern-upstream",
    version: "1.0.0",
    capabilities: { tools: { listChanged: true } },
    protocolVersions: ["2026-07-28"]
  }))
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    yield* Console.log(`listening ${URL.parse(url)?.port}`)
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      NodeMcpHttpServer.layer({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" }).pipe(Layer.provide(Server))
    )
  )
)
