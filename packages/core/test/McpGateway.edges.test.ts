/**
 * McpGateway at its edges: hostile names, a server that never answers or
 * goes away and comes back, held calls that expire or are abandoned, its own
 * sessions all taken, list changes to a 2026-07-28 listen stream,
 * subscriptions and completions passed behind. Time is the test clock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpGateway from "../src/McpGateway.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpPrompt from "../src/McpPrompt.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, textOf } from "./utils/client.ts"
import { makeFlaky } from "./utils/flaky.ts"
import { rawPeer, settle } from "./utils/peer.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const MODEL_SAFE = /^[a-zA-Z0-9_-]{1,64}$/

/** A gateway over `servers` (in-memory, or by URL through `connector`), served over one in-memory connection. */
const gateway = (
  servers: Record<string, McpGroup.ServerConfig>,
  options: McpGateway.Options = {},
  group: Omit<McpGroup.Options, "servers"> = {},
  connector: Layer.Layer<McpGroup.Connector> = McpGroup.layerConnectorInMemory
) =>
  Effect.gen(function*() {
    const made = yield* McpGroup.make({ servers, client: McpGateway.clientOptions, liveness: false, ...group }).pipe(
      Effect.provide([connector, ValidatorLayer])
    )
    const server = yield* McpGateway.make(options).pipe(Effect.provideService(McpGroup.McpGroup, made))
    const connect = (clientOptions: Partial<McpClient.Options> = {}) =>
      Effect.gen(function*() {
        const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
        yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
        return yield* McpClient.make({ clientInfo, ...clientOptions }).pipe(
          Effect.provideService(McpTransport.McpTransport, clientEnd),
          Effect.provide(ValidatorLayer)
        )
      })
    const raw = Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      return yield* rawPeer(clientEnd)
    })
    return { group: made, server, connect, raw }
  })

const modernMeta = (capabilities: McpSchema.ClientCapabilities = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": capabilities
})

type Answer = { readonly id: number; readonly result?: any; readonly error?: any }

const Name = Schema.Struct({ name: Schema.String })

describe("McpGateway: names", () => {
  it.effect("hostile names are offered under model-safe, distinct names, and each routes to its own tool", () =>
    Effect.gen(function*() {
      const hostile = [
        "x".repeat(200),
        "bell\u0007and\nnewline",
        "a.b",
        "a_b",
        "a b",
        "\u001b[2Jclear",
        "名前"
      ]
      const tools = hostile.map((name) => McpTool.make(name, { handler: () => Effect.succeed(name) }))
      const { connect } = yield* gateway({
        up: McpGroup.inMemory(McpServer.layer({ name: "up", version: "1" }, ...tools))
      })
      const client = yield* connect()
      const listed = (yield* client.listTools()).tools
      assert.strictEqual(listed.length, hostile.length)
      const names = listed.map((tool) => tool.name)
      for (const name of names) assert.match(name, MODEL_SAFE)
      assert.strictEqual(new Set(names).size, names.length)
      // a safe name stays as it is
      assert.include(names, "a_b")
      for (const tool of listed) {
        const answered = textOf(yield* client.callTool(tool.name, {}))
        // each front name reaches the tool it was made from (its description is none: the name is in the answer)
        assert.include(hostile, answered)
      }
      const answers = new Set<string>()
      for (const tool of listed) answers.add(textOf(yield* client.callTool(tool.name, {})))
      assert.strictEqual(answers.size, hostile.length)
    }))

  it.effect("two servers with the same tool name: the name hook keeps them apart", () =>
    Effect.gen(function*() {
      const echo = (who: string) => McpTool.make("echo", { handler: () => Effect.succeed(who) })
      const { connect } = yield* gateway(
        {
          a: McpGroup.inMemory(McpServer.layer({ name: "a", version: "1" }, echo("a"))),
          b: McpGroup.inMemory(McpServer.layer({ name: "b", version: "1" }, echo("b")))
        },
        {},
        { nameHook: McpGroup.prefixed() }
      )
      const client = yield* connect()
      assert.deepStrictEqual((yield* client.listTools()).tools.map((tool) => tool.name).sort(), ["a__echo", "b__echo"])
      assert.strictEqual(textOf(yield* client.callTool("b__echo", {})), "b")
    }))
})

