/**
 * The tasks extension of 2026-07-28 (SEP-2663) at the schema level: the task
 * shapes, `tasks/update`, `notifications/tasks`, `extensions` in capabilities,
 * `taskIds` in a listen filter, the era of the `tasks/*` methods, and the
 * `Mcp-Name` of `tasks/get|update|cancel` (header check over HTTP in process).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, Stream } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stateless from "../src/internal/era/stateless.ts"
import { checkHeaders } from "../src/internal/http/server/modern.ts"
import { nameOf } from "../src/internal/http/standardHeaders.ts"
import * as McpHttpServer from "../src/McpHttpServer.ts"
import type * as McpMethod from "../src/McpMethod.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------

/** Decodes then encodes `input`; both must succeed and give back the same JSON. */
const roundTrip = <S extends Schema.Codec<any, any>>(schema: S, input: unknown): S["Type"] => {
  const decoded = Schema.decodeUnknownSync(schema)(input)
  assert.deepStrictEqual(Schema.encodeSync(schema)(decoded), input)
  return decoded
}

const accepts = (validate: McpMethod.Validate<unknown>, input: unknown): void => {
  const exit = validate(input)
  if (Exit.isFailure(exit)) assert.fail(`expected ${JSON.stringify(input)} to validate`)
  // the validator hands back the original object (unknown fields kept)
  assert.strictEqual(Exit.isSuccess(exit) ? exit.value : undefined, input)
}

const rejects = (validate: McpMethod.Validate<unknown>, input: unknown): void => {
  assert.isTrue(Exit.isFailure(validate(input)), `expected ${JSON.stringify(input)} to be rejected`)
}

const task: McpSchema.ModernTask = {
  taskId: "786512e2-9e0d-44bd-8f29-789f320fe840",
  status: "working",
  statusMessage: "The operation is now in progress.",
  createdAt: "2026-07-28T10:30:00Z",
  lastUpdatedAt: "2026-07-28T10:40:00Z",
  ttlMs: 60000,
  pollIntervalMs: 5000
}

const META = {
  [McpSchema.MetaKey.protocolVersion]: "2026-07-28",
  [McpSchema.MetaKey.clientInfo]: { name: "raw", version: "1" },
  [McpSchema.MetaKey.clientCapabilities]: { extensions: { [McpSchema.TASKS_EXTENSION_ID]: {} } }
}

// -----------------------------------------------------------------------------
// Schemas
// -----------------------------------------------------------------------------

