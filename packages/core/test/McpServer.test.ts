import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Logger, Schema } from "effect"
import { sessionContext } from "../src/internal/server/context.ts"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClientSession from "../src/McpClientSession.ts"
import * as McpContent from "../src/McpContent.ts"
import * as McpError from "../src/McpError.ts"
import * as McpPrompt from "../src/McpPrompt.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { settle } from "./utils/peer.ts"
import { ValidatorLayer } from "./utils/validator.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

const Add = McpTool.make("add", {
  title: "Add",
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  annotations: { readOnlyHint: true },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

class Unlucky extends Schema.TaggedError<Unlucky>()("Unlucky", { message: Schema.String }) {}

const Roll = McpTool.make("roll", {
  input: Schema.Struct({ n: Schema.Int }),
  handler: ({ n }) =>
    n === 13
      ? Effect.fail(new Unlucky({ message: "13 is unlucky" }))
      : n === 0
      ? Effect.die(new Error("secret internals"))
      : Effect.succeed([McpContent.text(`rolled ${n}`), McpContent.image(new Uint8Array([1, 2, 3]), "image/png")])
})

interface Notes {
  readonly logs: Array<McpSchema.LoggingMessageNotificationParams>
  readonly updated: Array<string>
  readonly listChanged: Array<string>
}

/** A server with `definitions` and an initialized client session talking to it. */
const connectToServer = (options: {
  readonly definitions?: ReadonlyArray<McpServer.Definition<any>>
  readonly server?: Partial<McpServer.Options>
  readonly client?: Partial<McpClientSession.Options>
} = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "test", version: "1.0.0", ...options.server })
    for (const definition of options.definitions ?? []) yield* server.register(definition)
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    const session = yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
    const notes: Notes = { logs: [], updated: [], listChanged: [] }
    const record = <M extends McpSchema.NotificationMethod>(name: M, f: (params: any) => void) =>
      McpSession.notificationHandler(McpSchema.notifications[name], (params) => Effect.sync(() => f(params)))
    // the server's stateful sessions (McpServer.modern.test.ts has the stateless era)
    const client = yield* McpClientSession.make({
      clientInfo,
      era: "legacy",
      notificationHandlers: [
        record("notifications/message", (params) => notes.logs.push(params)),
        record("notifications/resources/updated", (params) => notes.updated.push(params.uri)),
        record("notifications/tools/list_changed", () => notes.listChanged.push("tools")),
        record("notifications/prompts/list_changed", () => notes.listChanged.push("prompts")),
        record("notifications/resources/list_changed", () => notes.listChanged.push("resources"))
      ],
      ...options.client
    }).pipe(Effect.provideService(McpTransport.McpTransport, clientEnd))
    yield* settle
    return { server, session, client, notes }
  })

const protocolCode = (error: McpError.McpError) => error.reason._tag === "ProtocolError" ? error.reason.code : undefined

// -----------------------------------------------------------------------------
// tools
// -----------------------------------------------------------------------------

