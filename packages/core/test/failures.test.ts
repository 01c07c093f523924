/**
 * Failures that say what happened: a handler's typed failure without a
 * `message` is named by its `_tag` and fields (secrets redacted, values
 * bounded) in `isError` text and JSON-RPC error messages; every failure and
 * defect is logged on the server (warning / error, with method, name and
 * request id) and never forwarded to the client by `McpServer.layerLogger`;
 * a defect never reaches the client. Also: non-object output schemas are
 * wrapped as `{ result }`, and tools may have no input.
 */
import { assert, describe, it } from "@effect/vitest"
import { Data, Effect, Layer, Logger, Redacted, References, Schema } from "effect"
import { describeFailure, MAX_TEXT, stringify } from "../src/internal/failureText.ts"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpError from "../src/McpError.ts"
import * as McpPrompt from "../src/McpPrompt.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { settle } from "./utils/peer.ts"
import { compile, ValidatorLayer } from "./utils/validator.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

class NotFound extends Data.TaggedError("NotFound")<{ readonly title: string }> {}
class Forbidden
  extends Data.TaggedError("Forbidden")<{ readonly user: string; readonly token: Redacted.Redacted<string> }>
{}
class Gone extends Data.TaggedError("Gone") {}
class Conflict extends Schema.TaggedError<Conflict>()("Conflict", { id: Schema.Number, reason: Schema.String }) {}
class WithMessage extends Schema.TaggedError<WithMessage>()("WithMessage", { message: Schema.String }) {}

const SECRET = "hunter2-secret"

type Mode = "notFound" | "forbidden" | "gone" | "conflict" | "message" | "die" | "throw" | "ok"

const fail = (mode: Mode): Effect.Effect<string, unknown> => {
  switch (mode) {
    case "notFound":
      return Effect.fail(new NotFound({ title: "x" }))
    case "forbidden":
      return Effect.fail(new Forbidden({ user: "ada", token: Redacted.make(SECRET) }))
    case "gone":
      return Effect.fail(new Gone())
    case "conflict":
      return Effect.fail(new Conflict({ id: 7, reason: "taken" }))
    case "message":
      return Effect.fail(new WithMessage({ message: "a readable message" }))
    case "die":
      return Effect.die(new Error(`secret internals ${SECRET}`))
    case "throw":
      // a handler that throws while building its effect
      throw new Error(`thrown internals ${SECRET}`)
    case "ok":
      return Effect.succeed("fine")
  }
}

const Failing = McpTool.make("failing", {
  input: Schema.Struct({ mode: Schema.String }),
  handler: ({ mode }) => Effect.andThen(Effect.logInfo(`handler runs ${mode}`), fail(mode as Mode))
})

const Doc = McpResource.make({ uri: "docs://failing", name: "failing", read: () => fail("notFound") })
const Dying = McpResource.make({ uri: "docs://dying", name: "dying", read: () => fail("die") })
const Template = McpResource.template({
  uriTemplate: "notes://{mode}",
  name: "notes",
  read: ({ mode }) => fail(mode as Mode),
  complete: {
    mode: (value) =>
      value === "die" ? Effect.die(new Error(SECRET)) : Effect.fail(McpError.protocol(-32603, "no completions today"))
  }
})
const Prompt = McpPrompt.make({
  name: "review",
  arguments: Schema.Struct({ mode: Schema.String }),
  get: ({ mode }) => fail(mode as Mode)
})

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
  readonly hasCause: boolean
}

/** A logger that records every line (level, first message part, annotations). */
const capture = (lines: Array<Line>) =>
  Logger.make(({ cause, fiber, logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push({
      level: logLevel,
      message: String(parts[0]),
      annotations: { ...fiber.getRef(References.CurrentLogAnnotations) },
      hasCause: cause.reasons.length > 0
    })
  })

/** A server with the fixtures, a client connected to it, and what reached the client. */
const connect = (
  definitions: ReadonlyArray<McpServer.Definition<any>> = [Failing, Doc, Dying, Template, Prompt],
  era: "legacy" | "modern" = "legacy"
) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "s", version: "1" })
    for (const definition of definitions) yield* server.register(definition)
    const link = yield* McpTransport.makeInMemoryLink
    yield* Layer.build(McpServer.layerSession.pipe(
      Layer.provide(link.server),
      Layer.provide(Layer.succeed(McpServer.McpServer, server))
    ))
    const forwarded: Array<McpSchema.LoggingMessageNotificationParams> = []
    const client = yield* connectOver(link.client, {
      era,
      onLoggingMessage: (params) => Effect.sync(() => forwarded.push(params))
    })
    return { client, forwarded }
  })

