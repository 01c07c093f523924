/**
 * The in-memory task store (`McpTaskStore.makeMemory`): what every store does
 * (`utils/taskStoreContract.ts`: create, get, update, list and remove,
 * requestor isolation, capacity, list pages), and here: expiry `ttlMs` after
 * creation on `Clock` (TestClock here), `changes`, and the default capacity
 * of 10,000 refused when every task still runs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpError from "../src/McpError.ts"
import * as McpTaskStore from "../src/McpTaskStore.ts"
import { settle } from "./utils/peer.ts"
import { ALICE, codeOf, key, record } from "./utils/taskRecords.ts"
import { taskStoreContract } from "./utils/taskStoreContract.ts"

describe("McpTaskStore.makeMemory", () => {
  taskStoreContract((capacity) => McpTaskStore.makeMemory(capacity === undefined ? undefined : { capacity }))

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
})