describe("McpServer: tools", () => {
  it.effect("lists tools with generated JSON Schemas (2020-12), title and annotations", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Add] })
      const { tools } = yield* client.request(McpSchema.ListTools, {})
      assert.deepStrictEqual(tools[0], {
        name: "add",
        title: "Add",
        description: "Adds two numbers",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
          additionalProperties: true
        },
        outputSchema: {
          type: "object",
          properties: { sum: { type: "number" } },
          required: ["sum"],
          additionalProperties: true
        },
        annotations: { readOnlyHint: true }
      } as unknown as McpSchema.Tool)
    }))

  it.effect("calls with decoded arguments; structured output comes with a text copy", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Add] })
      const result = yield* client.request(McpSchema.CallTool, { name: "add", arguments: { a: 2, b: 3 } })
      assert.deepStrictEqual(result, {
        content: [{ type: "text", text: "{\"sum\":5}" }],
        structuredContent: { sum: 5 }
      })
    }))

  it.effect("invalid arguments are an isError result naming every problem (SEP-1303)", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Add] })
      const result = yield* client.request(McpSchema.CallTool, { name: "add", arguments: { a: "two" } })
      assert.isTrue(result.isError)
      const text = (result.content[0] as McpSchema.TextContent).text
      assert.include(text, "Invalid arguments for tool add")
      assert.include(text, "- a:")
      assert.include(text, "- b:")
    }))

  it.effect("content blocks; a typed failure is an error result with its message; a defect a generic one, logged", () => {
    const logged: Array<string> = []
    return Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Roll] })
      const ok = yield* client.request(McpSchema.CallTool, { name: "roll", arguments: { n: 4 } })
      assert.deepStrictEqual(ok.content, [
        { type: "text", text: "rolled 4" },
        { type: "image", data: "AQID", mimeType: "image/png" }
      ])
      const unlucky = yield* client.request(McpSchema.CallTool, { name: "roll", arguments: { n: 13 } })
      assert.deepStrictEqual(unlucky, { content: [{ type: "text", text: "13 is unlucky" }], isError: true })
      const died = yield* client.request(McpSchema.CallTool, { name: "roll", arguments: { n: 0 } })
      assert.isTrue(died.isError)
      assert.notInclude(JSON.stringify(died), "secret internals")
      assert.isTrue(logged.some((line) => line.startsWith("tools/call tool \"roll\" died (request")))
    }).pipe(Effect.provide(Logger.layer([Logger.make(({ message }) => {
      logged.push(String((message as ReadonlyArray<unknown>)[0]))
    })])))
  })

  it.effect("a handler can ask for URL elicitations with -32042", () =>
    Effect.gen(function*() {
      const Pay = McpTool.make("pay", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.fail(McpServer.urlElicitationRequired([
            { mode: "url", message: "Authorize", url: "https://127.0.0.1/pay", elicitationId: "e-9" }
          ]))
      })
      const Secret = McpResource.make({
        uri: "docs://secret",
        name: "secret",
        read: () =>
          Effect.fail(McpServer.urlElicitationRequired([
            { mode: "url", message: "Authorize", url: "https://127.0.0.1/pay", elicitationId: "e-9" }
          ]))
      })
      const { client } = yield* connectToServer({ definitions: [Pay, Secret] })
      const fromTool = yield* Effect.flip(client.request(McpSchema.CallTool, { name: "pay", arguments: {} }))
      assert.strictEqual(protocolCode(fromTool), -32042)
      const error = yield* Effect.flip(client.request(McpSchema.ReadResource, { uri: "docs://secret" }))
      assert.strictEqual(protocolCode(error), -32042)
      assert.deepStrictEqual(
        error.reason._tag === "ProtocolError"
          ? (error.reason.data as { elicitations: Array<{ elicitationId: string }> }).elicitations[0]?.elicitationId
          : undefined,
        "e-9"
      )
    }))

  it.effect("an unknown tool is -32602", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Add] })
      const error = yield* Effect.flip(client.request(McpSchema.CallTool, { name: "nope", arguments: {} }))
      assert.strictEqual(protocolCode(error), JsonRpc.ErrorCode.InvalidParams)
    }))

  it.effect("a tool given as raw JSON Schema checks its arguments with the validator", () =>
    Effect.gen(function*() {
      const Raw = McpTool.fromJsonSchema("greet", {
        inputSchema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
        handler: (input) => Effect.succeed(`hello ${input.who}`)
      })
      const { client } = yield* connectToServer({ definitions: [Raw] })
      const ok = yield* client.request(McpSchema.CallTool, { name: "greet", arguments: { who: "Ada" } })
      assert.deepStrictEqual(ok.content, [{ type: "text", text: "hello Ada" }])
      const bad = yield* client.request(McpSchema.CallTool, { name: "greet", arguments: {} })
      assert.isTrue(bad.isError)
    }).pipe(Effect.provide(ValidatorLayer)))

  it.effect("runtime add, disable, enable and remove send tools/list_changed to initialized sessions", () =>
    Effect.gen(function*() {
      const { client, notes, server } = yield* connectToServer({ definitions: [Add] })
      yield* server.register(Roll)
      yield* settle
      assert.deepStrictEqual(notes.listChanged, ["tools"])
      assert.deepStrictEqual((yield* client.request(McpSchema.ListTools, {})).tools.map((t) => t.name), ["add", "roll"])
      yield* server.disable(Add)
      yield* settle
      assert.deepStrictEqual((yield* client.request(McpSchema.ListTools, {})).tools.map((t) => t.name), ["roll"])
      const hidden = yield* Effect.flip(client.request(McpSchema.CallTool, { name: "add", arguments: { a: 1, b: 1 } }))
      assert.strictEqual(protocolCode(hidden), JsonRpc.ErrorCode.InvalidParams)
      yield* server.enable(Add)
      yield* server.unregister(Roll)
      yield* settle
      assert.deepStrictEqual(notes.listChanged, ["tools", "tools", "tools", "tools"])
      assert.deepStrictEqual((yield* client.request(McpSchema.ListTools, {})).tools.map((t) => t.name), ["add"])
      // disabling twice changes nothing and sends nothing
      yield* server.enable(Add)
      yield* settle
      assert.strictEqual(notes.listChanged.length, 4)
    }))

  it.effect("registration layers add while they last and remove when their scope closes", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "layers", version: "1" })
      const names = Effect.map(server.sessionCount, () => undefined).pipe(
        Effect.andThen(Effect.scoped(Effect.gen(function*() {
          const [c, s] = yield* McpTransport.makeInMemoryPair
          yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, s))
          const client = yield* McpClientSession.make({
            clientInfo: { name: "c", version: "0" },
            capabilities: {}
          }).pipe(Effect.provideService(McpTransport.McpTransport, c))
          return client.serverCapabilities.tools === undefined
            ? []
            : (yield* client.request(McpSchema.ListTools, {})).tools.map((t) => t.name)
        })))
      )
      const Registrations = McpServer.register(Add, Roll).pipe(
        Layer.provide(Layer.succeed(McpServer.McpServer, server))
      )
      const during = yield* Effect.scoped(Effect.andThen(Layer.build(Registrations), names))
      assert.deepStrictEqual(during, ["add", "roll"])
      assert.deepStrictEqual(yield* names, [])
    }))

  it.effect("capabilities are derived from what is registered", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Add] })
      assert.deepStrictEqual(client.serverCapabilities, { logging: {}, tools: { listChanged: true } })
      const none = yield* connectToServer({ server: { capabilities: { experimental: { x: {} } } } })
      assert.deepStrictEqual(none.client.serverCapabilities, { logging: {}, experimental: { x: {} } })
    }))
})