describe("tasks extension schemas (2026-07-28)", () => {
  it("the extension id", () => {
    assert.strictEqual(McpSchema.TASKS_EXTENSION_ID, "io.modelcontextprotocol/tasks")
  })

  it("ModernTask: ttlMs (or null) and pollIntervalMs; the 2025-11-25 names are not enough", () => {
    roundTrip(McpSchema.ModernTask, task)
    roundTrip(McpSchema.ModernTask, { ...task, ttlMs: null })
    const { pollIntervalMs: _, statusMessage: __, ...bare } = task
    roundTrip(McpSchema.ModernTask, bare)
    const { ttlMs: ___, ...noTtl } = task
    assert.throws(() => Schema.decodeUnknownSync(McpSchema.ModernTask)({ ...noTtl, ttl: 60000 }))
    assert.throws(() => Schema.decodeUnknownSync(McpSchema.ModernTask)({ ...task, ttlMs: 1.5 }))
    assert.throws(() => Schema.decodeUnknownSync(McpSchema.ModernTask)({ ...task, status: "paused" }))
  })

  it("DetailedTask: inputRequests, result and error by status", () => {
    roundTrip(McpSchema.DetailedTask, {
      ...task,
      status: "input_required",
      inputRequests: {
        "confirm-1": {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: "Delete every file?",
            requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } } }
          }
        },
        "roots": { method: "roots/list" }
      }
    })
    roundTrip(McpSchema.DetailedTask, {
      ...task,
      status: "completed",
      result: { content: [{ type: "text", text: "done" }], isError: false }
    })
    roundTrip(McpSchema.DetailedTask, {
      ...task,
      status: "failed",
      statusMessage: "Tool failed: Invalid params",
      error: { code: -32602, message: "Invalid params", data: { field: "x" } }
    })
    roundTrip(McpSchema.DetailedTask, { ...task, status: "failed", error: { code: -32603, message: "boom" } })
    const decode = Schema.decodeUnknownSync(McpSchema.DetailedTask)
    assert.throws(() => decode({ ...task, inputRequests: { k: { params: {} } } }))
    assert.throws(() => decode({ ...task, result: [1, 2] }))
    assert.throws(() => decode({ ...task, error: { code: "x", message: "m" } }))
  })

  it("ModernCreateTaskResult: flat, resultType task, ttlMs required", () => {
    const created = { _meta: { "x/trace": "1" }, resultType: "task", ...task }
    roundTrip(McpSchema.ModernCreateTaskResult, created)
    const decode = Schema.decodeUnknownSync(McpSchema.ModernCreateTaskResult)
    const { ttlMs: _, ...noTtl } = created
    assert.throws(() => decode({ ...noTtl, ttl: 60000 }))
    assert.throws(() => decode({ ...created, resultType: "complete" }))
    // the 2025-11-25 wrapped form is not this shape
    assert.throws(() => decode({ task }))
  })

  it("ModernGetTaskResult, tasks/get and tasks/cancel for a modern client", () => {
    const got = { resultType: "complete", ...task, status: "completed", result: { content: [] } }
    roundTrip(McpSchema.ModernGetTaskResult, got)
    roundTrip(McpSchema.ModernGetTaskResult, { ...task })
    accepts(McpSchema.GetTaskModern.validateResult, got)
    rejects(McpSchema.GetTaskModern.validateResult, { ...got, resultType: "task" })
    // the legacy result wants ttl, the modern one ttlMs
    rejects(McpSchema.GetTask.validateResult, got)
    assert.strictEqual(McpSchema.GetTaskModern.name, "tasks/get")
    accepts(McpSchema.GetTaskModern.validateParams, { taskId: task.taskId, _meta: META })

    assert.strictEqual(McpSchema.CancelTaskModern.name, "tasks/cancel")
    accepts(McpSchema.CancelTaskModern.validateResult, { resultType: "complete" })
    accepts(McpSchema.CancelTaskModern.validateResult, {})
    rejects(McpSchema.CancelTaskModern.validateResult, { resultType: "task" })
    roundTrip(McpSchema.ModernAckResult, { _meta: { a: 1 }, resultType: "complete" })
  })

  it("tasks/update: params and an acknowledgement that tolerates resultType", () => {
    const params = {
      _meta: META,
      taskId: task.taskId,
      inputResponses: {
        "confirm-1": { action: "accept", content: { confirm: true } },
        "roots": { roots: [{ uri: "file:///tmp" }] }
      }
    }
    roundTrip(McpSchema.UpdateTaskParams, params)
    assert.strictEqual(McpSchema.UpdateTask.name, "tasks/update")
    assert.strictEqual(McpSchema.UpdateTask.from, "client")
    assert.strictEqual(McpSchema.UpdateTask.capability(params), undefined)
    accepts(McpSchema.UpdateTask.validateParams, params)
    accepts(McpSchema.UpdateTask.validateParams, { taskId: "t", inputResponses: {} })
    rejects(McpSchema.UpdateTask.validateParams, { taskId: "t" })
    rejects(McpSchema.UpdateTask.validateParams, { inputResponses: {} })
    accepts(McpSchema.UpdateTask.validateResult, { resultType: "complete", _meta: {} })
    accepts(McpSchema.UpdateTask.validateResult, {})
    assert.strictEqual(McpSchema.requests["tasks/update"], McpSchema.UpdateTask)
  })

  it("notifications/tasks: NotificationParams & DetailedTask", () => {
    const params = {
      _meta: { [McpSchema.MetaKey.subscriptionId]: "sub-1" },
      ...task,
      status: "completed",
      result: { content: [{ type: "text", text: "42" }] }
    }
    roundTrip(McpSchema.TasksNotificationParams, params)
    accepts(McpSchema.TasksNotification.validateParams, params)
    rejects(McpSchema.TasksNotification.validateParams, { _meta: {}, taskId: "t" })
    assert.strictEqual(McpSchema.TasksNotification.from, "server")
    assert.strictEqual(McpSchema.notifications["notifications/tasks"], McpSchema.TasksNotification)
  })

  it("capabilities carry extensions, client and server, and keep unknown keys", () => {
    const client = {
      extensions: { [McpSchema.TASKS_EXTENSION_ID]: {}, "com.example/other": { level: 2 } },
      elicitation: { form: {} },
      futureThing: { x: 1 }
    }
    assert.deepStrictEqual(roundTrip(McpSchema.ClientCapabilities, { extensions: client.extensions }), {
      extensions: client.extensions
    })
    const server = { tools: { listChanged: true }, extensions: { [McpSchema.TASKS_EXTENSION_ID]: {} } }
    roundTrip(McpSchema.ServerCapabilities, server)
    assert.throws(() => Schema.decodeUnknownSync(McpSchema.ServerCapabilities)({ extensions: { x: true } }))

    // as the engine validates them: the original object, unknown keys and all
    const initialize = {
      protocolVersion: "2025-11-25",
      capabilities: client,
      clientInfo: { name: "c", version: "1" }
    }
    accepts(McpSchema.Initialize.validateParams, initialize)
    const discovered = { supportedVersions: ["2026-07-28"], capabilities: { ...server, other: {} } }
    accepts(McpSchema.Discover.validateResult, discovered)
    accepts(McpSchema.Initialize.validateResult, {
      protocolVersion: "2025-11-25",
      capabilities: server,
      serverInfo: { name: "s", version: "1" }
    })
    // what a modern request says of its client is read raw from _meta
    assert.deepStrictEqual(
      Stateless.clientOf({ ...META, [McpSchema.MetaKey.clientCapabilities]: client }).capabilities,
      client
    )
  })

  it("a listen filter and its acknowledgement carry taskIds", () => {
    const notifications = { toolsListChanged: true, taskIds: [task.taskId, "other"] }
    roundTrip(McpSchema.SubscriptionFilter, notifications)
    accepts(McpSchema.SubscriptionsListen.validateParams, { _meta: META, notifications })
    accepts(McpSchema.SubscriptionsAcknowledged.validateParams, { notifications: { taskIds: [task.taskId] } })
    rejects(McpSchema.SubscriptionsListen.validateParams, { notifications: { taskIds: "x" } })
  })
})

