import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option, Ref, Schema, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import { applyDefaults } from "../src/internal/client/applyDefaults.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpError from "../src/McpError.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServerSession from "../src/McpServerSession.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, connectOver, serverInfo } from "./utils/client.ts"
import { settle } from "./utils/peer.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const allCapabilities: McpSchema.ServerCapabilities = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {}
}

interface ServerSetup {
  readonly capabilities?: McpSchema.ServerCapabilities
  readonly handlers?: ReadonlyArray<McpServerSession.Handler>
  readonly notificationHandlers?: ReadonlyArray<McpSession.NotificationHandler>
}

/** A server session and a client connected to it, both living in the test's scope. */
const connectToSession = (server: ServerSetup, client: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const link = yield* McpTransport.makeInMemoryLink
    const serverContext = yield* Layer.build(
      McpServerSession.layer({
        serverInfo,
        instructions: "be nice",
        capabilities: server.capabilities ?? allCapabilities,
        handlers: server.handlers,
        notificationHandlers: server.notificationHandlers
      }).pipe(Layer.provide(link.server))
    )
    return {
      client: yield* connectOver(link.client, client),
      server: Context.get(serverContext, McpServerSession.McpServerSession)
    }
  })

const reasonOf = (error: McpError.McpError | McpClient.ToolError) =>
  error._tag === "McpError" ? error.reason._tag : error._tag

const tool = (name: string, outputSchema?: McpSchema.ObjectJsonSchema): McpSchema.Tool => ({
  name,
  inputSchema: { type: "object" },
  ...(outputSchema === undefined ? {} : { outputSchema })
})

const text = (value: string) => ({ type: "text" as const, text: value })

// -----------------------------------------------------------------------------

describe("McpClient: requests", () => {
  it.effect("exposes the session info and has one typed method per request", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const record = (entry: string) => Ref.update(seen, (all) => [...all, entry])
      const { client } = yield* connectToSession({
        handlers: [
          McpServerSession.handler(McpSchema.ListTools, () => Effect.succeed({ tools: [tool("echo")] })),
          McpServerSession.handler(McpSchema.CallTool, (params) =>
            Effect.succeed({ content: [text(JSON.stringify(params.arguments))] })),
          McpServerSession.handler(McpSchema.ListResources, () =>
            Effect.succeed({ resources: [{ uri: "mem://a", name: "a" }] })),
          McpServerSession.handler(McpSchema.ListResourceTemplates, () =>
            Effect.succeed({ resourceTemplates: [{ uriTemplate: "mem://{x}", name: "x" }] })),
          McpServerSession.handler(McpSchema.ReadResource, (params) =>
            Effect.succeed({ contents: [{ uri: params.uri, text: `contents of ${params.uri}` }] })),
          McpServerSession.handler(McpSchema.Subscribe, (params) =>
            Effect.as(record(`subscribe ${params.uri}`), {})),
          McpServerSession.handler(McpSchema.Unsubscribe, (params) =>
            Effect.as(record(`unsubscribe ${params.uri}`), {})),
          McpServerSession.handler(McpSchema.ListPrompts, () =>
            Effect.succeed({ prompts: [{ name: "greet" }] })),
          McpServerSession.handler(McpSchema.GetPrompt, (params) =>
            Effect.succeed({
              messages: [{ role: "user" as const, content: text(`hello ${params.arguments?.who}`) }]
            })),
          McpServerSession.handler(McpSchema.Complete, (params) =>
            Effect.succeed({ completion: { values: [`${params.argument.value}1`, `${params.argument.value}2`] } })),
          McpServerSession.handler(McpSchema.SetLevel, (params, context) =>
            Effect.as(record(`level ${params.level} ${JSON.stringify(context.meta)}`), {}))
        ]
      })
      assert.deepStrictEqual(client.serverInfo, serverInfo)
      assert.strictEqual(client.instructions, "be nice")
      assert.strictEqual(client.protocolVersion, McpSchema.LATEST_PROTOCOL_VERSION)
      assert.deepStrictEqual(client.serverCapabilities, allCapabilities)

      yield* client.ping()
      assert.deepStrictEqual(
        (yield* client.listTools()).tools.map((t) =>
          t.name
        ),
        ["echo"]
      )
      assert.deepStrictEqual((yield* client.callTool("echo", { a: 1 })).content, [text("{\"a\":1}")])
      assert.deepStrictEqual(
        (yield* client.listResources()).resources.map((r) =>
          r.uri
        ),
        ["mem://a"]
      )
      assert.deepStrictEqual(
        (yield* client.listResourceTemplates()).resourceTemplates.map((r) =>
          r.uriTemplate
        ),
        ["mem://{x}"]
      )
      assert.deepStrictEqual((yield* client.readResource("mem://a")).contents, [
        { uri: "mem://a", text: "contents of mem://a" }
      ])
      yield* client.subscribeResource("mem://a")
      yield* client.unsubscribeResource("mem://a")
      assert.deepStrictEqual(
        (yield* client.listPrompts()).prompts.map((p) =>
          p.name
        ),
        ["greet"]
      )
      assert.deepStrictEqual((yield* client.getPrompt("greet", { who: "Ada" })).messages[0]?.content, text("hello Ada"))
      const completion = yield* client.complete({
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "A" }
      })
      assert.deepStrictEqual(completion.completion.values, ["A1", "A2"])
      yield* client.setLoggingLevel("warning", { meta: { trace: "t1" } })
      assert.deepStrictEqual(yield* Ref.get(seen), [
        "subscribe mem://a",
        "unsubscribe mem://a",
        "level warning {\"trace\":\"t1\"}"
      ])
    }))

  it.effect("a request the server's capabilities do not allow fails with UnsupportedError", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToSession({ capabilities: { tools: {} } })
      assert.strictEqual(reasonOf(yield* Effect.flip(client.listPrompts())), "UnsupportedError")
      assert.strictEqual(reasonOf(yield* Effect.flip(client.subscribeResource("mem://a"))), "UnsupportedError")
    }))
})