// -----------------------------------------------------------------------------
// resources
// -----------------------------------------------------------------------------

const Readme = McpResource.make({
  uri: "docs://readme",
  name: "readme",
  mimeType: "text/markdown",
  read: () => Effect.succeed("# Hello")
})

const Logo = McpResource.make({
  uri: "docs://logo",
  name: "logo",
  mimeType: "image/png",
  read: () => Effect.succeed(new Uint8Array([137, 80, 78, 71]))
})

const Files = McpResource.template({
  uriTemplate: "file:///{+path}{?rev}",
  name: "files",
  variables: { rev: Schema.FiniteFromString },
  list: () => Effect.succeed([{ uri: "file:///a.txt", name: "a.txt" }]),
  complete: {
    path: (value) => Effect.succeed(["src/a.ts", "src/b.ts", "test/c.ts"].filter((p) => p.startsWith(value)))
  },
  read: ({ path, rev }) => Effect.succeed(`${path}@${rev ?? "head"}`)
})

describe("McpServer: resources", () => {
  it.effect("lists static resources and the templates' own listings; lists templates", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Readme, Logo, Files] })
      const { resources } = yield* client.request(McpSchema.ListResources, {})
      assert.deepStrictEqual(resources.map((r) => r.uri), ["docs://readme", "docs://logo", "file:///a.txt"])
      const { resourceTemplates } = yield* client.request(McpSchema.ListResourceTemplates, {})
      assert.deepStrictEqual(resourceTemplates, [{ uriTemplate: "file:///{+path}{?rev}", name: "files" }])
    }))

  it.effect("reads text and binary resources, and templates with typed variables", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Readme, Logo, Files] })
      assert.deepStrictEqual(
        (yield* client.request(McpSchema.ReadResource, { uri: "docs://readme" })).contents,
        [{ uri: "docs://readme", mimeType: "text/markdown", text: "# Hello" }]
      )
      assert.deepStrictEqual(
        (yield* client.request(McpSchema.ReadResource, { uri: "docs://logo" })).contents,
        [{ uri: "docs://logo", mimeType: "image/png", blob: "iVBORw==" }]
      )
      assert.deepStrictEqual(
        (yield* client.request(McpSchema.ReadResource, { uri: "file:///src/deep/x.ts?rev=42" })).contents,
        [{ uri: "file:///src/deep/x.ts?rev=42", text: "src/deep/x.ts@42" }]
      )
      const badRev = yield* Effect.flip(client.request(McpSchema.ReadResource, { uri: "file:///x?rev=abc" }))
      assert.strictEqual(protocolCode(badRev), JsonRpc.ErrorCode.InvalidParams)
      const missing = yield* Effect.flip(client.request(McpSchema.ReadResource, { uri: "nope://x" }))
      assert.strictEqual(protocolCode(missing), -32002)
    }))

  it.effect("subscribe → resources/updated reaches only the subscriber", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "subs", version: "1" })
      yield* server.register(Readme)
      const connectClient = Effect.gen(function*() {
        const [c, s] = yield* McpTransport.makeInMemoryPair
        yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, s))
        const updated: Array<string> = []
        const client = yield* McpClientSession.make({
          clientInfo: { name: "c", version: "0" },
          era: "legacy",
          notificationHandlers: [
            McpSession.notificationHandler(McpSchema.ResourceUpdated, ({ uri }) => Effect.sync(() => updated.push(uri)))
          ]
        }).pipe(Effect.provideService(McpTransport.McpTransport, c))
        return { client, updated }
      })
      const a = yield* connectClient
      const b = yield* connectClient
      yield* a.client.request(McpSchema.Subscribe, { uri: "docs://readme" })
      yield* server.notifyResourceUpdated("docs://readme")
      yield* server.notifyResourceUpdated("docs://other")
      yield* settle
      assert.deepStrictEqual(a.updated, ["docs://readme"])
      assert.deepStrictEqual(b.updated, [])
      yield* a.client.request(McpSchema.Unsubscribe, { uri: "docs://readme" })
      yield* server.notifyResourceUpdated("docs://readme")
      yield* settle
      assert.deepStrictEqual(a.updated, ["docs://readme"])
      assert.strictEqual(yield* server.sessionCount, 2)
    }))
})