describe("McpGateway: servers that fail", () => {
  it.effect("a server that never answers: the call fails after callTimeout with an error naming it, cancelled behind", () =>
    Effect.gen(function*() {
      const cancelled = yield* Deferred.make<void>()
      const hang = McpTool.make("hang", {
        handler: () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined)))
      })
      const { connect } = yield* gateway({
        slow: McpGroup.inMemory(McpServer.layer({ name: "slow", version: "1" }, hang))
      }, {
        callTimeout: "5 seconds"
      })
      const client = yield* connect({ requestTimeout: "1 minute" })
      const call = yield* client.callTool("hang", {}).pipe(Effect.flip, Effect.forkChild({ startImmediately: true }))
      yield* settle
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(call)
      assert.strictEqual(error.reason._tag, "ProtocolError")
      assert.strictEqual((error.reason as { code: number }).code, JsonRpc.ErrorCode.ServerError)
      assert.include(error.message, `MCP server "slow"`)
      assert.include(error.message, "tools/call")
      yield* Deferred.await(cancelled)
    }))

  it.effect("a server that goes down answers at once with an error naming it; back, its tools come back", () =>
    Effect.gen(function*() {
      const flaky = yield* makeFlaky({
        "test://up": McpServer.layer(
          { name: "up", version: "1" },
          McpTool.make("ping_me", { handler: () => Effect.succeed("pong") })
        )
      })
      const { connect, group } = yield* gateway(
        {
          up: McpGroup.http("test://up"),
          other: McpGroup.inMemory(
            McpServer.layer(
              { name: "other", version: "1" },
              McpTool.make("other", { handler: () => Effect.succeed("fine") })
            )
          )
        },
        {},
        { reconnect: McpGroup.defaultReconnect },
        flaky.layer
      )
      const client = yield* connect({ era: "legacy" })
      assert.strictEqual(textOf(yield* client.callTool("ping_me", {})), "pong")
      const changes = yield* client.notificationsOf("notifications/tools/list_changed").pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* flaky.setOnline("test://up", false)
      yield* flaky.cut("test://up")
      yield* group.serverChanges.pipe(Stream.filter((servers) => servers[0]?.status === "down"), Stream.runHead)
      // the others keep serving; the one down is unknown in front until it is back
      assert.strictEqual(textOf(yield* client.callTool("other", {})), "fine")
      yield* settle
      const gone = yield* client.session.request(McpSchema.CallTool, { name: "ping_me", arguments: {} }).pipe(
        Effect.flip
      )
      assert.match(gone.message, /ping_me/)
      yield* flaky.setOnline("test://up", true)
      yield* TestClock.adjust("1 second")
      yield* group.serverChanges.pipe(Stream.filter((servers) => servers[0]?.status === "up"), Stream.runHead)
      yield* Fiber.join(changes)
      assert.include((yield* client.listTools()).tools.map((tool) => tool.name), "ping_me")
      assert.strictEqual(textOf(yield* client.callTool("ping_me", {})), "pong")
    }))
})

