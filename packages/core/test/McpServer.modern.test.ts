/**
 * The server in the stateless era (2026-07-28), played by a raw peer: a
 * request is modern when its `_meta` names the version. No initialize;
 * results carry `resultType` and the server's info; input from the client is
 * asked through input-required results with a sealed `requestState`; cache
 * hints; `subscriptions/listen`; per-request log levels; trace context. The
 * same server keeps serving legacy sessions with the same handlers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpPrompt from "../src/McpPrompt.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, textOf } from "./utils/client.ts"
import { rawPeer, settle } from "./utils/peer.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const VERSION = "2026-07-28"

const meta = (
  extra: Record<string, unknown> = {},
  capabilities: McpSchema.ClientCapabilities = { elicitation: {} }
) => ({
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  ...extra
})

const Greet = McpTool.make("greet", {
  description: "Asks for a name, then greets",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Your name?", schema: Schema.Struct({ name: Schema.String }) }),
      (answer) => `Hello, ${answer.action === "accept" ? answer.content.name : "stranger"} (${context.era})`
    )
})

let runs = 0
const TwoSteps = McpTool.make("two_steps", {
  description: "Asks twice, one after the other",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.gen(function*() {
      runs++
      const first = yield* context.elicit({
        message: "First?",
        schema: Schema.Struct({ a: Schema.String }),
        inputKey: "first"
      })
      const second = yield* context.elicit({
        message: "Second?",
        schema: Schema.Struct({ b: Schema.String }),
        inputKey: "second"
      })
      return `${first.action === "accept" ? first.content.a : "-"}${
        second.action === "accept" ? second.content.b : "-"
      }`
    })
})

const Sample = McpTool.make("sample", {
  description: "Needs sampling",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.createMessage({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 }),
      (result) => JSON.stringify(result.content)
    )
})

const Chatty = McpTool.make("chatty", {
  description: "Logs at two levels",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.as(Effect.andThen(context.log("debug", "fine print"), context.log("error", "headline")), "done")
})

const Readme = McpResource.make({
  uri: "file:///readme",
  name: "readme",
  cache: { ttlMs: 60_000, cacheScope: "public" },
  read: () => Effect.succeed("read me")
})

const Spanned = McpTool.make("spanned", {
  description: "Answers with its span's trace and parent",
  input: Schema.Struct({}),
  handler: () =>
    Effect.map(
      Effect.currentSpan,
      (span) =>
        `${span.name}: ${span.traceId} ${
          Option.match(span.parent, { onNone: () => "-", onSome: (parent) => parent.spanId })
        }`
    ).pipe(Effect.orDie)
})

/** A server with the fixtures, and a raw peer on a connection of its own. */
const serve = (options: Partial<McpServer.Options> = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "modern", version: "1.2.3", ...options })
    for (const definition of [Greet, TwoSteps, Sample, Chatty, Readme, Spanned]) yield* server.register(definition)
    const connect = Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      return yield* rawPeer(clientEnd)
    })
    return { server, peer: yield* connect, connect }
  })

let nextId = 0
const call = (
  peer: { readonly send: (frame: unknown) => Effect.Effect<void>; readonly next: Effect.Effect<unknown> },
  method: string,
  params: Record<string, unknown>
) =>
  Effect.gen(function*() {
    const id = ++nextId
    yield* peer.send(JsonRpc.request(id, method, params))
    return (yield* peer.next) as { readonly id: number; readonly result?: any; readonly error?: any }
  })

const callTool = (
  peer: Parameters<typeof call>[0],
  name: string,
  extra: Record<string, unknown> = {},
  metaExtra?: Record<string, unknown>,
  capabilities?: McpSchema.ClientCapabilities
) => call(peer, "tools/call", { name, arguments: {}, _meta: meta(metaExtra, capabilities), ...extra })

