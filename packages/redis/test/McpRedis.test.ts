import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schedule } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as McpRedis from "../src/McpRedis.ts"
import * as RedisServer from "./utils/redisServer.ts"

const connect = (url: string) =>
  Effect.map(
    Layer.build(McpRedis.layer({ url, connectTimeout: "2 seconds" })),
    (context) => Context.get(context, Redis.Redis)
  )

describe.skipIf(!RedisServer.available)("McpRedis", () => {
  it.live("connects, sends commands, and closes with its scope", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const redis = yield* connect(server.url)
      yield* redis.send("SET", "greeting", "hello")
      expect(yield* redis.send<string>("GET", "greeting")).toBe("hello")
      yield* Effect.provideService(McpRedis.ping, Redis.Redis, redis)
    }).pipe(Effect.scoped))

  it.live("fails clearly when Redis cannot be reached, without the password", () =>
    Effect.gen(function*() {
      const port = yield* RedisServer.freePort
      const error = yield* Effect.flip(Effect.scoped(connect(`redis://admin:s3cret@127.0.0.1:${port}`)))
      expect(error.message).toMatch(
        /^Redis connection to redis:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:\d+\/? failed: .*ECONNREFUSED/
      )
      expect(error.message).not.toContain("s3cret")
    }))

  it.live("fails commands at once while Redis is down, and reconnects when it is back", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const redis = yield* connect(server.url)
      yield* server.kill
      // the client notices the closed socket; from then on commands fail without waiting
      const failed = yield* redis.send("PING").pipe(
        Effect.flip,
        Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 100 }),
        Effect.timeout("5 seconds")
      )
      expect(String(failed.cause)).toMatch(/closed|offline|not connected|ECONNREFUSED/i)
      const ping = Effect.provideService(McpRedis.ping, Redis.Redis, redis)
      expect((yield* Effect.flip(ping)).message).toMatch(/^Redis PING failed: /)
      yield* server.restart
      // reconnection backs off 50 ms doubling to 2 s: within a few seconds it is back
      yield* ping.pipe(Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 200 }))
      expect(yield* redis.send<string>("PING")).toBe("PONG")
    }).pipe(Effect.scoped), 20_000)

  it("backs off from 50 ms to at most 2.1 s", () => {
    expect(McpRedis.backoffMillis(0)).toBeGreaterThanOrEqual(50)
    expect(McpRedis.backoffMillis(0)).toBeLessThan(150)
    expect(McpRedis.backoffMillis(100)).toBeGreaterThanOrEqual(2000)
    expect(McpRedis.backoffMillis(100)).toBeLessThan(2100)
  })
})