describe("McpGateway: servers that answer garbage", () => {
  // a legacy server played by hand: a proper handshake and list, then garbage for calls
  const garbageConnector = Layer.succeed(McpGroup.Connector, {
    transport: () =>
      Layer.effect(
        McpTransport.McpTransport,
        Effect.gen(function*() {
          const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
          const peer = yield* rawPeer(serverEnd)
          const answer = (id: unknown, result: unknown) => peer.send({ jsonrpc: "2.0", id, result })
          yield* Effect.forkScoped(Effect.forever(Effect.flatMap(peer.next, (frame) => {
            const message = frame as { readonly id?: unknown; readonly method?: string; readonly params?: any }
            switch (message.method) {
              case "initialize":
                return answer(message.id, {
                  protocolVersion: "2025-11-25",
                  capabilities: { tools: {} },
                  serverInfo: { name: "garbage", version: "1" }
                })
              case "tools/list":
                return answer(message.id, {
                  tools: [
                    { name: "bad_result", inputSchema: { type: "object" } },
                    { name: "wrong_id", inputSchema: { type: "object" } }
                  ]
                })
              case "tools/call":
                return message.params.name === "bad_result"
                  ? answer(message.id, { content: "not an array" })
                  : answer(`${String(message.id)}-other`, { content: [] })
              default:
                return message.id === undefined ? Effect.void : answer(message.id, {})
            }
          })))
          return clientEnd
        })
      )
  })

  it.effect("an invalid result is a clear error naming the server; an answer to no call is ignored, the call times out", () =>
    Effect.gen(function*() {
      const { connect } = yield* gateway(
        { junk: McpGroup.http("test://junk", { era: "legacy" }) },
        { callTimeout: "5 seconds" },
        {},
        garbageConnector
      )
      const client = yield* connect()
      assert.deepStrictEqual((yield* client.listTools()).tools.map((tool) => tool.name).sort(), [
        "bad_result",
        "wrong_id"
      ])
      const invalid = yield* client.callTool("bad_result", {}).pipe(Effect.flip)
      assert.strictEqual((invalid.reason as { code?: number }).code, JsonRpc.ErrorCode.ServerError)
      assert.include(invalid.message, `MCP server "junk"`)
      const lost = yield* client.callTool("wrong_id", {}).pipe(
        Effect.flip,
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      yield* TestClock.adjust("5 seconds")
      const timedOut = yield* Fiber.join(lost)
      assert.include(timedOut.message, `MCP server "junk"`)
      assert.include(timedOut.message, "timed out")
    }))
})

describe("McpGateway: held calls", () => {
  // a legacy server asks with a real request; a 2026-07-28 client gets a round, and the call behind is held
  const asking = (cancelled: Deferred.Deferred<void>, runs: { n: number }) =>
    McpServer.layer(
      { name: "asker", version: "1" },
      McpTool.make("ask", {
        handler: (_, context) =>
          Effect.gen(function*() {
            runs.n++
            const answer = yield* context.elicit({ message: "Name?", schema: Name, inputKey: "name" })
            return answer.action === "accept" ? `hello ${answer.content.name}` : answer.action
          }).pipe(Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined)))
      })
    )

  it.effect("a round's input key comes from the server behind; an abandoned round expires and cancels the call behind", () =>
    Effect.gen(function*() {
      const cancelled = yield* Deferred.make<void>()
      const runs = { n: 0 }
      const { raw, server } = yield* gateway(
        { up: McpGroup.inMemory(asking(cancelled, runs), { era: "legacy" }) },
        // shorter than the server's own wait for its answer (60 s)
        { hold: { ttl: "30 seconds" } }
      )
      const peer = yield* raw
      yield* peer.send(
        JsonRpc.request(1, "tools/call", { name: "ask", arguments: {}, _meta: modernMeta({ elicitation: {} }) })
      )
      const round = (yield* peer.next) as Answer
      assert.strictEqual(round.result.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(round.result.inputRequests), ["name"])
      assert.strictEqual(yield* server.heldCalls.size, 1)
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(yield* server.heldCalls.size, 1)
      yield* TestClock.adjust("2 seconds")
      yield* Deferred.await(cancelled)
      assert.strictEqual(yield* server.heldCalls.size, 0)
      yield* peer.send(JsonRpc.request(2, "tools/call", {
        name: "ask",
        arguments: {},
        inputResponses: { name: { action: "accept", content: { name: "ada" } } },
        requestState: round.result.requestState,
        _meta: modernMeta({ elicitation: {} })
      }))
      const late = (yield* peer.next) as Answer
      assert.strictEqual(late.error.code, JsonRpc.ErrorCode.InvalidParams)
      assert.strictEqual(runs.n, 1)
    }))

  it.effect("when every session of its own is taken, a call waits at most callTimeout, then fails clearly", () =>
    Effect.gen(function*() {
      const cancelled = yield* Deferred.make<void>()
      const runs = { n: 0 }
      const { raw } = yield* gateway(
        { up: McpGroup.inMemory(asking(cancelled, runs), { era: "legacy" }) },
        { upstreams: { up: { sessions: 1 } }, callTimeout: "10 seconds" }
      )
      const peer = yield* raw
      const call = (id: number) =>
        peer.send(
          JsonRpc.request(id, "tools/call", { name: "ask", arguments: {}, _meta: modernMeta({ elicitation: {} }) })
        )
      yield* call(1)
      assert.strictEqual(((yield* peer.next) as Answer).result.resultType, "input_required")
      // the held call keeps the one session; the next call waits for it
      yield* call(2)
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
      yield* TestClock.adjust("10 seconds")
      const refused = (yield* peer.next) as Answer
      assert.strictEqual(refused.id, 2)
      assert.strictEqual(refused.error.code, JsonRpc.ErrorCode.ServerError)
      assert.match(refused.error.message, /sessions with this server are taken/)
    }))
})

