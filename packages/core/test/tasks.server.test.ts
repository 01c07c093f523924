/**
 * The server's side of tasks, driven by raw JSON-RPC over in-memory
 * connections (no client task API): 2026-07-28 (`io.modelcontextprotocol/tasks`
 * declared per request: `resultType: "task"`, `tasks/get`, `tasks/update`,
 * `tasks/cancel`, `-32021` without the extension, TTL expiry) and 2025-11-25
 * (the `tasks` capability: `task` on `tools/call`, `tasks/get|result|list|cancel`,
 * `-32601` refusals, tasks per session). Cancels and the server's end are
 * seen in the handler (`Effect.onInterrupt`). Time is TestClock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Queue, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { settle } from "./utils/peer.ts"
import { rpcPeer } from "./utils/rpcPeer.ts"

const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"
const TASKS = McpSchema.TASKS_EXTENSION_ID
const RELATED = McpSchema.RELATED_TASK_META_KEY
const clientInfo = { name: "raw", version: "1" }

type Peer = Effect.Success<ReturnType<typeof rpcPeer>>

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

interface Probes {
  readonly started: Deferred.Deferred<void>
  readonly release: Deferred.Deferred<void>
  readonly interrupted: Deferred.Deferred<void>
}

const makeProbes = Effect.all({
  started: Deferred.make<void>(),
  release: Deferred.make<void>(),
  interrupted: Deferred.make<void>()
})

const tools = (probes: Probes) => [
  McpTool.make("build", {
    description: "Works until released; records its interruption",
    input: Schema.Struct({ target: Schema.String }),
    task: "optional",
    handler: ({ target }) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(probes.started, undefined)
        yield* Deferred.await(probes.release)
        return `built ${target}`
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(probes.interrupted, undefined)))
  }),
  McpTool.make("render", {
    description: "Always a task",
    input: Schema.Struct({}),
    task: "required",
    handler: () => Effect.as(Deferred.await(probes.release), "rendered")
  }),
  McpTool.make("plain", {
    description: "Never a task",
    input: Schema.Struct({}),
    handler: () => Effect.succeed("plain")
  }),
  McpTool.make("confirm", {
    description: "Asks for a confirmation mid-run",
    input: Schema.Struct({}),
    task: "optional",
    handler: (_, context) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(probes.started, undefined)
        const answer = yield* context.elicit({
          message: "Go on?",
          schema: Schema.Struct({ ok: Schema.Boolean }),
          inputKey: "go"
        })
        return answer.action === "accept" && answer.content.ok ? "confirmed" : "declined"
      })
  })
]

const serve = (options: Partial<McpServer.Options> = {}) =>
  Effect.gen(function*() {
    const probes = yield* makeProbes
    const server = yield* McpServer.make({ name: "tasks", version: "1.0.0", ...options })
    for (const tool of tools(probes)) yield* server.register(tool)
    const connect = Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      return yield* rpcPeer(clientEnd)
    })
    return { server, probes, connect }
  })

const textOf = (result: any): string => result.content[0].text

/** An empty 2026-07-28 acknowledgement (`resultType: "complete"` and the server's `_meta`). */
const assertAck = (result: any) => {
  const { _meta, ...rest } = result
  assert.deepStrictEqual(rest, { resultType: "complete" })
}

// -----------------------------------------------------------------------------
// 2026-07-28
// -----------------------------------------------------------------------------

const DECLARED: McpSchema.ClientCapabilities = { elicitation: {}, extensions: { [TASKS]: {} } }

const modernMeta = (capabilities: McpSchema.ClientCapabilities = DECLARED) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": capabilities
})

const modern = (
  peer: Peer,
  method: string,
  params: Record<string, unknown>,
  capabilities?: McpSchema.ClientCapabilities
) => peer.call(method, { ...params, _meta: modernMeta(capabilities) })

