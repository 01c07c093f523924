/**
 * The test kit: a client connected to a server layer in memory, in both
 * eras, with the default JSON Schema validator (nothing provided), the
 * test's handlers answering the server's requests, and time moved by
 * `TestClock` only.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Context, Deferred, Effect, Exit, Fiber, Layer, Ref, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import type * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import type * as McpClientSession from "../src/McpClientSession.ts"
import * as McpError from "../src/McpError.ts"
import type * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"
import { textOf } from "./utils/client.ts"

const eras: ReadonlyArray<McpClientSession.Era> = ["modern", "legacy"]

// -----------------------------------------------------------------------------
// A server
// -----------------------------------------------------------------------------

const Add = McpTool.make("add", {
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

/** Claims an `outputSchema` it does not keep, and checks its input against a raw JSON Schema. */
const Liar = McpTool.fromJsonSchema("liar", {
  inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
  handler: ({ n }) => Effect.succeed({ sum: String(n) })
})

const WhoAmI = McpTool.make("who_am_i", {
  handler: (_, context) => Effect.succeed(`${context.clientInfo.name} ${context.era}`)
})

/** Asks the client for a message, a name and its roots. */
const Interview = McpTool.make("interview", {
  handler: (_, context) =>
    Effect.gen(function*() {
      const message = yield* context.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "Say hi" } }],
        maxTokens: 10
      })
      const answer = yield* context.elicit({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) })
      const roots = yield* context.listRoots()
      const block = Array.isArray(message.content) ? message.content[0] : message.content
      const text = block?.type === "text" ? block.text : "?"
      const name = answer.action === "accept" ? answer.content.name : answer.action
      return `${context.era}: ${text} / ${name} / ${roots.map((root) => root.uri).join(",")}`
    })
})

/** Sleeps a minute, saying when it started and when it was interrupted. */
const sleeper = (started: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>) =>
  McpTool.make("sleep", {
    handler: () =>
      Deferred.succeed(started, undefined).pipe(
        Effect.andThen(Effect.sleep("1 minute")),
        Effect.as("rested"),
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
      )
  })

/** Reports progress 1..3, three seconds apart. */
const Steps = McpTool.make("steps", {
  handler: (_, context) =>
    Effect.gen(function*() {
      for (const progress of [1, 2, 3]) {
        yield* Effect.sleep("3 seconds")
        yield* context.reportProgress({ progress, total: 3, message: `step ${progress}` })
      }
      return "done"
    })
})

const Server = McpServer.layer({ name: "kit", version: "1.0.0" }, Add, Liar, WhoAmI, Interview, Steps)

/** The test's answers to the server's requests. */
const answers = {
  sampling: {
    handler: (params: McpSchema.CreateMessageRequestParams) =>
      Effect.succeed({
        role: "assistant" as const,
        model: "test-model",
        content: { type: "text" as const, text: `hi (${params.messages.length} message)` }
      })
  },
  elicitation: {
    form: (params: McpSchema.ElicitRequestFormParams) =>
      Effect.succeed({ action: "accept" as const, content: { name: `Ada, asked "${params.message}"` } })
  },
  roots: [{ uri: "file:///work", name: "work" }]
} satisfies McpTest.Options

// -----------------------------------------------------------------------------
// Tests
// -----------------------------------------------------------------------------

layer(McpTest.layer(Server))("McpTest.layer", (it) => {
  it.effect("a tool call round trip, the result checked against the tool's outputSchema", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual(client.era, "modern")
      const tool = (yield* client.tools.get).find((tool) => tool.name === "add")
      assert.deepStrictEqual(tool?.outputSchema?.required, ["sum"])
      const result = yield* client.callTool("add", { a: 1, b: 2 })
      assert.deepStrictEqual(result.structuredContent, { sum: 3 })
      assert.deepStrictEqual(
        yield* client.callToolTyped("add", { a: 2, b: 2 }, Schema.Struct({ sum: Schema.Number })),
        {
          sum: 4
        }
      )
    }))

  it.effect("the default validator checks outputs on the client and raw input schemas on the server", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const error = yield* Effect.flip(client.callTool("liar", { n: 1 }))
      assert.strictEqual(error.reason._tag, "InvalidResultError")
      assert.include(error.message, "/sum: Instance type \"string\" is invalid. Expected \"number\".")
      const refused = yield* client.callTool("liar", { n: "one" })
      assert.isTrue(refused.isError)
      assert.include(textOf(refused), "/n: Instance type \"string\" is invalid. Expected \"integer\".")
    }))

  it.effect("the server sees the default clientInfo", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      assert.strictEqual(textOf(yield* client.callTool("who_am_i", {})), "mcp-test modern")
    }))
})

