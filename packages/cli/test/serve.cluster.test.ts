/**
 * `effect-mcp serve --redis`, run as the built bin: two replicas of the
 * gateway on one real redis-server (the direct hop on), each with its own
 * copy of a legacy stdio server (the official v1 SDK's) that asks two
 * questions. A 2026-07-28 client's call starts on one replica and its
 * retries land on the other: it completes, and the server ran it once. The
 * holder SIGKILLed mid-round: the retry elsewhere is told at once, and
 * nothing runs again. `/readyz` follows Redis. Usage errors of the replica
 * flags. No process left.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Option, Result } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { mcpHeaders, send } from "../../platform-node/test/fixtures/rawHttp.ts"
import { isRunning } from "../../platform-node/test/utils/process.ts"
import * as RedisServer from "../../redis/test/utils/redisServer.ts"
import * as Cluster from "../src/internal/cluster.ts"
import { processesWith, quote, root, startCli } from "./utils/cli.ts"

const MODERN = "2026-07-28"
const legacyServer = join(root, "scratchpad/gateway-cluster/legacy-upstream.ts")
const dir = mkdtempSync(join(tmpdir(), "effect-mcp-serve-cluster-"))
const runsFile = join(dir, "runs")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The runs the legacy servers of every replica recorded. */
const runs = (): ReadonlyArray<string> => {
  const text = Result.try(() => readFileSync(runsFile, "utf8"))
  return Result.isSuccess(text) ? text.success.split("\n").filter((line) => line !== "") : []
}

/** A 2026-07-28 `tools/call confirm_twice` at `url`, with what a retry carries. */
const confirmTwice = (url: string, id: string, extra: Record<string, unknown> = {}) =>
  Effect.map(
    send(url, {
      headers: mcpHeaders({ version: MODERN }, { "mcp-method": "tools/call", "mcp-name": "confirm_twice" }),
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "confirm_twice",
          arguments: { id },
          ...extra,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": { elicitation: {} }
          }
        }
      }
    }),
    (reply) => JSON.parse(reply.body)
  )

const accept = (answer: string) => ({ action: "accept", content: { answer } })

/** The answers to a round: each input request accepted with `answer`. */
const answering = (round: any, answer: string) =>
  Object.fromEntries(Object.keys(round.result.inputRequests).map((key) => [key, accept(answer)]))

const replica = (name: string, redis: string) =>
  Effect.gen(function*() {
    const running = yield* startCli([
      "serve",
      "--stdio",
      `${quote(process.execPath)} ${quote(legacyServer)}`,
      "--env",
      `RUNS_FILE=${runsFile}`,
      "--era",
      "legacy",
      "--port",
      "0",
      "--redis",
      redis,
      "--replica-id",
      name,
      "--relay-port",
      "0"
    ])
    const [, url] = yield* running.stderrMatching(/serving 1 server \(\S+\) on (\S+), replica (\S+)/)
    return { running, url: url! }
  })

