/**
 * Our client's task handles against a server in a child process over stdio,
 * in both eras: a task followed to its result (its status stream told of
 * changes by the server: `subscriptions/listen` in 2026-07-28,
 * `notifications/tasks/status` in 2025-11-25), a question asked mid-task
 * answered by the client's elicitation handler, and a cancel that interrupts
 * the handler in the child.
 */
import { McpClient, type McpClientSession, type McpSchema } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Stream } from "effect"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"

const fixture = fileURLToPath(new URL("./fixtures/tasks-stdio-server.ts", import.meta.url))

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.map((block) => block.type === "text" ? block.text : "").join("")

// the client and its child process last as long as the test's scope
const connect = (era: McpClientSession.Era) =>
  Effect.map(
    Layer.build(
      McpClient.layer({
        clientInfo: { name: "tasks-stdio-client", version: "1.0.0" },
        era,
        elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { ok: true } }) }
      }).pipe(Layer.provide(Layer.merge(
        NodeMcpStdio.layerClient({
          command: process.execPath,
          args: ["--conditions=development", fixture],
          stderr: "capture"
        }),
        NodeJsonSchemaValidator.layer
      )))
    ),
    (context) => Context.get(context, McpClient.McpClient)
  )

describe("McpClient tasks over stdio", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(
      `${era}: a task followed to its result; a question mid-task answered; a cancel interrupts the handler`,
      () =>
        Effect.gen(function*() {
          const client = yield* connect(era)
          assert.strictEqual(client.era, era)

          const cancelled = yield* client.callToolTask("build", { target: "never" })
          assert.notStrictEqual(cancelled.taskId, "")
          yield* cancelled.cancel
          assert.strictEqual(textOf(yield* client.callTool("was_interrupted", {})), "interrupted")
          assert.strictEqual((yield* cancelled.poll).status, "cancelled")

          const task = yield* client.callToolTask("build", { target: "app" })
          const states = yield* Effect.forkChild(Stream.runCollect(task.status))
          yield* client.callTool("release", {})
          assert.strictEqual(textOf(yield* task.result), "built app")
          const seen = (yield* Fiber.join(states)).map((state) => state.status)
          assert.strictEqual(seen[seen.length - 1], "completed")

          const asking = yield* client.callToolTask("confirm", {})
          assert.strictEqual(textOf(yield* asking.result), "confirmed")
        }).pipe(Effect.scoped, Effect.timeout("30 seconds")),
      40_000
    )
  }
})
