/**
 * The Redis event store on a real redis-server: order, priming events,
 * hostile `Last-Event-ID`s, the length and time bounds, `remove`, another
 * replica (connection) replaying and appending, and Redis failures.
 */
import type * as JsonRpc from "@effect-mcp/core/JsonRpc"
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpHttpServer from "@effect-mcp/core/McpHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisEventStore from "../src/McpRedisEventStore.ts"
import * as RedisServer from "./utils/redisServer.ts"

const connect = (url: string) =>
  Effect.map(
    Layer.build(McpRedis.layer({ url, connectTimeout: "2 seconds" })),
    (context) => Context.get(context, Redis.Redis)
  )

const storeOn = (redis: Redis.Redis["Service"], options?: McpRedisEventStore.Options) =>
  McpRedisEventStore.make(options).pipe(Effect.provideService(Redis.Redis, redis))

const setup = (options?: McpRedisEventStore.Options) =>
  Effect.gen(function*() {
    const server = yield* RedisServer.start
    const redis = yield* connect(server.url)
    const store = yield* storeOn(redis, options)
    return { server, redis, store }
  })

const progress = (n: number): JsonRpc.Message => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: 1, progress: n, note: "line\nbreak é" }
})

const replay = (store: McpHttpServer.EventStoreShape, id: string) =>
  Effect.map(store.replayAfter(id), Option.getOrUndefined)

const progressOf = (events: ReadonlyArray<McpHttpServer.StoredEvent>) =>
  events.map((event) => (event.message as { params: { progress: number } }).params.progress)

// the entry-id part of an event id as a pair of numbers, to compare order
const entryOf = (id: string) => id.slice(id.lastIndexOf(":") + 1).split("-").map(BigInt) as [bigint, bigint]
const before = (a: string, b: string) => {
  const [x, y] = [entryOf(a), entryOf(b)]
  return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1])
}

