/**
 * Three replica processes (`scratchpad/cluster/replica.ts`) on one real
 * redis-server, behind a round-robin proxy without sticky sessions
 * (`scratchpad/cluster/proxy.ts`; a request may be pinned to replica `i`
 * with `x-upstream: i`). What a load balancer in front of a clustered server
 * must get: a legacy session served whichever replica a request lands on, a
 * GET stream resumed on another replica after its own was SIGKILLed (nothing
 * lost, nothing twice), a GET stream forwarded to its owner ending soon after
 * the owner's SIGKILL, list changes reaching listen streams on other
 * replicas, a task started, polled and cancelled through three replicas, a
 * 2026-07-28 input-required retry landing on another replica, and a drained
 * replica handing its sessions over; all of it twice, the replicas forwarding
 * on Redis pub/sub, then on the direct hop (`DIRECT=1`). The killed replicas
 * restart; at the end no process is left.
 */
import { McpClient } from "@effect-mcp/core"
import * as NodeJsonSchemaValidator from "@effect-mcp/platform-node/NodeJsonSchemaValidator"
import * as NodeMcpHttpClient from "@effect-mcp/platform-node/NodeMcpHttpClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Exit, Layer, Option, Schedule, Scope } from "effect"
import { mcpHeaders, openSession, openSse, send } from "../../platform-node/test/fixtures/rawHttp.ts"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisEventStore from "../src/McpRedisEventStore.ts"
import * as Cluster from "./utils/cluster.ts"
import * as RedisServer from "./utils/redisServer.ts"
import { connect, published } from "./utils/sessions.ts"

class TestCluster extends Context.Service<TestCluster, Cluster.Cluster>()("test/TestCluster") {}

const MODERN = "2026-07-28"
const TASKS = "io.modelcontextprotocol/tasks"
const meta = (capabilities: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "e2e", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": capabilities
})

/** A 2026-07-28 request pinned to replica `upstream`. */
const modern = (
  cluster: Cluster.Cluster,
  upstream: number,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = {}
) => {
  const name = (params.name ?? params.taskId) as string | undefined
  return Effect.map(
    send(cluster.url, {
      headers: mcpHeaders({ version: MODERN }, {
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
        "x-upstream": String(upstream)
      }),
      body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta(capabilities) } }
    }),
    (reply) => ({ ...reply, json: reply.body === "" ? undefined : JSON.parse(reply.body) })
  )
}

/** A legacy request of `session` pinned to replica `upstream` (undefined: round-robin). */
const legacy = (cluster: Cluster.Cluster, session: string, body: unknown, upstream?: number) =>
  Effect.map(
    send(cluster.url, {
      headers: mcpHeaders({ session }, upstream === undefined ? {} : { "x-upstream": String(upstream) }),
      body
    }),
    (reply) => ({ ...reply, json: answerOf(reply.body) })
  )

// the JSON-RPC answer of a JSON body, or of the last `data:` line of an SSE body
const answerOf = (body: string): any => {
  if (body === "") return undefined
  if (body.startsWith("{")) return JSON.parse(body)
  const data = body.split("\n").filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "").map((line) =>
    JSON.parse(line.slice(5))
  )
  return data.reverse().find((message: any) => "result" in message || "error" in message)
}

const call = (name: string, args: Record<string, unknown> = {}, id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args }
})

const textOf = (json: any): string => json?.result?.content?.[0]?.text ?? JSON.stringify(json)

