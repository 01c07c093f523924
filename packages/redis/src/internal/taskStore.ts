/**
 * The task store on Redis (`McpRedisTaskStore`): the layout and scripts are
 * in `taskStoreScripts.ts`, the watchers of `changes` in `taskStoreWatch.ts`.
 * Expiry is decided on this process's `Clock` whenever a task is looked at
 * (an expired one found is removed, which ends its watchers everywhere);
 * Redis itself deletes a record a minute after its expiry, as garbage
 * collection.
 *
 * @internal
 */
import * as JsonRpc from "@effect-mcp/core/JsonRpc"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpTaskStore from "@effect-mcp/core/McpTaskStore"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Options } from "../McpRedisTaskStore.ts"
import * as Errors from "./errors.ts"
import * as Scripts from "./taskStoreScripts.ts"
import * as Watch from "./taskStoreWatch.ts"

// a slow reader skips to the newest versions (as in memory)
const CHANGES = { bufferSize: 16, strategy: "sliding" } as const
/** How long after its expiry Redis deletes a task's record. */
const GC_MARGIN_MILLIS = 60_000
/** Attempts of an `update` whose task others keep changing; enough for as many writers at once. */
const MAX_ATTEMPTS = 32
/** The most index reads for one page, when many tasks in it expired. */
const MAX_PAGE_READS = 50
const CURSOR = /^(0|[1-9][0-9]*)$/

const Json = Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))
const decodeJson = Schema.decodeUnknownOption(Json)

const expired = (record: McpTaskStore.TaskRecord, now: number) =>
  record.ttlMs !== null && now >= record.createdAt + record.ttlMs

const invalid = (taskId: string) =>
  McpError.protocol(JsonRpc.ErrorCode.InternalError, `Task ${taskId} in Redis is not a valid record`)

/** A stored task from its `s`, `v` and `r` fields, undefined if it has none. */
const decodeStored = (
  taskId: string,
  s: unknown,
  v: unknown,
  r: unknown
): Effect.Effect<Watch.Stored | undefined, McpError.McpError> => {
  if (s === null || s === undefined || r === null || r === undefined) return Effect.succeed(undefined)
  const json = decodeJson(String(r))
  const seq = Number(s)
  const version = Number(v)
  if (Option.isNone(json) || !Number.isSafeInteger(seq) || !Number.isSafeInteger(version)) {
    return Effect.fail(invalid(taskId))
  }
  const record = json.value as unknown as McpTaskStore.TaskRecord
  if (typeof record.requestor !== "string" || typeof record.createdAt !== "number") return Effect.fail(invalid(taskId))
  return Effect.succeed({ seq, version, record })
}

const writeOf = (record: McpTaskStore.TaskRecord, now: number): Scripts.Write => {
  const ttl = record.ttlMs
  return {
    json: JSON.stringify(record),
    expiresAt: ttl === null ? "" : String(record.createdAt + ttl),
    gcMillis: ttl === null ? "" : String(Math.max(0, record.createdAt + ttl - now) + GC_MARGIN_MILLIS),
    terminal: McpTaskStore.isTerminal(record.status)
  }
}

