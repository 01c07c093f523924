/**
 * 2025-11-25 tasks (the experimental `tasks` capability, stateful sessions):
 * the official SDK v1 client's experimental task API
 * (`client.experimental.tasks`) against our server
 * (`fixtures/tasks-legacy-server.ts`), over stdio (a child process) and
 * Streamable HTTP (this process, 127.0.0.1, an ephemeral port), with and
 * without the session's GET stream (JSON answers, and SSE ones).
 *
 * The SDK creates a task (`tools/call` with `task`), polls `tasks/get` at our
 * `pollInterval`, and takes the end with `tasks/result`; on `input_required`
 * it calls `tasks/result` at once and answers the server's requests that
 * arrive meanwhile (over HTTP without a GET stream: on that request's
 * stream). Every result is parsed with the SDK's own schemas.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  TaskStatusNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import type * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { serverInfo, TasksLegacyServer } from "./fixtures/tasks-legacy-server.ts"
import { textOf } from "./utils/client.ts"
import { eventually, waitFor } from "./utils/wait.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const RELATED_TASK = "io.modelcontextprotocol/related-task"

// -----------------------------------------------------------------------------
// the client
// -----------------------------------------------------------------------------

/** What the client was asked, and the task status notifications it got. */
interface Seen {
  readonly elicitations: Array<{ readonly message: string; readonly meta: unknown }>
  readonly statuses: Array<{ readonly taskId: string; readonly status: string; readonly meta: unknown }>
  readonly gets: Array<string>
}

/** The SDK v1 client with an elicitation handler (answers `Ada`), connected for the scope; tools listed (the SDK learns `taskSupport`). */
const connect = (transport: Transport) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-sdk-v1", version: "1.0.0" }, {
        capabilities: { elicitation: { form: {} } }
      })
      const seen: Seen = { elicitations: [], statuses: [], gets: [] }
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        seen.elicitations.push({ message: request.params.message, meta: request.params._meta?.[RELATED_TASK] })
        return { action: "accept", content: { name: "Ada" } }
      })
      client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
        const { _meta, status, taskId } = notification.params
        seen.statuses.push({ taskId, status, meta: _meta?.[RELATED_TASK] })
      })
      await client.connect(transport)
      await client.listTools()
      return { client, seen }
    }),
    // an HTTP session is ended first (DELETE): the server ends its streams, so
    // closing aborts no stream the SDK is still reading
    ({ client }) =>
      Effect.promise(async () => {
        if (transport instanceof StreamableHTTPClientTransport) {
          await transport.terminateSession().catch(() => undefined)
        }
        await client.close()
      })
  )

type Message = {
  readonly type: string
  readonly task?: { readonly taskId: string; readonly status: string }
  readonly result?: unknown
  readonly error?: unknown
}

/** Runs `callToolStream` to its end: every message the SDK yielded. */
const stream = (client: Client, name: string, args: Record<string, unknown>, ttl?: number, progress?: Array<number>) =>
  Effect.promise(async () => {
    const messages: Array<Message> = []
    const options = {
      ...(ttl === undefined ? {} : { task: { ttl } }),
      ...(progress === undefined ? {} : { onprogress: (p: { readonly progress: number }) => progress.push(p.progress) })
    }
    for await (
      const message of client.experimental.tasks.callToolStream(
        { name, arguments: args },
        CallToolResultSchema,
        options
      )
    ) {
      messages.push(message as Message)
    }
    return messages
  })

const last = (messages: ReadonlyArray<Message>) => messages[messages.length - 1]!

const taskIdOf = (messages: ReadonlyArray<Message>) => messages.find((m) => m.type === "taskCreated")!.task!.taskId

// -----------------------------------------------------------------------------
// the transports
// -----------------------------------------------------------------------------

/** How a test reaches its server: fresh client transports, and the bodies of the `tasks/result` answers (HTTP). */
interface Server {
  readonly open: () => Transport
  readonly resultBodies: Array<Promise<string>>
}