// -----------------------------------------------------------------------------
// prompts and completion
// -----------------------------------------------------------------------------

const Review = McpPrompt.make({
  name: "review",
  title: "Code review",
  arguments: Schema.Struct({
    language: Schema.String.annotate({ description: "The language" }),
    style: Schema.optionalKey(Schema.String)
  }),
  complete: {
    language: (value, { arguments: args }) =>
      Effect.succeed(["typescript", "python", "rust"].filter((l) => l.startsWith(value) && l !== args.exclude))
  },
  get: ({ language, style }) =>
    Effect.succeed([
      { role: "user" as const, content: McpContent.text(`Review this ${language} code${style ? ` (${style})` : ""}`) },
      { role: "assistant" as const, content: McpContent.resource("docs://guide", "be kind") }
    ])
})

describe("McpServer: prompts and completion", () => {
  it.effect("lists prompts with arguments derived from the Schema and gets them with typed arguments", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Review] })
      const { prompts } = yield* client.request(McpSchema.ListPrompts, {})
      assert.deepStrictEqual(prompts, [{
        name: "review",
        title: "Code review",
        arguments: [
          { name: "language", description: "The language", required: true },
          { name: "style", required: false }
        ]
      }])
      const got = yield* client.request(McpSchema.GetPrompt, {
        name: "review",
        arguments: { language: "ts", style: "terse" }
      })
      assert.strictEqual(got.messages.length, 2)
      assert.deepStrictEqual(got.messages[0]?.content, { type: "text", text: "Review this ts code (terse)" })
      assert.strictEqual((got.messages[1]?.content as McpSchema.EmbeddedResource).type, "resource")
      const bad = yield* Effect.flip(client.request(McpSchema.GetPrompt, { name: "review", arguments: {} }))
      assert.strictEqual(bad.reason._tag === "ProtocolError" ? bad.reason.code : -1, JsonRpc.ErrorCode.InvalidParams)
    }))

  it.effect("completes prompt arguments (with context.arguments) and template variables", () =>
    Effect.gen(function*() {
      const { client } = yield* connectToServer({ definitions: [Review, Files] })
      assert.deepStrictEqual(client.serverCapabilities.completions, {})
      const prompt = yield* client.request(McpSchema.Complete, {
        ref: { type: "ref/prompt", name: "review" },
        argument: { name: "language", value: "" },
        context: { arguments: { exclude: "python" } }
      })
      assert.deepStrictEqual(prompt.completion, { values: ["typescript", "rust"], total: 2, hasMore: false })
      const template = yield* client.request(McpSchema.Complete, {
        ref: { type: "ref/resource", uri: "file:///{+path}{?rev}" },
        argument: { name: "path", value: "src/" }
      })
      assert.deepStrictEqual(template.completion.values, ["src/a.ts", "src/b.ts"])
      const none = yield* client.request(McpSchema.Complete, {
        ref: { type: "ref/prompt", name: "review" },
        argument: { name: "style", value: "" }
      })
      assert.deepStrictEqual(none.completion, { values: [], hasMore: false })
    }))
})

