/**
 * One replica of a clustered MCP server: Streamable HTTP on 127.0.0.1, with
 * every piece of shared state on Redis (`McpRedisCluster`): legacy sessions,
 * resumable streams, tasks, list-changed news and the `requestState` secret.
 * Run several on one Redis behind a load balancer (see `demo.ts`).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 REPLICA=a node --conditions=development scratchpad/cluster/replica.ts
 *
 * Environment: `REDIS_URL` (required), `REPLICA` (its name, default a random
 * one), `PORT` (default 0: any), `HEARTBEAT_MS` (default 1000; the replica
 * counts as gone 3 heartbeats after its last), `PREFIX` (Redis keys, default
 * `mcp:`). Prints `listening <port>` once serving.
 *
 * Tools: `whoami` (the replica's name), `add_tool` (registers a tool here, so
 * every replica's clients hear of a change), `ask` (asks the client a
 * question: an input-required round in 2026-07-28), `sleep` (a task that
 * sleeps `ms`; prints `interrupted sleep <ms> on <replica>` on stderr when cancelled).
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { McpRedis, McpRedisCluster } from "@effect-mcp/redis"
import { Console, Effect, Layer, Schema } from "effect"
import { HttpServer } from "effect/http"
import type * as Redis from "effect/persistence/Redis"

const replica = process.env.REPLICA ?? `replica-${process.pid}`
const heartbeat = Number(process.env.HEARTBEAT_MS ?? 1000)

const whoami = McpTool.make("whoami", {
  description: "The name of the replica that serves this call",
  input: Schema.Struct({}),
  handler: () => Effect.succeed(replica)
})

const addTool = McpTool.make("add_tool", {
  description: "Registers a tool on this replica; every replica's clients are told the list changed",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) =>
    Effect.flatMap(McpServer.McpServer, (server) =>
      server.register(McpTool.make(name, { input: Schema.Struct({}), handler: () => Effect.succeed(name) }))).pipe(
        Effect.as(`${name} registered on ${replica}`)
      )
})

const ask = McpTool.make("ask", {
  description: "Asks the client for a word, then says which replica heard it",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "A word?", schema: Schema.Struct({ word: Schema.String }) }),
      (answer) => `${replica} heard ${answer.action === "accept" ? answer.content.word : answer.action}`
    )
})

const sleep = McpTool.make("sleep", {
  description: "Sleeps as a task",
  input: Schema.Struct({ ms: Schema.Int }),
  task: "required",
  handler: ({ ms }) =>
    Effect.sleep(ms).pipe(
      Effect.as(`${replica} slept ${ms} ms`),
      Effect.onInterrupt(() => Console.error(`interrupted sleep ${ms} on ${replica}`))
    )
})

const Stores = McpRedisCluster.layer({
  ...(process.env.PREFIX === undefined ? {} : { prefix: process.env.PREFIX }),
  sessions: { replicaId: replica, heartbeatInterval: heartbeat, heartbeatTtl: heartbeat * 3 }
}).pipe(Layer.provideMerge(McpRedis.layerConfig()))

const Server = McpServer.register(whoami, addTool, ask, sleep).pipe(
  Layer.provideMerge(Layer.unwrap(Effect.map(McpRedisCluster.requestStateSecret(), (secret) =>
    McpServer.layer({
      name: "cluster-demo",
      version: "1.0.0",
      capabilities: { tools: { listChanged: true } },
      requestState: { secret }
    }))))
)

// ready while Redis answers (`/readyz`); alive while the process serves (`/healthz`)
const Http = Layer.unwrap(Effect.map(Effect.context<Redis.Redis>(), (redis) =>
  NodeMcpHttpServer.layer({
    port: Number(process.env.PORT ?? 0),
    host: "127.0.0.1",
    readiness: Effect.provideContext(McpRedis.ping, redis)
  })))

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    yield* Console.log(`listening ${"port" in address ? address.port : 0}`)
    return yield* Effect.never
  }).pipe(Effect.provide(Http.pipe(Layer.provide(Server), Layer.provide(Stores))))
)
