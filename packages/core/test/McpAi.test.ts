/**
 * McpAi with a scripted LanguageModel (no network): MCP tools of in-memory
 * servers, through a client and through a group, called by the model with
 * their answers back in the conversation; isError results as failed calls;
 * list changes; hostile names; and an effect/ai toolkit served over MCP.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Ref, Schema, Stream } from "effect"
import { LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"
import type * as Response from "effect/ai/Response"
import * as McpAi from "../src/McpAi.ts"
import type * as McpError from "../src/McpError.ts"
import * as McpGroup from "../src/McpGroup.ts"
import type * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

// -----------------------------------------------------------------------------
// a scripted language model
// -----------------------------------------------------------------------------

/** The calls the model makes, given the tools it is shown; a string is its answer instead. */
type Plan = (
  tools: ReadonlyArray<Tool.Any>
) => ReadonlyArray<{ readonly name: string; readonly params: unknown }> | string

/** What the model reads of a tool result: its model output, else its JSON. */
const view = (part: Prompt.ToolMessagePart): string =>
  part.type !== "tool-result"
    ? ""
    : `${part.isFailure ? "failed" : "ok"} ${part.name}: ${
      part.modelOutput === undefined ? JSON.stringify(part.result) : Prompt.toolModelOutputToText(part.modelOutput)
    }`

const idOf = (part: Prompt.ToolMessagePart): string => part.type === "tool-result" ? part.id : ""

/**
 * A LanguageModel that calls the tools of `plan` when the conversation does
 * not end with tool results, and otherwise answers with what it read of
 * them. Every request's options are kept in `requests`.
 */
const scriptedModel = (plan: Plan, requests: Array<LanguageModel.ProviderOptions> = []) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync((): Array<Response.PartEncoded> => {
          requests.push(options)
          const last = options.prompt.content.at(-1)
          if (last?.role === "tool") {
            // in the order of the calls (they run concurrently)
            const results = [...last.content].sort((a, b) => idOf(a).localeCompare(idOf(b)))
            return [{ type: "text", text: `final: ${results.map(view).join(" | ")}` }]
          }
          const calls = plan(options.tools)
          if (typeof calls === "string") return [{ type: "text", text: calls }]
          return calls.map((call, i) => ({
            type: "tool-call",
            id: `call-${requests.length}-${i}`,
            name: call.name,
            params: call.params
          }))
        }),
      streamText: () => Stream.die("the scripted model only generates text")
    })
  )

/**
 * Turns of the conversation until the model answers without calling tools
 * (at most 4), with the toolkit listed afresh at each turn.
 */
const converse = (
  prompt: string,
  toolkit: Effect.Effect<Toolkit.WithHandler<McpAi.RemoteTools>, McpError.McpError>
) =>
  Effect.gen(function*() {
    let history = Prompt.make(prompt)
    const responses: Array<LanguageModel.GenerateTextResponse<McpAi.RemoteTools, "opaque">> = []
    for (let turn = 0; turn < 4; turn++) {
      const response = yield* LanguageModel.generateText({ prompt: history, toolkit: yield* toolkit })
      responses.push(response)
      history = Prompt.concat(history, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) return { text: response.text, responses }
    }
    return yield* Effect.die("no final answer in 4 turns")
  })

/** Tool results in the order of their calls (they run concurrently). */
const inOrder = <A extends { readonly id: string }>(results: ReadonlyArray<A>): Array<A> =>
  [...results].sort((a, b) => a.id.localeCompare(b.id))

const named = (name: string): Plan => (tools) =>
  tools.some((tool) => tool.name === name) ? [{ name, params: {} }] : `no tool named ${name}`

// -----------------------------------------------------------------------------
// servers
// -----------------------------------------------------------------------------

const serverInfo = { name: "notes-server", version: "1.0.0" }

