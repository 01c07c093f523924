/**
 * Type-level tests of `McpTool.make`, compiled by `npm run typecheck`
 * (`tsc -b`): each `@ts-expect-error` line must fail to compile, or the build
 * fails. Nothing here runs.
 */
import { Context, Effect, Schema } from "effect"
import * as McpTool from "../../src/McpTool.ts"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const check = <T extends true>(): T => true as T

class Notes extends Context.Service<Notes, { readonly all: Effect.Effect<ReadonlyArray<string>> }>()("types/Notes") {}

// A tool without input: the handler takes no arguments (or an empty input and the context).
const listNotes = McpTool.make("list_notes", {
  description: "Lists notes",
  handler: () => Notes.use((notes) => Effect.map(notes.all, (all) => all.join("\n")))
})
check<Equals<typeof listNotes, McpTool.McpTool<Notes>>>()

McpTool.make("with_context", {
  handler: (input, context) => {
    check<Equals<typeof input, McpTool.NoInput>>()
    return Effect.succeed(context.method)
  }
})

// ...with an output Schema, even one that is not an object (wrapped as { result }).
const tags = McpTool.make("tags", {
  output: Schema.Array(Schema.String),
  handler: () => Effect.succeed(["a"])
})
check<Equals<typeof tags, McpTool.McpTool<never>>>()

// @ts-expect-error the handler must return the output's type
McpTool.make("tags", { output: Schema.Array(Schema.String), handler: () => Effect.succeed([1]) })

McpTool.make("no_input", {
  // @ts-expect-error without input there is no field to read
  handler: (input) => Effect.succeed(input.text.toUpperCase())
})

// With input, the handler's argument is the decoded input, as before.
McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => {
    check<Equals<typeof text, string>>()
    return Effect.succeed(text)
  }
})

McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  // @ts-expect-error a string is not a result
  handler: ({ text }) => Effect.succeed(text.length)
})
