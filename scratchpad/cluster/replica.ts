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
 * `mcp:`), `DIRECT` (`1`: forwarded requests go straight to their owner over
 * HTTP on 127.0.0.1, any port, pub/sub being the fallback; default off).
 * Prints `listening <port>` once serving.
 *
 * Its tools are in `tools.ts`.
 */
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { McpRedis, McpRedisCluster } from "@effect-mcp/redis"
import { Console, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import type * as Redis from "effect/persistence/Redis"
import * as Tools from "./tools.ts"

const replica = process.env.REPLICA ?? `replica-${process.pid}`
const heartbeat = Number(process.env.HEARTBEAT_MS ?? 1000)

const Stores = McpRedisCluster.layer({
  ...(process.env.PREFIX === undefined ? {} : { prefix: process.env.PREFIX }),
  sessions: {
    replicaId: replica,
    heartbeatInterval: heartbeat,
    heartbeatTtl: heartbeat * 3,
    ...(process.env.DIRECT === "1" ? { direct: { host: "127.0.0.1" } } : {})
  }
}).pipe(Layer.provideMerge(McpRedis.layerConfig()))

const Server = Layer.unwrap(
  Effect.map(McpRedisCluster.requestStateSecret(), (secret) => Tools.server(replica, { requestState: { secret } }))
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