// -----------------------------------------------------------------------------

describe("McpClient: list streams", () => {
  const pagedTools = (calls: Ref.Ref<number>) =>
    McpServerSession.handler(McpSchema.ListTools, (params) =>
      Effect.as(Ref.update(calls, (n) => n + 1), {
        tools: [tool(params.cursor === undefined ? "t1" : params.cursor === "p2" ? "t2" : "t3")],
        ...(params.cursor === undefined ? { nextCursor: "p2" } : params.cursor === "p2" ? { nextCursor: "p3" } : {})
      }))

  it.effect("follows nextCursor across three pages, lazily, and caches the complete list", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const { client } = yield* connectToSession({ handlers: [pagedTools(calls)] })
      const all = yield* Stream.runCollect(client.streamTools())
      assert.deepStrictEqual(all.map((t) => t.name), ["t1", "t2", "t3"])
      assert.strictEqual(yield* Ref.get(calls), 3)
      const first = yield* Stream.runCollect(Stream.take(client.streamTools(), 1))
      assert.deepStrictEqual(first.map((t) => t.name), ["t1"])
      assert.strictEqual(yield* Ref.get(calls), 4)
      const page = yield* client.listTools({ cursor: "p2" })
      assert.deepStrictEqual(page, { tools: [tool("t2")], nextCursor: "p3" })

      assert.isTrue(Option.isNone(yield* client.tools.cached))
      assert.deepStrictEqual((yield* client.tools.get).map((t) => t.name), ["t1", "t2", "t3"])
      assert.deepStrictEqual((yield* client.tools.get).map((t) => t.name), ["t1", "t2", "t3"])
      assert.strictEqual(yield* Ref.get(calls), 8)
    }))

  it.effect("fails past the page limit", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const { client } = yield* connectToSession({ handlers: [pagedTools(calls)] }, { maxPages: 2 })
      const error = yield* Effect.flip(Stream.runCollect(client.streamTools()))
      assert.strictEqual(error.reason._tag, "InvalidResultError")
      assert.include(error.message, "more than 2 pages")
      assert.strictEqual(yield* Ref.get(calls), 2)
      assert.deepStrictEqual((yield* Stream.runCollect(client.streamTools({ maxPages: 3 }))).length, 3)
    }))

  it.effect("fails when the server returns a cursor it returned before", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToSession({
        handlers: [
          McpServerSession.handler(McpSchema.ListPrompts, (params) =>
            Effect.succeed({
              prompts: [{ name: `p-${params.cursor ?? "start"}` }],
              nextCursor: params.cursor === undefined ? "a" : params.cursor === "a" ? "b" : "a"
            }))
        ]
      })
      const error = yield* Effect.flip(Stream.runCollect(client.streamPrompts()))
      assert.strictEqual(error.reason._tag, "InvalidResultError")
      assert.include(error.message, "cursor \"a\" again")
      const prompts = yield* Effect.flip(client.prompts.get)
      assert.strictEqual(prompts.reason._tag, "InvalidResultError")
    }))
})