const errorOf = (error: McpError.McpError) => McpError.toErrorObject(error)

// -----------------------------------------------------------------------------
// failure text
// -----------------------------------------------------------------------------

describe("failure text", () => {
  it("a tagged failure without a message: its tag and fields", () => {
    assert.strictEqual(describeFailure(new NotFound({ title: "x" })), `NotFound: {"title":"x"}`)
    assert.strictEqual(describeFailure(new Conflict({ id: 7, reason: "taken" })), `Conflict: {"id":7,"reason":"taken"}`)
    assert.strictEqual(describeFailure(new Gone()), "Gone")
    assert.strictEqual(describeFailure({ _tag: "Plain", n: 1 }), `Plain: {"n":1}`)
  })

  it("a message is kept", () => {
    assert.strictEqual(describeFailure(new WithMessage({ message: "a readable message" })), "a readable message")
    assert.strictEqual(describeFailure(new Error("boom")), "boom")
    assert.strictEqual(McpError.messageOf(McpError.closed("gone away")), "gone away")
  })

  it("never empty", () => {
    assert.strictEqual(describeFailure(""), "Unknown error")
    assert.strictEqual(describeFailure(new Error("")), "Error")
    assert.strictEqual(describeFailure(new TypeError("")), "TypeError")
    assert.strictEqual(describeFailure(undefined), "undefined")
    assert.strictEqual(describeFailure(null), "null")
    assert.strictEqual(describeFailure(42), "42")
    assert.strictEqual(describeFailure({ code: 1 }), `{"code":1}`)
  })

  it("Redacted fields are redacted, never their secret", () => {
    const text = describeFailure(new Forbidden({ user: "ada", token: Redacted.make(SECRET) }))
    assert.strictEqual(text, `Forbidden: {"user":"ada","token":"<redacted>"}`)
    assert.notInclude(describeFailure({ _tag: "Deep", nested: { list: [Redacted.make(SECRET)] } }), SECRET)
  })

  it("cycles, bigints, accessors, errors and huge values are written safely and bounded", () => {
    const cyclic: Record<string, unknown> = { name: "loop" }
    cyclic.self = cyclic
    assert.strictEqual(
      describeFailure({ _tag: "Cyclic", cyclic }),
      `Cyclic: {"cyclic":{"name":"loop","self":"[Circular]"}}`
    )
    assert.strictEqual(describeFailure({ _tag: "Big", n: 12n }), `Big: {"n":"12n"}`)
    const trap = { _tag: "Trap", ok: 1 }
    Object.defineProperty(trap, "boom", {
      enumerable: true,
      get: () => {
        throw new Error("accessor ran")
      }
    })
    assert.strictEqual(describeFailure(trap), `Trap: {"ok":1}`)
    assert.strictEqual(
      describeFailure({ _tag: "Wrapped", cause: new RangeError("too far") }),
      `Wrapped: {"cause":{"name":"RangeError","message":"too far"}}`
    )
    assert.strictEqual(
      describeFailure({ _tag: "Bytes", data: new Uint8Array(10_000) }),
      `Bytes: {"data":"[Uint8Array of 10000 bytes]"}`
    )
    const huge = describeFailure({
      _tag: "Huge",
      text: "a".repeat(1_000_000),
      items: Array.from({ length: 10_000 }, (_, i) => i)
    })
    assert.isTrue(huge.length < MAX_TEXT + 100, `length ${huge.length}`)
    assert.include(huge, "more characters")
    const long = stringify(Array.from({ length: 100 }, () => "b".repeat(1000)))
    assert.isTrue(long.length < MAX_TEXT + 100)
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 50; i++) deep = { deep }
    assert.include(stringify(deep), "[Object]")
  })
})