// -----------------------------------------------------------------------------
// pagination
// -----------------------------------------------------------------------------

describe("McpServer: pagination", () => {
  it.effect("pages across 3 pages with opaque cursors; a bad cursor is -32602", () =>
    Effect.gen(function*() {
      const tools = Array.from({ length: 7 }, (_, i) =>
        McpTool.make(`t${i}`, { input: Schema.Struct({}), handler: () => Effect.succeed("ok") }))
      const { client } = yield* connectToServer({ definitions: tools, server: { pageSize: 3 } })
      const first = yield* client.request(McpSchema.ListTools, {})
      assert.deepStrictEqual(
        first.tools.map((t) =>
          t.name
        ),
        ["t0", "t1", "t2"]
      )
      const second = yield* client.request(McpSchema.ListTools, { cursor: first.nextCursor! })
      assert.deepStrictEqual(second.tools.map((t) => t.name), ["t3", "t4", "t5"])
      const third = yield* client.request(McpSchema.ListTools, { cursor: second.nextCursor! })
      assert.deepStrictEqual(third.tools.map((t) => t.name), ["t6"])
      assert.isUndefined(third.nextCursor)
      const bad = yield* Effect.flip(client.request(McpSchema.ListTools, { cursor: "not-a-cursor" }))
      assert.strictEqual(protocolCode(bad), JsonRpc.ErrorCode.InvalidParams)
    }))
})

// -----------------------------------------------------------------------------
// logging
// -----------------------------------------------------------------------------

