/**
 * Held calls across replicas, in process: two (or three) routes with their
 * own `McpServer`, one registry hub (test/utils/registryHub.ts) and one
 * sealing secret. A 2026-07-28 retry landing on a replica that does not hold
 * its call is served by the holder; when the holder is gone, the retry is
 * answered at once with an error naming it and saying whether a new request
 * is safe, and nothing runs again. The same over Redis and real processes is
 * in packages/redis (gateway.cluster.e2e.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpHttpServer from "../src/McpHttpServer.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSessionRegistry from "../src/McpSessionRegistry.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { rawPeer } from "./utils/peer.ts"
import { ACCEPT } from "./utils/rawMessages.ts"
import { makeHub } from "./utils/registryHub.ts"
import { json } from "./utils/sse.ts"

const MODERN = "2026-07-28"
const Name = Schema.Struct({ name: Schema.String })

const makeCluster = Effect.gen(function*() {
  const hub = makeHub()
  const runs: Array<string> = []
  const tools = [
    McpTool.make("twice", {
      hold: true,
      handler: (_, context) =>
        Effect.gen(function*() {
          runs.push("twice")
          const first = yield* context.elicit({ message: "First?", schema: Name, inputKey: "first" })
          const second = yield* context.elicit({ message: "Second?", schema: Name, inputKey: "second" })
          const name = (answer: typeof first) => answer.action === "accept" ? answer.content.name : "-"
          return `${name(first)} ${name(second)}`
        })
    }),
    McpTool.make("lookup", {
      hold: true,
      annotations: { idempotentHint: true },
      handler: (_, context) =>
        Effect.gen(function*() {
          runs.push("lookup")
          const answer = yield* context.elicit({ message: "Who?", schema: Name, inputKey: "who" })
          return answer.action === "accept" ? answer.content.name : "-"
        })
    })
  ]

  const replica = (name: string) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
      const registry = yield* Scope.provide(hub.replica(name), scope)
      const server = yield* McpServer.make({
        name: "held-cluster",
        version: "1.0.0",
        requestState: { secret: "shared" }
      }).pipe(
        Effect.provideService(McpSessionRegistry.McpSessionRegistry, registry),
        Scope.provide(scope)
      )
      for (const tool of tools) yield* server.register(tool)
      const handler = yield* HttpRouter.toHttpEffect(
        McpHttpServer.layerRoute({}).pipe(
          Layer.provide(Layer.succeed(McpServer.McpServer, server)),
          Layer.provide(Layer.succeed(McpSessionRegistry.McpSessionRegistry, registry))
        )
      ).pipe(Scope.provide(scope))
      /** A `tools/call` of `tool` at this replica, with what a retry carries. */
      const call = (tool: string, extra: Record<string, unknown> = {}) =>
        handler.pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromWeb(
              new Request("http://localhost/mcp", {
                method: "POST",
                headers: {
                  accept: ACCEPT,
                  "content-type": "application/json",
                  "mcp-protocol-version": MODERN,
                  "mcp-method": "tools/call",
                  "mcp-name": tool
                },
                body: JSON.stringify({
                  jsonrpc: "2.0",
                  id: 7,
                  method: "tools/call",
                  params: {
                    name: tool,
                    arguments: {},
                    ...extra,
                    _meta: {
                      "io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientInfo": clientInfo,
                      "io.modelcontextprotocol/clientCapabilities": { elicitation: {} }
                    }
                  }
                })
              })
            )
          ),
          Effect.flatMap(json),
          Effect.scoped,
          Effect.orDie
        )
      return { server, scope, call }
    })
  return { hub, runs, replica }
})

const accept = (name: string) => ({ action: "accept", content: { name } })