// the replicas forward on Redis pub/sub, or straight to the owner over HTTP (`DIRECT=1`, pub/sub the fallback)
for (const relay of ["pub/sub", "the direct hop"] as const) {
  describe.skipIf(!RedisServer.available)(
    `three replicas on Redis behind a round-robin proxy, forwarding on ${relay}`,
    () => {
      const ClusterLive = Layer.effect(TestCluster, Cluster.start(3, relay === "pub/sub" ? {} : { DIRECT: "1" })).pipe(
        Layer.orDie
      )
      layer(ClusterLive, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
        it.effect("a legacy client's session is served whichever replica its requests land on", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const client = yield* Layer.build(
              McpClient.layer({ clientInfo: { name: "legacy", version: "1" }, era: "legacy" }).pipe(
                Layer.provide([NodeMcpHttpClient.layer({ url: cluster.url }), NodeJsonSchemaValidator.layer])
              )
            ).pipe(Effect.map(Context.get(McpClient.McpClient)))
            const redis = yield* connect(cluster.redis.url)
            const published0 = yield* published(redis)
            const before = cluster.proxy.hits.length
            const answers: Array<string> = []
            for (let i = 0; i < 6; i++) answers.push(textOf({ result: yield* client.callTool("whoami", {}) }))
            // one replica owns the session and answers every call, wherever it landed
            assert.strictEqual(new Set(answers).size, 1, answers.join(","))
            const landed = new Set(cluster.proxy.hits.slice(before))
            assert.strictEqual(landed.size, 3)
            // the calls that landed elsewhere were forwarded on pub/sub, or on the hop (nothing published)
            const publishes = (yield* published(redis)) - published0
            if (relay === "pub/sub") assert.isAbove(publishes, 0)
            else assert.strictEqual(publishes, 0)
          }).pipe(Effect.scoped))

        it.effect("a listen stream on one replica hears of a tool registered on another", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const stream = yield* openSse(cluster.url, {
              method: "POST",
              headers: mcpHeaders({ version: MODERN }, { "mcp-method": "subscriptions/listen", "x-upstream": "0" }),
              body: {
                jsonrpc: "2.0",
                id: "l",
                method: "subscriptions/listen",
                params: { _meta: meta(), notifications: { toolsListChanged: true } }
              }
            })
            assert.strictEqual(
              JSON.parse((yield* stream.next)!.data).method,
              "notifications/subscriptions/acknowledged"
            )
            const added = yield* modern(cluster, 1, "tools/call", { name: "add_tool", arguments: { name: "from_b" } })
            assert.strictEqual(textOf(added.json), "from_b registered on b")
            const changed = JSON.parse((yield* stream.next)!.data)
            assert.strictEqual(changed.method, "notifications/tools/list_changed")
            yield* stream.drop
          }).pipe(Effect.scoped))

        it.effect("a task started through a, polled through b, cancelled through c: the cancel reaches the run on a", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const declared = { extensions: { [TASKS]: {} } }
            const created = yield* modern(
              cluster,
              0,
              "tools/call",
              { name: "sleep", arguments: { ms: 600_000 } },
              declared
            )
            assert.strictEqual(created.json.result.resultType, "task", created.body)
            const taskId = created.json.result.taskId as string
            const polled = yield* modern(cluster, 1, "tasks/get", { taskId }, declared)
            assert.strictEqual(polled.json.result.status, "working", polled.body)
            const cancelled = yield* modern(cluster, 2, "tasks/cancel", { taskId }, declared)
            assert.isUndefined(cancelled.json.error, cancelled.body)
            // the run on a is interrupted (it says so on its stderr), and every replica sees the task cancelled
            yield* Effect.sync(() => cluster.replicas[0]!.stderr()).pipe(
              Effect.repeat({
                schedule: Schedule.spaced("50 millis"),
                until: (text) => text.includes("interrupted sleep 600000 on a"),
                times: 200
              })
            )
            assert.include(cluster.replicas[0]!.stderr(), "interrupted sleep 600000 on a")
            for (const upstream of [0, 1, 2]) {
              const seen = yield* modern(cluster, upstream, "tasks/get", { taskId }, declared)
              assert.strictEqual(seen.json.result.status, "cancelled", seen.body)
            }
          }).pipe(Effect.scoped))

        it.effect("a 2026-07-28 input-required retry lands on another replica than its first round", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const first = yield* modern(cluster, 0, "tools/call", { name: "ask", arguments: {} }, { elicitation: {} })
            assert.strictEqual(first.json.result.resultType, "input_required", first.body)
            const [key] = Object.keys(first.json.result.inputRequests)
            const retried = yield* modern(cluster, 1, "tools/call", {
              name: "ask",
              arguments: {},
              inputResponses: { [key!]: { action: "accept", content: { word: "hello" } } },
              requestState: first.json.result.requestState
            }, { elicitation: {} })
            assert.strictEqual(textOf(retried.json), "b heard hello")
          }).pipe(Effect.scoped))

        it.effect("a GET stream resumed with Last-Event-ID after its replica was SIGKILLed misses nothing and repeats nothing", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const session = yield* openSession(cluster.direct(0))
            const getHeaders = mcpHeaders({ session }, { accept: "text/event-stream" })
            const stream = yield* openSse(cluster.direct(0), { method: "GET", headers: getHeaders })
            const priming = (yield* stream.next)!
            assert.isString(priming.id)
            // a second client's calls on b change the tool list: a tells its session
            const driver = yield* openSession(cluster.direct(1))
            let changes = 0
            const change = legacy(cluster, driver, call("add_tool", { name: `t${++changes}` }), 1).pipe(
              Effect.tap((reply) => Effect.sync(() => assert.strictEqual(reply.status, 200, reply.body)))
            )
            const received: Array<string> = []
            for (let i = 0; i < 3; i++) {
              yield* change
              const event = (yield* stream.next)!
              assert.strictEqual(JSON.parse(event.data).method, "notifications/tools/list_changed")
              received.push(event.id!)
            }
            yield* cluster.replicas[0]!.stop("SIGKILL")
            assert.isUndefined(yield* stream.next)
            // the client saw the first event only (say the others were lost in transit); it resumes through b
            const resumed = yield* openSse(cluster.url, {
              method: "GET",
              headers: { ...getHeaders, "last-event-id": received[0]!, "x-upstream": "1" }
            })
            assert.strictEqual(resumed.status, 200)
            const seen = [received[0]!]
            for (let i = 0; i < 2; i++) seen.push((yield* resumed.next)!.id!)
            assert.deepStrictEqual(seen, received)
            // b serves the session now: its own changes come on the same stream
            yield* change
            const live = (yield* resumed.next)!
            assert.strictEqual(JSON.parse(live.data).method, "notifications/tools/list_changed")
            seen.push(live.id!)
            assert.strictEqual(new Set(seen).size, seen.length)
            // exactly what the stream holds in Redis, in order
            const stored = yield* Effect.gen(function*() {
              const redis = yield* Layer.build(McpRedis.layer({ url: cluster.redis.url }))
              const store = yield* McpRedisEventStore.make().pipe(Effect.provideContext(redis))
              return yield* store.replayAfter(priming.id!)
            })
            assert.deepStrictEqual(Option.getOrThrow(stored).events.map((event) => event.id), seen)
            yield* resumed.drop
            yield* cluster.replicas[0]!.restart
          }).pipe(Effect.scoped))

        it.effect("a GET stream forwarded to its owner ends soon after the owner is SIGKILLed", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const session = yield* openSession(cluster.direct(0))
            // opened through b: forwarded to a, the owner, and streamed back as a writes it
            const stream = yield* openSse(cluster.url, {
              method: "GET",
              headers: { ...mcpHeaders({ session }, { accept: "text/event-stream" }), "x-upstream": "1" }
            })
            assert.strictEqual(stream.status, 200)
            assert.isString((yield* stream.next)!.id)
            const start = Date.now()
            yield* cluster.replicas[0]!.stop("SIGKILL")
            assert.isUndefined(yield* stream.next)
            // the hop's connection closes with the process; pub/sub waits for the heartbeat to lapse (600 ms here)
            assert.isBelow(Date.now() - start, relay === "pub/sub" ? 3000 : 1000)
            yield* cluster.replicas[0]!.restart
          }).pipe(Effect.scoped))

        it.effect("the official SDK's client keeps its session through the cluster, its owner's SIGKILL included", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const transport = new StreamableHTTPClientTransport(new URL(cluster.url))
            const client = yield* Effect.acquireRelease(
              Effect.promise(async () => {
                const client = new Client({ name: "official-sdk", version: "1.0.0" })
                await client.connect(transport)
                return client
              }),
              (client) => Effect.promise(() => client.close())
            )
            const whoami = Effect.promise(() => client.callTool({ name: "whoami", arguments: {} })).pipe(
              Effect.map((result) => textOf({ result }))
            )
            const answers = [yield* whoami, yield* whoami, yield* whoami]
            assert.strictEqual(new Set(answers).size, 1, answers.join(","))
            const owner = cluster.replicas.find((replica) => replica.name === answers[0])!
            const session = transport.sessionId
            assert.isString(session)
            yield* owner.stop("SIGKILL")
            // the next call lands on a live replica, which takes the session over: same session, no new handshake
            const after = yield* whoami
            assert.notStrictEqual(after, owner.name)
            assert.strictEqual(transport.sessionId, session)
            const listed = yield* Effect.promise(() => client.listTools())
            assert.includeMembers(listed.tools.map((tool) => tool.name), ["whoami", "sleep"])
            yield* owner.restart
          }).pipe(Effect.scoped))

        it.effect("a replica stopped with SIGTERM hands its sessions over: the next request elsewhere takes them", () =>
          Effect.gen(function*() {
            const cluster = yield* TestCluster
            const session = yield* openSession(cluster.direct(2))
            const before = yield* legacy(cluster, session, call("whoami"), 0)
            assert.strictEqual(textOf(before.json), "c")
            const getStream = yield* openSse(cluster.direct(2), {
              method: "GET",
              headers: mcpHeaders({ session }, { accept: "text/event-stream" })
            })
            yield* getStream.next
            yield* cluster.replicas[2]!.stop("SIGTERM")
            // it ended by itself (NodeRuntime's exit code after a signal), not killed
            assert.isNull(cluster.replicas[2]!.process().signalCode)
            // its GET stream ended (the client reconnects), and the session lives on
            assert.isUndefined(yield* getStream.next)
            const after = yield* legacy(cluster, session, call("whoami", {}, 2), 0)
            assert.strictEqual(textOf(after.json), "a")
            yield* cluster.replicas[2]!.restart
          }).pipe(Effect.scoped))
      })
    }
  )
}