describe("McpServer: logging", () => {
  const Chatty = McpTool.make("chatty", {
    input: Schema.Struct({}),
    handler: (_, context) =>
      Effect.gen(function*() {
        yield* context.log("debug", "ctx debug")
        yield* context.log("error", { code: 1 }, "db")
        yield* Effect.logInfo("effect info")
        yield* Effect.logWarning("effect warning")
        return "done"
      })
  })

  it.effect("setLevel filters both ctx.log and Effect.log (forwarded by layerLogger)", () =>
    Effect.gen(function*() {
      const { client, notes } = yield* connectToServer({ definitions: [Chatty] })
      yield* client.request(McpSchema.CallTool, { name: "chatty", arguments: {} })
      yield* settle
      assert.deepStrictEqual(notes.logs.map((l) => [l.level, l.data]), [
        ["debug", "ctx debug"],
        ["error", { code: 1 }],
        ["info", "effect info"],
        ["warning", "effect warning"]
      ])
      assert.strictEqual(notes.logs[1]?.logger, "db")
      notes.logs.length = 0
      yield* client.request(McpSchema.SetLevel, { level: "warning" })
      yield* client.request(McpSchema.CallTool, { name: "chatty", arguments: {} })
      yield* settle
      assert.deepStrictEqual(notes.logs.map((l) => l.level), ["error", "warning"])
    }).pipe(Effect.provide(McpServer.layerLogger)))

  it.effect("a request's context has the session's level as the request starts; the part it shares is plain data", () =>
    Effect.gen(function*() {
      const Level = McpTool.make("level", {
        input: Schema.Struct({}),
        handler: (_, context) => Effect.succeed(context.logLevel ?? "none")
      })
      const { client } = yield* connectToServer({ definitions: [Level] })
      const level = Effect.map(
        client.request(McpSchema.CallTool, { name: "level", arguments: {} }),
        (result) => McpContent.textOf(result)
      )
      assert.strictEqual(yield* level, "none")
      yield* client.request(McpSchema.SetLevel, { level: "warning" })
      assert.strictEqual(yield* level, "warning")
      // every request's context copies the session's part: an accessor there would make each copy slow
      const shared = sessionContext(
        { shared: undefined, session: undefined, logLevel: undefined } as never,
        {} as never,
        { protocolVersion: "2025-11-25", capabilities: {}, clientInfo },
        "2025-11-25"
      )
      const accessors = Object.entries(Object.getOwnPropertyDescriptors(shared)).filter(([, d]) => !("value" in d))
      assert.deepStrictEqual(accessors.map(([name]) => name), [])
    }))
})

describe("McpServer: logging bridge and request origin", () => {
  it.effect("a handler's Effect.log line is sent on behalf of its request (RequestOrigin kept)", () =>
    Effect.gen(function*() {
      const Logs = McpTool.make("logs", {
        input: Schema.Struct({}),
        handler: () => Effect.as(Effect.logInfo("from the handler"), "ok")
      })
      const server = yield* McpServer.make({ name: "o", version: "1" })
      yield* server.register(Logs)
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const origins: Array<[string, unknown]> = []
      const recording = McpTransport.McpTransport.of({
        incoming: serverEnd.incoming,
        send: (frame) =>
          Effect.gen(function*() {
            origins.push([(frame as { method?: string }).method ?? "response", yield* McpTransport.RequestOrigin])
            return yield* serverEnd.send(frame)
          }),
        routesByOrigin: true
      })
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, recording))
      const client = yield* McpClientSession.make({ clientInfo: { name: "c", version: "0" }, era: "legacy" }).pipe(
        Effect.provideService(McpTransport.McpTransport, clientEnd)
      )
      yield* client.request(McpSchema.CallTool, { name: "logs", arguments: {} })
      yield* settle
      const call = origins.filter(([, origin]) => origin !== 0 && origin !== undefined)
      assert.deepStrictEqual(call.map(([what]) => what), ["notifications/message", "response"])
      assert.strictEqual(call[0]?.[1], call[1]?.[1])
    }).pipe(Effect.provide(McpServer.layerLogger)))
})

// -----------------------------------------------------------------------------
// request context: progress, sampling, elicitation, roots
// -----------------------------------------------------------------------------