describe("McpServer, 2026-07-28 requests", () => {
  it.effect("need no initialize; results carry resultType and the server's info", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve()
      const listed = yield* call(peer, "tools/list", { _meta: meta() })
      assert.strictEqual(listed.result.resultType, "complete")
      assert.deepStrictEqual(listed.result._meta["io.modelcontextprotocol/serverInfo"], {
        name: "modern",
        version: "1.2.3"
      })
      assert.deepStrictEqual(listed.result.tools.map((tool: McpSchema.Tool) => tool.name), [
        "chatty",
        "greet",
        "sample",
        "spanned",
        "two_steps"
      ])
      const discovered = yield* call(peer, "server/discover", { _meta: meta() })
      assert.deepStrictEqual(discovered.result.supportedVersions, [VERSION, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS])
      assert.isDefined(discovered.result.capabilities.tools)
    }))

  it.effect("bad envelopes: -32602 without _meta, -32022 with the versions, -32601 for a removed method", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve()
      const bare = yield* call(peer, "server/discover", {})
      assert.strictEqual(bare.error.code, JsonRpc.ErrorCode.InvalidParams)
      const future = yield* call(peer, "tools/list", {
        _meta: meta({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" })
      })
      assert.strictEqual(future.error.code, JsonRpc.ErrorCode.UnsupportedProtocolVersion)
      assert.deepStrictEqual(future.error.data, {
        supported: [VERSION, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS],
        requested: "2099-01-01"
      })
      const ping = yield* call(peer, "ping", { _meta: meta() })
      assert.strictEqual(ping.error.code, JsonRpc.ErrorCode.MethodNotFound)
      const noCapabilities = yield* call(peer, "tools/list", {
        _meta: { "io.modelcontextprotocol/protocolVersion": VERSION }
      })
      assert.strictEqual(noCapabilities.error.code, JsonRpc.ErrorCode.InvalidParams)
    }))

  it.effect("a modern client is never sent a request: no keep-alive pings either", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve({ keepAlive: { interval: "1 second" } })
      yield* call(peer, "tools/list", { _meta: meta() })
      yield* TestClock.adjust("5 seconds")
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))

  it.effect("a capability the request did not declare: -32021 naming it, nothing asked", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve()
      const refused = yield* callTool(peer, "sample")
      assert.strictEqual(refused.error.code, JsonRpc.ErrorCode.MissingRequiredClientCapability)
      assert.deepStrictEqual(refused.error.data, { requiredCapabilities: { sampling: {} } })
    }))
})

describe("McpServer, input-required rounds", () => {
  it.effect("elicit ends the round; the retry with the answer and the state completes", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve()
      const first = yield* callTool(peer, "greet")
      assert.strictEqual(first.result.resultType, "input_required")
      const [key, request] = Object.entries(first.result.inputRequests as Record<string, any>)[0]!
      assert.strictEqual(request.method, "elicitation/create")
      assert.strictEqual(request.params.message, "Your name?")
      assert.isString(first.result.requestState)
      const done = yield* callTool(peer, "greet", {
        inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } },
        requestState: first.result.requestState
      })
      assert.strictEqual(done.result.resultType, "complete")
      assert.strictEqual(textOf(done.result), "Hello, Ada (modern)")
    }))

  it.effect("rounds carry earlier answers in the state; the handler is replayed from the start", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve()
      runs = 0
      const first = yield* callTool(peer, "two_steps")
      assert.deepStrictEqual(Object.keys(first.result.inputRequests), ["first"])
      const second = yield* callTool(peer, "two_steps", {
        inputResponses: { first: { action: "accept", content: { a: "x" } } },
        requestState: first.result.requestState
      })
      assert.deepStrictEqual(Object.keys(second.result.inputRequests), ["second"])
      assert.notStrictEqual(second.result.requestState, first.result.requestState)
      const third = yield* callTool(peer, "two_steps", {
        inputResponses: { second: { action: "accept", content: { b: "y" } } },
        requestState: second.result.requestState
      })
      assert.strictEqual(textOf(third.result), "xy")
      assert.strictEqual(runs, 3)
    }))

  it.effect("a tampered, foreign or expired state is refused with -32602; a wrong answer too", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve({ requestState: { ttl: "1 minute" } })
      const first = yield* callTool(peer, "greet")
      const state: string = first.result.requestState
      const answer = { [Object.keys(first.result.inputRequests)[0]!]: { action: "accept", content: { name: "Eve" } } }
      const flipped = state.slice(0, 10) + (state[10] === "A" ? "B" : "A") + state.slice(11)
      const tampered = yield* callTool(peer, "greet", { inputResponses: answer, requestState: flipped })
      assert.strictEqual(tampered.error.code, JsonRpc.ErrorCode.InvalidParams)
      assert.include(tampered.error.message, "requestState")
      // the state of a call of greet is not good for a call of two_steps
      const foreign = yield* callTool(peer, "two_steps", { inputResponses: answer, requestState: state })
      assert.include(foreign.error.message, "foreign request")
      const wrong = yield* callTool(peer, "greet", {
        inputResponses: { [Object.keys(answer)[0]!]: 12345 },
        requestState: state
      })
      assert.strictEqual(wrong.error.code, JsonRpc.ErrorCode.InvalidParams)
      yield* TestClock.adjust("2 minutes")
      const expired = yield* callTool(peer, "greet", { inputResponses: answer, requestState: state })
      assert.include(expired.error.message, "expired")
    }))

  it.effect("a state sealed by one server is refused by another unless they share the secret", () =>
    Effect.gen(function*() {
      const a = yield* serve({ requestState: { secret: "shared secret" } })
      const b = yield* serve({ requestState: { secret: "shared secret" } })
      const c = yield* serve()
      const first = yield* callTool(a.peer, "greet")
      const retry = {
        inputResponses: {
          [Object.keys(first.result.inputRequests)[0]!]: { action: "accept", content: { name: "Bo" } }
        },
        requestState: first.result.requestState
      }
      assert.strictEqual(textOf((yield* callTool(b.peer, "greet", retry)).result), "Hello, Bo (modern)")
      assert.include((yield* callTool(c.peer, "greet", retry)).error.message, "forged")
    }))

  it.effect("the same tool asks a legacy client with a request, on another connection of the same server", () =>
    Effect.gen(function*() {
      const { server, peer } = yield* serve()
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const legacy = yield* Layer.build(
        McpClient.layer({
          clientInfo,
          era: "legacy",
          elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name: "Lin" } }) }
        }).pipe(Layer.provide([Layer.succeed(McpTransport.McpTransport, clientEnd), ValidatorLayer]))
      ).pipe(Effect.map(Context.get(McpClient.McpClient)))
      yield* settle
      const modern = yield* callTool(peer, "greet")
      assert.strictEqual(modern.result.resultType, "input_required")
      const answered = yield* legacy.callTool("greet", {})
      assert.strictEqual(textOf(answered), "Hello, Lin (legacy)")
    }))
})

