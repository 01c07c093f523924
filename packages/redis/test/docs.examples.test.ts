/**
 * The Redis examples of the documentation ("Running many replicas"), run as
 * their pages say: two processes of each on one real redis-server, behind
 * the round-robin proxy of the cluster tests (no sticky sessions), each given
 * its port in `PORT` and nothing else but `REDIS_URL` (and, for the gateway,
 * its `mcp.json` and relay address).
 *
 * - `scratchpad/docs/replicas.ts`: a legacy client's session (the official
 *   v1 SDK client) is served whichever replica its requests land on, and a
 *   2026-07-28 client is answered by both.
 * - `scratchpad/docs/gateway-replica.ts`: a legacy client's elicitation
 *   rounds reach its session's owner over the relay (each replica's
 *   heartbeat names its relay on `RELAY_HOST`); a 2026-07-28 client's
 *   rounds land on both replicas while the call behind runs once, on the
 *   replica holding it (the `requestState` secret is the cluster's); at the
 *   end no process (replica, stdio child, upstream) is left.
 */
import { McpContent } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { fileURLToPath } from "node:url"
import * as Clients from "./utils/clients.ts"
import * as Cluster from "./utils/cluster.ts"
import * as GatewayCluster from "./utils/gatewayCluster.ts"
import * as RedisServer from "./utils/redisServer.ts"
import { connect } from "./utils/sessions.ts"

const DOCS = new URL("../../../scratchpad/docs/", import.meta.url)

// the official client's result (a union with its task results) read as ours
const textOf = (result: object) => McpContent.textOf(result as Parameters<typeof McpContent.textOf>[0])

describe.skipIf(!RedisServer.available)("the documentation's Redis examples", () => {
  it.live(
    "replicas.ts: two replicas on one Redis serve a legacy session wherever its requests land",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Cluster.start(2, {}, undefined, {
          script: fileURLToPath(new URL("replicas.ts", DOCS)),
          silent: true
        })
        const before = cluster.proxy.hits.length
        const legacy = yield* Clients.official(cluster.url)
        const { tools } = yield* Effect.promise(() => legacy.listTools())
        assert.deepStrictEqual(tools.map((tool) => tool.name), ["echo"])
        for (let i = 0; i < 3; i++) {
          const result = yield* Effect.promise(() => legacy.callTool({ name: "echo", arguments: {} }))
          assert.strictEqual(textOf(result), "echo")
        }
        // the session's requests (initialize, initialized, list, calls) landed on both replicas
        assert.deepStrictEqual(
          [...new Set(cluster.proxy.hits.slice(before))].sort(),
          cluster.replicas.map((replica) => replica.port).sort()
        )
        const modern = yield* Clients.modern(cluster.url)
        for (let i = 0; i < 2; i++) assert.strictEqual(textOf(yield* modern.callTool("echo", {})), "echo")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "gateway-replica.ts: two gateway replicas relay a legacy session and hold a modern call; nothing left",
    () =>
      Effect.gen(function*() {
        // closed by the test, or by the test's own scope when it fails first
        const scope = yield* Effect.acquireRelease(Scope.make(), (scope, exit) => Scope.close(scope, exit))
        const gateway = yield* GatewayCluster.start(2, {
          script: fileURLToPath(new URL("gateway-replica.ts", DOCS)),
          silent: true,
          env: { RELAY_HOST: "127.0.0.1", RELAY_PORT: "0" }
        }).pipe(Scope.provide(scope))
        // each replica's heartbeat names its relay (RELAY_HOST, any port): requests for it come straight there
        const redis = yield* connect(gateway.redis.url).pipe(Scope.provide(scope))
        const heartbeats = yield* redis.send<ReadonlyArray<string>>("KEYS", "mcp:replicas:*")
        assert.strictEqual(heartbeats.length, 2)
        for (const key of heartbeats) {
          assert.match((yield* redis.send<string>("GET", key)) ?? "", /^http:\/\/127\.0\.0\.1:\d+$/)
        }
        const runsOf = (tool: string, id: string) =>
          Effect.map(gateway.runs, (lines) => lines.filter((line) => line === `${tool} ${id}`).length)

        // a legacy session, owned by the replica its initialize landed on
        const before = gateway.proxy.hits.length
        const legacyAsked: Array<string> = []
        const legacy = yield* Clients.official(gateway.url, legacyAsked).pipe(Scope.provide(scope))
        const owner = gateway.replicas.find((replica) => replica.port === gateway.proxy.hits[before])!
        const first = yield* Effect.promise(() =>
          legacy.callTool({ name: "legacy__confirm_twice", arguments: { id: "docs-legacy" } })
        )
        assert.strictEqual(textOf(first), `confirm_twice docs-legacy: legacy 1, legacy 2 (pid ${owner.process().pid})`)
        assert.deepStrictEqual(legacyAsked, ["First question of docs-legacy?", "Second question of docs-legacy?"])
        assert.strictEqual(new Set(gateway.proxy.hits.slice(before)).size, 2)
        assert.strictEqual(yield* runsOf("confirm_twice", "docs-legacy"), 1)

        // a 2026-07-28 client: the call and its two retries land on alternate replicas
        const modernAsked: Array<string> = []
        const modern = yield* Clients.modern(gateway.url, modernAsked, { prefix: "modern" }).pipe(Scope.provide(scope))
        const start = gateway.proxy.hits.length
        const second = yield* modern.callTool("legacy__confirm_twice", { id: "docs-modern" })
        const calls = gateway.proxy.hits.slice(start).filter((_, i) =>
          gateway.proxy.methods[start + i] === "tools/call"
        )
        assert.strictEqual(calls.length, 3)
        assert.strictEqual(new Set(calls).size, 2)
        const holder = gateway.replicas.find((replica) => replica.port === calls[0])!
        assert.strictEqual(
          McpContent.textOf(second),
          `confirm_twice docs-modern: modern 1, modern 2 (pid ${holder.process().pid})`
        )
        assert.deepStrictEqual(modernAsked, ["First question of docs-modern?", "Second question of docs-modern?"])
        assert.strictEqual(yield* runsOf("confirm_twice", "docs-modern"), 1)

        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual(GatewayCluster.marked(`${GatewayCluster.MARK}=${gateway.marker}`), [])
        assert.deepStrictEqual(gateway.leftAtClose, [])
      }).pipe(Effect.scoped),
    90_000
  )
})
