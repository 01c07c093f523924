/**
 * The server every deployment below serves: notes, with a tool that asks its
 * user for a title (an elicitation: a request back to the client in the
 * legacy era, an input-required round in 2026-07-28).
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const notes = new Map<string, string>()

export const addNote = McpTool.make("add_note", {
  description: "Saves a note under a title",
  input: Schema.Struct({ title: Schema.String, body: Schema.String }),
  handler: ({ body, title }) => Effect.sync(() => notes.set(title, body)).pipe(Effect.as(`saved ${title}`))
})

export const askTitle = McpTool.make("ask_title", {
  description: "Asks for a title, then saves an empty note under it",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Which title?", schema: Schema.Struct({ title: Schema.String }) }),
      (answer) => answer.action === "accept" ? `saved ${answer.content.title}` : "no note"
    )
})

export const Notes = McpServer.layer({ name: "notes", version: "1.0.0" }, addNote, askTitle)