describe("McpGateway: changes, subscriptions, completions", () => {
  it.effect("a tool added behind reaches a 2026-07-28 client's listen stream, under its gateway name", () =>
    Effect.gen(function*() {
      const { connect, group } = yield* gateway(
        {
          first: McpGroup.inMemory(McpServer.layer(
            { name: "first", version: "1" },
            McpTool.make("one", { handler: () => Effect.succeed("1") })
          ))
        },
        {},
        { nameHook: McpGroup.prefixed() }
      )
      const client = yield* connect({ era: "modern" })
      assert.strictEqual(client.era, "modern")
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["first__one"])
      const next = yield* client.tools.changes.pipe(
        Stream.filter((tools) => tools.length === 2),
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      yield* group.connect(
        "second",
        McpGroup.inMemory(
          McpServer.layer({ name: "second", version: "1" }, McpTool.make("two", { handler: () => Effect.succeed("2") }))
        )
      )
      const tools = yield* Fiber.join(next)
      assert.deepStrictEqual(
        tools.pipe((option) => option._tag === "Some" ? option.value.map((tool) => tool.name).sort() : []),
        [
          "first__one",
          "second__two"
        ]
      )
    }))

  it.effect("a subscription in front is a subscription behind; an update behind reaches the client", () =>
    Effect.gen(function*() {
      const watched = McpResource.make({ uri: "mem://watched", name: "watched", read: () => Effect.succeed("now") })
      const touch = McpTool.make("touch", {
        handler: () =>
          Effect.flatMap(
            McpServer.McpServer,
            (server) => Effect.as(server.notifyResourceUpdated("mem://watched"), "touched")
          )
      })
      const upstream = McpServer.register(watched, touch).pipe(
        Layer.provideMerge(McpServer.layer({ name: "up", version: "1" }))
      )
      const { connect } = yield* gateway({ up: McpGroup.inMemory(upstream) })
      for (const era of ["modern", "legacy"] as const) {
        const client = yield* connect({ era })
        const updates = yield* client.watchResource("mem://watched").pipe(
          Stream.take(1),
          Stream.runCollect,
          Effect.forkChild({ startImmediately: true })
        )
        // a 2026-07-28 subscription is a listen stream reopened with the URI, on each side of
        // the gateway: touch until the update arrives (bounded)
        for (let attempt = 0; attempt < 20 && updates.pollUnsafe() === undefined; attempt++) {
          yield* settle
          assert.strictEqual(textOf(yield* client.callTool("touch", {})), "touched")
        }
        assert.deepStrictEqual((yield* Fiber.join(updates)).map((update) => update.uri), ["mem://watched"])
      }
    }))

  it.effect("a merged list's cache hint is the shortest of its servers' (none from a legacy server: 0)", () =>
    Effect.gen(function*() {
      const tool = (name: string) => McpTool.make(name, { handler: () => Effect.succeed(name) })
      const server = (name: string, ttlMs: number) =>
        McpGroup.inMemory(McpServer.layer({ name, version: "1", cache: { ttlMs, cacheScope: "public" } }, tool(name)))
      const listTtl = (servers: Record<string, McpGroup.ServerConfig>) =>
        Effect.gen(function*() {
          const { raw } = yield* gateway(servers)
          const peer = yield* raw
          yield* peer.send(JsonRpc.request(1, "tools/list", { _meta: modernMeta() }))
          return ((yield* peer.next) as Answer).result as { readonly ttlMs: number; readonly cacheScope: string }
        })
      const fresh = yield* listTtl({ a: server("a", 60_000), b: server("b", 5_000) })
      assert.strictEqual(fresh.ttlMs, 5_000)
      assert.strictEqual(fresh.cacheScope, "private")
      const withLegacy = yield* listTtl({
        a: server("a", 60_000),
        c: { params: server("c", 60_000), client: { era: "legacy" } }
      })
      assert.strictEqual(withLegacy.ttlMs, 0)
    }))

  it.effect("completions of prompts and resource templates are the server's behind", () =>
    Effect.gen(function*() {
      const prompt = McpPrompt.make({
        name: "greet",
        arguments: Schema.Struct({ who: Schema.String }),
        complete: { who: (value) => Effect.succeed(["ada", "alan", "grace"].filter((who) => who.startsWith(value))) },
        get: ({ who }) => Effect.succeed(`hello ${who}`)
      })
      const notes = McpResource.template({
        uriTemplate: "mem://notes/{topic}",
        name: "notes",
        complete: { topic: (value) => Effect.succeed([`${value}-1`, `${value}-2`]) },
        read: ({ topic }) => Effect.succeed(`notes on ${topic}`)
      })
      const { connect } = yield* gateway({
        up: McpGroup.inMemory(McpServer.layer({ name: "up", version: "1" }, prompt, notes))
      })
      for (const era of ["legacy", "modern"] as const) {
        const client = yield* connect({ era })
        const names = yield* client.complete({
          ref: { type: "ref/prompt", name: "greet" },
          argument: { name: "who", value: "a" }
        })
        assert.deepStrictEqual(names.completion.values, ["ada", "alan"])
        const topics = yield* client.complete({
          ref: { type: "ref/resource", uri: "mem://notes/{topic}" },
          argument: { name: "topic", value: "x" }
        })
        assert.deepStrictEqual(topics.completion.values, ["x-1", "x-2"])
        const content = (yield* client.getPrompt("greet", { who: "ada" })).messages[0]!.content
        assert.deepStrictEqual(content, { type: "text", text: "hello ada" })
        const read = yield* client.readResource("mem://notes/effect")
        assert.deepStrictEqual(read.contents.map((content) => "text" in content ? content.text : ""), [
          "notes on effect"
        ])
      }
    }))

  it.effect("a legacy server that does not log: calls on sessions of the gateway's own are not told a log level", () =>
    Effect.gen(function*() {
      let runs = 0
      const ask = McpTool.make("ask", {
        handler: (_, context) =>
          Effect.gen(function*() {
            runs++
            const answer = yield* context.elicit({ message: "Name?", schema: Name })
            return answer.action === "accept" ? `hello ${answer.content.name}` : answer.action
          })
      })
      // as the official SDK's servers: no `logging` capability
      const quiet = McpServer.layer({ name: "quiet", version: "1", capabilities: { logging: undefined } }, ask)
      const { connect } = yield* gateway({ quiet: McpGroup.inMemory(quiet, { era: "legacy" }) })
      for (const era of ["modern", "legacy"] as const) {
        const client = yield* connect({
          era,
          elicitation: { form: () => Effect.succeed({ action: "accept", content: { name: "ada" } }) }
        })
        assert.strictEqual(textOf(yield* client.callTool("ask", {})), "hello ada")
      }
      assert.strictEqual(runs, 2)
    }))
})
