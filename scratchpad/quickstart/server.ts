/**
 * A notes server on stdio: two tools and a resource template.
 *
 *   node server.js     (after tsc; in this repository: npm run example:quickstart)
 */
import { McpResource, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const notes = new Map<string, string>()

const addNote = McpTool.make("add_note", {
  description: "Saves a note under a title",
  input: Schema.Struct({ title: Schema.String, body: Schema.String }),
  handler: ({ body, title }) => Effect.sync(() => notes.set(title, body)).pipe(Effect.as(`saved ${title}`))
})

const listNotes = McpTool.make("list_notes", {
  description: "The titles of every note",
  handler: () => Effect.succeed([...notes.keys()].join("\n"))
})

const note = McpResource.template({
  uriTemplate: "note://{title}",
  name: "note",
  mimeType: "text/plain",
  read: ({ title }) => Effect.succeed(notes.get(title) ?? "")
})

NodeMcpStdio.runServer(McpServer.layer({ name: "notes", version: "1.0.0" }, addNote, listNotes, note))