// -----------------------------------------------------------------------------
// Eras
// -----------------------------------------------------------------------------

describe("the era of tasks/*", () => {
  it("tasks/update is modern only; tasks/get and tasks/cancel follow their _meta", () => {
    assert.isTrue(Stateless.MODERN_ONLY.has("tasks/update"))
    assert.isTrue(Stateless.isModern("tasks/update", { taskId: "t", inputResponses: {} }))
    for (const method of ["tasks/get", "tasks/cancel"]) {
      assert.isFalse(Stateless.isModern(method, { taskId: "t" }))
      assert.isTrue(Stateless.isModern(method, { taskId: "t", _meta: META }))
      assert.isFalse(Stateless.LEGACY_ONLY.has(method))
    }
  })

  it("a tasks/update without the modern _meta is refused as a modern request", () => {
    const admitted = (params: unknown) =>
      Stateless.admit({ jsonrpc: "2.0", id: 1, method: "tasks/update", params } as any, "request", ["2026-07-28"], [
        "2026-07-28",
        "2025-11-25"
      ])
    assert.strictEqual(admitted({ taskId: "t", inputResponses: {} })?.code, -32602)
    assert.isUndefined(admitted({ taskId: "t", inputResponses: {}, _meta: META }))
  })
})

// -----------------------------------------------------------------------------
// Standard headers
// -----------------------------------------------------------------------------