// -----------------------------------------------------------------------------

describe("McpClient: capabilities", () => {
  const declared = (client: Partial<McpClient.Options>) =>
    Effect.gen(function*() {
      const { client: connected, server } = yield* connectToSession({}, client)
      const params = Option.getOrThrow(yield* server.clientParams)
      assert.deepStrictEqual(params.clientInfo, clientInfo)
      assert.deepStrictEqual(connected.capabilities, params.capabilities)
      return params.capabilities
    })
  const never = () => Effect.never

  // what the sampling and elicitation handlers can also run as tasks (2025-11-25)
  const asTasks = (requests: object) => ({ tasks: { list: {}, cancel: {}, requests } })
  const sampled = asTasks({ sampling: { createMessage: {} } })
  const elicited = asTasks({ elicitation: { create: {} } })

  it.effect("are derived from the handlers given", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* declared({}), {})
      assert.deepStrictEqual(yield* declared({ sampling: { handler: never } }), { sampling: {}, ...sampled })
      assert.deepStrictEqual(yield* declared({ sampling: { handler: never }, tasks: false }), { sampling: {} })
      assert.deepStrictEqual(
        yield* declared({ sampling: { handler: never, tools: true, context: true } }),
        { sampling: { context: {}, tools: {} }, ...sampled }
      )
      assert.deepStrictEqual(yield* declared({ elicitation: { form: never } }), {
        elicitation: { form: {} },
        ...elicited
      })
      assert.deepStrictEqual(yield* declared({ elicitation: { url: never } }), {
        elicitation: { url: {} },
        ...elicited
      })
      assert.deepStrictEqual(yield* declared({ elicitation: { applyDefaults: false } }), {})
      assert.deepStrictEqual(yield* declared({ roots: [] }), { roots: { listChanged: true } })
      assert.deepStrictEqual(
        yield* declared({
          sampling: { handler: never, tools: true },
          elicitation: { form: never, url: never },
          roots: [{ uri: "file:///w" }],
          experimental: { x: { on: true } }
        }),
        {
          experimental: { x: { on: true } },
          roots: { listChanged: true },
          sampling: { tools: {} },
          elicitation: { form: {}, url: {} },
          ...asTasks({ sampling: { createMessage: {} }, elicitation: { create: {} } })
        }
      )
    }))
})

// -----------------------------------------------------------------------------

