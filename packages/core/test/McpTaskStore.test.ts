/**
 * The in-memory task store (`McpTaskStore.makeMemory`): create, get, update,
 * list, changes and remove; a task is never found with another requestor's
 * key; expiry `ttlMs` after creation on `Clock` (TestClock here); the
 * capacity (10,000 by default) kept by dropping expired, then the oldest
 * finished tasks, and refused when every task still runs; list pages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpError from "../src/McpError.ts"
import * as McpTaskStore from "../src/McpTaskStore.ts"
import { settle } from "./utils/peer.ts"
import { ALICE, BOB, codeOf, key, record } from "./utils/taskRecords.ts"


describe("McpTaskStore.makeMemory", () => {
  it.effect("create, get, update, list and remove", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      assert.isTrue(Option.isNone(yield* store.get(key("t1"))))
      yield* store.create(record("t1"))
      assert.deepStrictEqual(Option.getOrUndefined(yield* store.get(key("t1"))), record("t1"))

      const updated = yield* store.update(key("t1"), (current) => ({ ...current, status: "completed", result: { ok: true } }))
      assert.strictEqual(Option.getOrUndefined(updated)?.status, "completed")
      assert.deepStrictEqual(Option.getOrUndefined(yield* store.get(key("t1")))?.result, { ok: true })
      // `undefined` from f: no change, the current record
      const same = yield* store.update(key("t1"), () => undefined)
      assert.strictEqual(Option.getOrUndefined(same)?.status, "completed")
      // updating an unknown task finds nothing, and creates nothing
      assert.isTrue(Option.isNone(yield* store.update(key("nope"), (current) => current)))
      assert.isTrue(Option.isNone(yield* store.get(key("nope"))))

      const page = yield* store.list(ALICE, undefined, 10)
      assert.deepStrictEqual(page.records.map((r) => r.taskId), ["t1"])
      assert.isUndefined(page.nextCursor)

      yield* store.remove(key("t1"))
      assert.isTrue(Option.isNone(yield* store.get(key("t1"))))
      assert.deepStrictEqual((yield* store.list(ALICE, undefined, 10)).records, [])
    }))

  it.effect("another requestor's key finds nothing and can neither update nor remove the task", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      yield* store.create(record("t1"))
      assert.isTrue(Option.isNone(yield* store.get(key("t1", BOB))))
      let called = false
      const foreign = yield* store.update(key("t1", BOB), (current) => {
        called = true
        return { ...current, status: "cancelled" }
      })
      assert.isTrue(Option.isNone(foreign))
      assert.isFalse(called)
      yield* store.remove(key("t1", BOB))
      assert.strictEqual(Option.getOrUndefined(yield* store.get(key("t1")))?.status, "working")
      assert.deepStrictEqual((yield* store.list(BOB, undefined, 10)).records, [])
      // bob's changes stream ends at once, empty
      assert.deepStrictEqual(yield* Stream.runCollect(store.changes(key("t1", BOB))), [])
    }))

  it.effect("a task expires ttlMs after its creation, on Clock", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      yield* TestClock.setTime(1_000)
      yield* store.create(record("short", { createdAt: 1_000, lastUpdatedAt: 1_000, ttlMs: 5_000 }))
      yield* store.create(record("forever", { createdAt: 1_000, lastUpdatedAt: 1_000, ttlMs: null }))
      yield* TestClock.adjust(4_999)
      assert.isTrue(Option.isSome(yield* store.get(key("short"))))
      yield* TestClock.adjust(1)
      assert.isTrue(Option.isNone(yield* store.get(key("short"))))
      assert.isTrue(Option.isNone(yield* store.update(key("short"), (current) => current)))
      assert.deepStrictEqual((yield* store.list(ALICE, undefined, 10)).records.map((r) => r.taskId), ["forever"])
      yield* TestClock.adjust("1000 days")
      assert.isTrue(Option.isSome(yield* store.get(key("forever"))))
    }))

  it.effect("changes: the current version first, then each later one; ends on removal", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      yield* store.create(record("t1"))
      yield* store.update(key("t1"), (current) => ({ ...current, statusMessage: "before" }))
      const fiber = yield* Stream.runCollect(store.changes(key("t1"))).pipe(Effect.forkChild)
      yield* settle
      yield* store.update(key("t1"), (current) => ({ ...current, status: "input_required" }))
      yield* store.update(key("t1"), (current) => ({ ...current, status: "completed" }))
      yield* store.remove(key("t1"))
      const seen = yield* Fiber.join(fiber)
      assert.deepStrictEqual(
        seen.map((r) => [r.status, r.statusMessage]),
        [["working", "before"], ["input_required", "before"], ["completed", "before"]]
      )
      // an unknown task: ends at once
      assert.deepStrictEqual(yield* Stream.runCollect(store.changes(key("t1"))), [])
    }))

  it.effect("changes ends when the task is found expired", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      yield* store.create(record("t1", { ttlMs: 1_000 }))
      const fiber = yield* Stream.runCollect(store.changes(key("t1"))).pipe(Effect.forkChild)
      yield* settle
      yield* TestClock.adjust(1_000)
      // observed expired by any operation: the stream ends
      assert.isTrue(Option.isNone(yield* store.get(key("t1"))))
      const seen = yield* Fiber.join(fiber)
      assert.deepStrictEqual(seen.map((r) => r.taskId), ["t1"])
    }))

  it.effect("changes of a task that expired but was not looked at yet: ends at once", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      yield* store.create(record("t1", { ttlMs: 1_000 }))
      yield* TestClock.adjust(1_000)
      assert.deepStrictEqual(yield* Stream.runCollect(store.changes(key("t1"))), [])
    }))

  it.effect("capacity 10,000: full of running tasks, the next create fails with an McpError", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      for (let i = 0; i < 10_000; i++) yield* store.create(record(`t${i}`, { ttlMs: null }))
      const error = yield* Effect.flip(store.create(record("one-more")))
      assert.isTrue(McpError.isMcpError(error))
      assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.InternalError)
      assert.isTrue(Option.isNone(yield* store.get(key("one-more"))))
      // every running task is still there
      assert.isTrue(Option.isSome(yield* store.get(key("t0"))))
      assert.isTrue(Option.isSome(yield* store.get(key("t9999"))))
    }))

  it.effect("at capacity the oldest finished task goes, then the next oldest; running ones stay", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      for (let i = 0; i < 10_000; i++) {
        // t1 and t5 finished (t5 later than t1); everything else runs
        const status = i === 1 || i === 5 ? "completed" : "working"
        yield* store.create(record(`t${i}`, { ttlMs: null, status }))
      }
      yield* store.create(record("new1", { ttlMs: null }))
      assert.isTrue(Option.isNone(yield* store.get(key("t1"))))
      assert.isTrue(Option.isSome(yield* store.get(key("t5"))))
      assert.isTrue(Option.isSome(yield* store.get(key("t0"))))
      yield* store.create(record("new2", { ttlMs: null }))
      assert.isTrue(Option.isNone(yield* store.get(key("t5"))))
      assert.isTrue(Option.isSome(yield* store.get(key("new1"))))
      const error = yield* Effect.flip(store.create(record("new3", { ttlMs: null })))
      assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.InternalError)
    }))

  it.effect("at capacity expired tasks go first, before finished ones", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory({ capacity: 4 })
      yield* store.create(record("done", { ttlMs: null, status: "completed" }))
      yield* store.create(record("running", { ttlMs: null }))
      yield* store.create(record("short", { ttlMs: 1_000 }))
      yield* store.create(record("other", { requestor: BOB, ttlMs: 1_000 }))
      yield* TestClock.adjust(1_000)
      yield* store.create(record("a", { ttlMs: null }))
      // both expired ones made room (whoever's they were); the finished one stays
      assert.isTrue(Option.isSome(yield* store.get(key("done"))))
      yield* store.create(record("b", { ttlMs: null }))
      assert.isTrue(Option.isSome(yield* store.get(key("done"))))
      // now full of live tasks: the finished one goes
      yield* store.create(record("c", { ttlMs: null }))
      assert.isTrue(Option.isNone(yield* store.get(key("done"))))
      assert.deepStrictEqual(
        (yield* store.list(ALICE, undefined, 10)).records.map((r) => r.taskId),
        ["c", "b", "a", "running"]
      )
    }))

  it.effect("list: the requestor's tasks newest first, in pages with cursors; an invalid cursor is -32602", () =>
    Effect.gen(function*() {
      const store = yield* McpTaskStore.makeMemory()
      for (let i = 0; i < 5; i++) {
        yield* store.create(record(`a${i}`, { createdAt: i, lastUpdatedAt: i }))
        yield* store.create(record(`b${i}`, { requestor: BOB, createdAt: i, lastUpdatedAt: i }))
      }
      const first = yield* store.list(ALICE, undefined, 2)
      assert.deepStrictEqual(first.records.map((r) => r.taskId), ["a4", "a3"])
      assert.isString(first.nextCursor)
      const second = yield* store.list(ALICE, first.nextCursor, 2)
      assert.deepStrictEqual(second.records.map((r) => r.taskId), ["a2", "a1"])
      const third = yield* store.list(ALICE, second.nextCursor, 2)
      assert.deepStrictEqual(third.records.map((r) => r.taskId), ["a0"])
      assert.isUndefined(third.nextCursor)
      assert.deepStrictEqual(
        (yield* store.list(BOB, undefined, 10)).records.map((r) => r.taskId),
        ["b4", "b3", "b2", "b1", "b0"]
      )
      for (const cursor of ["garbage", "-1", "1.5", "01"]) {
        const error = yield* Effect.flip(store.list(ALICE, cursor, 2))
        assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.InvalidParams, cursor)
      }
    }))
})
