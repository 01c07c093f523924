/**
 * A gateway run as three replica processes (`scratchpad/gateway-cluster/replica.ts`)
 * on one real redis-server, behind a round-robin proxy without sticky
 * sessions (`x-upstream: i` pins a request to replica `i`). Behind each
 * replica: its own stdio children of a legacy server written with the
 * official v1 SDK (`legacy-upstream.ts`, which asks elicitation questions and
 * counts its runs in one file), and one shared 2026-07-28 HTTP server of ours
 * (`modern-upstream.ts`).
 *
 * What must hold: a 2026-07-28 client's elicitation rounds on a legacy
 * upstream's call may land on any replica, the call behind running once on
 * the replica holding it; a legacy client's session is served by its owner
 * whichever replica its requests land on; when the holder dies mid-round the
 * retry gets a clear error at once, and the call never runs again; a tool
 * added on the modern upstream reaches listeners on every replica; at the
 * end no process (replica, stdio child, upstream) is left.
 */
import { McpContent } from "@effect-mcp/core"
import * as NodeMcpHttpClient from "@effect-mcp/platform-node/NodeMcpHttpClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import * as Http from "node:http"
import { mcpHeaders, openSse, send } from "../../platform-node/test/fixtures/rawHttp.ts"
import * as Clients from "./utils/clients.ts"
import * as GatewayCluster from "./utils/gatewayCluster.ts"
import * as RedisServer from "./utils/redisServer.ts"

class TestGateway extends Context.Service<TestGateway, GatewayCluster.GatewayCluster>()("test/TestGateway") {}

const MODERN = "2026-07-28"
const meta = (capabilities: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "gateway-e2e", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": capabilities
})

/** A 2026-07-28 request to `url` (pinned to replica `upstream` when given), its answer parsed. */
const modern = (
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { readonly upstream?: number; readonly capabilities?: Record<string, unknown> } = {}
) =>
  Effect.map(
    send(url, {
      headers: mcpHeaders({ version: MODERN }, {
        "mcp-method": method,
        ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
        ...(options.upstream === undefined ? {} : { "x-upstream": String(options.upstream) })
      }),
      body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta(options.capabilities) } }
    }),
    (reply) => ({ ...reply, json: reply.body === "" ? undefined : JSON.parse(reply.body) })
  )

const textOf = (json: any): string => json?.result?.content?.[0]?.text ?? JSON.stringify(json)

// the one question of an input-required result: its key and its message
const questionOf = (json: any): { readonly key: string; readonly message: string } => {
  assert.strictEqual(json?.result?.resultType, "input_required", JSON.stringify(json))
  const [key, request] = Object.entries(json.result.inputRequests as Record<string, any>)[0]!
  return { key, message: request.params.message }
}

const answer = (key: string, text: string) => ({ [key]: { action: "accept", content: { answer: text } } })

/** How many times the legacy children ran `tool` for `id`, every replica's. */
const runsOf = (gateway: GatewayCluster.GatewayCluster, tool: string, id: string) =>
  Effect.map(gateway.runs, (lines) => lines.filter((line) => line === `${tool} ${id}`).length)

/** The `HttpClient` of NodeMcpHttpClient, pinning the n-th `tools/call` to replica `n % 3`. */
const pinningHttpClient = () => {
  let calls = 0
  return Layer.effect(
    HttpClient.HttpClient,
    Effect.map(
      HttpClient.HttpClient,
      HttpClient.mapRequest((request) =>
        request.headers["mcp-method"] === "tools/call"
          ? HttpClientRequest.setHeader(request, "x-upstream", String(calls++ % 3))
          : request
      )
    )
  ).pipe(Layer.provide(NodeMcpHttpClient.layerHttpClient))
}

/** A 2026-07-28 `tools/list` straight to `port`: its status, the connection's error code, or `unanswered` after 5 s. */
const probe = (port: number) =>
  Effect.callback<string>((resume) => {
    const request = Http.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/mcp",
      agent: false,
      headers: mcpHeaders({ version: MODERN }, { "mcp-method": "tools/list" })
    }, (response) => {
      response.resume()
      response.on("end", () => resume(Effect.succeed(String(response.statusCode))))
    })
    request.setTimeout(5_000, () => {
      request.destroy()
      resume(Effect.succeed("unanswered"))
    })
    request.on("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed(error.code ?? error.message)))
    request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta() } }))
  })

const GatewayLive = Layer.effect(TestGateway, GatewayCluster.start(3, { quiet: true })).pipe(Layer.orDie)

