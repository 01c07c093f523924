/**
 * A notes server over Streamable HTTP on 127.0.0.1 (port from $PORT, default 3000).
 *
 *   PORT=3000 node http-server.js
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const notes = new Map<string, string>()

const addNote = McpTool.make("add_note", {
  description: "Saves a note under a title",
  input: Schema.Struct({ title: Schema.String, body: Schema.String }),
  handler: ({ body, title }) => Effect.sync(() => notes.set(title, body)).pipe(Effect.as(`saved ${title}`))
})

const Http = NodeMcpHttpServer.layer({ port: Number(process.env.PORT ?? 3000) }).pipe(
  Layer.provide(McpServer.layer({ name: "notes", version: "1.0.0" }, addNote))
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    yield* Console.log(`listening on ${yield* NodeMcpHttpServer.url()}`)
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