/** `tasks/get` until `done` says so (at most 50 times, letting the server's fibers run in between). */
const getUntil = (peer: Peer, taskId: string, done: (result: any) => boolean) =>
  Effect.gen(function*() {
    let answer = yield* modern(peer, "tasks/get", { taskId })
    for (let i = 0; i < 50 && !(answer.result !== undefined && done(answer.result)); i++) {
      yield* settle
      answer = yield* modern(peer, "tasks/get", { taskId })
    }
    return answer
  })

describe("tasks, 2026-07-28 (in memory)", () => {
  it.effect("an optional tool called by a request that declared the extension answers resultType task; tasks/get then has the result", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve({ tasks: { pollInterval: "2 seconds" } })
      const peer = yield* connect
      const created = yield* modern(peer, "tools/call", { name: "build", arguments: { target: "app" } })
      assert.isUndefined(created.error)
      const task = created.result
      assert.strictEqual(task.resultType, "task")
      assert.strictEqual(task.status, "working")
      assert.isString(task.taskId)
      assert.strictEqual(task.ttlMs, 60 * 60 * 1000)
      assert.strictEqual(task.pollIntervalMs, 2000)
      assert.strictEqual(task.createdAt, new Date(0).toISOString())
      assert.isUndefined(task.task)
      assert.isUndefined(task.content)
      yield* Deferred.await(probes.started)

      // polled from another connection
      const other = yield* connect
      const working = yield* modern(other, "tasks/get", { taskId: task.taskId })
      assert.strictEqual(working.result.resultType, "complete")
      assert.strictEqual(working.result.status, "working")
      assert.isUndefined(working.result.result)

      yield* TestClock.adjust("5 seconds")
      yield* Deferred.succeed(probes.release, undefined)
      const done = yield* getUntil(other, task.taskId, (result) => result.status === "completed")
      assert.strictEqual(done.result.status, "completed")
      assert.strictEqual(textOf(done.result.result), "built app")
      assert.strictEqual(done.result.lastUpdatedAt, new Date(5000).toISOString())
      // the result carries no related-task meta in 2026-07-28
      assert.isUndefined(done.result.result._meta?.[RELATED])
    }).pipe(Effect.scoped))

  it.effect("a request that did not declare the extension: optional runs plainly, required is -32021, tasks/* are -32021", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const peer = yield* connect
      yield* Deferred.succeed(probes.release, undefined)
      const bare: McpSchema.ClientCapabilities = { elicitation: {} }
      const plain = yield* modern(peer, "tools/call", { name: "build", arguments: { target: "x" } }, bare)
      assert.strictEqual(plain.result.resultType, "complete")
      assert.strictEqual(textOf(plain.result), "built x")
      // the legacy `task` param never makes a task in 2026-07-28
      const legacyParam = yield* modern(peer, "tools/call", {
        name: "build",
        arguments: { target: "y" },
        task: { ttl: 1000 }
      }, bare)
      assert.strictEqual(legacyParam.result.resultType, "complete")

      const required = yield* modern(peer, "tools/call", { name: "render", arguments: {} }, bare)
      assert.strictEqual(required.error?.code, JsonRpc.ErrorCode.MissingRequiredClientCapability)
      assert.deepStrictEqual(required.error?.data?.requiredCapabilities, { extensions: { [TASKS]: {} } })

      const created = yield* modern(peer, "tools/call", { name: "render", arguments: {} })
      assert.strictEqual(created.result.resultType, "task")
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const params = method === "tasks/update"
          ? { taskId: created.result.taskId, inputResponses: {} }
          : { taskId: created.result.taskId }
        const refused = yield* modern(peer, method, params, bare)
        assert.strictEqual(refused.error?.code, JsonRpc.ErrorCode.MissingRequiredClientCapability, method)
      }
      // a forbidden tool never becomes a task
      const forbidden = yield* modern(peer, "tools/call", { name: "plain", arguments: {} })
      assert.strictEqual(forbidden.result.resultType, "complete")
      assert.strictEqual(textOf(forbidden.result), "plain")
    }).pipe(Effect.scoped))

  it.effect("tasks/cancel interrupts the handler's fiber; tasks/get then says cancelled; a second cancel is acknowledged", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const peer = yield* connect
      const created = yield* modern(peer, "tools/call", { name: "build", arguments: { target: "app" } })
      yield* Deferred.await(probes.started)
      const taskId = created.result.taskId
      const unknown = yield* modern(peer, "tasks/cancel", { taskId: "no-such-task" })
      assert.strictEqual(unknown.error?.code, JsonRpc.ErrorCode.InvalidParams)
      const ack = yield* modern(peer, "tasks/cancel", { taskId })
      assertAck(ack.result)
      yield* Deferred.await(probes.interrupted)
      const got = yield* modern(peer, "tasks/get", { taskId })
      assert.strictEqual(got.result.status, "cancelled")
      assert.isUndefined(got.result.result)
      assertAck((yield* modern(peer, "tasks/cancel", { taskId })).result)
      // released after the cancel: stays cancelled
      yield* Deferred.succeed(probes.release, undefined)
      yield* settle
      assert.strictEqual((yield* modern(peer, "tasks/get", { taskId })).result.status, "cancelled")
    }).pipe(Effect.scoped))

  it.effect("a task expires ttl after its creation (TestClock): then tasks/get is -32602", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve({ tasks: { ttl: "1 minute" } })
      const peer = yield* connect
      yield* Deferred.succeed(probes.release, undefined)
      const created = yield* modern(peer, "tools/call", { name: "build", arguments: { target: "app" } })
      const taskId = created.result.taskId
      assert.strictEqual(created.result.ttlMs, 60_000)
      const done = yield* getUntil(peer, taskId, (result) => result.status === "completed")
      assert.strictEqual(done.result.status, "completed")
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual((yield* modern(peer, "tasks/get", { taskId })).result.status, "completed")
      yield* TestClock.adjust("1 second")
      const gone = yield* modern(peer, "tasks/get", { taskId })
      assert.strictEqual(gone.error?.code, JsonRpc.ErrorCode.InvalidParams)
      assert.isUndefined(gone.result)
    }).pipe(Effect.scoped))

  it.effect("input mid-run: input_required with inputRequests, a bad answer refused (-32602, still outstanding), a good one completes it", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const peer = yield* connect
      const created = yield* modern(peer, "tools/call", { name: "confirm", arguments: {} })
      assert.strictEqual(created.result.resultType, "task")
      const taskId = created.result.taskId
      yield* Deferred.await(probes.started)
      const waiting = yield* getUntil(peer, taskId, (result) => result.status === "input_required")
      assert.strictEqual(waiting.result.status, "input_required")
      const keys = Object.keys(waiting.result.inputRequests)
      assert.deepStrictEqual(keys, ["go"])
      assert.strictEqual(waiting.result.inputRequests.go.method, "elicitation/create")
      assert.strictEqual(waiting.result.inputRequests.go.params.message, "Go on?")

      const bad = yield* modern(peer, "tasks/update", { taskId, inputResponses: { go: { action: "maybe" } } })
      assert.strictEqual(bad.error?.code, JsonRpc.ErrorCode.InvalidParams)
      yield* settle
      const still = yield* modern(peer, "tasks/get", { taskId })
      assert.strictEqual(still.result.status, "input_required")
      assert.deepStrictEqual(Object.keys(still.result.inputRequests), ["go"])

      // unknown keys are ignored
      const ignored = yield* modern(peer, "tasks/update", { taskId, inputResponses: { nope: { action: "decline" } } })
      assertAck(ignored.result)
      const good = yield* modern(peer, "tasks/update", {
        taskId,
        inputResponses: { go: { action: "accept", content: { ok: true } } }
      })
      assertAck(good.result)
      const done = yield* getUntil(peer, taskId, (result) => result.status === "completed")
      assert.strictEqual(done.result.status, "completed")
      assert.strictEqual(textOf(done.result.result), "confirmed")
      assert.isUndefined(done.result.inputRequests)
    }).pipe(Effect.scoped))

  it.effect("unknown task ids: tasks/get and tasks/update are -32602", () =>
    Effect.gen(function*() {
      const { connect } = yield* serve()
      const peer = yield* connect
      const got = yield* modern(peer, "tasks/get", { taskId: "no-such-task" })
      assert.strictEqual(got.error?.code, JsonRpc.ErrorCode.InvalidParams)
      const updated = yield* modern(peer, "tasks/update", { taskId: "no-such-task", inputResponses: {} })
      assert.strictEqual(updated.error?.code, JsonRpc.ErrorCode.InvalidParams)
    }).pipe(Effect.scoped))

  it.effect("subscriptions/listen with taskIds: the requestor's tasks are agreed to, each change comes as notifications/tasks", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const peer = yield* connect
      const created = yield* modern(peer, "tools/call", { name: "build", arguments: { target: "site" } })
      const taskId = created.result.taskId as string
      // asking for task ids needs the extension
      const bare = yield* modern(peer, "subscriptions/listen", { notifications: { taskIds: [taskId] } }, {
        elicitation: {}
      })
      assert.strictEqual(bare.error?.code, JsonRpc.ErrorCode.MissingRequiredClientCapability)

      const listening = yield* Effect.forkChild(
        modern(peer, "subscriptions/listen", { notifications: { taskIds: [taskId, "not-a-task"] } })
      )
      const acknowledged = yield* Queue.take(peer.others)
      assert.strictEqual(acknowledged.method, "notifications/subscriptions/acknowledged")
      assert.deepStrictEqual(acknowledged.params.notifications, { taskIds: [taskId] })
      yield* Deferred.succeed(probes.release, undefined)
      const notice = yield* Queue.take(peer.others)
      assert.strictEqual(notice.method, "notifications/tasks")
      assert.strictEqual(notice.params.taskId, taskId)
      assert.strictEqual(notice.params.status, "completed")
      assert.strictEqual(textOf(notice.params.result), "built site")
      assert.strictEqual(
        notice.params._meta["io.modelcontextprotocol/subscriptionId"],
        acknowledged.params._meta["io.modelcontextprotocol/subscriptionId"]
      )
      yield* Fiber.interrupt(listening)
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// 2025-11-25
// -----------------------------------------------------------------------------

/** A legacy session opened by hand: initialize, initialized. */
const openLegacy = (connect: Effect.Effect<Peer, never, Scope.Scope>) =>
  Effect.gen(function*() {
    const peer = yield* connect
    const init = yield* peer.call("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo })
    yield* peer.notify("notifications/initialized")
    return { peer, init }
  })

describe("tasks, 2025-11-25 (in memory)", () => {
  it.effect("initialize advertises tasks; tools/list shows taskSupport; a task's life: get, result, list", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const { init, peer } = yield* openLegacy(connect)
      const capabilities = init.result.capabilities
      assert.deepStrictEqual(capabilities.tasks?.requests?.tools?.call, {})
      assert.isDefined(capabilities.tasks?.list)
      assert.isDefined(capabilities.tasks?.cancel)
      assert.isUndefined(capabilities.extensions)

      const listed = yield* peer.call("tools/list", {})
      const support = Object.fromEntries(
        listed.result.tools.map((tool: McpSchema.Tool) => [tool.name, tool.execution?.taskSupport])
      )
      assert.deepStrictEqual(support, { build: "optional", confirm: "optional", plain: undefined, render: "required" })

      yield* TestClock.setTime(1_000)
      const created = yield* peer.call("tools/call", {
        name: "build",
        arguments: { target: "lib" },
        task: { ttl: 60_000 }
      })
      assert.isUndefined(created.error)
      const task = created.result.task
      assert.deepStrictEqual(Object.keys(task).sort(), [
        "createdAt",
        "lastUpdatedAt",
        "pollInterval",
        "status",
        "taskId",
        "ttl"
      ])
      assert.strictEqual(task.status, "working")
      assert.strictEqual(task.ttl, 60_000)
      assert.strictEqual(task.pollInterval, 1000)
      assert.strictEqual(task.createdAt, new Date(1_000).toISOString())
      assert.strictEqual(task.lastUpdatedAt, task.createdAt)
      yield* Deferred.await(probes.started)

      const got = yield* peer.call("tasks/get", { taskId: task.taskId })
      assert.strictEqual(got.result.status, "working")
      assert.strictEqual(got.result.taskId, task.taskId)
      assert.isUndefined(got.result.resultType)

      // tasks/result waits for the end
      const waiting = yield* peer.call("tasks/result", { taskId: task.taskId }).pipe(Effect.forkChild)
      yield* settle
      assert.isUndefined(waiting.pollUnsafe())
      yield* Deferred.succeed(probes.release, undefined)
      const result = yield* Fiber.join(waiting)
      assert.isUndefined(result.error)
      assert.strictEqual(textOf(result.result), "built lib")
      assert.deepStrictEqual(result.result._meta?.[RELATED], { taskId: task.taskId })

      const listedTasks = yield* peer.call("tasks/list", {})
      assert.deepStrictEqual(listedTasks.result.tasks.map((t: McpSchema.Task) => [t.taskId, t.status]), [[
        task.taskId,
        "completed"
      ]])

      // cancelling a finished task: -32602
      const late = yield* peer.call("tasks/cancel", { taskId: task.taskId })
      assert.strictEqual(late.error?.code, JsonRpc.ErrorCode.InvalidParams)
    }).pipe(Effect.scoped))

  it.effect("the requested ttl is capped by maxTtl; a task expires then (TestClock)", () =>
    Effect.gen(function*() {
      const { connect } = yield* serve({ tasks: { maxTtl: "10 seconds" } })
      const { peer } = yield* openLegacy(connect)
      const created = yield* peer.call("tools/call", {
        name: "build",
        arguments: { target: "x" },
        task: { ttl: 60_000 }
      })
      assert.strictEqual(created.result.task.ttl, 10_000)
      yield* TestClock.adjust("10 seconds")
      const gone = yield* peer.call("tasks/get", { taskId: created.result.task.taskId })
      assert.strictEqual(gone.error?.code, JsonRpc.ErrorCode.InvalidParams)
    }).pipe(Effect.scoped))

  it.effect("tasks/cancel answers the task cancelled and interrupts the handler; tasks/result then fails", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const { peer } = yield* openLegacy(connect)
      const created = yield* peer.call("tools/call", { name: "build", arguments: { target: "x" }, task: {} })
      const taskId = created.result.task.taskId
      yield* Deferred.await(probes.started)
      const cancelled = yield* peer.call("tasks/cancel", { taskId })
      assert.strictEqual(cancelled.result.status, "cancelled")
      assert.strictEqual(cancelled.result.taskId, taskId)
      yield* Deferred.await(probes.interrupted)
      assert.strictEqual((yield* peer.call("tasks/get", { taskId })).result.status, "cancelled")
      const result = yield* peer.call("tasks/result", { taskId })
      assert.isDefined(result.error)
      const again = yield* peer.call("tasks/cancel", { taskId })
      assert.strictEqual(again.error?.code, JsonRpc.ErrorCode.InvalidParams)
    }).pipe(Effect.scoped))

  it.effect("a required tool without task and a forbidden tool with task are -32601", () =>
    Effect.gen(function*() {
      const { connect } = yield* serve()
      const { peer } = yield* openLegacy(connect)
      const required = yield* peer.call("tools/call", { name: "render", arguments: {} })
      assert.strictEqual(required.error?.code, JsonRpc.ErrorCode.MethodNotFound)
      const forbidden = yield* peer.call("tools/call", { name: "plain", arguments: {}, task: { ttl: 1000 } })
      assert.strictEqual(forbidden.error?.code, JsonRpc.ErrorCode.MethodNotFound)
      // and without task, an optional one is a plain call
      const plain = yield* peer.call("tools/call", { name: "plain", arguments: {} })
      assert.strictEqual(textOf(plain.result), "plain")
    }).pipe(Effect.scoped))

  it.effect("one session's tasks are not another's: get, result, cancel are -32602, list is empty", () =>
    Effect.gen(function*() {
      const { connect, probes } = yield* serve()
      const mine = yield* openLegacy(connect)
      const theirs = yield* openLegacy(connect)
      const created = yield* mine.peer.call("tools/call", { name: "build", arguments: { target: "x" }, task: {} })
      const taskId = created.result.task.taskId
      yield* Deferred.await(probes.started)
      for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
        const refused = yield* theirs.peer.call(method, { taskId })
        assert.strictEqual(refused.error?.code, JsonRpc.ErrorCode.InvalidParams, method)
      }
      assert.deepStrictEqual((yield* theirs.peer.call("tasks/list", {})).result.tasks, [])
      assert.isFalse(yield* Deferred.isDone(probes.interrupted))
      assert.strictEqual((yield* mine.peer.call("tasks/get", { taskId })).result.status, "working")
      // a 2026-07-28 request (no auth: "anonymous") does not find a session's task either
      const modernGet = yield* modern(yield* connect, "tasks/get", { taskId })
      assert.strictEqual(modernGet.error?.code, JsonRpc.ErrorCode.InvalidParams)
    }).pipe(Effect.scoped))

  it.effect("tasks/list pages newest first; a bad cursor is -32602", () =>
    Effect.gen(function*() {
      const { connect } = yield* serve()
      const { peer } = yield* openLegacy(connect)
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        ids.push(
          (yield* peer.call("tools/call", { name: "build", arguments: { target: `${i}` }, task: {} })).result.task
            .taskId
        )
      }
      const listed = yield* peer.call("tasks/list", {})
      assert.deepStrictEqual(listed.result.tasks.map((t: McpSchema.Task) => t.taskId), [...ids].reverse())
      const bad = yield* peer.call("tasks/list", { cursor: "not-a-cursor" })
      assert.strictEqual(bad.error?.code, JsonRpc.ErrorCode.InvalidParams)
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// No leaks
// -----------------------------------------------------------------------------

describe("tasks and the server's scope", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.effect(`${era}: closing the server layer's scope interrupts a running task's fiber`, () =>
      Effect.gen(function*() {
        const probes = yield* makeProbes
        const serverScope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          McpServer.layer({ name: "tasks", version: "1.0.0" }, ...tools(probes)),
          serverScope
        )
        const server = context.mapUnsafe.get(McpServer.McpServer.key) as McpServer.Server
        const connect = Effect.gen(function*() {
          const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
          yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
          return yield* rpcPeer(clientEnd)
        })
        const created = era === "modern"
          ? yield* modern(yield* connect, "tools/call", { name: "build", arguments: { target: "x" } })
          : yield* Effect.flatMap(
            openLegacy(connect),
            ({ peer }) => peer.call("tools/call", { name: "build", arguments: { target: "x" }, task: {} })
          )
        assert.isUndefined(created.error)
        yield* Deferred.await(probes.started)
        assert.isFalse(yield* Deferred.isDone(probes.interrupted))
        yield* Scope.close(serverScope, Exit.void)
        yield* Deferred.await(probes.interrupted)
      }).pipe(Effect.scoped))
  }
})
