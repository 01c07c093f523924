/**
 * What every task store does, as tests: registered by the in-memory store's
 * tests (`McpTaskStore.test.ts`) and the Redis store's (packages/redis), each
 * with a function making a fresh, empty store. Create, get, update, list and
 * remove; requestor isolation; a task expired but not looked at, and its id
 * used again; capacity (expired tasks go first, then the oldest finished
 * ones); list pages that tasks removed meanwhile do not shift.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import type * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../../src/JsonRpc.ts"
import type * as McpTaskStore from "../../src/McpTaskStore.ts"
import { ALICE, BOB, codeOf, key, record } from "./taskRecords.ts"

/** Makes a fresh, empty store, holding at most `capacity` tasks when given. */
export type MakeStore = (capacity?: number) => Effect.Effect<McpTaskStore.Service, unknown, Scope.Scope>

/** Registers the shared tests, in the current `describe`. */
export const taskStoreContract = (make: MakeStore): void => {
  it.effect("create, get, update, list and remove", () =>
    Effect.gen(function*() {
      const store = yield* make()
      assert.isTrue(Option.isNone(yield* store.get(key("t1"))))
      yield* store.create(record("t1"))
      assert.deepStrictEqual(Option.getOrUndefined(yield* store.get(key("t1"))), record("t1"))

      const updated = yield* store.update(
        key("t1"),
        (current) => ({ ...current, status: "completed", result: { ok: true } })
      )
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
    }).pipe(Effect.scoped))

  it.effect("another requestor's key finds nothing and can neither update nor remove the task", () =>
    Effect.gen(function*() {
      const store = yield* make()
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
    }).pipe(Effect.scoped))

  it.effect("changes of a task that expired but was not looked at yet: ends at once", () =>
    Effect.gen(function*() {
      const store = yield* make()
      yield* store.create(record("t1", { ttlMs: 1_000 }))
      yield* TestClock.adjust(1_000)
      assert.deepStrictEqual(yield* Stream.runCollect(store.changes(key("t1"))), [])
    }).pipe(Effect.scoped))

  it.effect("an expired task's id can be used again; the new task is the newest", () =>
    Effect.gen(function*() {
      const store = yield* make()
      yield* store.create(record("t1", { ttlMs: 1_000 }))
      yield* store.create(record("t2", { ttlMs: null }))
      yield* TestClock.adjust(1_000)
      yield* store.create(record("t1", { createdAt: 1_000, lastUpdatedAt: 1_000 }))
      assert.deepStrictEqual((yield* store.list(ALICE, undefined, 10)).records.map((r) => r.taskId), ["t1", "t2"])
      const first = yield* store.list(ALICE, undefined, 1)
      assert.deepStrictEqual(first.records.map((r) => r.taskId), ["t1"])
      assert.deepStrictEqual((yield* store.list(ALICE, first.nextCursor, 1)).records.map((r) => r.taskId), ["t2"])
    }).pipe(Effect.scoped))

  it.effect("at capacity the oldest finished task goes, then the next oldest; running ones stay", () =>
    Effect.gen(function*() {
      const store = yield* make(10)
      for (let i = 0; i < 10; i++) {
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
      // a task finished by an update counts as finished
      yield* store.update(key("t0"), (current) => ({ ...current, status: "failed" }))
      yield* store.create(record("new3", { ttlMs: null }))
      assert.isTrue(Option.isNone(yield* store.get(key("t0"))))
    }).pipe(Effect.scoped))

  it.effect("at capacity expired tasks go first, before finished ones", () =>
    Effect.gen(function*() {
      const store = yield* make(4)
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
    }).pipe(Effect.scoped))

  it.effect("list: the requestor's tasks newest first, in pages with cursors; an invalid cursor is -32602", () =>
    Effect.gen(function*() {
      const store = yield* make()
      for (let i = 0; i < 5; i++) {
        yield* store.create(record(`a${i}`, { createdAt: i, lastUpdatedAt: i }))
        yield* store.create(record(`b${i}`, { requestor: BOB, createdAt: i, lastUpdatedAt: i }))
      }
      const first = yield* store.list(ALICE, undefined, 2)
      assert.deepStrictEqual(first.records.map((r) => r.taskId), ["a4", "a3"])
      assert.isString(first.nextCursor)
      // a task removed meanwhile does not shift the pages
      yield* store.remove(key("a4"))
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
    }).pipe(Effect.scoped))
}
