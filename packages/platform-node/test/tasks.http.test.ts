/**
 * Tasks over Streamable HTTP in 2026-07-28, on real sockets (127.0.0.1,
 * ephemeral port), raw requests (each on a connection of its own,
 * `Connection: close`) with a bearer token per principal: a task outlives
 * the POST that created it and is polled from new connections; another
 * principal's `tasks/get` / `tasks/cancel` find nothing; `tasks/cancel`
 * interrupts the handler; input asked mid-run is answered with
 * `tasks/update`; the standard headers name the task.
 */
import { McpAuth, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Schema } from "effect"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { mcpHeaders, send } from "./fixtures/rawHttp.ts"

const VERSION = "2026-07-28"
const TASKS = "io.modelcontextprotocol/tasks"

const meta = (declared: boolean) => ({
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": declared
    ? { elicitation: {}, extensions: { [TASKS]: {} } }
    : { elicitation: {} }
})

const serve = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const build = McpTool.make("build", {
    description: "Works until released; records its interruption",
    input: Schema.Struct({ target: Schema.String }),
    task: "optional",
    handler: ({ target }) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(started, undefined)
        yield* Deferred.await(release)
        return `built ${target}`
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  })
  const render = McpTool.make("render", {
    description: "Always a task",
    input: Schema.Struct({}),
    task: "required",
    handler: () => Effect.succeed("rendered")
  })
  const confirm = McpTool.make("confirm", {
    description: "Asks for a confirmation mid-run",
    input: Schema.Struct({}),
    task: "optional",
    handler: (_, context) =>
      Effect.map(
        context.elicit({ message: "Go on?", schema: Schema.Struct({ ok: Schema.Boolean }), inputKey: "go" }),
        (answer) => answer.action === "accept" && answer.content.ok ? "confirmed" : "declined"
      )
  })
  const server = yield* McpServer.make({ name: "tasks-http", version: "1.0.0", tasks: { pollInterval: "10 millis" } })
  for (const tool of [build, render, confirm]) yield* server.register(tool)
  // every token is its own subject
  const verify = (token: string) => Effect.succeed<McpAuth.AuthInfo>({ token, subject: token, scopes: [], claims: {} })
  const context = yield* Layer.build(
    NodeMcpHttpServer.layer({
      auth: { authorizationServers: ["http://127.0.0.1/as"], verify, requireAudience: false }
    }).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
  )
  const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  return { url, started, release, interrupted }
})

interface Answer {
  readonly status: number
  readonly result?: any
  readonly error?: { readonly code: number; readonly message: string; readonly data?: any }
}

let nextId = 0

/** One modern POST as `token`, on a new connection; `name` is `Mcp-Name`. */
const post = (
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  options: { readonly name?: string | undefined; readonly declared?: boolean } = {}
) =>
  Effect.map(
    send(url, {
      headers: mcpHeaders({ version: VERSION, token }, {
        "mcp-method": method,
        ...(options.name === undefined ? {} : { "mcp-name": options.name }),
        connection: "close"
      }),
      body: { jsonrpc: "2.0", id: ++nextId, method, params: { ...params, _meta: meta(options.declared ?? true) } }
    }),
    (reply): Answer => {
      // JSON, or the last event of an SSE answer
      const body = String(reply.headers["content-type"]).startsWith("text/event-stream")
        ? reply.body.split("\n").filter((line) => line.startsWith("data:")).at(-1)!.slice(5)
        : reply.body
      const json = JSON.parse(body)
      return { status: reply.status, result: json.result, error: json.error }
    }
  )

const taskRequest = (url: string, token: string, method: string, taskId: string, extra: Record<string, unknown> = {}) =>
  post(url, token, method, { taskId, ...extra }, { name: taskId })

/** `tasks/get` on new connections until `done` (real clock: at most 200 polls 10 ms apart). */
const getUntil = (url: string, token: string, taskId: string, done: (result: any) => boolean) =>
  Effect.gen(function*() {
    let answer = yield* taskRequest(url, token, "tasks/get", taskId)
    for (let i = 0; i < 200 && !(answer.result !== undefined && done(answer.result)); i++) {
      yield* Effect.sleep("10 millis")
      answer = yield* taskRequest(url, token, "tasks/get", taskId)
    }
    return answer
  })

const isAck = (result: any) => {
  const { _meta, ...rest } = result
  assert.deepStrictEqual(rest, { resultType: "complete" })
}