describe.skipIf(!RedisServer.available)("McpRedisEventStore", () => {
  it.live("replays the events after an id in order, priming events left out", () =>
    Effect.gen(function*() {
      const { store } = yield* setup()
      const priming = yield* store.append("session-1/1", undefined)
      const ids = [priming]
      for (let n = 1; n <= 3; n++) ids.push(yield* store.append("session-1/1", progress(n)))
      ids.push(yield* store.append("session-1/1", undefined))
      ids.push(yield* store.append("session-1/1", progress(4)))
      for (let i = 1; i < ids.length; i++) assert.isTrue(before(ids[i - 1]!, ids[i]!), `${ids[i - 1]} < ${ids[i]}`)

      const all = yield* replay(store, priming)
      assert.strictEqual(all?.streamId, "session-1/1")
      assert.deepStrictEqual(progressOf(all!.events), [1, 2, 3, 4])
      assert.deepStrictEqual(all!.events.map((event) => event.id), [ids[1], ids[2], ids[3], ids[5]])
      assert.deepStrictEqual(all!.events[0]!.message, progress(1))
      assert.deepStrictEqual(progressOf((yield* replay(store, ids[2]!))!.events), [3, 4])
      // the last id: a known stream with nothing after it
      assert.deepStrictEqual(yield* replay(store, ids[5]!), { streamId: "session-1/1", events: [] })
      // another stream is apart
      const other = yield* store.append("session-2/1", progress(9))
      assert.deepStrictEqual(yield* replay(store, other), { streamId: "session-2/1", events: [] })
      assert.deepStrictEqual(progressOf((yield* replay(store, priming))!.events), [1, 2, 3, 4])
    }).pipe(Effect.scoped))

  it.live("event ids name their stream and are safe SSE ids, whatever the stream id", () =>
    Effect.gen(function*() {
      const { store } = yield* setup()
      for (const streamId of ["a:b/1", "line\nbreak\r\0/2", "é ü 🙂/3", "%41/4", "x".repeat(300)]) {
        const first = yield* store.append(streamId, undefined)
        const second = yield* store.append(streamId, progress(1))
        for (const id of [first, second]) assert.match(id, /^[\x21-\x7e]+$/, JSON.stringify(id))
        const found = yield* replay(store, first)
        assert.strictEqual(found?.streamId, streamId)
        assert.deepStrictEqual(found?.events.map((event) => event.id), [second])
      }
    }).pipe(Effect.scoped))

  it.live("unknown, garbage and hostile ids are unknown, and touch no other key", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup()
      yield* redis.send("SET", "sentinel", "intact")
      yield* redis.send("HSET", "mcp:sessions:s", "owner", "replica-a")
      yield* redis.send("XADD", "outside", "1-1", "m", JSON.stringify(progress(7)))
      yield* redis.send("XADD", "outside", "1-2", "m", JSON.stringify(progress(8)))
      const real = yield* store.append("s/1", undefined)
      yield* store.append("s/1", progress(1))
      const entry = real.slice(real.lastIndexOf(":") + 1)
      const keysBefore = [...(yield* redis.send<Array<string>>("KEYS", "*"))].sort()
      const hostile = [
        "",
        ":",
        "garbage",
        "s/1",
        `s/1:`,
        `:${entry}`,
        `s/2:${entry}`, // unknown stream
        "s/1:1-0", // unknown entry of a known stream
        "s/1:99999999999999-0", // from the future
        "s/1:-",
        "s/1:+",
        "s/1:$",
        "s/1:*",
        "s/1:0",
        "s/1:1-1-1",
        "s/1:99999999999999999999-0", // beyond 64 bits
        `s/1:${entry}\r\nFLUSHALL`,
        `s/1:${entry} `,
        "sentinel:0-0",
        "outside:1-1", // a stream outside the prefix
        "../outside:1-1",
        "%6Futside:1-1",
        "mcp:sessions:s:0-0",
        "sessions:s:0-0",
        `%73/1:${entry}`, // another spelling of the real stream
        `s%2f1:${entry}`,
        `s%2F1:${entry}`,
        `s%ZZ:${entry}`,
        `s%:${entry}`,
        `%C3%28:${entry}`, // invalid UTF-8
        `s/1\0:${entry}`,
        `s/1\n:${entry}`,
        `{s/1}:${entry}`,
        "*:1-0",
        "x".repeat(100_000) + `:${entry}`
      ]
      for (const id of hostile) {
        const exit = yield* Effect.exit(store.replayAfter(id))
        assert.deepStrictEqual(
          exit._tag === "Success" ? exit.value : exit,
          Option.none(),
          JSON.stringify(id.slice(0, 60))
        )
      }
      // the real id still works, and nothing else changed
      assert.deepStrictEqual(progressOf((yield* replay(store, real))!.events), [1])
      assert.deepStrictEqual([...(yield* redis.send<Array<string>>("KEYS", "*"))].sort(), keysBefore)
      assert.strictEqual(yield* redis.send<string>("GET", "sentinel"), "intact")
      assert.strictEqual(yield* redis.send<string>("HGET", "mcp:sessions:s", "owner"), "replica-a")
      assert.strictEqual(yield* redis.send<number>("XLEN", "outside"), 2)
      // every key of the store is under its prefix
      const ours = (yield* redis.send<Array<string>>("KEYS", "*")).filter((key) => key.startsWith("mcp:events:"))
      assert.deepStrictEqual(ours, ["mcp:events:s/1"])
    }).pipe(Effect.scoped))

  it.live("keeps the last maxEventsPerStream events: an id trimmed away is unknown", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup({ maxEventsPerStream: 3 })
      const ids = [yield* store.append("s/1", undefined)]
      for (let n = 1; n <= 5; n++) ids.push(yield* store.append("s/1", progress(n)))
      assert.strictEqual(yield* redis.send<number>("XLEN", "mcp:events:s/1"), 3)
      // kept: 3, 4, 5
      for (const trimmed of ids.slice(0, 3)) assert.isUndefined(yield* replay(store, trimmed))
      assert.deepStrictEqual(progressOf((yield* replay(store, ids[3]!))!.events), [4, 5])
      assert.deepStrictEqual(progressOf((yield* replay(store, ids[4]!))!.events), [5])
    }).pipe(Effect.scoped))

  it.live("refreshes the stream's expiry on each append", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup({ ttl: "1 hour" })
      yield* store.append("s/1", undefined)
      const ttl = yield* redis.send<number>("PTTL", "mcp:events:s/1")
      assert.isAbove(ttl, 3_590_000)
      assert.isAtMost(ttl, 3_600_000)
      yield* redis.send("PEXPIRE", "mcp:events:s/1", "5000")
      yield* store.append("s/1", progress(1))
      assert.isAbove(yield* redis.send<number>("PTTL", "mcp:events:s/1"), 3_590_000)
    }).pipe(Effect.scoped))

  it.live("a stream expires ttl after its last append: its ids become unknown", () =>
    Effect.gen(function*() {
      // Redis keeps the time of a key's expiry itself, so no TestClock can move
      // it: a short ttl and a bounded poll on the real clock
      const { redis, store } = yield* setup({ ttl: "200 millis" })
      const first = yield* store.append("s/1", undefined)
      yield* store.append("s/1", progress(1))
      assert.deepStrictEqual(progressOf((yield* replay(store, first))!.events), [1])
      const gone = yield* replay(store, first).pipe(
        Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (found) => found === undefined, times: 100 })
      )
      assert.isUndefined(gone)
      assert.strictEqual(yield* redis.send<number>("EXISTS", "mcp:events:s/1"), 0)
      // a new stream under the same id does not bring the old ids back
      const again = yield* store.append("s/1", progress(2))
      assert.isUndefined(yield* replay(store, first))
      assert.deepStrictEqual(yield* replay(store, again), { streamId: "s/1", events: [] })
    }).pipe(Effect.scoped))

  it.live("remove forgets a stream and only it", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup({ prefix: "app:" })
      const one = yield* store.append("s/1", undefined)
      const two = yield* store.append("s/2", undefined)
      yield* store.append("s/2", progress(1))
      assert.deepStrictEqual((yield* redis.send<Array<string>>("KEYS", "*")).sort(), [
        "app:events:s/1",
        "app:events:s/2"
      ])
      yield* store.remove("s/1")
      yield* store.remove("never/1")
      assert.isUndefined(yield* replay(store, one))
      assert.strictEqual(yield* redis.send<number>("EXISTS", "app:events:s/1"), 0)
      assert.deepStrictEqual(progressOf((yield* replay(store, two))!.events), [1])
    }).pipe(Effect.scoped))

  it.live("another replica (its own connection) replays what one wrote, and appends in order after it", () =>
    Effect.gen(function*() {
      const { server, store: a } = yield* setup()
      const b = yield* storeOn(yield* connect(server.url))
      const priming = yield* a.append("s/1", undefined)
      const one = yield* a.append("s/1", progress(1))
      yield* a.append("s/1", progress(2))
      assert.deepStrictEqual(progressOf((yield* replay(b, one))!.events), [2])
      // b takes the stream over
      const three = yield* b.append("s/1", progress(3))
      const four = yield* b.append("s/1", progress(4))
      assert.isTrue(before(one, three) && before(three, four))
      const found = yield* replay(a, priming)
      assert.strictEqual(found?.streamId, "s/1")
      assert.deepStrictEqual(progressOf(found!.events), [1, 2, 3, 4])
      assert.deepStrictEqual(found!.events.slice(2).map((event) => event.id), [three, four])
    }).pipe(Effect.scoped))

  it.live("Redis failures are McpErrors; remove does not fail", () =>
    Effect.gen(function*() {
      const { server, store } = yield* setup()
      const first = yield* store.append("s/1", undefined)
      yield* server.kill
      const failed = yield* store.append("s/1", progress(1)).pipe(
        Effect.flip,
        Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 100 })
      )
      assert.isTrue(McpError.isMcpError(failed))
      assert.match(failed.message, /^Redis XADD failed: /)
      const replayFailed = yield* Effect.flip(store.replayAfter(first))
      assert.match(replayFailed.message, /^Redis XRANGE failed: /)
      yield* store.remove("s/1")
    }).pipe(Effect.scoped))
})
