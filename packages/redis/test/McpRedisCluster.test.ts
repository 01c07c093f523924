import { McpChangeBus, McpHttpServer, McpSessionRegistry, McpTaskStore } from "@effect-mcp/core"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisCluster from "../src/McpRedisCluster.ts"
import * as RedisServer from "./utils/redisServer.ts"

describe.skipIf(!RedisServer.available)("McpRedisCluster", () => {
  it.live("provides the four stores on one connection", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const context = yield* Layer.build(
        McpRedisCluster.layer({ prefix: "app:" }).pipe(Layer.provide(McpRedis.layer({ url: server.url })))
      )
      const registry = Context.get(context, McpSessionRegistry.McpSessionRegistry)
      yield* registry.register({
        id: "s",
        owner: registry.replicaId,
        principal: undefined,
        initialize: {},
        protocolVersion: "2025-11-25"
      })
      const events = Context.get(context, McpHttpServer.EventStore)
      yield* events.append("s/0", { jsonrpc: "2.0", method: "ping" })
      expect(Context.get(context, McpTaskStore.McpTaskStore)).toBeDefined()
      expect(Context.get(context, McpChangeBus.McpChangeBus)).toBeDefined()
      // every key under the prefix
      const redis = yield* Layer.build(McpRedis.layer({ url: server.url }))
      const keys = yield* Context.get(redis, Redis.Redis).send<Array<string>>("KEYS", "*")
      expect(keys.length).toBeGreaterThan(0)
      expect(keys.filter((key) => !key.startsWith("app:"))).toEqual([])
    }).pipe(Effect.scoped))

  it.live("the requestState secret: the configured one, else one made once and shared by every replica", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const replica = Layer.build(McpRedis.layer({ url: server.url }))
      const first = yield* McpRedisCluster.requestStateSecret().pipe(Effect.provideContext(yield* replica))
      const second = yield* McpRedisCluster.requestStateSecret().pipe(Effect.provideContext(yield* replica))
      expect(first).toBe(second)
      expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const configured = yield* McpRedisCluster.requestStateSecret().pipe(
        Effect.provideContext(yield* replica),
        Effect.provide(
          ConfigProvider.layer(ConfigProvider.fromEnv({ env: { MCP_REQUEST_STATE_SECRET: "from-config" } }))
        )
      )
      expect(configured).toBe("from-config")
    }).pipe(Effect.scoped))
})
