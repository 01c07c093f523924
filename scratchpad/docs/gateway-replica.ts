/**
 * One replica of a gateway on Redis, in short: the cluster's stores beside
 * `NodeMcpGateway`. The full replica, configurable from its environment, is
 * `scratchpad/gateway-cluster/replica.ts`.
 *
 *   REDIS_URL=redis://10.0.0.2:6379 RELAY_HOST=10.0.3.7 node --conditions=development scratchpad/docs/gateway-replica.ts
 *
 * Its environment, as the command line's flags: `REDIS_URL` (`--redis`),
 * `RELAY_HOST` and `RELAY_PORT` (`--relay-host`, `--relay-port`: this
 * replica's own private address, where the others forward to it; default
 * port 7070), `GATEWAY_CONFIG` (`-c`, default `mcp.json`), `PORT` (`--port`,
 * default 8080). Run by `packages/redis/test/docs.examples.test.ts`: two of
 * it on one redis-server behind a round-robin proxy.
 */
import { NodeMcpGateway, NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { McpRedis, McpRedisCluster } from "@effect-mcp/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// #region replica
const env = process.env
// this replica's private address, where the others forward requests to it (--relay-host, --relay-port)
const relay = { host: env.RELAY_HOST ?? "10.0.3.7", port: Number(env.RELAY_PORT ?? 7070) }
const Stores = McpRedisCluster.layer({ sessions: { direct: relay } }).pipe(
  Layer.provideMerge(McpRedis.layerConfig()) // REDIS_URL
)
const Gateway = Layer.unwrap(Effect.map(
  McpRedisCluster.requestStateSecret(),
  (secret) => NodeMcpGateway.layerConfig(env.GATEWAY_CONFIG ?? "mcp.json", { requestState: { secret } })
))
const Http = NodeMcpHttpServer.layer({ port: Number(env.PORT ?? 8080) }).pipe(
  Layer.provide(Gateway),
  Layer.provide(Stores)
)
// #endregion replica

NodeMcpRuntime.runMain(Layer.launch(Http))