describe("tasks over Streamable HTTP, 2026-07-28", () => {
  it.live("a task outlives the POST that created it and is polled from new connections until completed; another principal finds nothing", () =>
    Effect.gen(function*() {
      const { release, started, url } = yield* serve
      const created = yield* post(url, "alice", "tools/call", { name: "build", arguments: { target: "app" } }, {
        name: "build"
      })
      assert.strictEqual(created.status, 200)
      assert.strictEqual(created.result.resultType, "task")
      assert.strictEqual(created.result.status, "working")
      assert.strictEqual(created.result.pollIntervalMs, 10)
      const taskId: string = created.result.taskId
      // the creating request is over (its connection closed); the handler still runs
      yield* Deferred.await(started)
      const working = yield* taskRequest(url, "alice", "tasks/get", taskId)
      assert.strictEqual(working.result.status, "working")

      // bob: not found, and his cancel changes nothing
      const foreignGet = yield* taskRequest(url, "bob", "tasks/get", taskId)
      assert.strictEqual(foreignGet.error?.code, -32602)
      assert.isUndefined(foreignGet.result)
      const foreignCancel = yield* taskRequest(url, "bob", "tasks/cancel", taskId)
      assert.strictEqual(foreignCancel.error?.code, -32602)
      const foreignUpdate = yield* taskRequest(url, "bob", "tasks/update", taskId, { inputResponses: {} })
      assert.strictEqual(foreignUpdate.error?.code, -32602)
      assert.strictEqual((yield* taskRequest(url, "alice", "tasks/get", taskId)).result.status, "working")

      // Mcp-Name must be the task id
      const mismatch = yield* post(url, "alice", "tasks/get", { taskId }, { name: "something-else" })
      assert.deepStrictEqual([mismatch.status, mismatch.error?.code], [400, -32020])

      yield* Deferred.succeed(release, undefined)
      const done = yield* getUntil(url, "alice", taskId, (result) => result.status === "completed")
      assert.strictEqual(done.result.status, "completed")
      assert.strictEqual(done.result.result.content[0].text, "built app")
      // still bob's business not
      assert.strictEqual((yield* taskRequest(url, "bob", "tasks/get", taskId)).error?.code, -32602)
    }).pipe(Effect.scoped))

  it.live("tasks/cancel interrupts the handler's fiber; tasks/get then says cancelled", () =>
    Effect.gen(function*() {
      const { interrupted, started, url } = yield* serve
      const created = yield* post(url, "alice", "tools/call", { name: "build", arguments: { target: "app" } }, {
        name: "build"
      })
      const taskId: string = created.result.taskId
      yield* Deferred.await(started)
      assert.isFalse(yield* Deferred.isDone(interrupted))
      const ack = yield* taskRequest(url, "alice", "tasks/cancel", taskId)
      assert.strictEqual(ack.status, 200)
      isAck(ack.result)
      yield* Deferred.await(interrupted)
      const got = yield* taskRequest(url, "alice", "tasks/get", taskId)
      assert.strictEqual(got.result.status, "cancelled")
    }).pipe(Effect.scoped))

  it.live("input mid-run: input_required with inputRequests, a bad answer refused and kept outstanding, a good one completes it", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const created = yield* post(url, "alice", "tools/call", { name: "confirm", arguments: {} }, { name: "confirm" })
      assert.strictEqual(created.result.resultType, "task")
      const taskId: string = created.result.taskId
      const waiting = yield* getUntil(url, "alice", taskId, (result) => result.status === "input_required")
      assert.strictEqual(waiting.result.status, "input_required")
      assert.deepStrictEqual(Object.keys(waiting.result.inputRequests), ["go"])
      assert.strictEqual(waiting.result.inputRequests.go.method, "elicitation/create")
      // bob cannot see nor answer it
      assert.strictEqual((yield* taskRequest(url, "bob", "tasks/get", taskId)).error?.code, -32602)
      const foreign = yield* taskRequest(url, "bob", "tasks/update", taskId, {
        inputResponses: { go: { action: "accept", content: { ok: false } } }
      })
      assert.strictEqual(foreign.error?.code, -32602)

      const bad = yield* taskRequest(url, "alice", "tasks/update", taskId, {
        inputResponses: { go: { nonsense: true } }
      })
      assert.strictEqual(bad.error?.code, -32602)
      const still = yield* taskRequest(url, "alice", "tasks/get", taskId)
      assert.strictEqual(still.result.status, "input_required")
      assert.deepStrictEqual(Object.keys(still.result.inputRequests), ["go"])

      const good = yield* taskRequest(url, "alice", "tasks/update", taskId, {
        inputResponses: { go: { action: "accept", content: { ok: true } } }
      })
      isAck(good.result)
      const done = yield* getUntil(url, "alice", taskId, (result) => result.status === "completed")
      assert.strictEqual(done.result.result.content[0].text, "confirmed")
    }).pipe(Effect.scoped))

  it.live("a required tool called without declaring the extension: -32021 (400) naming it", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const refused = yield* post(url, "alice", "tools/call", { name: "render", arguments: {} }, {
        name: "render",
        declared: false
      })
      assert.deepStrictEqual([refused.status, refused.error?.code], [400, -32021])
      assert.deepStrictEqual(refused.error?.data?.requiredCapabilities, { extensions: { [TASKS]: {} } })
      const created = yield* post(url, "alice", "tools/call", { name: "render", arguments: {} }, { name: "render" })
      assert.strictEqual(created.result.resultType, "task")
      const done = yield* getUntil(url, "alice", created.result.taskId, (result) => result.status === "completed")
      assert.strictEqual(done.result.result.content[0].text, "rendered")
    }).pipe(Effect.scoped))
})