describe("Mcp-Name of tasks/*", () => {
  it("is the task id for tasks/get, tasks/update and tasks/cancel", () => {
    assert.strictEqual(nameOf("tasks/get", { taskId: "abc" }), "abc")
    assert.strictEqual(nameOf("tasks/update", { taskId: "abc", inputResponses: {} }), "abc")
    assert.strictEqual(nameOf("tasks/cancel", { taskId: "abc" }), "abc")
    assert.isUndefined(nameOf("tasks/get", {}))
    assert.isUndefined(nameOf("tasks/result", { taskId: "abc" }))
    assert.strictEqual(nameOf("tools/call", { name: "greet" }), "greet")
  })

  it("checkHeaders: missing or mismatching Mcp-Name is -32020", () => {
    const message = { jsonrpc: "2.0" as const, id: 1, method: "tasks/get", params: { taskId: "abc", _meta: META } }
    const none = () => []
    assert.strictEqual(checkHeaders({ "mcp-method": "tasks/get" }, message, none)?.code, -32020)
    assert.strictEqual(checkHeaders({ "mcp-method": "tasks/get", "mcp-name": "xyz" }, message, none)?.code, -32020)
    assert.isUndefined(checkHeaders({ "mcp-method": "tasks/get", "mcp-name": "abc" }, message, none))
    const cancel = { ...message, method: "tasks/cancel" }
    assert.strictEqual(checkHeaders({ "mcp-method": "tasks/cancel", "mcp-name": "xyz" }, cancel, none)?.code, -32020)
    const update = { ...message, method: "tasks/update", params: { ...message.params, inputResponses: {} } }
    assert.isUndefined(checkHeaders({ "mcp-method": "tasks/update", "mcp-name": "abc" }, update, none))
  })

  const text = (response: HttpServerResponse.HttpServerResponse): Effect.Effect<string> => {
    const body = response.body
    switch (body._tag) {
      case "Uint8Array":
        return Effect.succeed(new TextDecoder().decode(body.body))
      case "Stream":
        return body.stream.pipe(Stream.decodeText(), Stream.mkString, Effect.orDie)
      default:
        return Effect.succeed("")
    }
  }

  it.effect("over HTTP: a modern tasks/get with a wrong Mcp-Name gets -32020 (400); with the right one it passes the check", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "tasks", version: "1.0.0" })
      const handler = yield* HttpRouter.toHttpEffect(
        McpHttpServer.layerRoute({}).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
      )
      const post = (method: string, params: unknown, name: string | undefined) =>
        handler.pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromWeb(
              new Request("http://localhost/mcp", {
                method: "POST",
                headers: {
                  accept: "application/json, text/event-stream",
                  "content-type": "application/json",
                  "mcp-protocol-version": "2026-07-28",
                  "mcp-method": method,
                  ...(name === undefined ? {} : { "mcp-name": name })
                },
                body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
              })
            )
          ),
          Effect.flatMap((response) =>
            Effect.map(text(response), (body) => ({ status: response.status, body: JSON.parse(body) as any }))
          ),
          Effect.scoped,
          Effect.orDie
        )
      const params = { taskId: "abc", _meta: META }

      const wrong = yield* post("tasks/get", params, "xyz")
      assert.strictEqual(wrong.status, 400)
      assert.strictEqual(wrong.body.error.code, -32020)
      assert.include(wrong.body.error.message, "Mcp-Name")

      const missing = yield* post("tasks/cancel", params, undefined)
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(missing.body.error.code, -32020)

      const wrongUpdate = yield* post("tasks/update", { ...params, inputResponses: {} }, "xyz")
      assert.strictEqual(wrongUpdate.body.error.code, -32020)

      // past the header check, whatever the server then answers
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const right = yield* post(method, { ...params, inputResponses: {} }, "abc")
        assert.notStrictEqual(right.body.error?.code, -32020, method)
        assert.strictEqual(right.body.id, 1)
      }
    }))
})