describe("McpServer, cache hints", () => {
  it.effect("defaults claim nothing; server options and definitions set them; legacy answers carry none", () =>
    Effect.gen(function*() {
      const plain = yield* serve()
      const listed = yield* call(plain.peer, "tools/list", { _meta: meta() })
      assert.strictEqual(listed.result.ttlMs, 0)
      assert.strictEqual(listed.result.cacheScope, "private")
      const tuned = yield* serve({ cache: { ttlMs: 5_000, cacheScope: "public" } })
      const tools = yield* call(tuned.peer, "tools/list", { _meta: meta() })
      assert.deepStrictEqual([tools.result.ttlMs, tools.result.cacheScope], [5_000, "public"])
      // the readme's own hint: longer, public; the list takes the shortest of its entries
      const read = yield* call(tuned.peer, "resources/read", { uri: "file:///readme", _meta: meta() })
      assert.deepStrictEqual([read.result.ttlMs, read.result.cacheScope], [60_000, "public"])
      const resources = yield* call(tuned.peer, "resources/list", { _meta: meta() })
      assert.deepStrictEqual([resources.result.ttlMs, resources.result.cacheScope], [60_000, "public"])
      const discover = yield* call(tuned.peer, "server/discover", { _meta: meta() })
      assert.deepStrictEqual([discover.result.ttlMs, discover.result.cacheScope], [5_000, "public"])
      const missing = yield* call(tuned.peer, "resources/read", { uri: "file:///nope", _meta: meta() })
      assert.strictEqual(missing.error.code, JsonRpc.ErrorCode.InvalidParams)
    }))
})