const readNote = (seen: Ref.Ref<ReadonlyArray<string>>, metas?: Ref.Ref<ReadonlyArray<unknown>>) =>
  McpTool.make("read_note", {
    title: "Read a note",
    description: "Reads a note by title",
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    input: Schema.Struct({ title: Schema.String }),
    handler: ({ title }, context) =>
      Effect.as(
        Effect.andThen(
          Ref.update(seen, (all) => [...all, title]),
          metas === undefined ? Effect.void : Ref.update(metas, (all) => [...all, context.meta?.trace])
        ),
        `note ${title}: buy milk`
      )
  })

const stats = McpTool.make("stats", {
  input: Schema.Struct({}),
  output: Schema.Struct({ notes: Schema.Finite }),
  handler: () => Effect.succeed({ notes: 3 })
})

const broken = McpTool.make("broken", {
  input: Schema.Struct({}),
  handler: () => Effect.succeed({ content: [{ type: "text" as const, text: "disk on fire" }], isError: true })
})

const echo = (server: string) =>
  McpTool.make("echo", {
    input: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(`${server}:${text}`)
  })

const serverOf = (...definitions: ReadonlyArray<McpServer.Definition<never>>) =>
  McpServer.layer(serverInfo, ...definitions)

const connect = (server: Layer.Layer<McpServer.McpServer>) => connectOver(McpGroup.transportInMemory(server))

// -----------------------------------------------------------------------------

