/**
 * 2025-11-25 tasks over stdio, against a server in a child process
 * (`fixtures/tasks-stdio-server.ts`), driven by raw JSON-RPC: the `tasks`
 * capability and `execution.taskSupport`; `tools/call` with `task` answered
 * with a `CreateTaskResult`; `tasks/get`, `tasks/result` (waits; the result
 * tagged with the task), `tasks/list`, `tasks/cancel` (the handler
 * interrupted); the `-32601` and `-32602` refusals; input asked mid-run
 * delivered as a request tagged with the task and answered.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { fileURLToPath } from "node:url"
import { rpcPeer } from "../../core/test/utils/rpcPeer.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"

const RELATED = "io.modelcontextprotocol/related-task"
const fixture = fileURLToPath(new URL("./fixtures/tasks-stdio-server.ts", import.meta.url))

const connect = Effect.gen(function*() {
  const transport = yield* NodeMcpStdio.makeClient({
    command: process.execPath,
    args: ["--conditions=development", fixture],
    stderr: "capture"
  })
  const peer = yield* rpcPeer(transport)
  const init = yield* peer.call("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: {} },
    clientInfo: { name: "raw", version: "1" }
  })
  yield* peer.send({ jsonrpc: "2.0", method: "notifications/initialized" })
  return { peer, init }
})

const textOf = (result: any): string => result.content[0].text

describe("tasks over stdio, 2025-11-25", () => {
  it.live("capability, taskSupport, a task's life (get, result, list) and the refusals", () =>
    Effect.gen(function*() {
      const { init, peer } = yield* connect
      assert.deepStrictEqual(init.result.capabilities.tasks?.requests?.tools?.call, {})
      const listed = yield* peer.call("tools/list", {})
      const support = Object.fromEntries(
        listed.result.tools.map((tool: any) => [tool.name, tool.execution?.taskSupport])
      )
      assert.strictEqual(support.build, "optional")
      assert.strictEqual(support.render, "required")
      assert.isUndefined(support.plain)

      const created = yield* peer.call("tools/call", {
        name: "build",
        arguments: { target: "lib" },
        task: { ttl: 60_000 }
      })
      assert.isUndefined(created.error)
      const task = created.result.task
      assert.strictEqual(task.status, "working")
      assert.strictEqual(task.ttl, 60_000)
      assert.isNumber(task.pollInterval)
      assert.isString(task.createdAt)
      assert.isString(task.lastUpdatedAt)
      assert.isString(task.taskId)

      assert.strictEqual((yield* peer.call("tasks/get", { taskId: task.taskId })).result.status, "working")
      const waiting = yield* peer.call("tasks/result", { taskId: task.taskId }).pipe(Effect.forkChild)
      assert.strictEqual(
        textOf((yield* peer.call("tools/call", { name: "release", arguments: {} })).result),
        "released"
      )
      const result = yield* Fiber.join(waiting)
      assert.strictEqual(textOf(result.result), "built lib")
      assert.deepStrictEqual(result.result._meta?.[RELATED], { taskId: task.taskId })
      assert.strictEqual((yield* peer.call("tasks/get", { taskId: task.taskId })).result.status, "completed")

      const tasks = (yield* peer.call("tasks/list", {})).result.tasks
      assert.deepStrictEqual(tasks.map((t: any) => [t.taskId, t.status]), [[task.taskId, "completed"]])

      const late = yield* peer.call("tasks/cancel", { taskId: task.taskId })
      assert.strictEqual(late.error?.code, -32602)
      const unknown = yield* peer.call("tasks/get", { taskId: "no-such-task" })
      assert.strictEqual(unknown.error?.code, -32602)
      const required = yield* peer.call("tools/call", { name: "render", arguments: {} })
      assert.strictEqual(required.error?.code, -32601)
      const forbidden = yield* peer.call("tools/call", { name: "plain", arguments: {}, task: { ttl: 1000 } })
      assert.strictEqual(forbidden.error?.code, -32601)
    }).pipe(Effect.scoped))

  it.live("tasks/cancel answers the task cancelled and the handler's fiber is interrupted", () =>
    Effect.gen(function*() {
      const { peer } = yield* connect
      const created = yield* peer.call("tools/call", { name: "build", arguments: { target: "x" }, task: {} })
      const taskId = created.result.task.taskId
      const cancelled = yield* peer.call("tasks/cancel", { taskId })
      assert.strictEqual(cancelled.result.status, "cancelled")
      assert.strictEqual(
        textOf((yield* peer.call("tools/call", { name: "was_interrupted", arguments: {} })).result),
        "interrupted"
      )
      assert.strictEqual((yield* peer.call("tasks/get", { taskId })).result.status, "cancelled")
    }).pipe(Effect.scoped))

  it.live("input mid-run: the task's elicitation/create comes tagged with the task; answered, the task completes", () =>
    Effect.gen(function*() {
      const { peer } = yield* connect
      const created = yield* peer.call("tools/call", { name: "confirm", arguments: {}, task: {} })
      const taskId = created.result.task.taskId
      const waiting = yield* peer.call("tasks/result", { taskId }).pipe(Effect.forkChild)
      const request = yield* peer.nextRequest("elicitation/create")
      assert.deepStrictEqual(request.params._meta?.[RELATED], { taskId })
      assert.strictEqual(request.params.message, "Go on?")
      assert.strictEqual((yield* peer.call("tasks/get", { taskId })).result.status, "input_required")
      yield* peer.send({ jsonrpc: "2.0", id: request.id, result: { action: "accept", content: { ok: true } } })
      const result = yield* Fiber.join(waiting)
      assert.strictEqual(textOf(result.result), "confirmed")
      assert.strictEqual((yield* peer.call("tasks/get", { taskId })).result.status, "completed")
    }).pipe(Effect.scoped))
})
