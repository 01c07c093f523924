/**
 * Two servers sharing one `McpTaskStore` (as replicas sharing a store would):
 * a task started on one is read, answered and cancelled through the other;
 * the cancel reaches the handler's fiber on the server that runs it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Schema } from "effect"
import * as McpServer from "../src/McpServer.ts"
import * as McpTaskStore from "../src/McpTaskStore.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"

const twoServers = Effect.gen(function*() {
  const store = yield* McpTaskStore.makeMemory()
  const started = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const work = McpTool.make("work", {
    input: Schema.Struct({}),
    task: "required",
    handler: (_, context) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(started, undefined)
        if (context.meta?.["ask"] !== undefined) {
          // waits in the store for an answer
          yield* context.elicit({ message: "Go on?", schema: Schema.Struct({ go: Schema.Boolean }) })
        }
        // or just works
        return yield* Effect.never
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  })
  const replica = (name: string) =>
    McpServer.layer({ name, version: "1.0.0" }, work).pipe(
      Layer.provide(Layer.succeed(McpTaskStore.McpTaskStore, store))
    )
  // declares elicitation; the handle is never asked to answer here
  const elicitation = { form: () => Effect.succeed({ action: "decline" as const }) }
  const a = yield* McpTest.client(replica("a"), { elicitation })
  const b = yield* McpTest.client(replica("b"), { elicitation })
  return { a, b, started, interrupted }
})

describe("a task store shared by two servers", () => {
  it.effect("a working task started on one is seen on the other, and a cancel there interrupts the handler here", () =>
    Effect.gen(function*() {
      const { a, b, interrupted, started } = yield* twoServers
      const task = yield* a.callToolTask("work", {})
      yield* Deferred.await(started)
      const elsewhere = b.task(task.taskId)
      assert.strictEqual((yield* elsewhere.poll).status, "working")
      yield* elsewhere.cancel
      yield* Deferred.await(interrupted)
      assert.strictEqual((yield* task.poll).status, "cancelled")
    }).pipe(Effect.scoped))

  it.effect("a task waiting for input shows its question on the other server; a cancel there interrupts it here", () =>
    Effect.gen(function*() {
      const { a, b, interrupted, started } = yield* twoServers
      const task = yield* a.callToolTask("work", {}, { meta: { ask: true } })
      yield* Deferred.await(started)
      const elsewhere = b.task(task.taskId)
      // the question the handler asked is visible on the other server
      let state = yield* elsewhere.poll
      for (let i = 0; i < 100 && state.status !== "input_required"; i++) {
        yield* Effect.yieldNow
        state = yield* elsewhere.poll
      }
      assert.strictEqual(state.status, "input_required")
      yield* elsewhere.cancel
      yield* Deferred.await(interrupted)
      assert.strictEqual((yield* task.poll).status, "cancelled")
    }).pipe(Effect.scoped))
})
