/**
 * One replica of a gateway on Redis, in short: the cluster's stores beside
 * `NodeMcpGateway`. The full replica, configurable from its environment, is
 * `scratchpad/gateway-cluster/replica.ts`.
 *
 *   REDIS_URL=redis://10.0.0.2:6379 node --conditions=development scratchpad/docs/gateway-replica.ts
 */
import { NodeMcpGateway, NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { McpRedis, McpRedisCluster } from "@effect-mcp/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// #region replica
const Stores = McpRedisCluster.layer({ sessions: { direct: { host: "10.0.3.7", port: 7070 } } }).pipe(
  Layer.provideMerge(McpRedis.layerConfig()) // REDIS_URL
)
const Gateway = Layer.unwrap(Effect.map(
  McpRedisCluster.requestStateSecret(),
  (secret) => NodeMcpGateway.layerConfig("mcp.json", { requestState: { secret } })
))
const Http = NodeMcpHttpServer.layer({ port: 8080 }).pipe(Layer.provide(Gateway), Layer.provide(Stores))
// #endregion replica

NodeMcpRuntime.runMain(Layer.launch(Http))