describe.skipIf(!RedisServer.available)("the cluster of the tests", () => {
  const running = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }

  it.live("a replica is ready while Redis answers: /readyz 503 while it is down, 200 again once it is back", () =>
    Effect.gen(function*() {
      const cluster = yield* Cluster.start(1)
      const base = `http://127.0.0.1:${cluster.replicas[0]!.port}`
      const status = (path: string) => Effect.map(send(base + path, { method: "GET" }), (reply) => reply.status)
      const eventually = (path: string, expected: number) =>
        status(path).pipe(
          Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (code) => code === expected, times: 100 })
        )
      assert.strictEqual(yield* status("/readyz"), 200)
      yield* cluster.redis.kill
      assert.strictEqual(yield* eventually("/readyz", 503), 503)
      assert.strictEqual(yield* status("/healthz"), 200)
      yield* cluster.redis.restart
      assert.strictEqual(yield* eventually("/readyz", 200), 200)
    }).pipe(Effect.scoped))

  it.live("leaves no process behind: replicas and redis-server are gone when its scope closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const cluster = yield* Cluster.start(1).pipe(Scope.provide(scope))
      const pids = [cluster.replicas[0]!.process().pid!, cluster.redis.pid]
      assert.deepStrictEqual(pids.map(running), [true, true])
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(pids.map(running), [false, false])
    }))
})
