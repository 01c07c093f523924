/**
 * The client in both eras: `era: "auto"` probes with `server/discover` and
 * falls back to `initialize` on the same connection; the `_meta` envelope of
 * every modern request; input-required results answered by the client's own
 * handlers (sampling, elicitation, roots) within a round limit; and the
 * change notifications of a listen stream feeding cached lists.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, connectOver, textOf } from "./utils/client.ts"
import { rawPeer, settle } from "./utils/peer.ts"

const Greet = McpTool.make("greet", {
  description: "Asks for a name",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) }),
      (answer) => `Hello, ${answer.action === "accept" ? answer.content.name : "nobody"} (${context.era})`
    )
})

const TwoSteps = McpTool.make("two_steps", {
  description: "Asks twice",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.gen(function*() {
      const model = yield* context.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "hi" } }],
        maxTokens: 5
      })
      const roots = yield* context.listRoots()
      return `${JSON.stringify(model.content)} ${roots.map((root) => root.uri).join(",")}`
    })
})

const File = McpResource.make({ uri: "file:///x", name: "x", read: () => Effect.succeed("x") })

const answers: Partial<McpClient.Options> = {
  elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name: "Ada" } }) },
  sampling: {
    handler: () =>
      Effect.succeed({ role: "assistant" as const, model: "m", content: { type: "text" as const, text: "yo" } })
  },
  roots: [{ uri: "file:///work", name: "work" }]
}

/** Our server (dual-era, or legacy-only with `protocolVersions`) and a client over an in-memory link. */
const connect = (client: Partial<McpClient.Options> = {}, server: Partial<McpServer.Options> = {}) =>
  Effect.gen(function*() {
    const mcp = yield* McpServer.make({ name: "s", version: "1", ...server })
    for (const definition of [Greet, TwoSteps, File]) yield* mcp.register(definition)
    const link = yield* McpTransport.makeInMemoryLink
    yield* Layer.build(
      McpServer.layerSession.pipe(Layer.provide([link.server, Layer.succeed(McpServer.McpServer, mcp)]))
    )
    return { server: mcp, client: yield* connectOver(link.client, { ...answers, ...client }) }
  })

describe("McpClient: the era", () => {
  it.effect("auto against a dual-era server: modern, with what discover said", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      assert.deepStrictEqual([client.era, client.protocolVersion], ["modern", "2026-07-28"])
      assert.deepStrictEqual(client.serverInfo, { name: "s", version: "1" })
      assert.isDefined(client.serverCapabilities.tools)
    }))

  it.effect("auto against a legacy-only server: falls back to initialize on the same connection", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({}, { protocolVersions: ["2025-11-25"] })
      assert.deepStrictEqual([client.era, client.protocolVersion], ["legacy", "2025-11-25"])
      assert.strictEqual(textOf(yield* client.callTool("greet", {})), "Hello, Ada (legacy)")
    }))

  it.effect("pinned: legacy against a dual-era server; modern against a legacy-only one fails the handshake", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({ era: "legacy" })
      assert.strictEqual(client.era, "legacy")
      const refused = yield* Effect.flip(connect({ era: "modern" }, { protocolVersions: ["2025-11-25"] }))
      assert.strictEqual(refused.reason._tag, "HandshakeError")
      assert.include(refused.message, "2026-07-28")
    }))
})

describe("McpClient: input-required rounds", () => {
  it.effect("callTool sees one result; the client's own handlers answered the inputs", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      assert.strictEqual(textOf(yield* client.callTool("greet", {})), "Hello, Ada (modern)")
      assert.strictEqual(
        textOf(yield* client.callTool("two_steps", {})),
        "{\"type\":\"text\",\"text\":\"yo\"} file:///work"
      )
    }))

  it.effect("past maxInputRounds: a clear error", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({ maxInputRounds: 1 })
      const error = yield* Effect.flip(client.callTool("two_steps", {}))
      assert.include(error.message, "after 1 rounds (maxInputRounds)")
    }))

  it.effect("an input the client has no handler for fails the call, naming it", () =>
    Effect.gen(function*() {
      // a server that asks regardless of the declared capabilities, played by hand
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const calling = yield* Effect.forkChild(
        Effect.flatMap(connectOver(Layer.succeed(McpTransport.McpTransport, clientEnd)), (client) =>
          client.callTool("t", {})),
        { startImmediately: true }
      )
      const discover = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.success(discover.id, {
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} }
      }))
      const call = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.success(call.id, {
        resultType: "input_required",
        inputRequests: { r: { method: "roots/list", params: {} } }
      }))
      const error = yield* Effect.flip(Fiber.join(calling))
      assert.strictEqual(error.reason._tag, "UnsupportedError")
      assert.include(error.message, "roots/list")
    }))
})

