/**
 * Resumability over real HTTP with the Redis event store: `NodeMcpHttpServer`
 * on 127.0.0.1 (ephemeral port), a real redis-server; node:http for the SSE
 * streams and the rest (`rawHttp.ts`: a connection each, so that cutting one is certain).
 * A POST answered as an SSE stream loses its connection mid-stream; a `GET`
 * with `Last-Event-ID` replays exactly the missed events (from Redis), then
 * goes on live.
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import * as NodeMcpHttpServer from "@effect-mcp/platform-node/NodeMcpHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Queue, Schedule, Schema } from "effect"
import * as Redis from "effect/persistence/Redis"
import { mcpHeaders, openSession, openSse, send, type SseEvent } from "../../platform-node/test/fixtures/rawHttp.ts"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisEventStore from "../src/McpRedisEventStore.ts"
import * as RedisServer from "./utils/redisServer.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

// reports progress i, then waits for the gate, n times
const makeSteps = (gate: Queue.Queue<void>) =>
  McpTool.make("steps", {
    input: Schema.Struct({ n: Schema.Int }),
    handler: ({ n }, context) =>
      Effect.gen(function*() {
        for (let i = 1; i <= n; i++) {
          yield* context.reportProgress({ progress: i, total: n })
          yield* Queue.take(gate)
        }
        return `did ${n} steps`
      })
  })

const serve = Effect.gen(function*() {
  const server = yield* RedisServer.start
  const redisContext = yield* Layer.build(McpRedis.layer({ url: server.url, connectTimeout: "2 seconds" }))
  const redis = Context.get(redisContext, Redis.Redis)
  const gate = yield* Queue.unbounded<void>()
  const mcp = yield* McpServer.make({ name: "redis-resume", version: "1.0.0" })
  yield* mcp.register(makeSteps(gate))
  const context = yield* Layer.build(
    NodeMcpHttpServer.layer({ responseMode: "sse" }).pipe(
      Layer.provide(Layer.succeed(McpServer.McpServer, mcp)),
      Layer.provide(McpRedisEventStore.layer()),
      Layer.provide(Layer.succeedContext(redisContext))
    )
  )
  const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  return { redis, gate, url }
})

const callSteps = (url: string, session: string, n: number) =>
  openSse(url, {
    method: "POST",
    headers: mcpHeaders({ session }),
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "steps", arguments: { n }, _meta: { progressToken: 1 } }
    }
  })

const resumeGet = (url: string, session: string, lastEventId: string) =>
  openSse(url, {
    method: "GET",
    headers: mcpHeaders({ session }, { accept: "text/event-stream", "last-event-id": lastEventId })
  })

const streamKeys = (redis: Redis.Redis["Service"]) =>
  Effect.map(redis.send<Array<string>>("KEYS", "mcp:events:*"), (keys) => [...keys].sort())

const contentOf = (event: SseEvent) => {
  const message = JSON.parse(event.data)
  return message.params?.progress ?? message.result.content[0].text
}

// -----------------------------------------------------------------------------
// tests
// -----------------------------------------------------------------------------

describe.skipIf(!RedisServer.available)("Streamable HTTP resumability on Redis", () => {
  it.live("a connection cut mid-stream: GET with Last-Event-ID replays exactly the missed events from Redis", () =>
    Effect.gen(function*() {
      const { gate, redis, url } = yield* serve
      const session = yield* openSession(url)
      const first = yield* callSteps(url, session, 5)
      assert.strictEqual(first.status, 200)
      const priming = yield* first.next
      assert.strictEqual(priming?.data, "")
      const one = yield* first.next
      assert.strictEqual(contentOf(one!), 1)
      // ids are the Redis store's: the stream named, then a Redis entry id
      assert.match(one!.id!, new RegExp(`^${session}/\\d+:\\d+-\\d+$`))

      // progress 2 and 3 are sent (so stored) while the client reads no more;
      // then the connection is cut: the client missed them
      yield* Queue.offerAll(gate, [undefined, undefined])
      const [key] = yield* streamKeys(redis)
      assert.isString(key)
      yield* redis.send<number>("XLEN", key!).pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (length) => length >= 4, times: 250 })
      )
      const stored = yield* redis.send<Array<[string, Array<string>]>>("XRANGE", key!, "-", "+")
      assert.strictEqual(stored.length, 4) // priming, 1, 2, 3
      yield* first.drop
      // the handler goes on while no client listens: progress 4
      yield* Queue.offer(gate, undefined)

      const second = yield* resumeGet(url, session, one!.id!)
      assert.strictEqual(second.status, 200)
      const seen: Array<SseEvent> = []
      for (let i = 0; i < 2; i++) seen.push((yield* second.next)!)
      // the replayed events carry the ids Redis gave them
      const eventId = (entryId: string) => `${key!.slice("mcp:events:".length)}:${entryId}`
      assert.deepStrictEqual(seen.map((event) => event.id), stored.slice(2).map(([entryId]) => eventId(entryId)))
      // then the stream goes on, on the new connection
      yield* Queue.offerAll(gate, [undefined, undefined])
      for (let i = 0; i < 20; i++) {
        const event = yield* second.next
        if (event === undefined) break
        seen.push(event)
        if (JSON.parse(event.data).result !== undefined) break
      }
      assert.deepStrictEqual(seen.map(contentOf), [2, 3, 4, 5, "did 5 steps"])
      const ids = seen.map((event) => event.id!)
      assert.strictEqual(new Set([one!.id!, ...ids]).size, ids.length + 1, "no event twice")
      // everything sent on the stream is in Redis, in the order sent
      const all = yield* redis.send<Array<[string, Array<string>]>>("XRANGE", key!, "-", "+")
      assert.deepStrictEqual(all.slice(1).map(([entryId]) => eventId(entryId)), [one!.id!, ...ids])
    }).pipe(Effect.scoped))

  it.live("a hostile or unknown Last-Event-ID gets 400 and touches no key", () =>
    Effect.gen(function*() {
      const { gate, redis, url } = yield* serve
      yield* redis.send("SET", "sentinel", "intact")
      const session = yield* openSession(url)
      const call = yield* callSteps(url, session, 1)
      yield* call.next
      const one = yield* call.next
      yield* Queue.offer(gate, undefined)
      const keysBefore = [...(yield* redis.send<Array<string>>("KEYS", "*"))].sort()
      const entry = one!.id!.split(":")[1]
      const hostile = [
        "sentinel:0-0",
        "../sentinel:0-0",
        `${session}/1:+`,
        `${session}/1:1-0`,
        "x".repeat(4000),
        `other/1:${entry}`
      ]
      for (const id of hostile) {
        const response = yield* send(url, {
          method: "GET",
          headers: mcpHeaders({ session }, { accept: "text/event-stream", "last-event-id": id })
        })
        assert.strictEqual(response.status, 400, id.slice(0, 40))
      }
      assert.deepStrictEqual([...(yield* redis.send<Array<string>>("KEYS", "*"))].sort(), keysBefore)
      assert.strictEqual(yield* redis.send<string>("GET", "sentinel"), "intact")
    }).pipe(Effect.scoped))

  it.live("ending the session removes its streams from Redis", () =>
    Effect.gen(function*() {
      const { gate, redis, url } = yield* serve
      const session = yield* openSession(url)
      const call = yield* callSteps(url, session, 1)
      yield* call.next
      yield* call.next
      yield* Queue.offer(gate, undefined)
      assert.strictEqual((yield* call.next)?.data.includes("did 1 steps"), true)
      assert.isAbove((yield* streamKeys(redis)).length, 0)
      const deleted = yield* send(url, { method: "DELETE", headers: mcpHeaders({ session }) })
      assert.strictEqual(deleted.status, 204)
      const left = yield* streamKeys(redis).pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (keys) => keys.length === 0, times: 100 })
      )
      assert.deepStrictEqual(left, [])
    }).pipe(Effect.scoped))
})