describe("McpServer: request context", () => {
  it.effect("reportProgress reaches the caller's progress handler", () =>
    Effect.gen(function*() {
      const Slow = McpTool.make("slow", {
        input: Schema.Struct({}),
        handler: (_, context) =>
          Effect.gen(function*() {
            for (let i = 1; i <= 3; i++) yield* context.reportProgress({ progress: i, total: 3, message: `step ${i}` })
            return "done"
          })
      })
      const { client } = yield* connectToServer({ definitions: [Slow] })
      const seen: Array<number> = []
      yield* client.request(McpSchema.CallTool, { name: "slow", arguments: {} }, {
        onProgress: (p) => Effect.sync(() => seen.push(p.progress))
      })
      assert.deepStrictEqual(seen, [1, 2, 3])
    }))

  it.effect("sampling with tools: refused without sampling.tools, answered with it", () =>
    Effect.gen(function*() {
      const Ask = McpTool.make("ask", {
        input: Schema.Struct({}),
        handler: (_, context) =>
          Effect.map(
            context.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "weather?" } }],
              maxTokens: 100,
              tools: [{ name: "get_weather", inputSchema: { type: "object" } }],
              toolChoice: { mode: "auto" }
            }),
            (result) => JSON.stringify(result.content)
          )
      })
      const sampling = McpSession.handler(McpSchema.CreateMessage, (params) =>
        Effect.succeed({
          role: "assistant" as const,
          model: "test-model",
          stopReason: "toolUse",
          content: [{ type: "tool_use" as const, id: "call-1", name: params.tools![0]!.name, input: { city: "Paris" } }]
        }))
      const without = yield* connectToServer({
        definitions: [Ask],
        client: { capabilities: { sampling: {} }, handlers: [sampling] }
      })
      const refused = yield* without.client.request(McpSchema.CallTool, { name: "ask", arguments: {} })
      assert.isTrue(refused.isError)
      assert.include((refused.content[0] as McpSchema.TextContent).text, "sampling.tools")
      const withTools = yield* connectToServer({
        definitions: [Ask],
        client: { capabilities: { sampling: { tools: {} } }, handlers: [sampling] }
      })
      const answered = yield* withTools.client.request(McpSchema.CallTool, { name: "ask", arguments: {} })
      assert.deepStrictEqual(JSON.parse((answered.content[0] as McpSchema.TextContent).text), [
        { type: "tool_use", id: "call-1", name: "get_weather", input: { city: "Paris" } }
      ])
    }))

  it.effect("elicitation: accept is decoded with the Schema, defaults are sent; decline and cancel pass through", () =>
    Effect.gen(function*() {
      const Settings = Schema.Struct({
        name: Schema.String,
        age: Schema.optionalKey(Schema.Int),
        color: Schema.Literals(["red", "green"])
      })
      const Configure = McpTool.make("configure", {
        input: Schema.Struct({}),
        handler: (_, context) =>
          Effect.map(
            context.elicit({ message: "Your settings?", schema: Settings, defaults: { color: "green" } }),
            (answer) => answer.action === "accept" ? `${answer.content.name}:${answer.content.color}` : answer.action
          )
      })
      const requested: Array<unknown> = []
      const answers: Array<McpSchema.ElicitResult> = [
        { action: "accept", content: { name: "Ada", color: "red" } },
        { action: "decline" },
        { action: "cancel" },
        { action: "accept", content: { name: 42 } }
      ]
      const { client } = yield* connectToServer({
        definitions: [Configure],
        client: {
          capabilities: { elicitation: { form: {} } },
          handlers: [McpSession.handler(McpSchema.Elicit, (params) =>
            Effect.sync(() => {
              requested.push(params)
              return answers.shift()!
            }))]
        }
      })
      const call = client.request(McpSchema.CallTool, { name: "configure", arguments: {} })
      const text = (result: McpSchema.CallToolResult) => (result.content[0] as McpSchema.TextContent).text
      assert.strictEqual(text(yield* call), "Ada:red")
      assert.strictEqual(text(yield* call), "decline")
      assert.strictEqual(text(yield* call), "cancel")
      const invalid = yield* call
      assert.isTrue(invalid.isError)
      const form = requested[0] as McpSchema.ElicitRequestFormParams
      assert.strictEqual(form.message, "Your settings?")
      assert.deepStrictEqual(form.requestedSchema.required, ["name", "color"])
      assert.deepStrictEqual((form.requestedSchema.properties.color as { default?: string }).default, "green")
    }))

  it.effect("roots: listRoots from a handler, and onRootsListChanged on notifications/roots/list_changed", () =>
    Effect.gen(function*() {
      const changes: Array<string> = []
      const Roots = McpTool.make("roots", {
        input: Schema.Struct({}),
        handler: (_, context) => Effect.map(context.listRoots(), (roots) => roots.map((r) => r.uri).join(","))
      })
      const { client } = yield* connectToServer({
        definitions: [Roots],
        server: { onRootsListChanged: (context) => Effect.sync(() => changes.push(context.clientInfo.name)) },
        client: {
          capabilities: { roots: { listChanged: true } },
          handlers: [McpSession.handler(McpSchema.ListRoots, () => Effect.succeed({ roots: [{ uri: "file:///w" }] }))]
        }
      })
      const result = yield* client.request(McpSchema.CallTool, { name: "roots", arguments: {} })
      assert.strictEqual((result.content[0] as McpSchema.TextContent).text, "file:///w")
      yield* client.notify(McpSchema.RootsListChanged, {})
      yield* settle
      assert.deepStrictEqual(changes, ["test-client"])
    }))

  it.effect("a cancelled call interrupts the tool's handler", () =>
    Effect.gen(function*() {
      let interrupted = false
      const Forever = McpTool.make("forever", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.never.pipe(Effect.onInterrupt(() =>
            Effect.sync(() => {
              interrupted = true
            })
          ))
      })
      const { client } = yield* connectToServer({ definitions: [Forever] })
      const call = yield* Effect.forkChild(client.request(McpSchema.CallTool, { name: "forever", arguments: {} }), {
        startImmediately: true
      })
      yield* settle
      yield* Fiber.interrupt(call)
      yield* settle
      assert.isTrue(interrupted)
    }))
})