describe("held calls across replicas", () => {
  it.effect("a retry is served by the replica holding its call, wherever it lands", () =>
    Effect.gen(function*() {
      const { hub, replica, runs } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const c = yield* replica("c")
      const round1 = yield* a.call("twice")
      assert.strictEqual(round1.result.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(round1.result.inputRequests), ["first"])
      const round2 = yield* b.call("twice", {
        inputResponses: { first: accept("ada") },
        requestState: round1.result.requestState
      })
      assert.deepStrictEqual(Object.keys(round2.result.inputRequests), ["second"])
      const done = yield* c.call("twice", {
        inputResponses: { second: accept("grace") },
        requestState: round2.result.requestState
      })
      assert.strictEqual(done.result.content[0].text, "ada grace")
      assert.deepStrictEqual(runs, ["twice"])
      assert.strictEqual(hub.forwardedCount(), 2)
      // held on `a` the whole time; nothing left held anywhere
      assert.strictEqual(yield* a.server.heldCalls.size, 0)
      assert.strictEqual(yield* b.server.heldCalls.size, 0)
    }))

  it.effect("the holder gone: the retry gets a clear error at once and nothing runs again", () =>
    Effect.gen(function*() {
      const { hub, replica, runs } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const round = yield* a.call("twice")
      hub.kill("a")
      const retried = yield* b.call("twice", {
        inputResponses: { first: accept("ada") },
        requestState: round.result.requestState
      })
      assert.strictEqual(retried.error.code, -32602)
      assert.include(retried.error.message, "held by replica a, which is gone")
      assert.include(retried.error.message, "only if that is safe")
      assert.deepStrictEqual(retried.error.data, { holder: "a", idempotent: false })
      assert.deepStrictEqual(runs, ["twice"])
      assert.strictEqual(yield* b.server.heldCalls.size, 0)
    }))

  it.effect("the holder dying while it serves the retry: a clear error, nothing run again", () =>
    Effect.gen(function*() {
      const { hub, replica, runs } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const round = yield* a.call("twice")
      hub.dieWhileServing("a")
      const retried = yield* b.call("twice", {
        inputResponses: { first: accept("ada") },
        requestState: round.result.requestState
      })
      assert.strictEqual(retried.error.code, -32000)
      assert.include(retried.error.message, "could not be served by replica a, which holds the call")
      assert.deepStrictEqual(runs, ["twice"])
    }))

  it.effect("the holder killed while a connection to it looked open: the retry, tried again, finds it gone", () =>
    Effect.gen(function*() {
      const { hub, replica, runs } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const round = yield* a.call("twice")
      hub.killWithReset("a")
      const retried = yield* b.call("twice", {
        inputResponses: { first: accept("ada") },
        requestState: round.result.requestState
      })
      assert.strictEqual(retried.error.code, -32602)
      assert.include(retried.error.message, "held by replica a, which is gone")
      assert.deepStrictEqual(runs, ["twice"])
    }))

  it.effect("an idempotent tool's lost call says a new request is safe", () =>
    Effect.gen(function*() {
      const { hub, replica } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const round = yield* a.call("lookup")
      hub.kill("a")
      const retried = yield* b.call("lookup", {
        inputResponses: { who: accept("ada") },
        requestState: round.result.requestState
      })
      assert.include(retried.error.message, `tool "lookup" is marked idempotent`)
      assert.deepStrictEqual(retried.error.data, { holder: "a", idempotent: true })
      // and the new request, sent where it lands, runs
      const again = yield* b.call("lookup")
      assert.strictEqual(again.result.resultType, "input_required")
    }))

  it.effect("a forged or foreign state is refused where it lands, never forwarded", () =>
    Effect.gen(function*() {
      const { hub, replica, runs } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const round = yield* a.call("twice")
      const state = round.result.requestState as string
      // the payload re-signed by nobody: the holder swapped
      const [body, tag] = state.split(".")
      const payload = JSON.parse(Buffer.from(body!, "base64url").toString())
      const forged = `${Buffer.from(JSON.stringify({ ...payload, holder: "b" })).toString("base64url")}.${tag}`
      const refused = yield* b.call("twice", { inputResponses: { first: accept("x") }, requestState: forged })
      assert.strictEqual(refused.error.code, -32602)
      assert.include(refused.error.message, "forged")
      // a state of another request (another tool) is not followed either
      const foreign = yield* b.call("lookup", { inputResponses: { first: accept("x") }, requestState: state })
      assert.include(foreign.error.message, "foreign request")
      assert.strictEqual(hub.forwardedCount(), 0)
      assert.deepStrictEqual(runs, ["twice"])
    }))

  it.effect("a replica reached another way (no cluster route) refuses a call another holds", () =>
    Effect.gen(function*() {
      const { replica } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const round = yield* a.call("twice")
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* b.server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const peer = yield* rawPeer(clientEnd)
      yield* peer.send(JsonRpc.request(1, "tools/call", {
        name: "twice",
        arguments: {},
        inputResponses: { first: accept("x") },
        requestState: round.result.requestState,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": clientInfo,
          "io.modelcontextprotocol/clientCapabilities": { elicitation: {} }
        }
      }))
      const answer = (yield* peer.next) as { readonly error: { readonly code: number; readonly message: string } }
      assert.strictEqual(answer.error.code, -32602)
      assert.include(answer.error.message, "is held by replica a, not this one (b)")
      assert.strictEqual(yield* a.server.heldCalls.size, 1)
    }))
})