describe("McpClient: the _meta envelope", () => {
  it.effect("every modern request: version, client info, capabilities, the log level once set, the trace parent when traced", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const connecting = yield* Effect.forkChild(
        connectOver(Layer.succeed(McpTransport.McpTransport, clientEnd), answers),
        {
          startImmediately: true
        }
      )
      const discover = (yield* server.next) as JsonRpc.Request
      const meta = (discover.params as { _meta: Record<string, unknown> })._meta
      assert.strictEqual(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28")
      assert.deepStrictEqual(meta["io.modelcontextprotocol/clientInfo"], clientInfo)
      const capabilities = meta["io.modelcontextprotocol/clientCapabilities"] as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(capabilities).sort(), ["elicitation", "extensions", "roots", "sampling"])
      // the tasks extension is declared (McpClient's `tasks` option, on by default)
      assert.deepStrictEqual(capabilities.extensions, { "io.modelcontextprotocol/tasks": {} })
      yield* server.send(
        JsonRpc.success(discover.id, {
          resultType: "complete",
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {} }
        })
      )
      const client = yield* Fiber.join(connecting)
      yield* client.setLoggingLevel("warning")
      const spans: Array<string> = []
      // a tracer of our own: the spans are recorded, and their context goes along
      const tracer = Tracer.make({
        span: (options) => {
          spans.push(options.name)
          return new Tracer.NativeSpan(options)
        }
      })
      yield* client.listTools().pipe(
        Effect.withSpan("caller"),
        Effect.withTracer(tracer),
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      const list = (yield* server.next) as JsonRpc.Request
      const listMeta = (list.params as { _meta: Record<string, unknown> })._meta
      assert.strictEqual(listMeta["io.modelcontextprotocol/logLevel"], "warning")
      assert.match(String(listMeta.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
      assert.deepStrictEqual(spans, ["caller"])
    }))
})

describe("McpClient: version negotiation", () => {
  it.effect("a -32022 naming the version just sent: retried once with it, discover and a later request alike", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const connecting = yield* Effect.forkChild(
        connectOver(Layer.succeed(McpTransport.McpTransport, clientEnd), answers),
        {
          startImmediately: true
        }
      )
      const versionOf = (frame: JsonRpc.Request) =>
        (frame.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/protocolVersion"]
      const refuse = (frame: JsonRpc.Request) =>
        server.send(JsonRpc.failure(frame.id, {
          code: JsonRpc.ErrorCode.UnsupportedProtocolVersion,
          message: "Unsupported protocol version",
          data: { supported: ["2026-07-28"], requested: versionOf(frame) }
        }))
      const discover = (yield* server.next) as JsonRpc.Request
      yield* refuse(discover)
      const again = (yield* server.next) as JsonRpc.Request
      assert.strictEqual(again.method, "server/discover")
      assert.notStrictEqual(again.id, discover.id)
      assert.strictEqual(versionOf(again), "2026-07-28")
      yield* server.send(
        JsonRpc.success(again.id, {
          resultType: "complete",
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {} }
        })
      )
      const client = yield* Fiber.join(connecting)
      assert.strictEqual(client.era, "modern")
      const listing = yield* Effect.forkChild(client.listTools(), { startImmediately: true })
      const list = (yield* server.next) as JsonRpc.Request
      yield* refuse(list)
      const retried = (yield* server.next) as JsonRpc.Request
      assert.strictEqual(retried.method, "tools/list")
      assert.notStrictEqual(retried.id, list.id)
      assert.strictEqual(versionOf(retried), "2026-07-28")
      yield* server.send(JsonRpc.success(retried.id, { resultType: "complete", tools: [] }))
      assert.deepStrictEqual((yield* Fiber.join(listing)).tools, [])
    }))
})