// -----------------------------------------------------------------------------
// middleware
// -----------------------------------------------------------------------------

class CurrentUser extends Context.Reference<string>("test/CurrentUser", { defaultValue: () => "anonymous" }) {}

describe("McpServer: middleware", () => {
  it.effect("wraps requests and notifications outermost first, short-circuits, and provides services", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const WhoAmI = McpTool.make("whoami", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function*() {
            return `you are ${yield* CurrentUser}`
          })
      })
      const trace = (name: string): McpServer.Middleware => (context, method, _params, next) =>
        Effect.sync(() => order.push(`${name}>${context.kind}:${method}`)).pipe(
          Effect.andThen(next),
          Effect.tap(() => Effect.sync(() => order.push(`${name}<${method}`)))
        )
      const auth: McpServer.Middleware = (context, method, params, next) =>
        method === "tools/call" && (params as McpSchema.CallToolRequestParams).name === "forbidden"
          ? Effect.fail(McpError.protocol(-32001, "Forbidden"))
          : Effect.provideService(next, CurrentUser, context.clientInfo.name)
      const { client } = yield* connectToServer({
        definitions: [WhoAmI],
        server: { middleware: [trace("outer"), trace("inner"), auth], onRootsListChanged: () => Effect.void },
        client: { capabilities: { roots: { listChanged: true } } }
      })
      const result = yield* client.request(McpSchema.CallTool, { name: "whoami", arguments: {} })
      assert.strictEqual((result.content[0] as McpSchema.TextContent).text, "you are test-client")
      assert.deepStrictEqual(order, [
        "outer>request:tools/call",
        "inner>request:tools/call",
        "inner<tools/call",
        "outer<tools/call"
      ])
      const forbidden = yield* Effect.flip(client.request(McpSchema.CallTool, { name: "forbidden", arguments: {} }))
      assert.strictEqual(protocolCode(forbidden), -32001)
      order.length = 0
      yield* client.notify(McpSchema.RootsListChanged, {})
      yield* settle
      assert.deepStrictEqual(order.slice(0, 2), [
        "outer>notification:notifications/roots/list_changed",
        "inner>notification:notifications/roots/list_changed"
      ])
    }))
})