describe.skipIf(!RedisServer.available)("a gateway of three replicas on Redis behind a round-robin proxy", () => {
  layer(GatewayLive, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect("a 2026-07-28 client's two elicitation rounds land on three replicas; the legacy call behind runs once", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const asked: Array<string> = []
        const client = yield* Clients.modern(gateway.url, asked, { httpClient: pinningHttpClient() })
        const before = gateway.proxy.hits.length
        const result = yield* client.callTool("legacy__confirm_twice", { id: "modern-1" })
        const holder = gateway.replicas[0]!
        assert.strictEqual(
          McpContent.textOf(result),
          `confirm_twice modern-1: answer 1, answer 2 (pid ${holder.process().pid})`
        )
        assert.deepStrictEqual(asked, ["First question of modern-1?", "Second question of modern-1?"])
        // the call and its two retries, each served by another replica
        const calls = gateway.proxy.hits.slice(before).filter((_, i) =>
          gateway.proxy.methods[before + i] === "tools/call"
        )
        assert.deepStrictEqual(calls, gateway.replicas.map((replica) => replica.port))
        assert.strictEqual(yield* runsOf(gateway, "confirm_twice", "modern-1"), 1)
      }).pipe(Effect.scoped))

    it.effect("raw 2026-07-28 rounds pinned to b, then c, then a: the call held on b answers on a", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const call = (upstream: number, extra: Record<string, unknown> = {}) =>
          modern(gateway.url, "tools/call", { name: "legacy__confirm_twice", arguments: { id: "raw-1" }, ...extra }, {
            upstream,
            capabilities: { elicitation: {} }
          })
        const first = yield* call(1)
        const one = questionOf(first.json)
        assert.strictEqual(one.message, "First question of raw-1?")
        const second = yield* call(2, {
          inputResponses: answer(one.key, "yes"),
          requestState: first.json.result.requestState
        })
        const two = questionOf(second.json)
        assert.strictEqual(two.message, "Second question of raw-1?")
        const third = yield* call(0, {
          inputResponses: answer(two.key, "sure"),
          requestState: second.json.result.requestState
        })
        assert.strictEqual(
          textOf(third.json),
          `confirm_twice raw-1: yes, sure (pid ${gateway.replicas[1]!.process().pid})`
        )
        assert.deepStrictEqual(gateway.proxy.hits.slice(-3), [1, 2, 0].map((i) => gateway.replicas[i]!.port))
        assert.strictEqual(yield* runsOf(gateway, "confirm_twice", "raw-1"), 1)
      }).pipe(Effect.scoped))

    it.effect("a legacy client's session (the official v1 SDK client) is served by its owner wherever its requests land", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const before = gateway.proxy.hits.length
        const asked: Array<string> = []
        const client = yield* Clients.official(gateway.url, asked)
        // the replica its initialize landed on owns the session
        const owner = gateway.replicas.find((replica) => replica.port === gateway.proxy.hits[before])!
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "legacy__confirm_twice", arguments: { id: "legacy-1" } })
        )
        assert.strictEqual(
          textOf({ result }),
          `confirm_twice legacy-1: legacy 1, legacy 2 (pid ${owner.process().pid})`
        )
        assert.deepStrictEqual(asked, ["First question of legacy-1?", "Second question of legacy-1?"])
        // its requests (the call, its two answers, ...) landed on every replica
        assert.strictEqual(new Set(gateway.proxy.hits.slice(before)).size, 3)
        assert.strictEqual(yield* runsOf(gateway, "confirm_twice", "legacy-1"), 1)
      }).pipe(Effect.scoped))

    it.effect("a tool added on the modern upstream reaches the listen streams of all three replicas", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const streams = yield* Effect.forEach([0, 1, 2], (upstream) =>
          openSse(gateway.url, {
            method: "POST",
            headers: mcpHeaders({ version: MODERN }, {
              "mcp-method": "subscriptions/listen",
              "x-upstream": String(upstream)
            }),
            body: {
              jsonrpc: "2.0",
              id: "listen",
              method: "subscriptions/listen",
              params: { _meta: meta(), notifications: { toolsListChanged: true } }
            }
          }))
        for (const stream of streams) {
          assert.strictEqual(stream.status, 200)
          assert.strictEqual(JSON.parse((yield* stream.next)!.data).method, "notifications/subscriptions/acknowledged")
        }
        // straight to the upstream, not through the gateway
        const added = yield* modern(gateway.modern.url, "tools/call", {
          name: "add_tool",
          arguments: { name: "late_tool" }
        })
        assert.strictEqual(textOf(added.json), "late_tool registered")
        for (const stream of streams) {
          const changed = yield* stream.next.pipe(Effect.timeout("10 seconds"))
          assert.strictEqual(JSON.parse(changed!.data).method, "notifications/tools/list_changed")
        }
        for (const upstream of [0, 1, 2]) {
          const listed = yield* modern(gateway.url, "tools/list", {}, { upstream })
          assert.include(
            listed.json.result.tools.map((tool: { name: string }) => tool.name),
            "modern__late_tool",
            listed.body
          )
        }
        yield* Effect.forEach(streams, (stream) => stream.drop)
      }).pipe(Effect.scoped))

    // the official SDK's servers declare no logging unless told to: the gateway must not set a level there
    it.effect("a legacy upstream declaring no logging capability serves a 2026-07-28 client's asking call", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const call = (upstream: number, extra: Record<string, unknown> = {}) =>
          modern(gateway.url, "tools/call", { name: "quiet__ask_once", arguments: { id: "quiet-1" }, ...extra }, {
            upstream,
            capabilities: { elicitation: {} }
          })
        const first = yield* call(0)
        const { key } = questionOf(first.json)
        const retried = yield* call(1, {
          inputResponses: answer(key, "hush"),
          requestState: first.json.result.requestState
        })
        assert.strictEqual(
          textOf(retried.json),
          `ask_once quiet-1: hush (pid ${gateway.replicas[0]!.process().pid})`
        )
        assert.strictEqual(yield* runsOf(gateway, "ask_once", "quiet-1"), 1)
      }).pipe(Effect.scoped))

    it.effect("the holder SIGKILLed mid-round: the retry elsewhere gets -32602 \"which is gone\" within a second, and no second run", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const holder = gateway.replicas[2]!
        const call = (upstream: number, extra: Record<string, unknown> = {}) =>
          modern(
            gateway.url,
            "tools/call",
            { name: "legacy__confirm_twice", arguments: { id: "killed-1" }, ...extra },
            {
              upstream,
              capabilities: { elicitation: {} }
            }
          )
        const first = yield* call(2)
        const one = questionOf(first.json)
        assert.strictEqual(gateway.proxy.hits.at(-1), holder.port)
        const children = yield* gateway.childrenOf(holder.name)
        assert.isAbove(children.length, 0)
        yield* holder.stop("SIGKILL")
        const started = yield* Clock.currentTimeMillis
        const retried = yield* call(0, {
          inputResponses: answer(one.key, "too late"),
          requestState: first.json.result.requestState
        })
        const elapsed = (yield* Clock.currentTimeMillis) - started
        console.log(`the retry after the holder's SIGKILL was answered in ${elapsed} ms: ${retried.body}`)
        assert.strictEqual(retried.json?.error?.code, -32602, retried.body)
        assert.include(retried.json.error.message, "which is gone")
        assert.include(retried.json.error.message, holder.name)
        assert.strictEqual(retried.json.error.data.holder, holder.name)
        assert.isBoolean(retried.json.error.data.idempotent)
        assert.isBelow(elapsed, 1000)
        // the holder's stdio children went with it
        assert.deepStrictEqual(yield* gateway.gone(gateway.childrenOf(holder.name), 5_000), [])
        // a moment later still: the call ran once
        yield* Effect.sleep("500 millis")
        assert.strictEqual(yield* runsOf(gateway, "confirm_twice", "killed-1"), 1)
        yield* holder.restart
      }).pipe(Effect.scoped))

    // a load balancer without a readiness probe (or a client with the address) may reach a replica as
    // soon as its port accepts connections: each request must then be answered or refused, never left hanging
    it.effect("a replica restarting on its port answers or refuses every request sent meanwhile: none is left unanswered", () =>
      Effect.gen(function*() {
        const gateway = yield* TestGateway
        const replica = gateway.replicas[0]!
        yield* replica.stop("SIGTERM")
        const restarting = yield* Effect.forkChild(replica.restart, { startImmediately: true })
        const probes: Array<Fiber.Fiber<string>> = []
        // one request every 2 ms, for as long as the restart takes (at most its 30 s)
        while (restarting.pollUnsafe() === undefined) {
          probes.push(yield* Effect.forkChild(probe(replica.port), { startImmediately: true }))
          yield* Effect.sleep("2 millis")
        }
        yield* Fiber.join(restarting)
        const outcomes = yield* Fiber.joinAll(probes)
        const counts = new Map<string, number>()
        for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1)
        console.log(
          `requests sent while replica ${replica.name} restarted: ${JSON.stringify(Object.fromEntries(counts))}`
        )
        assert.isAbove(counts.get("ECONNREFUSED") ?? 0, 0)
        assert.isAbove(counts.get("200") ?? 0, 0)
        assert.strictEqual(
          counts.get("unanswered") ?? 0,
          0,
          "a request taken while the replica started was never answered"
        )
      }).pipe(Effect.scoped))
  })
})

describe.skipIf(!RedisServer.available)("the gateway cluster of the tests", () => {
  it.live(
    "leaves nothing running: replicas, their stdio children and the modern upstream are gone with its scope",
    () =>
      Effect.gen(function*() {
        // closed by the test, or by the test's own scope when it fails first
        const scope = yield* Effect.acquireRelease(Scope.make(), (scope, exit) => Scope.close(scope, exit))
        const gateway = yield* GatewayCluster.start(3).pipe(Scope.provide(scope))
        // a held call: each replica has children, one of them asking
        const first = yield* modern(gateway.url, "tools/call", {
          name: "legacy__ask_once",
          arguments: { id: "left-1" }
        }, {
          upstream: 0,
          capabilities: { elicitation: {} }
        })
        questionOf(first.json)
        const pids = yield* gateway.processes
        for (const name of ["a", "b", "c"]) assert.isAbove((yield* gateway.childrenOf(name)).length, 0, name)
        assert.include(pids, gateway.modern.pid)
        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual(GatewayCluster.marked(`${GatewayCluster.MARK}=${gateway.marker}`), [])
        assert.deepStrictEqual(gateway.leftAtClose, [])
      }).pipe(Effect.scoped),
    60_000
  )
})
