/**
 * The Redis task store (`McpRedisTaskStore`) against a real redis-server: what
 * every store does (core's `test/utils/taskStoreContract.ts`), expiry on
 * `Clock` (TestClock here) with Redis collecting later, `changes`, capacity
 * and list on Redis, shared by stores on two connections (as two replicas): an id
 * in use refused, concurrent updates never losing a write, `changes` seeing
 * the other's writes, and a write whose message was lost caught up.
 */
import * as JsonRpc from "@effect-mcp/core/JsonRpc"
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpTaskStore from "@effect-mcp/core/McpTaskStore"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Effect, Layer, Option, Queue, Stream } from "effect"
import * as Redis from "effect/persistence/Redis"
import { TestClock } from "effect/testing"
import { ALICE, BOB, codeOf, key, record } from "../../core/test/utils/taskRecords.ts"
import { taskStoreContract } from "../../core/test/utils/taskStoreContract.ts"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisTaskStore from "../src/McpRedisTaskStore.ts"
import * as RedisServer from "./utils/redisServer.ts"

// on the live clock: the connection pool's own timers are not the test's
const connect = (url: string) =>
  Layer.build(McpRedis.layer({ url, connectTimeout: "2 seconds" })).pipe(
    Effect.map((context) => Context.get(context, Redis.Redis)),
    TestClock.withLive
  )

/** A store on a connection of its own to `url`. */
const storeAt = (url: string, options?: McpRedisTaskStore.Options) =>
  Effect.gen(function*() {
    const redis = yield* connect(url)
    const store = yield* McpRedisTaskStore.make(options).pipe(Effect.provideService(Redis.Redis, redis))
    return { redis, store }
  })

/** A fresh Redis and a store on it. */
const setup = (options?: McpRedisTaskStore.Options) =>
  Effect.gen(function*() {
    const server = yield* RedisServer.start
    const { redis, store } = yield* storeAt(server.url, options)
    return { server, redis, store }
  })

/** The versions a `changes` stream emits, one `take` each; `ended` once it ended. */
const watching = (stream: Stream.Stream<McpTaskStore.TaskRecord, McpError.McpError>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<McpTaskStore.TaskRecord, Cause.Done>()
    yield* stream.pipe(
      Stream.runForEach((r) => Queue.offer(queue, r)),
      Effect.orDie,
      Effect.ensuring(Queue.end(queue)),
      Effect.forkScoped
    )
    // real I/O: waited for on the live clock
    const take = Queue.take(queue).pipe(Effect.timeout("5 seconds"), Effect.orDie, TestClock.withLive)
    const ended = Queue.take(queue).pipe(
      Effect.flip,
      Effect.timeout("5 seconds"),
      Effect.orDie,
      TestClock.withLive,
      Effect.map(Cause.isDone)
    )
    return { take, ended }
  })