describe("McpTest.client", () => {
  it.effect("clientInfo and era are the test's", () =>
    Effect.gen(function*() {
      const client = yield* McpTest.client(Server, { clientInfo: { name: "probe", version: "1" }, era: "legacy" })
      assert.deepStrictEqual([client.era, client.protocolVersion], ["legacy", "2025-11-25"])
      assert.strictEqual(textOf(yield* client.callTool("who_am_i", {})), "probe legacy")
    }))

  it.effect("the server layer's requirements and errors are the client's", () =>
    Effect.gen(function*() {
      class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/Greeting") {}
      const Greet = McpTool.make("greet", { handler: () => Greeting.useSync((greeting) => greeting.text) })
      const client = yield* McpTest.client(McpServer.layer({ name: "g", version: "1" }, Greet)).pipe(
        Effect.provideService(Greeting, { text: "hello" })
      )
      assert.strictEqual(textOf(yield* client.callTool("greet", {})), "hello")

      const failing = Layer.effect(McpServer.McpServer, Effect.fail("no database" as const))
      const error = yield* Effect.flip(McpTest.client(failing))
      assert.strictEqual(error, "no database")
    }))

  for (const era of eras) {
    it.effect(`${era}: the server's sampling, elicitation and roots requests are answered by the test's handlers`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(Server, { ...answers, era })
        assert.isDefined(client.capabilities.sampling)
        assert.isDefined(client.capabilities.elicitation)
        const text = textOf(yield* client.callTool("interview", {}))
        assert.strictEqual(text, `${era}: hi (1 message) / Ada, asked "Name?" / file:///work`)
      }))

    it.effect(`${era}: without handlers the server's requests are refused (the client lacks the capabilities)`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(Server, { era })
        const result = yield* client.callTool("interview", {}).pipe(Effect.result)
        // a missing client capability: -32021 in the modern era, an isError result in the legacy one
        if (era === "modern") {
          assert.isTrue(result._tag === "Failure" && result.failure.message.includes("(code -32021)"))
        } else {
          assert.isTrue(result._tag === "Success" && result.success.isError === true)
        }
        const text = result._tag === "Success" ? textOf(result.success) : result.failure.message
        assert.include(text, "sampling")
      }))
  }
})

describe("McpTest under TestClock", () => {
  for (const era of eras) {
    it.effect(`${era}: a request timeout fires when the clock reaches it`, () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const interrupted = yield* Deferred.make<void>()
        const client = yield* McpTest.client(
          McpServer.layer({ name: "slow", version: "1" }, sleeper(started, interrupted)),
          { era }
        )
        const call = yield* client.callTool("sleep", {}, { timeout: "5 seconds" }).pipe(
          Effect.flip,
          Effect.forkChild({ startImmediately: true })
        )
        yield* Deferred.await(started)
        yield* TestClock.adjust("4 seconds")
        assert.isUndefined(call.pollUnsafe())
        yield* TestClock.adjust("1 second")
        const error = yield* Fiber.join(call)
        assert.strictEqual(error.reason._tag, "TimeoutError")
        assert.strictEqual(error.message, "tools/call timed out after 5000 ms")
        // the client cancelled it: the server's handler was interrupted
        yield* Deferred.await(interrupted)
        assert.strictEqual(yield* client.session.pendingCount, 0)
      }))

    it.effect(`${era}: progress notifications arrive as the clock moves, and keep an idle timeout at bay`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(Server, { era })
        const seen = yield* Ref.make<ReadonlyArray<string>>([])
        const call = yield* client.callTool("steps", {}, {
          timeout: "5 seconds",
          onProgress: (progress) =>
            Ref.update(seen, (all) => [...all, `${progress.progress}/${progress.total} ${progress.message}`])
        }).pipe(Effect.forkChild({ startImmediately: true }))
        yield* TestClock.adjust("3 seconds")
        assert.deepStrictEqual(yield* Ref.get(seen), ["1/3 step 1"])
        yield* TestClock.adjust("6 seconds")
        // nine seconds in: past the five-second idle limit, but progress came every three
        assert.strictEqual(textOf(yield* Fiber.join(call)), "done")
        assert.deepStrictEqual(yield* Ref.get(seen), ["1/3 step 1", "2/3 step 2", "3/3 step 3"])
      }))
  }

  it.effect("legacy: the server's keep-alive pings the client on the clock, and the client answers", () =>
    Effect.gen(function*() {
      const pings = yield* Ref.make<ReadonlyArray<readonly [at: number, id: JsonRpc.RequestId]>>([])
      const answered = yield* Ref.make<ReadonlyArray<JsonRpc.RequestId>>([])
      const onFrame = (from: "client" | "server", frame: JsonRpc.Frame) => {
        const message = frame as JsonRpc.Message
        if (from === "server" && "method" in message && message.method === "ping" && "id" in message) {
          return Effect.flatMap(
            Clock.currentTimeMillis,
            (at) => Ref.update(pings, (all) => [...all, [at, message.id] as const])
          )
        }
        if (from === "client" && "result" in message) return Ref.update(answered, (all) => [...all, message.id])
        return Effect.void
      }
      const KeepAlive = McpServer.layer({ name: "k", version: "1", keepAlive: { interval: "10 seconds" } })
      const client = yield* McpTest.client(KeepAlive, { era: "legacy", onFrame })
      yield* TestClock.adjust("9 seconds")
      assert.deepStrictEqual(yield* Ref.get(pings), [])
      yield* TestClock.adjust("21 seconds")
      const sent = yield* Ref.get(pings)
      // the first one an interval after the handshake, then one per interval
      assert.deepStrictEqual(sent.map(([at]) => at), [10_000, 20_000, 30_000])
      assert.deepStrictEqual(yield* Ref.get(answered), sent.map(([, id]) => id))
      assert.isTrue(yield* client.session.isOpen)

      // a modern client is never pinged (while the legacy one still is)
      const modernPings = yield* Ref.make(0)
      yield* McpTest.client(KeepAlive, {
        era: "modern",
        onFrame: (from, frame) =>
          from === "server" && "method" in frame && frame.method === "ping"
            ? Ref.update(modernPings, (n) => n + 1)
            : Effect.void
      })
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Ref.get(modernPings), 0)
      assert.strictEqual((yield* Ref.get(pings)).length, 9)
    }))
})

