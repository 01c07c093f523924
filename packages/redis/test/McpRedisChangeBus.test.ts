import { McpChangeBus } from "@effect-mcp/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Queue, Schedule, Stream } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisChangeBus from "../src/McpRedisChangeBus.ts"
import * as RedisServer from "./utils/redisServer.ts"

const connect = (url: string) =>
  Effect.map(
    Layer.build(McpRedis.layer({ url, connectTimeout: "2 seconds" })),
    (context) => Context.get(context, Redis.Redis)
  )

/** A bus on a connection of its own (a replica), and the changes it hears, as they come. */
const replica = (url: string) =>
  Effect.gen(function*() {
    const redis = yield* connect(url)
    const context = yield* Layer.build(McpRedisChangeBus.layer({ prefix: "test:" })).pipe(
      Effect.provideService(Redis.Redis, redis)
    )
    const bus = Context.get(context, McpChangeBus.McpChangeBus)
    const heard = yield* Queue.unbounded<McpChangeBus.Change>()
    yield* bus.changes.pipe(Stream.runForEach((change) => Queue.offer(heard, change)), Effect.forkScoped)
    return { bus, heard, redis }
  })

describe.skipIf(!RedisServer.available)("McpRedisChangeBus", () => {
  it.live("tells the other replicas, not itself", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      // the consumers subscribe to the buses' PubSubs when their fibers first run
      yield* Effect.sleep("50 millis")
      yield* a.bus.publish({ _tag: "ListChanged", kind: "tools" })
      yield* b.bus.publish({ _tag: "ResourceUpdated", uri: "file:///b.txt" })
      // each hears the other's first: had it heard its own, that would have come first
      expect(yield* Queue.take(b.heard).pipe(Effect.timeout("5 seconds"))).toEqual({
        _tag: "ListChanged",
        kind: "tools"
      })
      expect(yield* Queue.take(a.heard).pipe(Effect.timeout("5 seconds"))).toEqual({
        _tag: "ResourceUpdated",
        uri: "file:///b.txt"
      })
      yield* Effect.sleep("200 millis")
      expect(yield* Queue.size(a.heard)).toBe(0)
      expect(yield* Queue.size(b.heard)).toBe(0)
    }).pipe(Effect.scoped))

  it.live("ignores anything else on the channel", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      yield* Effect.sleep("50 millis")
      const garbage = [
        "not json",
        "null",
        "[]",
        JSON.stringify({ origin: "x" }),
        JSON.stringify({ origin: "x", change: { _tag: "ListChanged", kind: "everything" } }),
        JSON.stringify({ origin: "x", change: { _tag: "ResourceUpdated", uri: 42 } }),
        JSON.stringify({ origin: 1, change: { _tag: "ListChanged", kind: "tools" } }),
        JSON.stringify({ change: { _tag: "ListChanged", kind: "tools" } })
      ]
      for (const message of garbage) yield* b.redis.send("PUBLISH", "test:changes", message)
      // a well-formed change from a replica that is neither: heard by both, after the garbage
      yield* b.redis.send(
        "PUBLISH",
        "test:changes",
        JSON.stringify({ origin: "elsewhere", change: { _tag: "ListChanged", kind: "prompts", extra: true } })
      )
      yield* a.bus.publish({ _tag: "ResourceUpdated", uri: "file:///a.txt" })
      expect(yield* Queue.take(a.heard).pipe(Effect.timeout("5 seconds"))).toEqual({
        _tag: "ListChanged",
        kind: "prompts"
      })
      expect(yield* Queue.take(b.heard).pipe(Effect.timeout("5 seconds"))).toEqual({
        _tag: "ListChanged",
        kind: "prompts"
      })
      expect(yield* Queue.take(b.heard).pipe(Effect.timeout("5 seconds"))).toEqual({
        _tag: "ResourceUpdated",
        uri: "file:///a.txt"
      })
      yield* Effect.sleep("200 millis")
      expect(yield* Queue.size(a.heard)).toBe(0)
      expect(yield* Queue.size(b.heard)).toBe(0)
    }).pipe(Effect.scoped))

  it.live("holds one subscription, closed with the layer", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const observer = yield* connect(server.url)
      const clients = observer.send<string>("CLIENT", "LIST").pipe(
        Effect.map((list) => list.trim().split("\n").length)
      )
      const before = yield* clients
      const fiber = yield* Effect.gen(function*() {
        const a = yield* replica(server.url)
        // consumers share the subscription
        yield* a.bus.changes.pipe(Stream.runDrain, Effect.forkScoped)
        yield* a.bus.changes.pipe(Stream.runDrain, Effect.forkScoped)
        yield* Effect.sleep("50 millis")
        // its connection and its subscription
        expect(yield* clients).toBe(before + 2)
      }).pipe(Effect.scoped, Effect.forkChild)
      yield* Fiber.join(fiber)
      yield* clients.pipe(
        Effect.flatMap((count) => count === before ? Effect.void : Effect.fail(count)),
        Effect.retry({ times: 50, schedule: Schedule.spaced("20 millis") })
      )
    }).pipe(Effect.scoped))
})
