/**
 * A bounded chaos run of the clustered gateway (`utils/gatewayCluster.ts`):
 * three replicas behind the round-robin proxy, 2,000 tool calls of the
 * legacy upstream from 2026-07-28 clients at concurrency 32, a quarter of
 * them asking a question (`ask_once`: an input-required round whose retry
 * lands on another replica than the held call), while one replica is
 * SIGKILLed and restarted.
 *
 * Every call either completed (once) or failed with a clear error (an
 * `McpError` with a message) within 30 s on the real clock: nothing hangs.
 * No call ran twice behind (the legacy children write one line per run).
 * The counts are printed.
 */
import { McpClient, McpContent, McpError } from "@effect-mcp/core"
import * as NodeJsonSchemaValidator from "@effect-mcp/platform-node/NodeJsonSchemaValidator"
import * as NodeMcpHttpClient from "@effect-mcp/platform-node/NodeMcpHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import * as GatewayCluster from "./utils/gatewayCluster.ts"
import * as RedisServer from "./utils/redisServer.ts"

const CALLS = 2_000
const CONCURRENCY = 32
// the replica is killed once this many calls are done, restarted a second later
const KILL_AFTER = 600

// what a failure was, in a word or two: its reason, its code, the start of its message
const kindOf = (error: unknown): string => {
  if (!McpError.isMcpError(error)) return `not an McpError: ${String(error)}`
  const reason = error.reason as { readonly _tag: string; readonly code?: number; readonly status?: number }
  const detail = reason.code !== undefined
    ? ` ${reason.code}`
    : reason.status !== undefined
    ? ` HTTP ${reason.status}`
    : ""
  const message = reason._tag === "TransportError" ? error.message.replace(/\d+/g, "#") : error.message
  return `${reason._tag}${detail}: ${message}`
}