/** Our server as a child process over stdio. */
const stdio = Effect.succeed<Server>({
  open: () =>
    new StdioClientTransport({
      command: process.execPath,
      args: ["--conditions=development", "packages/platform-node/test/fixtures/tasks-legacy-stdio.ts"],
      cwd: root,
      stderr: "pipe"
    }),
  resultBodies: []
})

/** Our server over Streamable HTTP in this process; `get: false` refuses the client's GET stream (405). */
const http = (get: boolean, responseMode: "json" | "sse" = "json") =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer({ responseMode }).pipe(Layer.provideMerge(TasksLegacyServer))
    )
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    const resultBodies: Array<Promise<string>> = []
    const fetch = async (input: string | URL | Request, init?: RequestInit) => {
      if (!get && init?.method === "GET") return new Response(null, { status: 405 })
      const response = await globalThis.fetch(input, init)
      if (typeof init?.body === "string" && JSON.parse(init.body).method === "tasks/result") {
        resultBodies.push(response.clone().text())
      }
      return response
    }
    return { open: () => new StreamableHTTPClientTransport(new URL(url), { fetch }), resultBodies } satisfies Server
  })

const runners: ReadonlyArray<{
  readonly name: string
  readonly server: Effect.Effect<Server, unknown, Scope.Scope>
  /** Whether the session has a channel for what no request carries (status notifications). */
  readonly standalone: boolean
}> = [
  { name: "stdio (child process)", server: stdio, standalone: true },
  { name: "Streamable HTTP, GET stream open", server: http(true), standalone: true },
  { name: "Streamable HTTP, no GET stream", server: http(false), standalone: false },
  { name: "Streamable HTTP, no GET stream, SSE answers", server: http(false, "sse"), standalone: false }
]

// -----------------------------------------------------------------------------
// the suite, once per transport
// -----------------------------------------------------------------------------