describe("McpClient: server→client requests", () => {
  it.effect("sampling with tools", () =>
    Effect.gen(function*() {
      const { server } = yield* connectToSession({}, {
        sampling: {
          tools: true,
          handler: (params) =>
            Effect.succeed({
              role: "assistant",
              model: "test-model",
              stopReason: "toolUse",
              content: {
                type: "tool_use",
                id: "u1",
                name: params.tools?.[0]?.name ?? "none",
                input: { q: params.messages.length }
              }
            })
        }
      })
      const result = yield* server.request(McpSchema.CreateMessage, {
        messages: [{ role: "user", content: text("weather?") }],
        maxTokens: 100,
        tools: [tool("weather")],
        toolChoice: { mode: "auto" }
      })
      assert.deepStrictEqual(result, {
        role: "assistant",
        model: "test-model",
        stopReason: "toolUse",
        content: { type: "tool_use", id: "u1", name: "weather", input: { q: 1 } }
      })
    }))

  it.effect("sampling without the tools flag: the server cannot send tools", () =>
    Effect.gen(function*() {
      const { server } = yield* connectToSession({}, {
        sampling: { handler: () => Effect.succeed({ role: "assistant", model: "m", content: text("hi") }) }
      })
      const plain = yield* server.request(McpSchema.CreateMessage, {
        messages: [{ role: "user", content: text("hi?") }],
        maxTokens: 10
      })
      assert.deepStrictEqual(plain.content, text("hi"))
      const error = yield* Effect.flip(server.request(McpSchema.CreateMessage, {
        messages: [{ role: "user", content: text("hi?") }],
        maxTokens: 10,
        tools: [tool("t")]
      }))
      assert.strictEqual(error.reason._tag, "UnsupportedError")
    }))

  const requestedSchema: McpSchema.ElicitRequestedSchema = {
    type: "object",
    properties: {
      name: { type: "string", default: "Ada" },
      age: { type: "integer", minimum: 0, default: 36 },
      ratio: { type: "number", default: 0.5 },
      subscribe: { type: "boolean", default: true },
      color: { type: "string", enum: ["red", "green"], default: "green" },
      size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "m", title: "Medium" }], default: "m" },
      legacy: { type: "string", enum: ["x", "y"], enumNames: ["X", "Y"], default: "y" },
      tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, default: ["a", "c"] },
      labels: {
        type: "array",
        items: { anyOf: [{ const: "p", title: "P" }, { const: "q", title: "Q" }] },
        default: ["q"]
      },
      note: { type: "string" }
    },
    required: ["name", "age"]
  }

  const elicitingClient = (applyDefaults?: boolean) =>
    connectToSession({}, {
      elicitation: {
        ...(applyDefaults === undefined ? {} : { applyDefaults }),
        form: (params) => {
          switch (params.message) {
            case "accept":
              return Effect.succeed({ action: "accept", content: { name: "Grace", subscribe: false, tags: [] } })
            case "invalid":
              return Effect.succeed({ action: "accept", content: { name: "Grace", age: -1 } })
            case "decline":
              return Effect.succeed({ action: "decline", content: { name: "ignored" } })
            default:
              return Effect.succeed({ action: "cancel" })
          }
        }
      }
    })

  it.effect("elicitation: accept with the requested schema's defaults applied, decline and cancel", () =>
    Effect.gen(function*() {
      const { server } = yield* elicitingClient()
      const accepted = yield* server.request(McpSchema.Elicit, { message: "accept", requestedSchema })
      assert.deepStrictEqual(accepted, {
        action: "accept",
        content: {
          name: "Grace",
          subscribe: false,
          tags: [],
          age: 36,
          ratio: 0.5,
          color: "green",
          size: "m",
          legacy: "y",
          labels: ["q"]
        }
      })
      assert.deepStrictEqual(
        yield* server.request(McpSchema.Elicit, { mode: "form", message: "decline", requestedSchema }),
        { action: "decline" }
      )
      assert.deepStrictEqual(yield* server.request(McpSchema.Elicit, { message: "cancel", requestedSchema }), {
        action: "cancel"
      })
      // accepted content that does not match the requested schema never reaches the server as a result
      const invalid = yield* Effect.flip(server.request(McpSchema.Elicit, { message: "invalid", requestedSchema }))
      assert.strictEqual(invalid.reason._tag, "ProtocolError")
      assert.include(invalid.message, "does not match the requested schema")
      // URL mode was not declared: the server's session refuses to send it
      const url = yield* Effect.flip(server.request(McpSchema.Elicit, {
        mode: "url",
        message: "go",
        elicitationId: "e1",
        url: "https://example.com"
      }))
      assert.strictEqual(url.reason._tag, "UnsupportedError")
    }))

  it.effect("elicitation: applyDefaults can be turned off", () =>
    Effect.gen(function*() {
      const { server } = yield* elicitingClient(false)
      const accepted = yield* server.request(McpSchema.Elicit, {
        message: "accept",
        requestedSchema: { ...requestedSchema, required: [] }
      })
      assert.deepStrictEqual(accepted.content, { name: "Grace", subscribe: false, tags: [] })
    }))

  it("applyDefaults ignores enum defaults that are not among the options", () => {
    assert.deepStrictEqual(
      applyDefaults({
        type: "object",
        properties: {
          color: { type: "string", enum: ["red"], default: "blue" },
          tags: { type: "array", items: { type: "string", enum: ["a"] }, default: ["a", "z"] },
          name: { type: "string", default: "" }
        }
      }, undefined),
      { name: "" }
    )
  })

  it.effect("roots: listed, and setRoots sends notifications/roots/list_changed", () =>
    Effect.gen(function*() {
      const changed = yield* Deferred.make<void>()
      const { client, server } = yield* connectToSession({
        notificationHandlers: [
          McpSession.notificationHandler(McpSchema.RootsListChanged, () => Deferred.succeed(changed, undefined))
        ]
      }, { roots: [{ uri: "file:///one", name: "one" }] })
      assert.deepStrictEqual((yield* server.request(McpSchema.ListRoots, {})).roots, [{
        uri: "file:///one",
        name: "one"
      }])
      yield* client.setRoots([{ uri: "file:///two" }])
      yield* Deferred.await(changed)
      assert.deepStrictEqual(yield* client.roots, [{ uri: "file:///two" }])
      assert.deepStrictEqual((yield* server.request(McpSchema.ListRoots, {})).roots, [{ uri: "file:///two" }])
    }))

  it.effect("roots: setRoots without roots in the options fails with UnsupportedError", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connectToSession({})
      assert.strictEqual(reasonOf(yield* Effect.flip(client.setRoots([{ uri: "file:///x" }]))), "UnsupportedError")
      assert.strictEqual(reasonOf(yield* Effect.flip(server.request(McpSchema.ListRoots, {}))), "UnsupportedError")
    }))
})

