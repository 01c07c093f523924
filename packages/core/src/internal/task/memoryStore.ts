/**
 * The in-memory task store (`McpTaskStore.layerMemory`): a map in creation
 * order, expiry checked on `Clock` whenever a task is looked at, and a
 * capacity kept by dropping expired, then the oldest finished tasks.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpTaskStore from "../../McpTaskStore.ts"
import { isTerminal } from "./status.ts"

// a slow reader skips to the newest versions
const CHANGES = { bufferSize: 16, strategy: "sliding" } as const

type Listener = (record: McpTaskStore.TaskRecord | undefined) => void

const expired = (record: McpTaskStore.TaskRecord, now: number) =>
  record.ttlMs !== null && now >= record.createdAt + record.ttlMs

/** @internal */
export const make = (options?: McpTaskStore.MemoryOptions): Effect.Effect<McpTaskStore.Service> =>
  Effect.sync(() => {
    const capacity = Math.max(1, options?.capacity ?? 10_000)
    // by task id; a Map iterates in insertion (creation) order
    const records = new Map<string, McpTaskStore.TaskRecord>()
    // each task's creation number: a list cursor names the last task of its
    // page by it, so tasks removed between pages shift nothing
    const created = new Map<string, number>()
    let creations = 0
    const listeners = new Map<string, Set<Listener>>()

    const drop = (taskId: string) => {
      records.delete(taskId)
      created.delete(taskId)
      const waiting = listeners.get(taskId)
      if (waiting === undefined) return
      listeners.delete(taskId)
      for (const listener of waiting) listener(undefined)
    }

    const found = (key: McpTaskStore.TaskKey, now: number): McpTaskStore.TaskRecord | undefined => {
      const record = records.get(key.taskId)
      if (record === undefined || record.requestor !== key.requestor) return undefined
      if (expired(record, now)) {
        drop(key.taskId)
        return undefined
      }
      return record
    }

    // makes room for one more: the expired first, then the oldest finished
    const makeRoom = (now: number) => {
      for (const record of [...records.values()]) {
        if (expired(record, now)) drop(record.taskId)
      }
      if (records.size < capacity) return
      for (const record of [...records.values()]) {
        if (records.size < capacity) return
        if (isTerminal(record.status)) drop(record.taskId)
      }
    }

    const service: McpTaskStore.Service = {
      create: (record) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const existing = records.get(record.taskId)
          if (existing !== undefined && !expired(existing, now)) {
            return Effect.fail(
              McpError.protocol(JsonRpc.ErrorCode.InternalError, `Task ${record.taskId} exists already`)
            )
          }
          // an expired task of that id goes first, so the new one is the newest
          if (existing !== undefined) drop(record.taskId)
          if (records.size >= capacity) makeRoom(now)
          if (records.size >= capacity) {
            return Effect.fail(McpError.protocol(
              JsonRpc.ErrorCode.InternalError,
              `Too many tasks: all ${capacity} are still running`
            ))
          }
          records.set(record.taskId, record)
          created.set(record.taskId, ++creations)
          return Effect.void
        }),
      get: (key) => Effect.map(Clock.currentTimeMillis, (now) => Option.fromUndefinedOr(found(key, now))),
      update: (key, f) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const record = found(key, now)
          if (record === undefined) return Option.none()
          const next = f(record)
          if (next === undefined || next === record) return Option.some(record)
          records.set(key.taskId, next)
          const waiting = listeners.get(key.taskId)
          if (waiting !== undefined) { for (const listener of [...waiting]) listener(next) }
          return Option.some(next)
        }),
      list: (requestor, cursor, limit) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          // the creation number of the previous page's last task
          const before = cursor === undefined ? Infinity : Number(cursor)
          if (cursor !== undefined && (!Number.isSafeInteger(before) || before < 0 || String(before) !== cursor)) {
            return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, "Invalid cursor"))
          }
          const mine: Array<McpTaskStore.TaskRecord> = []
          for (const record of records.values()) {
            if (record.requestor !== requestor || created.get(record.taskId)! >= before) continue
            if (found(record, now) !== undefined) mine.push(record)
          }
          mine.reverse()
          const page = mine.slice(0, Math.max(1, limit))
          return Effect.succeed({
            records: page,
            ...(mine.length > page.length ? { nextCursor: String(created.get(page[page.length - 1]!.taskId)) } : {})
          })
        }),
      changes: (key) =>
        Stream.callback<McpTaskStore.TaskRecord, McpError.McpError>((queue) =>
          Effect.acquireRelease(
            Effect.map(Clock.currentTimeMillis, (now) => {
              const listener: Listener = (record) => {
                if (record === undefined) Queue.endUnsafe(queue)
                else Queue.offerUnsafe(queue, record)
              }
              // an expired task is dropped here, not emitted (nothing would end the stream later)
              const current = found(key, now)
              if (current === undefined) {
                Queue.endUnsafe(queue)
                return listener
              }
              Queue.offerUnsafe(queue, current)
              let set = listeners.get(key.taskId)
              if (set === undefined) listeners.set(key.taskId, set = new Set())
              set.add(listener)
              return listener
            }),
            (listener) =>
              Effect.sync(() => {
                const set = listeners.get(key.taskId)
                set?.delete(listener)
                if (set?.size === 0) listeners.delete(key.taskId)
              })
          ), CHANGES),
      remove: (key) =>
        Effect.sync(() => {
          if (records.get(key.taskId)?.requestor === key.requestor) drop(key.taskId)
        })
    }
    return service
  })