describe.skipIf(!RedisServer.available)("a clustered gateway under chaos", () => {
  it.live(
    `${CALLS} calls at concurrency ${CONCURRENCY}, a quarter asking, one replica SIGKILLed and restarted`,
    () =>
      Effect.gen(function*() {
        const gateway = yield* GatewayCluster.start(3)
        const clientOf = (name: string, asking: boolean) =>
          Layer.build(
            McpClient.layer({
              clientInfo: { name, version: "1" },
              era: "modern",
              ...(asking
                ? {
                  elicitation: {
                    form: (params) =>
                      Effect.succeed({ action: "accept" as const, content: { answer: `to ${params.message}` } })
                  }
                }
                : {})
            }).pipe(Layer.provide([NodeMcpHttpClient.layer({ url: gateway.url }), NodeJsonSchemaValidator.layer]))
          ).pipe(Effect.map(Context.get(McpClient.McpClient)))
        // a client that can be asked (its calls take sessions of their own behind) and one that cannot
        const asking = yield* clientOf("chaos-asking", true)
        const plain = yield* clientOf("chaos-plain", false)

        const completed: Array<string> = []
        const failures = new Map<string, number>()
        const timedOut: Array<string> = []
        // when each call started, from the test's start
        const startedAt = new Map<string, number>()
        let killedAt = 0
        let restartedAt = 0
        const wrong: Array<string> = []
        const halfway = yield* Deferred.make<void>()
        let done = 0
        const victim = gateway.replicas[1]!

        const call = (index: number) => {
          const id = `c${index}`
          const ask = index % 4 === 0
          const expected = ask
            ? new RegExp(`^ask_once ${id}: to The question of ${id}\\? \\(pid \\d+\\)$`)
            : new RegExp(`^echo ${id} \\(pid \\d+\\)$`)
          const request = ask ? asking.callTool("legacy__ask_once", { id }) : plain.callTool("legacy__echo", { id })
          return Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => startedAt.set(id, now - started)))
            .pipe(
              Effect.andThen(request),
              Effect.timeout("30 seconds"),
              Effect.exit,
              Effect.flatMap((exit) =>
                Effect.sync(() => {
                  if (Exit.isSuccess(exit)) {
                    const text = McpContent.textOf(exit.value)
                    if (expected.test(text)) completed.push(id)
                    else wrong.push(`${id}: ${text}`)
                  } else {
                    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
                    const failure = error?._tag === "Fail" ? error.error : undefined
                    if (failure !== undefined && (failure as { _tag?: string })._tag === "TimeoutError") {
                      timedOut.push(id)
                    } else {
                      const kind = failure === undefined
                        ? `defect or interruption: ${String(exit.cause)}`
                        : kindOf(failure)
                      failures.set(kind, (failures.get(kind) ?? 0) + 1)
                    }
                  }
                })
              ),
              Effect.tap(() => ++done >= KILL_AFTER ? Deferred.succeed(halfway, undefined) : Effect.void)
            )
        }

        const started = yield* Clock.currentTimeMillis
        const chaos = yield* Effect.gen(function*() {
          yield* Deferred.await(halfway)
          yield* victim.stop("SIGKILL")
          killedAt = (yield* Clock.currentTimeMillis) - started
          // the load balancer takes it out of rotation until it is ready again (it has printed `listening`), as
          // a readiness probe would: a replica restarting on its port accepts connections a moment before it
          // serves them, and answers a request taken then with 503 (see gateway.cluster.e2e.test.ts)
          const ports = gateway.replicas.map((replica) => replica.port)
          gateway.proxy.setUpstreams(ports.filter((port) => port !== victim.port))
          yield* Effect.sleep("1 second")
          yield* victim.restart
          gateway.proxy.setUpstreams(ports)
          restartedAt = (yield* Clock.currentTimeMillis) - started
          return restartedAt - killedAt
        }).pipe(Effect.forkChild({ startImmediately: true }))

        yield* Effect.forEach(Array.from({ length: CALLS }, (_, index) => index), call, {
          concurrency: CONCURRENCY,
          discard: true
        })
        const took = (yield* Clock.currentTimeMillis) - started
        const down = yield* Fiber.join(chaos)

        // every run behind, by id
        const lines = yield* gateway.runs
        const runs = new Map<string, number>()
        for (const line of lines) {
          const id = line.split(" ")[1]!
          runs.set(id, (runs.get(id) ?? 0) + 1)
        }
        const twice = [...runs].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`)
        const failed = [...failures.values()].reduce((sum, n) => sum + n, 0)
        console.log([
          `chaos: ${CALLS} calls (${
            CALLS / 4
          } asking) at concurrency ${CONCURRENCY} in ${took} ms; replica ${victim.name} down for ${down} ms`,
          `  completed ${completed.length}, failed ${failed}, timed out ${timedOut.length}, wrong answers ${wrong.length}`,
          ...[...failures].sort((a, b) => b[1] - a[1]).map(([kind, n]) => `  failed ${n}: ${kind}`),
          `  runs behind ${lines.length} (ids run: ${runs.size}, run twice: ${twice.length})`,
          `  killed at ${killedAt} ms, restarted at ${restartedAt} ms`,
          ...timedOut.map((id) =>
            `  timed out: ${id} started at ${startedAt.get(id)} ms, ran ${runs.get(id) ?? 0} time(s) behind`
          )
        ].join("\n"))

        assert.strictEqual(completed.length + failed + timedOut.length + wrong.length, CALLS)
        assert.deepStrictEqual(timedOut, [], "no call may hang")
        assert.deepStrictEqual(wrong, [])
        assert.deepStrictEqual(twice, [], "no call may run twice")
        // each completed call ran behind exactly once
        assert.deepStrictEqual(completed.filter((id) => runs.get(id) !== 1), [])
        // only calls in flight around the kill may fail
        assert.isAbove(completed.length, CALLS * 0.8)
        for (const kind of failures.keys()) assert.notMatch(kind, /^not an McpError|^defect/)
      }).pipe(Effect.scoped),
    120_000
  )
})
