/**
 * One replica of a clustered gateway: the servers of an `mcp.json` served as
 * one (`NodeMcpGateway.loadConfig`, then `NodeMcpGateway.layer`, its
 * `requestState` secret shared) over Streamable HTTP on 127.0.0.1, with
 * its shared state on Redis (`McpRedisCluster`: legacy sessions, resumable
 * streams, tasks, list-changed news, the `requestState` secret). Run several
 * on one Redis behind a load balancer (see `demo.ts`). Each replica has a
 * group of its own: its own stdio children, its own HTTP connections.
 *
 *   GATEWAY_CONFIG=mcp.json REDIS_URL=redis://127.0.0.1:6379 REPLICA=a \
 *     node --conditions=development scratchpad/gateway-cluster/replica.ts
 *
 * Environment:
 *
 * - `GATEWAY_CONFIG` (required): the `mcp.json` of the upstreams (its
 *   `mcpServers`, `"era": "legacy"` pinning a server's era; `${VAR}` read
 *   from this process's environment);
 * - `REDIS_URL` (required), `PREFIX` (Redis keys, default `mcp:`);
 * - `REPLICA` (its id in the cluster, default a random one), `HEARTBEAT_MS`
 *   (default 1000; the replica counts as gone 3 heartbeats after its last);
 * - `PORT` (default 0: any);
 * - `GATEWAY_SESSIONS`: the most sessions of its own the gateway opens with
 *   each server (default 8);
 * - `DIRECT` (`0` or `1`, default `1`): whether requests for another
 *   replica (a legacy session's, a held call's retry) go to it straight over
 *   HTTP on 127.0.0.1, any port (`McpRedisSessions`' direct hop, pub/sub
 *   being the fallback), or over Redis pub/sub only (`0`).
 *
 * Prints `listening <port>` once serving.
 */
import { NodeMcpGateway, NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { McpRedis, McpRedisCluster } from "@effect-mcp/redis"
import { Console, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import type * as Redis from "effect/persistence/Redis"

const config = process.env.GATEWAY_CONFIG
if (config === undefined || config === "") throw new Error("GATEWAY_CONFIG (the path of an mcp.json) is required")
const replica = process.env.REPLICA ?? `gateway-${process.pid}`
const heartbeat = Number(process.env.HEARTBEAT_MS ?? 1000)
const sessions = process.env.GATEWAY_SESSIONS === undefined ? undefined : Number(process.env.GATEWAY_SESSIONS)

const Stores = McpRedisCluster.layer({
  ...(process.env.PREFIX === undefined ? {} : { prefix: process.env.PREFIX }),
  sessions: {
    replicaId: replica,
    heartbeatInterval: heartbeat,
    heartbeatTtl: heartbeat * 3,
    ...(process.env.DIRECT === "0" ? {} : { direct: { host: "127.0.0.1", port: 0 } })
  }
}).pipe(Layer.provideMerge(McpRedis.layerConfig()))

// the servers of the file (with its filters), each with `sessions` of its own at most
const Gateway = Layer.unwrap(Effect.gen(function*() {
  const secret = yield* McpRedisCluster.requestStateSecret(
    process.env.PREFIX === undefined ? {} : { prefix: process.env.PREFIX }
  )
  const { servers, upstreams } = yield* NodeMcpGateway.loadConfig(config)
  return NodeMcpGateway.layer({
    name: "gateway",
    version: "1.0.0",
    requestState: { secret },
    servers,
    upstreams: sessions === undefined ? upstreams : Object.fromEntries(
      Object.keys(servers).map((name) => [name, { ...upstreams[name], sessions }])
    )
  })
}))

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
  }).pipe(Effect.provide(Http.pipe(Layer.provide(Gateway), Layer.provide(Stores))))
)
