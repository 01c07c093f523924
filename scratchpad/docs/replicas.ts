/**
 * Many replicas of one server on Redis: the shared stores (`McpRedisCluster`)
 * beside the HTTP server. `packages/redis/README.md` has the whole example.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 PORT=3000 node --conditions=development scratchpad/docs/replicas.ts
 *
 * Run by `packages/redis/test/docs.examples.test.ts`: two of it on one
 * redis-server behind a round-robin proxy.
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { McpRedis, McpRedisCluster } from "@effect-mcp/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const echo = McpTool.make("echo", { handler: () => Effect.succeed("echo") })

const Server = McpServer.layer({ name: "replica", version: "1.0.0" }, echo)

// #region shared
const Shared = McpRedisCluster.layer().pipe(Layer.provideMerge(McpRedis.layerConfig())) // REDIS_URL
const Http = NodeMcpHttpServer.layer({ port: Number(process.env.PORT ?? 3000) }).pipe(
  Layer.provide(Server),
  Layer.provide(Shared)
)
// #endregion shared

NodeMcpRuntime.runMain(Layer.launch(Http))