// -----------------------------------------------------------------------------
// over the wire
// -----------------------------------------------------------------------------

const toolResult = (result: McpSchema.CallToolResult) => ({ content: result.content, isError: result.isError })

describe.each(["legacy", "modern"] as const)("handler failures reach the client as readable text (%s)", (era) => {
  it.effect("tools: isError text names the tag and fields; a message is kept; a defect is generic", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(undefined, era)
      const call = (mode: Mode) => client.callTool("failing", { mode })
      const notFound = yield* call("notFound")
      assert.deepStrictEqual(toolResult(notFound), {
        content: [{ type: "text", text: `NotFound: {"title":"x"}` }],
        isError: true
      })
      assert.strictEqual(textOf(yield* call("conflict")), `Conflict: {"id":7,"reason":"taken"}`)
      assert.strictEqual(textOf(yield* call("gone")), "Gone")
      assert.strictEqual(textOf(yield* call("message")), "a readable message")
      const forbidden = yield* call("forbidden")
      assert.strictEqual(textOf(forbidden), `Forbidden: {"user":"ada","token":"<redacted>"}`)
      for (const mode of ["die", "throw"] as const) {
        const died = yield* call(mode)
        assert.notInclude(JSON.stringify(died), SECRET)
        assert.deepStrictEqual(toolResult(died), {
          content: [{ type: "text", text: "Tool failing failed with an internal error" }],
          isError: true
        })
      }
      assert.strictEqual(textOf(yield* call("ok")), "fine")
    }))

  it.effect("resources and prompts: the JSON-RPC error message names the failure; a defect is -32603 Internal error", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(undefined, era)
      const read = yield* Effect.flip(client.readResource("docs://failing"))
      assert.deepStrictEqual(errorOf(read), {
        code: JsonRpc.ErrorCode.InternalError,
        message: `NotFound: {"title":"x"}`
      })
      const templated = yield* Effect.flip(client.readResource("notes://forbidden"))
      assert.strictEqual(errorOf(templated).message, `Forbidden: {"user":"ada","token":"<redacted>"}`)
      const prompt = yield* Effect.flip(client.getPrompt("review", { mode: "gone" }))
      assert.deepStrictEqual(errorOf(prompt), { code: JsonRpc.ErrorCode.InternalError, message: "Gone" })
      const kept = yield* Effect.flip(client.getPrompt("review", { mode: "message" }))
      assert.strictEqual(errorOf(kept).message, "a readable message")
      for (
        const failed of [
          yield* Effect.flip(client.readResource("docs://dying")),
          yield* Effect.flip(client.readResource("notes://throw")),
          yield* Effect.flip(client.getPrompt("review", { mode: "die" })),
          yield* Effect.flip(
            client.complete({
              ref: { type: "ref/resource", uri: "notes://{mode}" },
              argument: { name: "mode", value: "die" }
            })
          )
        ]
      ) {
        assert.deepStrictEqual(errorOf(failed), { code: JsonRpc.ErrorCode.InternalError, message: "Internal error" })
        assert.notInclude(JSON.stringify(failed), SECRET)
      }
    }))
})