describe.skipIf(!RedisServer.available)("McpRedisTaskStore", () => {
  taskStoreContract((capacity) =>
    Effect.map(setup(capacity === undefined ? undefined : { capacity }), ({ store }) => store)
  )

  it.effect("a task expires ttlMs after its creation on Clock; Redis collects it a minute later", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup()
      yield* TestClock.setTime(1_000)
      yield* store.create(record("short", { createdAt: 1_000, lastUpdatedAt: 1_000, ttlMs: 5_000 }))
      yield* store.create(record("forever", { createdAt: 1_000, lastUpdatedAt: 1_000, ttlMs: null }))
      const pttl = Number(yield* redis.send("PTTL", "mcp:task:short"))
      assert.isTrue(pttl > 60_000 && pttl <= 65_000, String(pttl))
      assert.strictEqual(Number(yield* redis.send("PTTL", "mcp:task:forever")), -1)
      yield* TestClock.adjust(4_999)
      assert.isTrue(Option.isSome(yield* store.get(key("short"))))
      yield* TestClock.adjust(1)
      assert.isTrue(Option.isNone(yield* store.get(key("short"))))
      assert.isTrue(Option.isNone(yield* store.update(key("short"), (current) => current)))
      assert.deepStrictEqual((yield* store.list(ALICE, undefined, 10)).records.map((r) => r.taskId), ["forever"])
      // found expired, it is removed from Redis
      assert.strictEqual(Number(yield* redis.send("EXISTS", "mcp:task:short")), 0)
      yield* TestClock.adjust("1000 days")
      assert.isTrue(Option.isSome(yield* store.get(key("forever"))))
    }).pipe(Effect.scoped))

  it.effect("changes: the current version first, then each later one (written anywhere); ends on removal", () =>
    Effect.gen(function*() {
      const { server, store } = yield* setup()
      const other = (yield* storeAt(server.url)).store
      yield* store.create(record("t1"))
      yield* store.update(key("t1"), (current) => ({ ...current, statusMessage: "before" }))
      const { ended, take } = yield* watching(store.changes(key("t1")))
      const first = yield* take
      assert.deepStrictEqual([first.status, first.statusMessage], ["working", "before"])
      yield* other.update(key("t1"), (current) => ({ ...current, status: "input_required" }))
      assert.strictEqual((yield* take).status, "input_required")
      yield* store.update(key("t1"), (current) => ({ ...current, status: "cancelled" }))
      const cancelled = yield* take
      assert.deepStrictEqual([cancelled.status, cancelled.statusMessage], ["cancelled", "before"])
      yield* other.remove(key("t1"))
      assert.isTrue(yield* ended)
      assert.deepStrictEqual(yield* Stream.runCollect(store.changes(key("t1"))), [])
    }).pipe(Effect.scoped))

  it.effect("changes ends when the task is found expired, by any process", () =>
    Effect.gen(function*() {
      const { server, store } = yield* setup()
      const other = (yield* storeAt(server.url)).store
      yield* store.create(record("t1", { ttlMs: 1_000 }))
      const { ended, take } = yield* watching(store.changes(key("t1")))
      assert.strictEqual((yield* take).taskId, "t1")
      yield* TestClock.adjust(1_000)
      assert.isTrue(Option.isNone(yield* other.get(key("t1"))))
      assert.isTrue(yield* ended)
    }).pipe(Effect.scoped))

  it.effect("a write whose message was lost (a pub/sub gap) reaches the watchers at the next resync", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup({ resyncInterval: "5 seconds" })
      yield* store.create(record("t1"))
      const { take } = yield* watching(store.changes(key("t1")))
      assert.strictEqual((yield* take).status, "working")
      // written behind the store's back: no message
      const cancelled = JSON.stringify(record("t1", { status: "cancelled" }))
      yield* redis.send("HSET", "mcp:task:t1", "r", cancelled, "v", "2")
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual((yield* take).status, "cancelled")
    }).pipe(Effect.scoped))

  it.effect("an id in use is refused, from any connection; an expired one can be used again", () =>
    Effect.gen(function*() {
      const { server, store } = yield* setup()
      const other = (yield* storeAt(server.url)).store
      yield* store.create(record("t1", { ttlMs: 1_000 }))
      const error = yield* Effect.flip(other.create(record("t1", { requestor: BOB })))
      assert.isTrue(McpError.isMcpError(error))
      assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.InternalError)
      assert.match(error.message, /exists already/)
      assert.isTrue(Option.isNone(yield* store.get(key("t1", BOB))))
      yield* TestClock.adjust(1_000)
      yield* other.create(record("t1", { requestor: BOB, createdAt: 1_000, lastUpdatedAt: 1_000 }))
      assert.isTrue(Option.isSome(yield* store.get(key("t1", BOB))))
      assert.isTrue(Option.isNone(yield* store.get(key("t1"))))
    }).pipe(Effect.scoped))

  it.effect("concurrent updates from two connections never lose a write", () =>
    Effect.gen(function*() {
      const { server, store } = yield* setup()
      const other = (yield* storeAt(server.url)).store
      yield* store.create(record("counter"))
      const increment = (s: McpTaskStore.Service) =>
        s.update(key("counter"), (current) => ({
          ...current,
          statusMessage: String(Number(current.statusMessage ?? "0") + 1)
        }))
      for (let round = 0; round < 3; round++) {
        yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => increment(i % 2 === 0 ? store : other)),
          { concurrency: "unbounded", discard: true }
        )
      }
      assert.strictEqual(Option.getOrUndefined(yield* other.get(key("counter")))?.statusMessage, "60")
    }).pipe(Effect.scoped))

  it.effect("an update that always finds the task changed since it read gives up with an McpError", () =>
    Effect.gen(function*() {
      const { redis } = yield* setup()
      // another writer gets in between each read and write of the update (a write script has 5 params)
      const meddling: Redis.Redis["Service"] = {
        ...redis,
        eval: ((script: Redis.Script<any>) => (...params: ReadonlyArray<unknown>) => {
          const run = redis.eval(script)(...params)
          return params.length === 5
            ? Effect.andThen(redis.send("HINCRBY", `mcp:task:${String(params[1])}`, "v", "1"), run)
            : run
        }) as Redis.Redis["Service"]["eval"]
      }
      const store = yield* McpRedisTaskStore.make().pipe(Effect.provideService(Redis.Redis, meddling))
      yield* store.create(record("t1"))
      let calls = 0
      const error = yield* Effect.flip(store.update(key("t1"), (current) => {
        calls++
        return { ...current, status: "completed" }
      }))
      assert.isTrue(McpError.isMcpError(error))
      assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.InternalError)
      assert.match(error.message, /Task t1 was changed by others 32 times/)
      assert.strictEqual(calls, 32)
      assert.strictEqual(Option.getOrUndefined(yield* store.get(key("t1")))?.status, "working")
    }).pipe(Effect.scoped))

  it.effect("capacity: full of running tasks, the next create fails with an McpError", () =>
    Effect.gen(function*() {
      const { server, store } = yield* setup({ capacity: 5 })
      // the capacity is the store's, whichever replica creates
      const other = (yield* storeAt(server.url, { capacity: 5 })).store
      for (let i = 0; i < 5; i++) yield* (i % 2 === 0 ? store : other).create(record(`t${i}`, { ttlMs: null }))
      const error = yield* Effect.flip(other.create(record("one-more")))
      assert.isTrue(McpError.isMcpError(error))
      assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.InternalError)
      assert.isTrue(Option.isNone(yield* store.get(key("one-more"))))
      assert.isTrue(Option.isSome(yield* store.get(key("t0"))))
      assert.isTrue(Option.isSome(yield* store.get(key("t4"))))
    }).pipe(Effect.scoped))

  it.effect("list leaves out expired tasks and those Redis collected, filling the page", () =>
    Effect.gen(function*() {
      const { redis, store } = yield* setup()
      yield* store.create(record("old", { ttlMs: null }))
      for (let i = 0; i < 4; i++) yield* store.create(record(`short${i}`, { ttlMs: 1_000 }))
      yield* store.create(record("gone", { ttlMs: null }))
      yield* store.create(record("new", { ttlMs: null }))
      // as if Redis had collected it
      yield* redis.send("DEL", "mcp:task:gone")
      yield* TestClock.adjust(1_000)
      const page = yield* store.list(ALICE, undefined, 2)
      assert.deepStrictEqual(page.records.map((r) => r.taskId), ["new", "old"])
      assert.isUndefined(page.nextCursor)
      assert.strictEqual(Number(yield* redis.send("ZCARD", "mcp:tasks:of:alice")), 2)
    }).pipe(Effect.scoped))
})