for (const { name, server, standalone } of runners) {
  const client = Effect.flatMap(server, ({ open }) => connect(open()))

  describe(`interop 2025-11-25 tasks: official SDK v1 client → our server over ${name}`, () => {
    it.live("capabilities and taskSupport as the SDK reads them", () =>
      Effect.gen(function*() {
        const { client: sdk } = yield* client
        assert.deepStrictEqual(sdk.getServerVersion(), serverInfo)
        assert.deepStrictEqual(sdk.getServerCapabilities()?.tasks, {
          list: {},
          cancel: {},
          requests: { tools: { call: {} } }
        })
        const { tools } = yield* Effect.promise(() => sdk.listTools())
        const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? "forbidden"]))
        assert.deepStrictEqual(support, {
          ask_name: "optional",
          broken: "optional",
          build: "required",
          hang: "optional",
          interrupted: "forbidden",
          slow: "optional"
        })
        // the SDK refuses a plain call of a required tool itself
        const refused = yield* Effect.promise(() =>
          sdk.callTool({ name: "build", arguments: { target: "x" } }).then(() => undefined, (e) => e)
        )
        assert.instanceOf(refused, McpError)
      }).pipe(Effect.scoped))

    it.live("an optional tool as a task: created, polled, its result (checked against the output schema) from tasks/result", () =>
      Effect.gen(function*() {
        const { client: sdk, seen } = yield* client
        const progress: Array<number> = []
        const messages = yield* stream(sdk, "slow", { steps: 3 }, 60_000, progress)
        const types = messages.map((m) => m.type)
        assert.strictEqual(types[0], "taskCreated")
        assert.strictEqual(messages[0]!.task!.status, "working")
        assert.include(types, "taskStatus")
        assert.strictEqual(last(messages).type, "result")
        const result = last(messages).result as { structuredContent?: unknown; _meta?: Record<string, unknown> }
        assert.deepStrictEqual(result.structuredContent, { steps: 3 })
        const taskId = taskIdOf(messages)
        assert.deepStrictEqual(result._meta?.[RELATED_TASK], { taskId })
        // the task, as tasks/get and tasks/list see it now
        const task = yield* Effect.promise(() => sdk.experimental.tasks.getTask(taskId))
        assert.strictEqual(task.status, "completed")
        assert.strictEqual(task.ttl, 60_000)
        assert.strictEqual(task.pollInterval, 20)
        const again = yield* Effect.promise(() => sdk.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))
        assert.deepStrictEqual(again.structuredContent, { steps: 3 })
        const { tasks } = yield* Effect.promise(() => sdk.experimental.tasks.listTasks())
        assert.deepStrictEqual(tasks.map((t) => [t.taskId, t.status]), [[taskId, "completed"]])
        // progress (the call's token stays valid for the task) and status notifications go on the
        // session's own channel; the status ones are the task's, without the related-task _meta
        if (standalone) {
          assert.deepStrictEqual(progress, [1, 2, 3])
          yield* waitFor(() => seen.statuses.some((s) => s.status === "completed"))
          assert.deepStrictEqual(seen.statuses.filter((s) => s.taskId === taskId).map((s) => s.status), ["completed"])
          assert.isTrue(seen.statuses.every((s) => s.meta === undefined))
        } else {
          assert.deepStrictEqual(seen.statuses, [])
          assert.deepStrictEqual(progress, [])
        }
      }).pipe(Effect.scoped))

    it.live("a required tool: the SDK runs it as a task on its own; a failing task ends failed with its error from tasks/result", () =>
      Effect.gen(function*() {
        const { client: sdk } = yield* client
        const built = yield* stream(sdk, "build", { target: "docs" })
        assert.strictEqual(built[0]!.type, "taskCreated")
        assert.strictEqual(textOf(last(built).result as never), "built docs")
        const broken = yield* stream(sdk, "broken", {}, 10_000)
        assert.strictEqual(last(broken).type, "error")
        const taskId = taskIdOf(broken)
        assert.strictEqual((yield* Effect.promise(() => sdk.experimental.tasks.getTask(taskId))).status, "failed")
        const error = yield* Effect.promise(() =>
          sdk.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).then(() => undefined, (e: unknown) => e)
        )
        assert.instanceOf(error, McpError)
        assert.strictEqual((error as McpError).code, ErrorCode.InternalError)
        assert.include((error as McpError).message, "the build broke")
      }).pipe(Effect.scoped))

    it.live("cancelTask interrupts the handler's fiber; a finished task cannot be cancelled; an unknown one is not found", () =>
      Effect.gen(function*() {
        const { client: sdk } = yield* client
        const label = `hang-${Math.random().toString(36).slice(2)}`
        const created = yield* Effect.promise(() =>
          sdk.request(
            { method: "tools/call", params: { name: "hang", arguments: { label }, task: { ttl: 60_000 } } },
            CreateTaskResultSchema
          )
        )
        const taskId = created.task.taskId
        assert.strictEqual(created.task.status, "working")
        const cancelled = yield* Effect.promise(() => sdk.experimental.tasks.cancelTask(taskId))
        assert.strictEqual(cancelled.status, "cancelled")
        assert.strictEqual((yield* Effect.promise(() => sdk.experimental.tasks.getTask(taskId))).status, "cancelled")
        // the handler's fiber was interrupted (its own report)
        yield* eventually(
          Effect.promise(() => sdk.callTool({ name: "interrupted", arguments: {} })),
          (result) => textOf(result).split(",").includes(label)
        )
        const again = yield* Effect.promise(() =>
          sdk.experimental.tasks.cancelTask(taskId).then(() => undefined, (e: unknown) => e)
        )
        assert.strictEqual((again as McpError).code, ErrorCode.InvalidParams)
        const unknown = yield* Effect.promise(() =>
          sdk.experimental.tasks.getTask("no-such-task").then(() => undefined, (e: unknown) => e)
        )
        assert.strictEqual((unknown as McpError).code, ErrorCode.InvalidParams)
      }).pipe(Effect.scoped))

    it.live("a task that elicits mid-run: input_required, the SDK's elicitation handler answers (related-task _meta), the task completes", () =>
      Effect.gen(function*() {
        const { client: sdk, seen } = yield* client
        const messages = yield* stream(sdk, "ask_name", {}, 60_000)
        const taskId = taskIdOf(messages)
        assert.strictEqual(last(messages).type, "result", JSON.stringify(last(messages)))
        assert.strictEqual(textOf(last(messages).result as never), "Hello, Ada!")
        assert.deepStrictEqual(seen.elicitations, [{ message: "What is your name?", meta: { taskId } }])
        assert.strictEqual((yield* Effect.promise(() => sdk.experimental.tasks.getTask(taskId))).status, "completed")
      }).pipe(Effect.scoped))

    if (!standalone) {
      it.live("no GET stream: the task's elicitation waits (input_required) for a tasks/result, then rides on its stream", () =>
        Effect.gen(function*() {
          const { open, resultBodies } = yield* server
          const { client: sdk, seen } = yield* connect(open())
          const created = yield* Effect.promise(() =>
            sdk.request(
              { method: "tools/call", params: { name: "ask_name", arguments: {}, task: { ttl: 60_000 } } },
              CreateTaskResultSchema
            )
          )
          const taskId = created.task.taskId
          yield* eventually(
            Effect.promise(() => sdk.experimental.tasks.getTask(taskId)),
            (task) => task.status === "input_required"
          )
          // nothing could carry it: it waits, neither dropped nor failed
          assert.deepStrictEqual(seen.elicitations, [])
          assert.strictEqual(
            (yield* Effect.promise(() => sdk.experimental.tasks.getTask(taskId))).status,
            "input_required"
          )
          const result = yield* Effect.promise(() => sdk.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))
          assert.strictEqual(textOf(result), "Hello, Ada!")
          assert.deepStrictEqual(seen.elicitations, [{ message: "What is your name?", meta: { taskId } }])
          // it came on the tasks/result answer's stream, before the result
          const body = yield* Effect.promise(() => resultBodies[0]!)
          assert.isBelow(body.indexOf("elicitation/create"), body.indexOf("Hello, Ada!"))
          assert.isAtLeast(body.indexOf("elicitation/create"), 0)
        }).pipe(Effect.scoped))

      it.live("no GET stream: a task cancelled while its elicitation waits ends cancelled; the request is never sent", () =>
        Effect.gen(function*() {
          const { client: sdk, seen } = yield* client
          const created = yield* Effect.promise(() =>
            sdk.request(
              { method: "tools/call", params: { name: "ask_name", arguments: {}, task: { ttl: 60_000 } } },
              CreateTaskResultSchema
            )
          )
          const taskId = created.task.taskId
          yield* eventually(
            Effect.promise(() => sdk.experimental.tasks.getTask(taskId)),
            (task) => task.status === "input_required"
          )
          assert.strictEqual(
            (yield* Effect.promise(() => sdk.experimental.tasks.cancelTask(taskId))).status,
            "cancelled"
          )
          const error = yield* Effect.promise(() =>
            sdk.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).then(() => undefined, (e: unknown) => e)
          )
          assert.instanceOf(error, McpError)
          assert.include((error as McpError).message, "cancelled")
          assert.deepStrictEqual(seen.elicitations, [])
          assert.strictEqual((yield* Effect.promise(() => sdk.experimental.tasks.getTask(taskId))).status, "cancelled")
        }).pipe(Effect.scoped))
    }

    it.live(
      "tasks are the session's: another client's tasks/get, tasks/result, tasks/cancel do not find them, its tasks/list is empty",
      () =>
        Effect.gen(function*() {
          const { open } = yield* server
          const { client: owner } = yield* connect(open())
          const { client: other } = yield* connect(open())
          const messages = yield* stream(owner, "slow", { steps: 1 })
          const taskId = taskIdOf(messages)
          for (
            const attempt of [
              () => other.experimental.tasks.getTask(taskId),
              () => other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
              () => other.experimental.tasks.cancelTask(taskId)
            ]
          ) {
            const error = yield* Effect.promise(() => attempt().then(() => undefined, (e: unknown) => e))
            assert.strictEqual((error as McpError).code, ErrorCode.InvalidParams)
          }
          assert.deepStrictEqual((yield* Effect.promise(() => other.experimental.tasks.listTasks())).tasks, [])
          assert.strictEqual((yield* Effect.promise(() => owner.experimental.tasks.listTasks())).tasks.length, 1)
        }).pipe(Effect.scoped),
      90_000
    ) // two official clients and a child process: slow on a loaded machine
  })
}