describe("McpServer, subscriptions/listen", () => {
  it.effect("acknowledged first; then only what the filter asks for, tagged with the subscription id", () =>
    Effect.gen(function*() {
      const { server, peer } = yield* serve()
      yield* peer.send(JsonRpc.request("sub-1", "subscriptions/listen", {
        _meta: meta(),
        notifications: { toolsListChanged: true, resourceSubscriptions: ["file:///readme"], unknownKind: true }
      }))
      const ack = (yield* peer.next) as any
      assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
      assert.deepStrictEqual(ack.params.notifications, {
        toolsListChanged: true,
        resourceSubscriptions: ["file:///readme"]
      })
      assert.strictEqual(ack.params._meta["io.modelcontextprotocol/subscriptionId"], "sub-1")
      yield* server.register(McpPrompt.make({ name: "unasked", get: () => Effect.succeed("no") }))
      yield* server.notifyResourceUpdated("file:///other")
      yield* server.register(McpTool.make("late", { input: Schema.Struct({}), handler: () => Effect.succeed("late") }))
      yield* server.notifyResourceUpdated("file:///readme")
      yield* settle
      const [tools, updated] = (yield* peer.take(2)) as ReadonlyArray<any>
      assert.strictEqual(tools.method, "notifications/tools/list_changed")
      assert.strictEqual(tools.params._meta["io.modelcontextprotocol/subscriptionId"], "sub-1")
      assert.deepStrictEqual(updated.params, {
        uri: "file:///readme",
        _meta: { "io.modelcontextprotocol/subscriptionId": "sub-1" }
      })
      assert.strictEqual(yield* peer.backlog, 0)
      // cancelled: nothing more arrives
      yield* peer.send(JsonRpc.notification("notifications/cancelled", { requestId: "sub-1" }))
      yield* settle
      yield* server.register(
        McpTool.make("later", { input: Schema.Struct({}), handler: () => Effect.succeed("later") })
      )
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))

  it.effect("the connection closing ends a listen stream with a complete result", () =>
    Effect.gen(function*() {
      const { server } = yield* serve()
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const peer = yield* rawPeer(clientEnd)
      const connection = yield* Effect.forkChild(
        Effect.scoped(Effect.andThen(
          server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd)),
          Effect.never
        ))
      )
      yield* settle
      yield* peer.send(
        JsonRpc.request(7, "subscriptions/listen", { _meta: meta(), notifications: { toolsListChanged: true } })
      )
      assert.strictEqual(((yield* peer.next) as any).method, "notifications/subscriptions/acknowledged")
      // the connection's scope closes: the stream answers before the session ends
      yield* Fiber.interrupt(connection)
      const end = (yield* peer.next) as any
      assert.deepStrictEqual(end, {
        jsonrpc: "2.0",
        id: 7,
        result: {
          resultType: "complete",
          _meta: {
            "io.modelcontextprotocol/subscriptionId": 7,
            "io.modelcontextprotocol/serverInfo": { name: "modern", version: "1.2.3" }
          }
        }
      })
    }))
})

describe("McpServer, logging and tracing per request", () => {
  it.effect("logs only at or above the request's _meta level; none without one", () =>
    Effect.gen(function*() {
      const { peer } = yield* serve()
      const quiet = yield* callTool(peer, "chatty")
      assert.strictEqual(textOf(quiet.result), "done")
      yield* peer.send(JsonRpc.request(++nextId, "tools/call", {
        name: "chatty",
        arguments: {},
        _meta: meta({ "io.modelcontextprotocol/logLevel": "warning" })
      }))
      const [log, result] = (yield* peer.take(2)) as ReadonlyArray<any>
      assert.deepStrictEqual(log.params, { level: "error", data: "headline" })
      assert.strictEqual(textOf(result.result), "done")
    }))

  it.effect("traceparent in _meta is the parent of the handler's span (both eras)", () =>
    Effect.gen(function*() {
      const { connect, peer } = yield* serve()
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
      const parentId = "00f067aa0ba902b7"
      const answer = yield* callTool(peer, "spanned", {}, { traceparent: `00-${traceId}-${parentId}-01` })
      assert.strictEqual(textOf(answer.result), `McpServer tools/call: ${traceId} ${parentId}`)
      // a legacy session: initialize, then the same call with the same _meta key
      const legacy = yield* connect
      yield* call(legacy, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo })
      yield* legacy.send(JsonRpc.notification("notifications/initialized", {}))
      const traced = yield* call(legacy, "tools/call", {
        name: "spanned",
        arguments: {},
        _meta: { traceparent: `00-${traceId}-${parentId}-01` }
      })
      assert.strictEqual(textOf(traced.result), `McpServer tools/call: ${traceId} ${parentId}`)
      assert.isUndefined(traced.result.resultType)
    }))
})