describe("handler failures are logged on the server, not forwarded", () => {
  it.effect("a warning per typed failure, an error with the cause per defect, naming method, definition and request id", () => {
    const lines: Array<Line> = []
    return Effect.gen(function*() {
      const { client } = yield* connect()
      yield* client.callTool("failing", { mode: "notFound" })
      yield* client.callTool("failing", { mode: "die" })
      yield* Effect.flip(client.readResource("docs://failing"))
      yield* Effect.flip(client.readResource("docs://dying"))
      yield* Effect.flip(client.getPrompt("review", { mode: "forbidden" }))
      yield* Effect.flip(
        client.complete({
          ref: { type: "ref/resource", uri: "notes://{mode}" },
          argument: { name: "mode", value: "x" }
        })
      )
      const failures = lines.filter((line) => / (failed|died)( |$)/.test(line.message))
      const summary = failures.map((
        line
      ) => [line.level, line.message.replace(/\(request \d+\)/, "(request N)"), line.hasCause])
      assert.deepStrictEqual(summary, [
        ["Warn", `tools/call tool "failing" failed (request N): NotFound: {"title":"x"}`, false],
        ["Error", `tools/call tool "failing" died (request N)`, true],
        ["Warn", `resources/read resource "docs://failing" failed (request N): NotFound: {"title":"x"}`, false],
        ["Error", `resources/read resource "docs://dying" died (request N)`, true],
        [
          "Warn",
          `prompts/get prompt "review" failed (request N): Forbidden: {"user":"ada","token":"<redacted>"}`,
          false
        ],
        [
          "Warn",
          `completion/complete resource "notes://{mode}" argument "mode" failed (request N): no completions today (code -32603)`,
          false
        ]
      ])
      for (const line of failures) {
        assert.isString(line.annotations["mcp.method.name"])
        assert.match(String(line.annotations["jsonrpc.request.id"]), /^\d+$/)
        assert.include(line.message, `(request ${line.annotations["jsonrpc.request.id"]})`)
      }
      assert.deepStrictEqual(failures[0]!.annotations["mcp.tool.name"], "failing")
      assert.deepStrictEqual(failures[2]!.annotations["mcp.resource.uri"], "docs://failing")
      assert.deepStrictEqual(failures[4]!.annotations["mcp.prompt.name"], "review")
      assert.deepStrictEqual(failures[5]!.annotations["mcp.completion.argument"], "mode")
      assert.notInclude(JSON.stringify(failures), SECRET)
    }).pipe(Effect.provide(Logger.layer([capture(lines)])))
  })

  it.effect("with McpServer.layerLogger the handler's own logs are forwarded, the failure logs are not", () => {
    const lines: Array<Line> = []
    return Effect.gen(function*() {
      const { client, forwarded } = yield* connect()
      yield* client.setLoggingLevel("debug")
      yield* client.callTool("failing", { mode: "notFound" })
      yield* client.callTool("failing", { mode: "die" })
      yield* Effect.flip(client.readResource("docs://dying"))
      yield* settle
      // the bridge is on: the handler's own line reached the client
      assert.deepStrictEqual(forwarded.map((params) => params.data), ["handler runs notFound", "handler runs die"])
      assert.notInclude(JSON.stringify(forwarded), "died")
      assert.notInclude(JSON.stringify(forwarded), SECRET)
      // ...and the failures were logged on the server
      assert.strictEqual(lines.filter((line) => line.message.includes(" died (request")).length, 2)
    }).pipe(Effect.provide(McpServer.layerLogger.pipe(Layer.provideMerge(Logger.layer([capture(lines)])))))
  })
})

// -----------------------------------------------------------------------------
// output schemas that are not objects; tools without input
// -----------------------------------------------------------------------------

const Tags = McpTool.make("tags", {
  description: "Lists tags",
  output: Schema.Array(Schema.String),
  handler: () => Effect.succeed(["a", "b"])
})
const Greeting = McpTool.make("greeting", {
  input: Schema.Struct({ who: Schema.String }),
  output: Schema.String,
  handler: ({ who }) => Effect.succeed(`hello ${who}`)
})
const Count = McpTool.make("count", { output: Schema.Finite, handler: () => Effect.succeed(3) })
class Point extends Schema.Class<Point>("Point")({ x: Schema.Finite, y: Schema.Finite }) {}
const Shape = McpTool.make("shape", {
  input: Schema.Struct({ kind: Schema.String }),
  output: Schema.Union([Point, Schema.String]),
  handler: ({ kind }) => Effect.succeed(kind === "point" ? new Point({ x: 1, y: 2 }) : "circle")
})
const Plain = McpTool.make("plain", {
  output: Schema.Struct({ n: Schema.Finite }),
  handler: () => Effect.succeed({ n: 1 })
})
const ListNotes = McpTool.make("list_notes", {
  description: "Lists notes",
  handler: () => Effect.succeed("no notes")
})
const Empty = McpTool.make("empty", { input: Schema.Struct({}), handler: () => Effect.succeed("empty") })

