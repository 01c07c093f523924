/**
 * Testing a server with McpTest: a client connected in memory, the test's own
 * answers to the server's questions, and the test clock for time.
 */
import { McpContent, McpServer, McpTest, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"

const deleteNote = McpTool.make("delete_note", {
  input: Schema.Struct({ title: Schema.String }),
  handler: ({ title }, context) =>
    Effect.gen(function*() {
      const answer = yield* context.elicit({
        message: `Delete ${title}?`,
        schema: Schema.Struct({ confirm: Schema.Boolean })
      })
      return answer.action === "accept" && answer.content.confirm ? `deleted ${title}` : `kept ${title}`
    })
})

const archive = McpTool.make("archive", {
  handler: () => Effect.sleep("1 minute").pipe(Effect.as("archived"))
})

const Server = McpServer.layer({ name: "notes", version: "1.0.0" }, deleteNote, archive)

describe("the notes server", () => {
  it.effect("asks before deleting", () =>
    Effect.gen(function*() {
      const client = yield* McpTest.client(Server, {
        elicitation: { form: () => Effect.succeed({ action: "accept", content: { confirm: true } }) }
      })
      const result = yield* client.callTool("delete_note", { title: "groceries" })
      assert.strictEqual(McpContent.textOf(result), "deleted groceries")
    }))

  it.effect("a slow tool times out, on the test clock", () =>
    Effect.gen(function*() {
      const client = yield* McpTest.client(Server)
      const call = yield* client.callTool("archive", {}, { timeout: "5 seconds" }).pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(call)
      assert.strictEqual(error.reason._tag, "TimeoutError")
    }))
})
