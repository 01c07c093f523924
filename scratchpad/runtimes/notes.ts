/**
 * The notes server's definitions, served by http-server.ts (Bun, Deno) and
 * worker.ts (workerd): three tools (`ask_title` elicits; its answer names the
 * era it was asked in) and a resource template.
 */
import { McpResource, McpTool } from "@effect-mcp/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

// in memory: kept while the process (on Workers: the isolate) lives
const saved = new Map<string, string>()

const addNote = McpTool.make("add_note", {
  description: "Saves a note under a title",
  input: Schema.Struct({ title: Schema.String, body: Schema.String }),
  handler: ({ body, title }) => Effect.sync(() => saved.set(title, body)).pipe(Effect.as(`saved ${title}`))
})

const listNotes = McpTool.make("list_notes", {
  description: "The titles of every note",
  handler: () => Effect.succeed([...saved.keys()].join("\n"))
})

const askTitle = McpTool.make("ask_title", {
  description: "Asks the user for a title (elicitation), then saves an empty note under it",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Which title?", schema: Schema.Struct({ title: Schema.String }) }),
      (answer) => {
        if (answer.action !== "accept") return `no note [${context.era}]`
        saved.set(answer.content.title, "")
        return `saved ${answer.content.title} [${context.era}]`
      }
    )
})

const note = McpResource.template({
  uriTemplate: "note://{title}",
  name: "note",
  mimeType: "text/plain",
  read: ({ title }) => Effect.succeed(saved.get(title) ?? "")
})

/** The notes server's tools and template, to register. */
export const notes = [addNote, listNotes, askTitle, note] as const