describe("output schemas that are not objects are wrapped as { result }", () => {
  it.effect("listing: outputSchema is an object with a required result; object outputs are unchanged", () =>
    Effect.gen(function*() {
      const { client } = yield* connect([Tags, Greeting, Count, Shape, Plain])
      const { tools } = yield* client.listTools()
      const schemaOf = (name: string) => tools.find((tool) => tool.name === name)!.outputSchema
      assert.deepStrictEqual(schemaOf("tags"), {
        type: "object",
        properties: { result: { type: "array", items: { type: "string" } } },
        required: ["result"]
      } as unknown)
      assert.deepStrictEqual(schemaOf("greeting"), {
        type: "object",
        properties: { result: { type: "string" } },
        required: ["result"]
      } as unknown)
      assert.deepStrictEqual(schemaOf("count"), {
        type: "object",
        properties: { result: { type: "number" } },
        required: ["result"]
      } as unknown)
      const shape = schemaOf("shape") as Record<string, any>
      assert.deepStrictEqual(shape.required, ["result"])
      assert.isDefined(shape.properties.result.anyOf)
      // the class's definition stays at the root, where its reference points
      assert.strictEqual(shape.properties.result.anyOf[0].$ref, "#/$defs/PointEncoded")
      assert.strictEqual(shape.$defs?.PointEncoded?.type, "object")
      assert.strictEqual(schemaOf("plain")!.type, "object")
      assert.isUndefined((schemaOf("plain") as Record<string, any>).properties.result)
    }))

  it.effect("calls: structuredContent is { result }, with its JSON as text; it validates against the advertised outputSchema", () =>
    Effect.gen(function*() {
      const { client } = yield* connect([Tags, Greeting, Count, Shape, Plain])
      const { tools } = yield* client.listTools()
      const tags = yield* client.callTool("tags")
      assert.deepStrictEqual({ content: tags.content, structuredContent: tags.structuredContent }, {
        content: [{ type: "text", text: `{"result":["a","b"]}` }],
        structuredContent: { result: ["a", "b"] }
      })
      const calls: Array<[string, Record<string, unknown>, unknown]> = [
        ["tags", {}, { result: ["a", "b"] }],
        ["greeting", { who: "Ada" }, { result: "hello Ada" }],
        ["count", {}, { result: 3 }],
        ["shape", { kind: "point" }, { result: { x: 1, y: 2 } }],
        ["shape", { kind: "circle" }, { result: "circle" }],
        ["plain", {}, { n: 1 }]
      ]
      for (const [name, args, expected] of calls) {
        // the client checks structuredContent against outputSchema (an InvalidResultError otherwise)
        const result = yield* client.callTool(name, args)
        assert.deepStrictEqual(result.structuredContent, expected, name)
        const outputSchema = tools.find((tool) => tool.name === name)!.outputSchema
        assert.deepStrictEqual(compile(outputSchema)(result.structuredContent), [], name)
        // and the check can fail: the bare value does not match a wrapped schema
        if (name !== "plain") assert.isNotEmpty(compile(outputSchema)((result.structuredContent as any).result), name)
      }
      const typed = yield* client.callToolTyped(
        "tags",
        undefined,
        Schema.Struct({ result: Schema.Array(Schema.String) })
      )
      assert.deepStrictEqual(typed, { result: ["a", "b"] })
    }).pipe(Effect.provide(ValidatorLayer)))
})

describe("tools without input", () => {
  it.effect("list like an empty struct and take no (or any) arguments", () =>
    Effect.gen(function*() {
      const { client } = yield* connect([ListNotes, Empty, Count])
      const { tools } = yield* client.listTools()
      const inputOf = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema
      assert.deepStrictEqual(inputOf("list_notes"), { type: "object", properties: {} })
      assert.deepStrictEqual(inputOf("list_notes"), inputOf("empty"))
      assert.deepStrictEqual(inputOf("count"), { type: "object", properties: {} })
      assert.strictEqual(textOf(yield* client.callTool("list_notes")), "no notes")
      assert.strictEqual(textOf(yield* client.callTool("list_notes", {})), "no notes")
      assert.strictEqual(textOf(yield* client.callTool("list_notes", { extra: 1 })), "no notes")
    }))
})