// -----------------------------------------------------------------------------

describe("McpClient: notifications", () => {
  it.effect("are delivered to subscribers and handlers, in order", () =>
    Effect.gen(function*() {
      const handled = yield* Ref.make<ReadonlyArray<string>>([])
      const record = (entry: string) => Ref.update(handled, (all) => [...all, entry])
      const { client, server } = yield* connectToSession({}, {
        onLoggingMessage: (params) => record(`log ${params.level} ${params.data}`),
        onResourceUpdated: (params) => record(`updated ${params.uri}`),
        onToolListChanged: () => record("tools changed"),
        onNotification: (notification) => record(`any ${notification.method}`)
      })
      const all = yield* client.subscribe
      const logs = yield* Stream.runCollect(Stream.take(client.notificationsOf(McpSchema.LoggingMessage), 1)).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      yield* server.notify(McpSchema.LoggingMessage, { level: "info", logger: "l", data: "hello" })
      yield* server.notify(McpSchema.ResourceUpdated, { uri: "mem://a" })
      yield* server.notify(McpSchema.ToolListChanged, {})
      const received = yield* Stream.runCollect(Stream.take(all, 3))
      assert.deepStrictEqual(received, [
        { method: "notifications/message", params: { level: "info", logger: "l", data: "hello" } },
        { method: "notifications/resources/updated", params: { uri: "mem://a" } },
        { method: "notifications/tools/list_changed", params: {} }
      ])
      assert.deepStrictEqual(yield* Fiber.join(logs), [{ level: "info", logger: "l", data: "hello" }])
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(handled), [
        "log info hello",
        "any notifications/message",
        "updated mem://a",
        "any notifications/resources/updated",
        "tools changed",
        "any notifications/tools/list_changed"
      ])
    }))

  it.effect("streams end when the session ends", () =>
    Effect.gen(function*() {
      const link = yield* McpTransport.makeInMemoryLink
      const serverScope = yield* Scope.make()
      const server = Context.get(
        yield* Layer.build(
          McpServerSession.layer({ serverInfo, capabilities: allCapabilities }).pipe(
            Layer.provide(link.server)
          )
        ).pipe(Scope.provide(serverScope)),
        McpServerSession.McpServerSession
      )
      const client = Context.get(
        yield* Layer.build(McpClient.layer({ clientInfo }).pipe(Layer.provide([link.client, ValidatorLayer]))),
        McpClient.McpClient
      )
      const all = yield* client.subscribe
      yield* server.notify(McpSchema.LoggingMessage, { level: "info", data: 1 })
      yield* server.notify(McpSchema.LoggingMessage, { level: "info", data: 2 })
      yield* Scope.close(serverScope, Exit.void)
      const received = yield* Stream.runCollect(all)
      assert.deepStrictEqual(received.map((n) => n.method === "notifications/message" ? n.params.data : null), [1, 2])
    }))

  it.effect("watchResource subscribes once per URI and emits its updates", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const record = (entry: string) => Ref.update(seen, (all) => [...all, entry])
      const { client, server } = yield* connectToSession({
        handlers: [
          McpServerSession.handler(McpSchema.Subscribe, (params) => Effect.as(record(`subscribe ${params.uri}`), {})),
          McpServerSession.handler(
            McpSchema.Unsubscribe,
            (params) => Effect.as(record(`unsubscribe ${params.uri}`), {})
          )
        ]
      })
      const first = yield* Stream.runCollect(Stream.take(client.watchResource("mem://dir"), 2)).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      const second = yield* Stream.runCollect(Stream.take(client.watchResource("mem://dir"), 1)).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(seen), ["subscribe mem://dir"])
      yield* server.notify(McpSchema.ResourceUpdated, { uri: "mem://other" })
      yield* server.notify(McpSchema.ResourceUpdated, { uri: "mem://dir/file" })
      yield* server.notify(McpSchema.ResourceUpdated, { uri: "mem://dir" })
      assert.deepStrictEqual((yield* Fiber.join(first)).map((p) => p.uri), ["mem://dir/file", "mem://dir"])
      assert.deepStrictEqual((yield* Fiber.join(second)).map((p) => p.uri), ["mem://dir/file"])
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(seen), ["subscribe mem://dir", "unsubscribe mem://dir"])
    }))

  it.effect("tools/list_changed refreshes the cached tool list", () =>
    Effect.gen(function*() {
      const tools = yield* Ref.make<ReadonlyArray<McpSchema.Tool>>([tool("a")])
      const { client, server } = yield* connectToSession({
        handlers: [
          McpServerSession.handler(McpSchema.ListTools, () => Effect.map(Ref.get(tools), (tools) => ({ tools })))
        ]
      })
      assert.deepStrictEqual((yield* client.tools.get).map((t) => t.name), ["a"])
      const next = yield* client.tools.changes.pipe(
        Stream.filter((list) => list.length === 2),
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* Ref.set(tools, [tool("a"), tool("b")])
      yield* server.notify(McpSchema.ToolListChanged, {})
      assert.deepStrictEqual((yield* Fiber.join(next))[0]?.map((t) => t.name), ["a", "b"])
      assert.deepStrictEqual(
        Option.map(yield* client.tools.cached, (list) => list.map((t) => t.name)),
        Option.some(["a", "b"])
      )
    }))

  it.effect("with autoRefresh off, list_changed only invalidates the cache", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const { client, server } = yield* connectToSession({
        handlers: [
          McpServerSession.handler(McpSchema.ListPrompts, () =>
            Effect.as(Ref.update(calls, (n) => n + 1), { prompts: [{ name: "p" }] }))
        ]
      }, { autoRefresh: { prompts: false } })
      yield* client.prompts.get
      const changed = yield* Stream.runCollect(
        Stream.take(client.notificationsOf("notifications/prompts/list_changed"), 1)
      )
        .pipe(Effect.forkChild({ startImmediately: true }))
      yield* settle
      yield* server.notify(McpSchema.PromptListChanged, {})
      yield* Fiber.join(changed)
      yield* settle
      assert.isTrue(Option.isNone(yield* client.prompts.cached))
      assert.strictEqual(yield* Ref.get(calls), 1)
      yield* client.prompts.get
      assert.strictEqual(yield* Ref.get(calls), 2)
    }))

  it.effect("a cancelled server request interrupts its handler and is reported", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const cancelled = yield* Deferred.make<McpSchema.CancelledNotificationParams>()
      const { server } = yield* connectToSession({}, {
        sampling: {
          handler: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        },
        onCancelled: (params) => Deferred.succeed(cancelled, params)
      })
      const request = yield* server.request(McpSchema.CreateMessage, { messages: [], maxTokens: 1 }).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(request)
      yield* Deferred.await(interrupted)
      assert.strictEqual((yield* Deferred.await(cancelled)).reason, "The caller was interrupted")
    }))
})