describe("McpTest: closing the scope", () => {
  for (const era of eras) {
    it.effect(`${era}: fails what is pending, interrupts the server's handler, and leaves no pending request`, () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const interrupted = yield* Deferred.make<void>()
        const Slow = McpServer.layer({ name: "slow", version: "1" }, sleeper(started, interrupted))
        const scope = yield* Scope.make()
        // the server provided next to the client is the one it talks to
        const context = yield* Layer.buildWithScope(McpTest.layer(Slow, { era }).pipe(Layer.provideMerge(Slow)), scope)
        const client = Context.get(context, McpClient.McpClient)
        const server = Context.get(context, McpServer.McpServer)
        assert.strictEqual(yield* server.sessionCount, 1)
        const call = yield* client.callTool("sleep", {}).pipe(Effect.flip, Effect.forkChild({ startImmediately: true }))
        yield* Deferred.await(started)
        assert.strictEqual(yield* client.session.pendingCount, 1)

        yield* Scope.close(scope, Exit.void)
        const error = yield* Fiber.join(call)
        assert.isTrue(McpError.isMcpError(error))
        assert.strictEqual(error.reason._tag, "ClosedError")
        yield* Deferred.await(interrupted)
        assert.strictEqual(yield* client.session.pendingCount, 0)
        assert.isFalse(yield* client.session.isOpen)
        assert.strictEqual(yield* server.sessionCount, 0)
      }))
  }

  it.effect("legacy: a server request awaiting the client's answer is failed too", () =>
    Effect.gen(function*() {
      const asked = yield* Deferred.make<void>()
      const serverSession = yield* Deferred.make<McpServer.RequestContext["session"]>()
      const Ask = McpTool.make("ask", {
        handler: (_, context) =>
          Deferred.succeed(serverSession, context.session).pipe(
            Effect.andThen(context.createMessage({ messages: [], maxTokens: 1 })),
            Effect.as("answered")
          )
      })
      const scope = yield* Scope.make()
      const client = yield* McpTest.client(McpServer.layer({ name: "ask", version: "1" }, Ask), {
        era: "legacy",
        sampling: { handler: () => Effect.andThen(Deferred.succeed(asked, undefined), Effect.never) }
      }).pipe(Scope.provide(scope))
      const call = yield* client.callTool("ask", {}).pipe(Effect.exit, Effect.forkChild({ startImmediately: true }))
      yield* Deferred.await(asked)
      const session = yield* Deferred.await(serverSession)
      assert.strictEqual(yield* client.session.pendingCount, 1)
      assert.strictEqual(yield* session.pendingCount, 1)

      yield* Scope.close(scope, Exit.void)
      assert.isTrue(Exit.isFailure(yield* Fiber.join(call)))
      assert.strictEqual(yield* client.session.pendingCount, 0)
      assert.strictEqual(yield* session.pendingCount, 0)
      assert.isFalse(yield* session.isOpen)
    }))
})