describe("McpAi.toolkit", () => {
  it.effect("the model calls a tool of a server through the client and answers with its result", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const metas = yield* Ref.make<ReadonlyArray<unknown>>([])
      const client = yield* connect(serverOf(readNote(seen, metas), stats))
      const requests: Array<LanguageModel.ProviderOptions> = []
      const plan: Plan = () => [{ name: "read_note", params: { title: "shopping" } }, { name: "stats", params: {} }]
      const toolkit = McpAi.toolkit(client, { requestOptions: { meta: { trace: "t-1" } } })

      const { responses, text } = yield* converse("What do I need to buy?", toolkit).pipe(
        Effect.provide(scriptedModel(plan, requests))
      )

      // the call went through the client to the server, and its answer back to the model
      assert.deepStrictEqual(yield* Ref.get(seen), ["shopping"])
      assert.deepStrictEqual(yield* Ref.get(metas), ["t-1"])
      assert.strictEqual(text, `final: ok read_note: note shopping: buy milk | ok stats: {"notes":3}`)
      const [read, counted] = inOrder(responses[0]!.toolResults)
      assert.strictEqual(read?.isFailure, false)
      assert.deepStrictEqual((read?.result as McpSchema.CallToolResult).content, [
        { type: "text", text: "note shopping: buy milk" }
      ])
      assert.deepStrictEqual((counted?.result as McpSchema.CallToolResult).structuredContent, { notes: 3 })

      // what the model was shown: the server's schema, description and hints
      const listed = yield* client.tools.get
      const tool = requests[0]!.tools.find((tool) => tool.name === "read_note")!
      assert.deepStrictEqual(Tool.getJsonSchema(tool), listed.find((tool) => tool.name === "read_note")!.inputSchema)
      assert.strictEqual(Tool.getDescription(tool), "Reads a note by title")
      assert.deepStrictEqual(Context.getOption(tool.annotations, Tool.Title), Option.some("Read a note"))
      assert.strictEqual(Context.get(tool.annotations, Tool.Readonly), true)
      assert.strictEqual(Context.get(tool.annotations, Tool.Destructive), false)
      assert.strictEqual(Context.get(tool.annotations, Tool.Idempotent), false)
      assert.strictEqual(Context.get(tool.annotations, Tool.OpenWorld), false)
      assert.strictEqual(Tool.getStrictMode(tool), false)
      assert.deepStrictEqual(requests[0]!.tools.map((tool) => tool.name), ["read_note", "stats"])

      // a filtered toolkit
      const filtered = yield* McpAi.toolkit(client, {
        filter: (entry) => entry.tool.annotations?.readOnlyHint === true
      })
      assert.deepStrictEqual(Object.keys(filtered.tools), ["read_note"])
    }))

  it.effect("the model calls the tools of two servers through a group", () =>
    Effect.gen(function*() {
      const group = yield* McpGroup.make({
        servers: {
          alpha: McpGroup.inMemory(serverOf(echo("alpha"))),
          beta: McpGroup.inMemory(serverOf(echo("beta")))
        },
        nameHook: McpGroup.prefixed()
      }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
      const requests: Array<LanguageModel.ProviderOptions> = []
      const plan: Plan = () => [
        { name: "beta__echo", params: { text: "hello" } },
        { name: "alpha__echo", params: { text: "bonjour" } }
      ]

      const { text } = yield* converse("Say hello twice", McpAi.toolkit(group)).pipe(
        Effect.provide(scriptedModel(plan, requests))
      )

      assert.deepStrictEqual(requests[0]!.tools.map((tool) => tool.name), ["alpha__echo", "beta__echo"])
      assert.strictEqual(text, "final: ok beta__echo: beta:hello | ok alpha__echo: alpha:bonjour")
    }))

  it.effect("an isError result reaches the model as a failed call, and generateText goes on", () =>
    Effect.gen(function*() {
      const client = yield* connect(serverOf(broken))
      const plan: Plan = () => [{ name: "broken", params: {} }, { name: "broken", params: "not an object" }]

      const { responses, text } = yield* converse("Try it", McpAi.toolkit(client)).pipe(
        Effect.provide(scriptedModel(plan))
      )

      const [result, refused] = inOrder(responses[0]!.toolResults)
      assert.strictEqual(result?.isFailure, true)
      assert.instanceOf(result?.result, McpAi.ToolFailure)
      const failure = result?.result as McpAi.ToolFailure
      assert.deepStrictEqual([failure.tool, failure.message, failure.structuredContent], [
        "broken",
        "disk on fire",
        undefined
      ])
      assert.strictEqual(refused?.isFailure, true)
      assert.strictEqual(
        (refused?.result as McpAi.ToolFailure).message,
        "The arguments of broken must be a JSON object"
      )
      assert.strictEqual(
        text,
        `final: failed broken: {"_tag":"McpToolFailure","tool":"broken","message":"disk on fire"}` +
          ` | failed broken: {"_tag":"McpToolFailure","tool":"broken","message":"The arguments of broken must be a JSON object"}`
      )
    }))

  it.effect("a tool added to the server after the toolkit was made is seen at the next request", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* McpServer.make(serverInfo)
      yield* server.register(readNote(seen))
      const client = yield* connect(Layer.succeed(McpServer.McpServer, server))
      const toolkit = McpAi.toolkit(client)
      const model = scriptedModel(named("late"))

      const before = yield* converse("Use the late tool", toolkit).pipe(Effect.provide(model))
      assert.strictEqual(before.text, "no tool named late")

      yield* server.register(
        McpTool.make("late", { input: Schema.Struct({}), handler: () => Effect.succeed("late result") })
      )
      // the client refreshes its list on `list_changed`
      yield* client.tools.changes.pipe(
        Stream.filter((tools) => tools.some((tool) => tool.name === "late")),
        Stream.runHead
      )

      const after = yield* converse("Use the late tool", toolkit).pipe(Effect.provide(model))
      assert.strictEqual(after.text, "final: ok late: late result")
    }))

  it.effect("names a model provider would reject are renamed, and calls are routed back to the right tool", () =>
    Effect.gen(function*() {
      const long = "x".repeat(100)
      const hostile = ["a.b", "a/b", "a_b", long, "ünï cödé", "9lives"]
      const client = yield* connect(
        serverOf(...hostile.map((name) =>
          McpTool.make(name, {
            input: Schema.Struct({}),
            handler: () => Effect.succeed(`I am ${name}`)
          })
        ))
      )
      const requests: Array<LanguageModel.ProviderOptions> = []
      const plan: Plan = (tools) => tools.map((tool) => ({ name: tool.name, params: {} }))

      const { responses } = yield* converse("Call everything", McpAi.toolkit(client)).pipe(
        Effect.provide(scriptedModel(plan, requests))
      )

      const names = requests[0]!.tools.map((tool) => tool.name)
      const originals = (yield* client.tools.get).map((tool) => tool.name)
      assert.sameMembers(originals, hostile)
      const modelName = (original: string) => names[originals.indexOf(original)]!
      assert.strictEqual(new Set(names).size, hostile.length)
      for (const name of names) assert.match(name, /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/)
      assert.strictEqual(modelName("a_b"), "a_b")
      assert.match(modelName("a.b"), /^a_b_[0-9a-f]{8}$/)
      assert.match(modelName("a/b"), /^a_b_[0-9a-f]{8}$/)
      assert.match(modelName(long), /^x{55}_[0-9a-f]{8}$/)
      assert.match(modelName("ünï cödé"), /^_n__c_d__[0-9a-f]{8}$/)
      assert.match(modelName("9lives"), /^_9lives_[0-9a-f]{8}$/)
      // each model name reaches the tool it stands for
      const answers = responses[0]!.toolResults.map((result) => [result.name, textOf(result.result)])
      assert.sameDeepMembers(answers, originals.map((original) => [modelName(original), `I am ${original}`]))
      // and keeps standing for it in the next request
      assert.deepStrictEqual(requests[1]!.tools.map((tool) => tool.name), names)
    }))
})

