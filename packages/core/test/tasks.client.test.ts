/**
 * The client's side of tasks, in both eras, against this SDK's server in
 * memory: `callToolTask` handles (status, result, cancel), `callTool` waiting
 * for a task transparently, input asked by a task answered by the client's
 * elicitation handler, and task handles through a group. Time is TestClock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import type * as McpClientSession from "../src/McpClientSession.ts"
import * as McpError from "../src/McpError.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"

const eras: ReadonlyArray<McpClientSession.Era> = ["modern", "legacy"]

const textOf = (result: McpSchema.CallToolResult) =>
  result.content.map((block) => block.type === "text" ? block.text : "").join("")

// a tool that works until `release` is done, and records its interruption
const makeServer = (release: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>) => {
  const build = McpTool.make("build", {
    description: "A long build",
    input: Schema.Struct({ target: Schema.String }),
    task: "optional",
    handler: ({ target }, context) =>
      Effect.gen(function*() {
        yield* context.reportProgress({ progress: 1, total: 2, message: "compiling" })
        yield* Deferred.await(release)
        return `built ${target}`
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  })
  const render = McpTool.make("render", {
    description: "Renders after a confirmation; always a task",
    input: Schema.Struct({}),
    task: "required",
    handler: (_, context) =>
      Effect.map(
        context.elicit({ message: "Render?", schema: Schema.Struct({ ok: Schema.Boolean }) }),
        (answer) => answer.action === "accept" && answer.content.ok ? "rendered" : "not rendered"
      )
  })
  const broken = McpTool.make("broken", {
    description: "Fails with a JSON-RPC error",
    input: Schema.Struct({}),
    task: "required",
    handler: () => Effect.fail(McpTool.protocolError(-32050, "broken on purpose"))
  })
  return McpServer.layer(
    { name: "tasks", version: "1.0.0", tasks: { pollInterval: "1 second" } },
    build,
    render,
    broken
  )
}

const elicitation = {
  form: () => Effect.succeed({ action: "accept" as const, content: { ok: true } })
}

describe("McpClient tasks", () => {
  for (const era of eras) {
    describe(era, () => {
      it.effect("callToolTask: a handle whose status ends completed, its result the tool's", () =>
        Effect.gen(function*() {
          const release = yield* Deferred.make<void>()
          const interrupted = yield* Deferred.make<void>()
          const client = yield* McpTest.client(makeServer(release, interrupted), { era })
          const task = yield* client.callToolTask("build", { target: "app" })
          assert.notStrictEqual(task.taskId, "")
          assert.strictEqual((yield* task.poll).status, "working")
          const states = yield* Stream.runCollect(task.status).pipe(Effect.forkChild)
          yield* TestClock.adjust("1 second")
          yield* Deferred.succeed(release, undefined)
          yield* TestClock.adjust("2 seconds")
          const seen = (yield* Fiber.join(states)).map((state) => state.status)
          assert.strictEqual(seen[0], "working")
          assert.strictEqual(seen[seen.length - 1], "completed")
          const result = yield* task.result
          assert.strictEqual(textOf(result), "built app")
        }).pipe(Effect.scoped))

      it.effect("cancel interrupts the handler's fiber; the task ends cancelled and its result fails", () =>
        Effect.gen(function*() {
          const release = yield* Deferred.make<void>()
          const interrupted = yield* Deferred.make<void>()
          const client = yield* McpTest.client(makeServer(release, interrupted), { era })
          const task = yield* client.callToolTask("build", { target: "app" })
          yield* task.cancel
          yield* Deferred.await(interrupted)
          assert.strictEqual((yield* task.poll).status, "cancelled")
          const error = yield* Effect.flip(task.result)
          assert.strictEqual(error.reason._tag, "ProtocolError")
        }).pipe(Effect.scoped))

      it.effect("callTool on a required tool runs the task and waits; its elicitation is answered by the client's handler", () =>
        Effect.gen(function*() {
          const client = yield* McpTest.client(makeServer(yield* Deferred.make<void>(), yield* Deferred.make<void>()), {
            era,
            elicitation
          })
          const fiber = yield* Effect.forkChild(client.callTool("render", {}))
          // polls (2026-07-28) wait on the clock
          for (let i = 0; i < 5 && fiber.pollUnsafe() === undefined; i++) yield* TestClock.adjust("1 second")
          const result = yield* Fiber.join(fiber)
          assert.strictEqual(textOf(result), "rendered")
        }).pipe(Effect.scoped))

      it.effect("a task failing with a JSON-RPC error: result fails with that error", () =>
        Effect.gen(function*() {
          const client = yield* McpTest.client(makeServer(yield* Deferred.make<void>(), yield* Deferred.make<void>()), {
            era
          })
          const task = yield* client.callToolTask("broken", {})
          const fiber = yield* Effect.forkChild(Effect.flip(task.result))
          for (let i = 0; i < 5 && fiber.pollUnsafe() === undefined; i++) yield* TestClock.adjust("1 second")
          const error = yield* Fiber.join(fiber)
          assert.deepInclude(error.reason, { _tag: "ProtocolError", code: -32050 })
        }).pipe(Effect.scoped))
    })
  }

  it.effect("modern: status messages reach onProgress; a task is resumed by id with client.task", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const client = yield* McpTest.client(makeServer(release, yield* Deferred.make<void>()))
      const first = yield* client.callToolTask("build", { target: "lib" })
      const messages: Array<string> = []
      const again = client.task(first.taskId, {
        onProgress: (progress) => Effect.sync(() => void messages.push(progress.message ?? ""))
      })
      const fiber = yield* Effect.forkChild(again.result)
      yield* TestClock.adjust("1 second")
      yield* Deferred.succeed(release, undefined)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(textOf(yield* Fiber.join(fiber)), "built lib")
      assert.deepStrictEqual(messages, ["compiling"])
    }).pipe(Effect.scoped))

  it.effect("modern: the status stream follows notifications/tasks from a listen stream, without waiting for the next poll", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const client = yield* McpTest.client(makeServer(release, yield* Deferred.make<void>()))
      const task = yield* client.callToolTask("build", { target: "docs" })
      const states = yield* Stream.runCollect(task.status).pipe(Effect.forkChild)
      // the first poll and the listen stream's acknowledgement, with no time passing
      for (let i = 0; i < 50; i++) yield* Effect.yieldNow
      yield* Deferred.succeed(release, undefined)
      for (let i = 0; i < 200 && states.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
      assert.isDefined(states.pollUnsafe(), "the stream ended without the clock moving")
      const seen = (yield* Fiber.join(states)).map((state) => state.status)
      assert.strictEqual(seen[seen.length - 1], "completed")
    }).pipe(Effect.scoped))

  it.effect("a task still running when it expires is interrupted and forgotten; its result fails at once", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const slow = McpTool.make("slow", {
        input: Schema.Struct({}),
        task: "required",
        handler: () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      })
      const client = yield* McpTest.client(
        McpServer.layer({ name: "expiring", version: "1.0.0", tasks: { ttl: "1 minute" } }, slow),
        { era: "legacy" }
      )
      const task = yield* client.callToolTask("slow", {})
      const waiting = yield* Effect.forkChild(Effect.flip(task.result))
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual((yield* task.poll).status, "working")
      yield* TestClock.adjust("1 second")
      yield* Deferred.await(interrupted)
      const error = yield* Fiber.join(waiting)
      assert.deepInclude(error.reason, { _tag: "ProtocolError", code: -32602 })
      assert.deepInclude((yield* Effect.flip(task.poll)).reason, { _tag: "ProtocolError", code: -32602 })
    }).pipe(Effect.scoped))

  for (const era of eras) {
    it.effect(`${era}: an ask's own timeout ends the wait in a task (the tool's error result), no idle limit otherwise`, () =>
      Effect.gen(function*() {
        const patient = McpTool.make("patient", {
          input: Schema.Struct({ seconds: Schema.Number }),
          task: "required",
          handler: ({ seconds }, context) =>
            Effect.map(
              context.elicit({
                message: "Well?",
                schema: Schema.Struct({ ok: Schema.Boolean }),
                timeout: `${seconds} seconds`
              }),
              (answer) => answer.action
            )
        })
        const answered = yield* Deferred.make<void>()
        const client = yield* McpTest.client(McpServer.layer({ name: "patient", version: "1.0.0" }, patient), {
          era,
          // answers only when told to
          elicitation: { form: () => Effect.as(Deferred.await(answered), { action: "decline" as const }) }
        })
        // a question that waits longer than the session's idle limit (60 s) is still answered
        const slow = yield* client.callToolTask("patient", { seconds: 600 })
        const slowResult = yield* Effect.forkChild(slow.result)
        const quick = yield* client.callToolTask("patient", { seconds: 5 })
        const quickResult = yield* Effect.forkChild(quick.result)
        for (let i = 0; i < 10 && quickResult.pollUnsafe() === undefined; i++) yield* TestClock.adjust("1 second")
        const timedOut = yield* Fiber.join(quickResult)
        assert.isTrue(timedOut.isError)
        yield* TestClock.adjust("2 minutes")
        yield* Deferred.succeed(answered, undefined)
        for (let i = 0; i < 10 && slowResult.pollUnsafe() === undefined; i++) yield* TestClock.adjust("1 second")
        assert.strictEqual(textOf(yield* Fiber.join(slowResult)), "decline")
      }).pipe(Effect.scoped))
  }

  it.effect("modern: with tasks: false the client does not declare the extension, and a required tool is refused (-32021)", () =>
    Effect.gen(function*() {
      const client = yield* McpTest.client(makeServer(yield* Deferred.make<void>(), yield* Deferred.make<void>()), {
        tasks: false
      })
      const error = yield* Effect.flip(client.callTool("render", {}))
      assert.deepInclude(error.reason, { _tag: "ProtocolError", code: -32021 })
    }).pipe(Effect.scoped))

  it.effect("legacy: the server asks for an elicitation as a task; the client runs its handler as one and answers tasks/get and tasks/result", () =>
    Effect.gen(function*() {
      const asker = McpTool.make("ask_as_task", {
        input: Schema.Struct({}),
        handler: (_, context) =>
          Effect.gen(function*() {
            const created = yield* context.session.request(McpSchema.ElicitTask, {
              mode: "form",
              message: "Render?",
              requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
              task: { ttl: 60_000 }
            })
            const state = yield* context.session.request(McpSchema.GetTask, { taskId: created.task.taskId })
            const payload = yield* context.session.request(McpSchema.GetTaskPayload, { taskId: created.task.taskId })
            const listed = yield* context.session.request(McpSchema.ListTasks, {})
            return JSON.stringify({
              created: created.task.status,
              polled: state.taskId === created.task.taskId,
              action: payload.action,
              content: payload.content,
              related: (payload._meta as Record<string, unknown>)[McpSchema.RELATED_TASK_META_KEY],
              taskId: created.task.taskId,
              listed: listed.tasks.map((task) => task.status)
            })
          })
      })
      const client = yield* McpTest.client(McpServer.layer({ name: "asker", version: "1.0.0" }, asker), {
        era: "legacy",
        elicitation
      })
      assert.deepStrictEqual(client.capabilities.tasks, {
        list: {},
        cancel: {},
        requests: { elicitation: { create: {} } }
      })
      const answer = JSON.parse(textOf(yield* client.callTool("ask_as_task", {})))
      assert.deepStrictEqual(answer.created, "working")
      assert.isTrue(answer.polled)
      assert.strictEqual(answer.action, "accept")
      assert.deepStrictEqual(answer.content, { ok: true })
      assert.deepStrictEqual(answer.related, { taskId: answer.taskId })
      assert.deepStrictEqual(answer.listed, ["completed"])
    }).pipe(Effect.scoped))

  it.effect("legacy: the server cancels a sampling task it asked for: the client's handler is interrupted", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const asker = McpTool.make("sample_then_cancel", {
        input: Schema.Struct({}),
        handler: (_, context) =>
          Effect.gen(function*() {
            const created = yield* context.session.request(McpSchema.CreateMessageTask, {
              messages: [{ role: "user", content: { type: "text", text: "hi" } }],
              maxTokens: 10,
              task: {}
            })
            const cancelled = yield* context.session.request(McpSchema.CancelTask, { taskId: created.task.taskId })
            return cancelled.status
          })
      })
      const client = yield* McpTest.client(McpServer.layer({ name: "asker", version: "1.0.0" }, asker), {
        era: "legacy",
        sampling: {
          handler: () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
        }
      })
      assert.strictEqual(textOf(yield* client.callTool("sample_then_cancel", {})), "cancelled")
      yield* Deferred.await(interrupted)
    }).pipe(Effect.scoped))

  it.effect("legacy: callToolTask to a server without tasks.requests.tools.call is unsupported", () =>
    Effect.gen(function*() {
      const plain = McpServer.layer(
        { name: "plain", version: "1.0.0" },
        McpTool.make("echo", { input: Schema.Struct({}), handler: () => Effect.succeed("hi") })
      )
      const client = yield* McpTest.client(plain, { era: "legacy" })
      const error = yield* Effect.flip(client.callToolTask("echo", {}))
      assert.strictEqual(error.reason._tag, "UnsupportedError")
      assert.isTrue(McpError.isMcpError(error))
    }).pipe(Effect.scoped))
})
