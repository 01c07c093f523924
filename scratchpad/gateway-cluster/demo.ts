/**
 * `npm run demo:gateway`: a gateway run as three replicas on Redis behind a
 * round-robin proxy (no sticky sessions), in front of two upstreams: a
 * legacy stdio server written with the official v1 SDK, which asks
 * questions (each replica runs its own copies), and one 2026-07-28 HTTP
 * server. A 2026-07-28 client calls a legacy tool that asks twice: its
 * rounds land on different replicas while the replica holding the call runs
 * it once. Then the holder is SIGKILLed mid-round, and the client's retry is
 * told at once. Uses `REDIS_URL` when set, else starts a redis-server of its
 * own (Debian's `redis-server`) on a free loopback port. Prints what
 * happens; exits 0 with nothing left running.
 *
 *   npm run demo:gateway
 */
import { McpClient, McpContent, McpError } from "@effect-mcp/core"
import { NodeJsonSchemaValidator, NodeMcpHttpClient, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Clock, Console, Context, Effect, Layer } from "effect"
import * as GatewayCluster from "../../packages/redis/test/utils/gatewayCluster.ts"

const main = Effect.gen(function*() {
  const gateway = yield* GatewayCluster.start(3, { redisUrl: process.env.REDIS_URL || undefined })
  const { proxy, replicas } = gateway
  yield* Console.log(`redis-server on ${gateway.redis.url}`)
  yield* Console.log(`modern upstream (2026-07-28 over HTTP) on :${gateway.modern.port}`)
  yield* Console.log(`gateway replicas ${replicas.map((replica) => `${replica.name} on :${replica.port}`).join(", ")}`)
  yield* Console.log(`  each runs its own stdio children of the legacy upstream (the official v1 SDK, 2025-11-25)`)
  yield* Console.log(`round-robin proxy on :${proxy.port}, no sticky sessions\n`)

  const nameOf = (port: number | undefined) => replicas.find((replica) => replica.port === port)?.name ?? "?"
  const byPid = (text: string) => {
    const pid = Number(/\(pid (\d+)\)/.exec(text)?.[1])
    return replicas.find((replica) => replica.process().pid === pid)?.name ?? "?"
  }
  // the replicas that served the `tools/call` requests since `from`
  const callsSince = (from: number) =>
    proxy.hits.slice(from).flatMap((port, i) => (proxy.methods[from + i] === "tools/call" ? [nameOf(port)] : []))
  const ranTimes = (tool: string, id: string) =>
    Effect.map(gateway.runs, (lines) => lines.filter((line) => line === `${tool} ${id}`).length)

  // answers each question with the next color; `onAsked` runs first (the kill of the second call)
  const colors = ["blue", "green", "red"]
  let asked = 0
  let onAsked: Effect.Effect<void> = Effect.void
  const client = yield* Layer.build(
    McpClient.layer({
      clientInfo: { name: "demo-gateway", version: "1.0.0" },
      era: "modern",
      elicitation: {
        form: (params) =>
          Effect.gen(function*() {
            const color = colors[asked++ % colors.length]!
            yield* Console.log(
              `  asked: ${params.message} -> "${color}" (the question came from ${nameOf(proxy.hits.at(-1))})`
            )
            yield* onAsked
            return { action: "accept" as const, content: { answer: color } }
          })
      }
    }).pipe(Layer.provide([NodeMcpHttpClient.layer({ url: gateway.url }), NodeJsonSchemaValidator.layer]))
  ).pipe(Effect.map(Context.get(McpClient.McpClient)))
  yield* Console.log(`tools: ${(yield* client.tools.get).map((tool) => tool.name).join(", ")}\n`)
  // the client opens its listen stream (and lists again) in the background: let it, so that nothing
  // else goes through the proxy between a call and its retries (at most 3 s)
  const listening = () => proxy.methods.indexOf("subscriptions/listen")
  yield* Effect.sleep("50 millis").pipe(
    Effect.repeat({
      until: () => listening() !== -1 && proxy.methods.slice(listening()).includes("tools/list"),
      times: 60
    })
  )

  yield* Console.log("a 2026-07-28 client calls legacy__confirm_twice, a legacy tool that asks two questions:")
  const before = proxy.hits.length
  const done = yield* client.callTool("legacy__confirm_twice", { id: "demo-1" })
  const text = McpContent.textOf(done)
  yield* Console.log(`  -> ${text}`)
  const served = callsSince(before)
  yield* Console.log(
    `  the call and its two retries landed on ${served.join(", ")} (${new Set(served).size} replicas); ` +
      `${byPid(text)} held the call, which ran ${yield* ranTimes("confirm_twice", "demo-1")} time behind\n`
  )

  yield* Console.log("again, and the replica holding the call is SIGKILLed after the first question:")
  let killedAt = 0
  onAsked = Effect.gen(function*() {
    onAsked = Effect.void
    const holder = replicas.find((replica) => replica.name === nameOf(proxy.hits.at(-1)))!
    yield* Console.log(`  SIGKILL replica ${holder.name}, which holds the call`)
    yield* holder.stop("SIGKILL")
    killedAt = yield* Clock.currentTimeMillis
  })
  const failed = yield* client.callTool("legacy__confirm_twice", { id: "demo-2" }).pipe(Effect.flip)
  const after = (yield* Clock.currentTimeMillis) - killedAt
  const code = McpError.isMcpError(failed) ? (failed.reason as { readonly code?: number }).code : undefined
  yield* Console.log(
    `  -> the retry, on ${nameOf(proxy.hits.at(-1))}, failed ${after} ms after the kill with ${code}: ${failed.message}`
  )
  yield* Console.log(
    `  the call behind ran ${yield* ranTimes("confirm_twice", "demo-2")} time: never again elsewhere\n`
  )

  const victim = replicas.find((replica) => replica.process().signalCode === "SIGKILL")!
  yield* Console.log(`restart ${victim.name}`)
  yield* victim.restart
  for (let i = 3; i < 6; i++) {
    const echoed = McpContent.textOf(yield* client.callTool("legacy__echo", { id: `demo-${i}` }))
    yield* Console.log(`  legacy__echo -> ${echoed}, on ${nameOf(proxy.hits.at(-1))}`)
  }
  yield* Console.log("\ndone: stopping the replicas (and their children), the upstream, the proxy and Redis")
}).pipe(Effect.scoped)

NodeMcpRuntime.runMain(main)