// -----------------------------------------------------------------------------
// an effect/ai toolkit served over MCP
// -----------------------------------------------------------------------------

class DivisionByZero extends Schema.TaggedError<DivisionByZero>()("DivisionByZero", { dividend: Schema.Finite }) {}

const Divide = Tool.make("divide", {
  description: "Divides a by b",
  parameters: Schema.Struct({ a: Schema.Finite, b: Schema.Finite.annotate({ description: "The divisor" }) }),
  success: Schema.Struct({ quotient: Schema.Finite }),
  failure: DivisionByZero
})
  .annotate(Tool.Title, "Divider")
  .annotate(Tool.Readonly, true)
  .annotate(Tool.Destructive, false)
  .annotate(Tool.Idempotent, true)
  .annotate(Tool.OpenWorld, false)

// parameters with a transformation (a count sent as a string), failure mode "return"
const Repeat = Tool.make("repeat", {
  parameters: Schema.Struct({ word: Schema.String, times: Schema.FiniteFromString }),
  success: Schema.Struct({ text: Schema.String }),
  failure: Schema.String,
  failureMode: "return"
})

const Wipe = Tool.make("wipe", { description: "Wipes everything", needsApproval: true })

// raw JSON Schema parameters
const Lookup = Tool.dynamic("lookup", {
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  success: Schema.String
})

const Tools = Toolkit.make(Divide, Repeat, Wipe, Lookup)

const calculator = (wiped: Ref.Ref<boolean>) =>
  McpAi.serveToolkit(Tools).pipe(
    Layer.provide(Tools.toLayer({
      divide: ({ a, b }) =>
        b === 0 ? Effect.fail(new DivisionByZero({ dividend: a })) : Effect.succeed({ quotient: a / b }),
      repeat: ({ times, word }) =>
        times < 1 ? Effect.fail("nothing to repeat") : Effect.succeed({ text: word.repeat(times) }),
      wipe: () => Ref.set(wiped, true),
      lookup: (params) => Effect.succeed(`value of ${(params as { key: string }).key}`)
    })),
    Layer.provideMerge(McpServer.layer({ name: "calculator", version: "1.0.0" }))
  )

const listedTool = (tools: ReadonlyArray<McpSchema.Tool>, name: string) => tools.find((tool) => tool.name === name)!

