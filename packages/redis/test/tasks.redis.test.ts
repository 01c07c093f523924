/**
 * Two servers (as two replicas), each with its own Redis connection and a
 * Redis task store on it: a task started on one is read, answered and
 * cancelled through the other; the cancel reaches the handler's fiber on the
 * server running it, through Redis pub/sub. A task whose replica is gone is
 * failed by the other.
 */
import type * as McpError from "@effect-mcp/core/McpError"
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import * as McpTest from "@effect-mcp/core/McpTest"
import * as McpTool from "@effect-mcp/core/McpTool"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Scope, Stream } from "effect"
import * as McpRedis from "../src/McpRedis.ts"
import * as McpRedisSessions from "../src/McpRedisSessions.ts"
import * as McpRedisTaskStore from "../src/McpRedisTaskStore.ts"
import * as RedisServer from "./utils/redisServer.ts"

const Answer = Schema.Struct({ go: Schema.Boolean })

const twoServers = Effect.gen(function*() {
  const redis = yield* RedisServer.start
  const started = yield* Deferred.make<void>()
  const answered = yield* Deferred.make<unknown>()
  const interrupted = yield* Deferred.make<void>()
  const work = McpTool.make("work", {
    input: Schema.Struct({}),
    task: "required",
    handler: (_, context) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(started, undefined)
        if (context.meta?.["ask"] !== undefined) {
          // waits in the store for an answer
          const answer = yield* context.elicit({ message: "Go on?", schema: Answer })
          yield* Deferred.succeed(answered, answer)
        }
        return yield* Effect.never
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  })
  // each replica its own connection, its own store on it; changes reach the other through
  // pub/sub alone (the resync against lost messages is pushed out of the test's time)
  const replica = (name: string) =>
    McpServer.layer({ name, version: "1.0.0", tasks: { pollInterval: "20 millis" } }, work).pipe(
      Layer.provide(McpRedisTaskStore.layer({ resyncInterval: "1 hour" })),
      Layer.provide(McpRedis.layer({ url: redis.url }))
    )
  // a declines whatever it is asked; only b answers yes
  const a = yield* McpTest.client(replica("a"), {
    elicitation: { form: () => Effect.succeed({ action: "decline" as const }) }
  })
  const b = yield* McpTest.client(replica("b"), {
    elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { go: true } }) }
  })
  return { a, b, started, answered, interrupted }
})

describe.skipIf(!RedisServer.available)("tasks on two servers sharing a Redis task store", () => {
  it.live("a working task started on one is seen on the other, and a cancel there interrupts the handler here", () =>
    Effect.gen(function*() {
      const { a, b, interrupted, started } = yield* twoServers
      const task = yield* a.callToolTask("work", {})
      yield* Deferred.await(started)
      const elsewhere = b.task(task.taskId)
      assert.strictEqual((yield* elsewhere.poll).status, "working")
      yield* elsewhere.cancel
      yield* Deferred.await(interrupted).pipe(Effect.timeout("10 seconds"))
      assert.strictEqual((yield* task.poll).status, "cancelled")
    }).pipe(Effect.scoped))

  it.live("a task waiting for input is answered through the other server; a cancel there interrupts it here", () =>
    Effect.gen(function*() {
      const { a, answered, b, interrupted, started } = yield* twoServers
      const task = yield* a.callToolTask("work", {}, { meta: { ask: true } })
      yield* Deferred.await(started)
      const elsewhere = b.task(task.taskId)
      // b follows the task: it sees the question and answers it with its own handler
      const states = yield* elsewhere.status.pipe(
        Stream.map((state) => state.status),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      const answer = yield* Deferred.await(answered).pipe(Effect.timeout("10 seconds"))
      assert.deepStrictEqual(answer, { action: "accept", content: { go: true } })
      yield* elsewhere.cancel
      yield* Deferred.await(interrupted).pipe(Effect.timeout("10 seconds"))
      assert.strictEqual((yield* task.poll).status, "cancelled")
      const seen = yield* Fiber.join(states).pipe(Effect.timeout("10 seconds"))
      assert.include(seen, "input_required")
      assert.strictEqual(seen[seen.length - 1], "cancelled")
    }).pipe(Effect.scoped))

  it.live("a task whose replica is gone (its registry's heartbeat deleted) is failed by the other", () =>
    Effect.gen(function*() {
      const redis = yield* RedisServer.start
      const started = yield* Deferred.make<void>()
      const work = McpTool.make("work", {
        input: Schema.Struct({}),
        task: "required",
        handler: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
      })
      // each replica with its registry (its id and heartbeat), the task store shared; `a`'s
      // registry in a scope of its own: closing it is `a` vanishing (as when SIGKILLed), its fiber left running
      const scopeA = yield* Scope.make()
      const redisA = yield* Layer.build(McpRedis.layer({ url: redis.url })).pipe(Scope.provide(scopeA))
      const registryA = yield* McpRedisSessions.make({ replicaId: "a" }).pipe(
        Effect.provideContext(redisA),
        Scope.provide(scopeA)
      )
      const replica = (registry: Layer.Layer<McpSessionRegistry.McpSessionRegistry, McpError.McpError>, name: string) =>
        McpServer.layer({ name, version: "1.0.0" }, work).pipe(
          Layer.provide(McpRedisTaskStore.layer()),
          Layer.provide(registry),
          Layer.provide(McpRedis.layer({ url: redis.url }))
        )
      const a = yield* McpTest.client(replica(Layer.succeed(McpSessionRegistry.McpSessionRegistry, registryA), "a"))
      const b = yield* McpTest.client(
        replica(McpRedisSessions.layer({ replicaId: "b" }).pipe(Layer.provide(McpRedis.layer({ url: redis.url }))), "b")
      )
      const task = yield* a.callToolTask("work", {})
      yield* Deferred.await(started)
      assert.strictEqual((yield* b.task(task.taskId).poll).status, "working")
      // `a` gone: its heartbeat is deleted with its registry; the task's fiber never ends it
      yield* Scope.close(scopeA, Exit.void)
      const failed = yield* b.task(task.taskId).poll
      assert.strictEqual(failed.status, "failed")
      assert.include(failed.statusMessage, "The replica running this task (a) is gone")
    }).pipe(Effect.scoped))
})