/** @internal */
export const make = (options?: Options): Effect.Effect<McpTaskStore.Service, never, Redis.Redis | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const prefix = options?.prefix ?? "mcp:"
    const capacity = Math.max(1, options?.capacity ?? 100_000)
    const resyncInterval = Duration.fromInputUnsafe(options?.resyncInterval ?? "5 seconds")
    const resyncMillis = Math.max(1, Duration.toMillis(resyncInterval))
    const taskKey = (taskId: string) => `${prefix}task:${taskId}`

    const read = (taskId: string) =>
      redis.send<ReadonlyArray<unknown>>("HMGET", taskKey(taskId), "s", "v", "r").pipe(
        Errors.mapRedis("task read"),
        Effect.flatMap((reply) => decodeStored(taskId, reply[0], reply[1], reply[2]))
      )

    /** Removes an expired task, unless it was replaced meanwhile. */
    const dropExpired = (stored: Watch.Stored) =>
      redis.eval(Scripts.dropIf)(prefix, stored.record.taskId, "s", String(stored.seq)).pipe(
        Effect.asVoid,
        Errors.mapRedis("task expiry")
      )

    /** The task unless it expired on `Clock` (then it is removed). */
    const unexpired = (stored: Watch.Stored) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => expired(stored.record, now) ? Effect.as(dropExpired(stored), undefined) : Effect.succeed(stored)
      )

    /** The task unless it is gone or expired, whoever's it is (for the watchers). */
    const look = (taskId: string): Effect.Effect<Watch.Stored | undefined, McpError.McpError> =>
      Effect.flatMap(read(taskId), (stored) => stored === undefined ? Effect.succeed(undefined) : unexpired(stored))

    /** The task unless it is gone, expired or another requestor's. */
    const found = (key: McpTaskStore.TaskKey) =>
      Effect.flatMap(read(key.taskId), (stored) =>
        stored === undefined || stored.record.requestor !== key.requestor
          ? Effect.succeed(undefined)
          : unexpired(stored))

    const watch = yield* Watch.make(redis, `${prefix}tasks:changes`, look, resyncMillis)

    const create = (record: McpTaskStore.TaskRecord) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const result = yield* redis.eval(Scripts.create)(
          prefix,
          record.taskId,
          record.requestor,
          writeOf(record, now),
          now,
          capacity
        ).pipe(Errors.mapRedis("task create"))
        if (Number(result) === -1) {
          return yield* McpError.protocol(JsonRpc.ErrorCode.InternalError, `Task ${record.taskId} exists already`)
        }
        if (Number(result) === -2) {
          return yield* McpError.protocol(
            JsonRpc.ErrorCode.InternalError,
            `Too many tasks: all ${capacity} are still running`
          )
        }
      })

    const get = (key: McpTaskStore.TaskKey) =>
      Effect.map(found(key), (stored) => Option.fromUndefinedOr(stored?.record))

    const update = (
      key: McpTaskStore.TaskKey,
      f: (record: McpTaskStore.TaskRecord) => McpTaskStore.TaskRecord | undefined
    ) =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          const stored = yield* found(key)
          if (stored === undefined) return Option.none<McpTaskStore.TaskRecord>()
          const next = f(stored.record)
          if (next === undefined || next === stored.record) return Option.some(stored.record)
          const now = yield* Clock.currentTimeMillis
          const write = writeOf(next, now)
          const written = yield* redis.eval(Scripts.update)(prefix, key.taskId, stored.seq, stored.version, write).pipe(
            Errors.mapRedis("task update")
          )
          if (Number(written) > 0) return Option.some(next)
        }
        return yield* McpError.protocol(
          JsonRpc.ErrorCode.InternalError,
          `Task ${key.taskId} was changed by others ${MAX_ATTEMPTS} times while this update was tried; not updated`
        )
      })

    const list = (requestor: string, cursor: string | undefined, limit: number) =>
      Effect.gen(function*() {
        if (cursor !== undefined && (!CURSOR.test(cursor) || !Number.isSafeInteger(Number(cursor)))) {
          return yield* McpError.protocol(JsonRpc.ErrorCode.InvalidParams, "Invalid cursor")
        }
        const size = Math.max(1, limit)
        const now = yield* Clock.currentTimeMillis
        // one more than a page, to know whether another follows
        const records: Array<{ readonly score: string; readonly record: McpTaskStore.TaskRecord }> = []
        let before = cursor === undefined ? "+inf" : `(${cursor}`
        let exhausted = false
        for (let reads = 0; reads < MAX_PAGE_READS && records.length <= size; reads++) {
          const want = size + 1 - records.length
          const reply = yield* redis.eval(Scripts.page)(prefix, requestor, before, want).pipe(
            Errors.mapRedis("task list")
          )
          const scanned = Number(reply[0])
          for (let i = 1; i + 4 < reply.length; i += 5) {
            const taskId = String(reply[i])
            const score = String(reply[i + 1])
            before = `(${score}`
            const stored = yield* decodeStored(taskId, reply[i + 2], reply[i + 3], reply[i + 4])
            if (stored === undefined || stored.record.requestor !== requestor) continue
            if (expired(stored.record, now)) yield* dropExpired(stored)
            else records.push({ score, record: stored.record })
          }
          // the index had no more (entries whose record was collected are gone from it: read again)
          if (scanned < want) {
            exhausted = true
            break
          }
        }
        const page = records.slice(0, size)
        const last = page.length > 0 ? page[page.length - 1]!.score : before.slice(1)
        // more follow, or there may (too many expired to read through at once)
        const more = records.length > size || (!exhausted && records.length <= size && before !== "+inf")
        return { records: page.map((entry) => entry.record), ...(more ? { nextCursor: last } : {}) }
      })

    const changes = (key: McpTaskStore.TaskKey) =>
      Stream.callback<McpTaskStore.TaskRecord, McpError.McpError>((queue) => watch.watch(key, queue), CHANGES)

    const remove = (key: McpTaskStore.TaskKey) =>
      redis.eval(Scripts.dropIf)(prefix, key.taskId, "q", key.requestor).pipe(
        Effect.asVoid,
        Errors.mapRedis("task remove")
      )

    return McpTaskStore.McpTaskStore.of({ create, get, update, list, changes, remove })
  })