describe("McpAi.serveToolkit", () => {
  it.effect("lists the toolkit's tools with their schemas and annotations, and runs their handlers", () =>
    Effect.gen(function*() {
      const wiped = yield* Ref.make(false)
      const client = yield* connect(calculator(wiped))
      const tools = yield* client.tools.get

      assert.sameMembers(tools.map((tool) => tool.name), ["divide", "repeat", "wipe", "lookup"])
      const divide = listedTool(tools, "divide")
      assert.strictEqual(divide.description, "Divides a by b")
      assert.strictEqual(divide.title, "Divider")
      assert.deepStrictEqual(divide.annotations, {
        title: "Divider",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false
      })
      assert.deepStrictEqual(divide.inputSchema.required, ["a", "b"])
      assert.deepStrictEqual(divide.inputSchema.properties, {
        a: { type: "number" },
        b: { type: "number", description: "The divisor" }
      })
      assert.deepStrictEqual(divide.outputSchema?.properties, { quotient: { type: "number" } })
      // the unannotated defaults, stated
      assert.deepStrictEqual(listedTool(tools, "repeat").annotations, {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true
      })
      // the encoded side of the parameters: the count is a string
      assert.strictEqual(
        (listedTool(tools, "repeat").inputSchema.properties?.times as { type?: unknown }).type,
        "string"
      )
      assert.strictEqual(listedTool(tools, "wipe").outputSchema, undefined)

      // a result, as structured content
      const quotient = yield* client.callTool("divide", { a: 6, b: 3 })
      assert.deepStrictEqual(quotient.structuredContent, { quotient: 2 })
      assert.notStrictEqual(quotient.isError, true)
      // a typed failure, as an isError result with its encoded JSON
      const byZero = yield* client.callTool("divide", { a: 1, b: 0 })
      assert.strictEqual(byZero.isError, true)
      assert.strictEqual(textOf(byZero), `{"_tag":"DivisionByZero","dividend":1}`)
      // invalid arguments
      const invalid = yield* client.callTool("divide", { a: "one", b: 2 })
      assert.strictEqual(invalid.isError, true)
      assert.match(textOf(invalid), /^Invalid arguments for tool divide/)
      // a transformed parameter decoded once, and a failure of mode "return"
      const repeated = yield* client.callTool("repeat", { word: "la", times: "3" })
      assert.deepStrictEqual(repeated.structuredContent, { text: "lalala" })
      const nothing = yield* client.callTool("repeat", { word: "la", times: "0" })
      assert.strictEqual(nothing.isError, true)
      assert.strictEqual(textOf(nothing), "nothing to repeat")
      // a tool that needs approval is refused, and its handler does not run
      const wipe = yield* client.callTool("wipe", {})
      assert.strictEqual(wipe.isError, true)
      assert.match(textOf(wipe), /needs approval/)
      assert.strictEqual(yield* Ref.get(wiped), false)
      // a dynamic tool: its JSON Schema as it is, its result as text
      assert.deepStrictEqual(listedTool(tools, "lookup").inputSchema, {
        type: "object",
        properties: { key: { type: "string" } },
        required: ["key"]
      })
      assert.strictEqual(textOf(yield* client.callTool("lookup", { key: "k" })), "value of k")
    }))

  it.effect("round trip: a model calls, through McpAi.toolkit, a toolkit served with McpAi.serveToolkit", () =>
    Effect.gen(function*() {
      const client = yield* connect(calculator(yield* Ref.make(false)))
      const plan: Plan = () => [{ name: "divide", params: { a: 10, b: 4 } }, { name: "divide", params: { a: 1, b: 0 } }]

      const { text } = yield* converse("Divide", McpAi.toolkit(client)).pipe(Effect.provide(scriptedModel(plan)))

      assert.strictEqual(
        text,
        `final: ok divide: {"quotient":2.5} | failed divide: ` +
          `{"_tag":"McpToolFailure","tool":"divide","message":"{\\"_tag\\":\\"DivisionByZero\\",\\"dividend\\":1}"}`
      )
    }))
})
