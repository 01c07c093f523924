/**
 * An effect/ai toolkit served as MCP tools over stdio: its Schemas, its
 * annotations and its handlers.
 *
 *   node --conditions=development scratchpad/toolkit-server.ts
 */
import { McpAi, McpServer } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

const Search = Tool.make("search", {
  description: "Searches the notes",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.Struct({ hits: Schema.Array(Schema.String) })
}).annotate(Tool.Readonly, true)

const Tools = Toolkit.make(Search)

const Handlers = Tools.toLayer({ search: ({ query }) => Effect.succeed({ hits: [`notes about ${query}`] }) })

NodeMcpStdio.runServer(
  McpAi.serveToolkit(Tools).pipe(
    Layer.provide(Handlers),
    Layer.provideMerge(McpServer.layer({ name: "search", version: "1.0.0" }))
  )
)