// -----------------------------------------------------------------------------

describe("McpClient: tool results", () => {
  const sumSchema: McpSchema.ObjectJsonSchema = {
    type: "object",
    properties: { sum: { type: "number" } },
    required: ["sum"]
  }

  const toolServer = (listCalls: Ref.Ref<number>) =>
    connectToSession({
      handlers: [
        McpServerSession.handler(McpSchema.ListTools, () =>
          Effect.as(Ref.update(listCalls, (n) => n + 1), { tools: [tool("sum", sumSchema), tool("free")] })),
        McpServerSession.handler(McpSchema.CallTool, (params) => {
          const args = (params.arguments ?? {}) as { a?: number; b?: number; mode?: string }
          const sum = (args.a ?? 0) + (args.b ?? 0)
          switch (args.mode) {
            case "wrong":
              return Effect.succeed({ content: [text("?")], structuredContent: { sum: "three" } })
            case "missing":
              return Effect.succeed({ content: [text(String(sum))] })
            case "error":
              return Effect.succeed({ content: [text("boom")], structuredContent: { reason: "boom" }, isError: true })
            case "textOnly":
              return Effect.succeed({ content: [text(JSON.stringify({ sum }))] })
            default:
              return Effect.succeed({ content: [text(String(sum))], structuredContent: { sum } })
          }
        })
      ]
    })

  it.effect("structuredContent is checked against the tool's outputSchema", () =>
    Effect.gen(function*() {
      const listCalls = yield* Ref.make(0)
      const { client } = yield* toolServer(listCalls)
      assert.deepStrictEqual((yield* client.callTool("sum", { a: 1, b: 2 })).structuredContent, { sum: 3 })
      assert.strictEqual(yield* Ref.get(listCalls), 1)
      const wrong = yield* Effect.flip(client.callTool("sum", { mode: "wrong" }))
      assert.strictEqual(wrong.reason._tag, "InvalidResultError")
      assert.include(wrong.message, "does not match its outputSchema")
      const missing = yield* Effect.flip(client.callTool("sum", { mode: "missing" }))
      assert.include(missing.message, "returned no structuredContent")
      // isError results are not checked
      const failed = yield* client.callTool("sum", { mode: "error" })
      assert.isTrue(failed.isError)
      // tools without an outputSchema are not checked
      yield* client.callTool("free", { mode: "wrong" })
      assert.strictEqual(yield* Ref.get(listCalls), 1)
    }))

  it.effect("a tool unknown to the cache refreshes the list once", () =>
    Effect.gen(function*() {
      const listCalls = yield* Ref.make(0)
      const { client } = yield* toolServer(listCalls)
      yield* client.tools.get
      assert.strictEqual(yield* Ref.get(listCalls), 1)
      yield* client.callTool("hidden", { mode: "wrong" })
      assert.strictEqual(yield* Ref.get(listCalls), 2)
      yield* client.callTool("hidden", { mode: "wrong" })
      assert.strictEqual(yield* Ref.get(listCalls), 2)
    }))

  it.effect("callToolTyped decodes structuredContent with a Schema", () =>
    Effect.gen(function*() {
      const listCalls = yield* Ref.make(0)
      const { client } = yield* toolServer(listCalls)
      const Sum = Schema.Struct({ sum: Schema.Number })
      const value: { readonly sum: number } = yield* client.callToolTyped("sum", { a: 2, b: 5 }, Sum)
      assert.deepStrictEqual(value, { sum: 7 })
      // from the JSON text of a server that sends no structuredContent
      assert.deepStrictEqual(yield* client.callToolTyped("free", { a: 1, mode: "textOnly" }, Sum), { sum: 1 })
      const mismatch = yield* Effect.flip(client.callToolTyped("sum", { a: 1 }, Schema.Struct({ sum: Schema.String })))
      assert.strictEqual(reasonOf(mismatch), "InvalidResultError")
      const failed = yield* Effect.flip(client.callToolTyped("sum", { mode: "error" }, Sum))
      assert.strictEqual(reasonOf(failed), "ToolError")
      assert.strictEqual(failed.message, "tool sum failed: boom")
    }))
})

