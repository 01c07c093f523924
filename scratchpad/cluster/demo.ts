/**
 * `npm run demo:cluster`: three replicas of one MCP server on Redis behind a
 * round-robin proxy (no sticky sessions), and a client driven through the
 * death of the replica that holds its session. Uses `REDIS_URL` when set,
 * else starts a redis-server of its own (Debian's `redis-server`) on a free
 * loopback port. Prints what happens; exits 0 with nothing left running.
 *
 *   npm run demo:cluster
 */
import { McpClient } from "@effect-mcp/core"
import { NodeJsonSchemaValidator, NodeMcpHttpClient, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Context, Effect, Layer } from "effect"
import * as Cluster from "../../packages/redis/test/utils/cluster.ts"

const text = (result: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }) =>
  result.content.map((block) => (block.type === "text" ? block.text ?? "" : "")).join("")

const main = Effect.gen(function*() {
  const cluster = yield* Cluster.start(3, {}, process.env.REDIS_URL || undefined)
  yield* Console.log(`redis-server on ${cluster.redis.url}`)
  yield* Console.log(`replicas ${cluster.replicas.map((replica) => `${replica.name} on :${replica.port}`).join(", ")}`)
  yield* Console.log(`round-robin proxy on :${cluster.proxy.port}, no sticky sessions\n`)

  const client = yield* Layer.build(
    McpClient.layer({ clientInfo: { name: "demo-cluster", version: "1.0.0" }, era: "legacy" }).pipe(
      Layer.provide([NodeMcpHttpClient.layer({ url: cluster.url }), NodeJsonSchemaValidator.layer])
    )
  ).pipe(Effect.map(Context.get(McpClient.McpClient)))
  const byPort = (port: number | undefined) => cluster.replicas.find((replica) => replica.port === port)?.name ?? "?"

  const whoami = Effect.gen(function*() {
    const answer = text(yield* client.callTool("whoami", {}))
    return `${answer} (the request landed on ${byPort(cluster.proxy.hits.at(-1))})`
  })

  yield* Console.log("a legacy session, through the proxy:")
  for (let i = 0; i < 3; i++) yield* Console.log(`  whoami -> ${yield* whoami}`)
  const owner = text(yield* client.callTool("whoami", {}))
  const victim = cluster.replicas.find((replica) => replica.name === owner)!

  yield* Console.log(`\nSIGKILL replica ${owner}, which holds the session`)
  yield* victim.stop("SIGKILL")
  // the others count it gone once its heartbeat lapses (3 x 200 ms here)
  yield* Effect.sleep("700 millis")
  yield* Console.log(`  whoami -> ${yield* whoami}: another replica took the session over`)
  yield* Console.log(`  whoami -> ${yield* whoami}`)

  yield* Console.log("\na 2026-07-28 client (no session): a task started on one replica, followed on the others")
  const modern = yield* Layer.build(
    McpClient.layer({ clientInfo: { name: "demo-cluster-modern", version: "1.0.0" }, era: "modern" }).pipe(
      Layer.provide([NodeMcpHttpClient.layer({ url: cluster.url }), NodeJsonSchemaValidator.layer])
    )
  ).pipe(Effect.map(Context.get(McpClient.McpClient)))
  const before = cluster.proxy.hits.length
  const task = yield* modern.callToolTask("sleep", { ms: 500 })
  const result = text(yield* task.result)
  yield* Console.log(`  ${result}; its requests landed on ${cluster.proxy.hits.slice(before).map(byPort).join(", ")}`)

  yield* Console.log(`\nrestart ${owner}`)
  yield* victim.restart
  yield* Console.log(`  whoami -> ${yield* whoami}`)
  yield* Console.log("\ndone: stopping the replicas, the proxy and Redis")
}).pipe(Effect.scoped)

NodeMcpRuntime.runMain(main)