describe("McpClient: a hostile tools/list", () => {
  it.effect("an entry that is not a tool is left out; the others stay callable", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const connecting = yield* Effect.forkChild(connectOver(Layer.succeed(McpTransport.McpTransport, clientEnd)), {
        startImmediately: true
      })
      const discover = (yield* server.next) as JsonRpc.Request
      yield* server.send(
        JsonRpc.success(discover.id, {
          resultType: "complete",
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {} }
        })
      )
      const client = yield* Fiber.join(connecting)
      const listing = yield* Effect.forkChild(client.tools.get, { startImmediately: true })
      const list = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.success(list.id, {
        resultType: "complete",
        tools: [
          // what effect/ai 4.1 lists for a tool with a string result
          { name: "bad", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
          "not even an object",
          { name: "good", inputSchema: { type: "object" } }
        ]
      }))
      assert.deepStrictEqual((yield* Fiber.join(listing)).map((tool) => tool.name), ["good"])
    }))
})

describe("McpClient: cache hints", () => {
  it.effect("a cached list stays for the server's ttlMs, then the next get fetches it again (TestClock)", () =>
    Effect.gen(function*() {
      // no change notifications: only the hint can make the list stale
      const { client, server } = yield* connect({ autoRefresh: false }, {
        cache: { ttlMs: 1_000, cacheScope: "public" }
      })
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["greet", "two_steps"])
      yield* server.register(McpTool.make("late", { input: Schema.Struct({}), handler: () => Effect.succeed("late") }))
      yield* TestClock.adjust("500 millis")
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["greet", "two_steps"])
      yield* TestClock.adjust("600 millis")
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["greet", "late", "two_steps"])
    }))
})

describe("McpClient: listen-driven lists", () => {
  it.effect("a cached list follows the server's changes through subscriptions/listen", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connect()
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["greet", "two_steps"])
      yield* settle
      yield* server.register(McpTool.make("late", { input: Schema.Struct({}), handler: () => Effect.succeed("late") }))
      yield* settle
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["greet", "late", "two_steps"])
      // a watched resource: its URI joins the listen stream's filter
      const updates = yield* client.watchResource("file:///x").pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      // the stream is reopened with the URI: notify until it arrives (bounded)
      for (let attempt = 0; attempt < 20 && updates.pollUnsafe() === undefined; attempt++) {
        yield* settle
        yield* server.notifyResourceUpdated("file:///y")
        yield* server.notifyResourceUpdated("file:///x")
      }
      const [update] = yield* Fiber.join(updates)
      assert.strictEqual(update!.uri, "file:///x")
    }))
})

describe("McpClient: keep-alive against a 2026-07-28 server", () => {
  it.effect("a server without `ping` answers it with -32601, which still shows it is alive", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const connecting = yield* Effect.forkChild(
        connectOver(Layer.succeed(McpTransport.McpTransport, clientEnd), {
          era: "modern",
          keepAlive: { interval: "10 seconds" }
        }),
        { startImmediately: true }
      )
      const discover = (yield* server.next) as JsonRpc.Request
      yield* server.send(
        JsonRpc.success(discover.id, { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: {} })
      )
      const client = yield* Fiber.join(connecting)
      for (let round = 0; round < 5; round++) {
        yield* TestClock.adjust("10 seconds")
        const ping = (yield* server.next) as JsonRpc.Request
        assert.strictEqual(ping.method, "ping")
        yield* server.send(
          JsonRpc.failure(ping.id, { code: JsonRpc.ErrorCode.MethodNotFound, message: "Method not found" })
        )
        yield* settle
      }
      // three failures in a row would have ended it
      assert.isTrue(yield* client.session.isOpen)
    }))
})