// -----------------------------------------------------------------------------

describe("McpClient: per-call options", () => {
  const slowServer = (started: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>) =>
    connectToSession({
      handlers: [
        McpServerSession.handler(McpSchema.ListTools, () => Effect.succeed({ tools: [] })),
        McpServerSession.handler(McpSchema.CallTool, (params, context) => {
          if (params.name === "progress") {
            return context.reportProgress({ progress: 1, total: 2, message: "half" }).pipe(
              Effect.andThen(context.reportProgress({ progress: 2, total: 2 })),
              Effect.as({ content: [text("done")] })
            )
          }
          return Deferred.succeed(started, undefined).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
        })
      ]
    })

  it.effect("a per-call timeout fails the call and cancels it on the server", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const { client } = yield* slowServer(started, interrupted)
      const call = yield* client.callTool("slow", {}, { timeout: "5 seconds" }).pipe(
        Effect.flip,
        Effect.forkChild({ startImmediately: true })
      )
      yield* Deferred.await(started)
      yield* settle
      yield* TestClock.adjust("4 seconds")
      assert.isUndefined(call.pollUnsafe())
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(call)
      assert.strictEqual(error.reason._tag, "TimeoutError")
      assert.strictEqual(error.message, "tools/call timed out after 5000 ms")
      yield* Deferred.await(interrupted)
    }))

  it.effect("progress goes to the call's handler", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const { client } = yield* slowServer(started, interrupted)
      const progress = yield* Ref.make<ReadonlyArray<string>>([])
      const result = yield* client.callTool("progress", {}, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, `${p.progress}/${p.total} ${p.message ?? ""}`])
      })
      assert.deepStrictEqual(result.content, [text("done")])
      assert.deepStrictEqual(yield* Ref.get(progress), ["1/2 half", "2/2 "])
    }))

  it.effect("interrupting a call sends notifications/cancelled", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const { client } = yield* slowServer(started, interrupted)
      const call = yield* client.callTool("slow").pipe(Effect.forkChild({ startImmediately: true }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(call)
      yield* Deferred.await(interrupted)
      assert.strictEqual(yield* client.session.pendingCount, 0)
    }))
})
