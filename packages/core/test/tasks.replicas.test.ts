/**
 * Tasks of replicas sharing one store (in process: two servers, one memory
 * store, the registry hub of test/utils/registryHub.ts for liveness): each
 * task is recorded as run by the replica whose fiber runs it; once that
 * replica is gone, the next replica asked about the task fails it (its
 * fiber ended with the replica), and a 2025-11-25 `tasks/result` waiting on
 * another replica ends then too. Time is TestClock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Answers from "../src/internal/task/answers.ts"
import * as Tasks from "../src/internal/task/tasks.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSessionRegistry from "../src/McpSessionRegistry.ts"
import * as McpTaskStore from "../src/McpTaskStore.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { makeHub } from "./utils/registryHub.ts"
import { rpcPeer } from "./utils/rpcPeer.ts"

const MODERN = "2026-07-28"
const meta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [McpSchema.TASKS_EXTENSION_ID]: {} } }
}

const render = McpTool.make("render", { input: Schema.Struct({}), task: "required", handler: () => Effect.never })

const makeReplicas = Effect.gen(function*() {
  const hub = makeHub()
  const store = yield* McpTaskStore.makeMemory()
  const replica = (name: string) =>
    Effect.gen(function*() {
      const registry = yield* hub.replica(name)
      const server = yield* McpServer.make({ name: "tasks", version: "1.0.0", tasks: { pollInterval: "1 second" } })
        .pipe(
          Effect.provideService(McpSessionRegistry.McpSessionRegistry, registry),
          Effect.provideService(McpTaskStore.McpTaskStore, store)
        )
      yield* server.register(render)
      const connect = Effect.gen(function*() {
        const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
        yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
        return yield* rpcPeer(clientEnd)
      })
      return { connect }
    })
  return { hub, store, replica }
})

describe("tasks across replicas", () => {
  it.effect("a task whose replica is gone is failed by the next replica asked about it", () =>
    Effect.gen(function*() {
      const { hub, replica, store } = yield* makeReplicas
      const a = yield* (yield* replica("a")).connect
      const b = yield* (yield* replica("b")).connect
      const created = yield* a.call("tools/call", { name: "render", arguments: {}, _meta: meta })
      const taskId = created.result.taskId as string
      // recorded as run by `a` (the requestor of an anonymous modern request)
      const record = yield* store.get({ requestor: "anonymous", taskId })
      assert.strictEqual(record._tag === "Some" && record.value.runner, "a")
      // `a` alive: `b` answers what the store says
      const working = yield* b.call("tasks/get", { taskId, _meta: meta })
      assert.strictEqual(working.result.status, "working")
      hub.kill("a")
      const failed = yield* b.call("tasks/get", { taskId, _meta: meta })
      assert.strictEqual(failed.result.status, "failed")
      assert.include(failed.result.statusMessage, "The replica running this task (a) is gone")
      assert.strictEqual(failed.result.error.code, -32000)
    }).pipe(Effect.scoped))

  it.effect("a tasks/result waiting on another replica ends when the runner is gone", () =>
    Effect.gen(function*() {
      let aliveA = true
      const store = yield* McpTaskStore.makeMemory()
      const tasks = yield* Tasks.make(undefined, { replica: "b", isLive: (id) => Effect.succeed(id !== "a" || aliveA) })
        .pipe(
          Effect.provideService(McpTaskStore.McpTaskStore, store)
        )
      const key = { requestor: "ada", taskId: "t1" }
      yield* store.create({ ...(yield* Tasks.newRecord(tasks, key, undefined)), runner: "a" })
      const waiting = yield* Answers.result(tasks, key).pipe(Effect.flip, Effect.forkChild({ startImmediately: true }))
      yield* TestClock.adjust("5 seconds")
      assert.isUndefined(waiting.pollUnsafe())
      aliveA = false
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(waiting)
      assert.include(error.message, "The replica running this task (a) is gone")
      const record = yield* store.get(key)
      assert.strictEqual(record._tag === "Some" && record.value.status, "failed")
    }))
})