describe.skipIf(!RedisServer.available)("effect-mcp serve --redis", () => {
  it.live(
    "a held call's retries on another replica reach the holder; its death is told at once",
    () =>
      Effect.gen(function*() {
        const redis = yield* RedisServer.start
        const a = yield* replica("a", redis.url)
        const b = yield* replica("b", redis.url)

        const round1 = yield* confirmTwice(a.url, "c1")
        assert.strictEqual(round1.result?.resultType, "input_required", JSON.stringify(round1))
        const round2 = yield* confirmTwice(b.url, "c1", {
          inputResponses: answering(round1, "yes"),
          requestState: round1.result.requestState
        })
        assert.strictEqual(round2.result?.resultType, "input_required", JSON.stringify(round2))
        const done = yield* confirmTwice(b.url, "c1", {
          inputResponses: answering(round2, "sure"),
          requestState: round2.result.requestState
        })
        assert.match(done.result?.content?.[0]?.text ?? JSON.stringify(done), /confirm_twice c1: yes, sure/)
        assert.deepStrictEqual(runs().filter((line) => line.endsWith(" c1")), ["confirm_twice c1"])

        // the holder killed between rounds: the retry on `b` is told at once, and nothing runs again
        const held = yield* confirmTwice(a.url, "c2")
        assert.strictEqual(held.result?.resultType, "input_required")
        // its servers: the group's connection, and the session of its own the call took
        const pids = processesWith(a.running.marker)
        assert.isAtLeast(pids.length, 2)
        process.kill(a.running.pid, "SIGKILL")
        yield* Effect.sleep("50 millis")
        const started = performance.now()
        const gone = yield* confirmTwice(b.url, "c2", {
          inputResponses: answering(held, "yes"),
          requestState: held.result.requestState
        })
        const took = performance.now() - started
        assert.strictEqual(gone.error?.code, -32602, JSON.stringify(gone))
        assert.include(gone.error.message, "held by replica a, which is gone")
        assert.deepStrictEqual(gone.error.data, { holder: "a", idempotent: false })
        assert.isBelow(took, 1000)
        assert.deepStrictEqual(runs().filter((line) => line.endsWith(" c2")), ["confirm_twice c2"])

        // `a`'s own servers died with it (their stdin ended)
        for (let i = 0; i < 200 && pids.some(isRunning); i++) yield* Effect.sleep("25 millis")
        for (const pid of pids) assert.isFalse(isRunning(pid), `process ${pid} of the killed replica is still running`)

        // a replica is ready while its Redis answers
        const readyz = new URL("/readyz", b.url).href
        assert.strictEqual((yield* send(readyz, { method: "GET" })).status, 200)
        yield* redis.kill
        assert.strictEqual((yield* send(readyz, { method: "GET" })).status, 503)
      }).pipe(Effect.scoped),
    60_000
  )

  it("checks the replica flags", () => {
    const none = {
      redis: Option.none(),
      redisPrefix: Option.none(),
      replicaId: Option.none(),
      relayHost: Option.none(),
      relayPort: Option.none(),
      relayAdvertise: Option.none()
    }
    const failure = (flags: Partial<Cluster.Flags>, http = true) => {
      const result = Cluster.parse({ ...none, ...flags } as Cluster.Flags, http)
      return Result.isFailure(result) ? result.failure.message : undefined
    }
    assert.isUndefined(Result.getOrThrow(Cluster.parse(none as Cluster.Flags, true)))
    assert.match(failure({ relayPort: Option.some(7070) })!, /--relay-port goes with --redis URL/)
    assert.match(failure({ redis: Option.some("redis://x:6379") }, false)!, /not --serve-stdio/)
    assert.match(failure({ redis: Option.some("http://x:6379") })!, /redis:\/\/ or rediss:\/\//)
    assert.match(
      failure({ redis: Option.some("redis://x"), replicaId: Option.some("a\u001b[31m") })!,
      /--replica-id may hold/
    )
    assert.match(
      failure({ redis: Option.some("redis://x"), relayHost: Option.some("10.0.0.1") })!,
      /--relay-host goes with --relay-port/
    )
    assert.match(
      failure({ redis: Option.some("redis://x"), relayPort: Option.some(1), relayHost: Option.some("0.0.0.0") })!,
      /--relay-advertise/
    )
    assert.match(
      failure({
        redis: Option.some("redis://x"),
        relayPort: Option.some(1),
        relayAdvertise: Option.some("file:///x")
      })!,
      /http:\/\/ or https:\/\//
    )
    const ok = Result.getOrThrow(
      Cluster.parse(
        {
          ...none,
          redis: Option.some("rediss://h:1"),
          replicaId: Option.some("r-1"),
          relayPort: Option.some(0)
        } as Cluster.Flags,
        true
      )
    )
    assert.deepStrictEqual(ok, { url: "rediss://h:1", prefix: undefined, replicaId: "r-1", direct: { port: 0 } })
  })
})
