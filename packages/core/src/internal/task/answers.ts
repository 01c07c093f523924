/**
 * The answers to `tasks/*` requests about a task found by its key, shared by
 * a server's handlers (both eras) and a client's (the tasks its server asks
 * it to run, 2025-11-25).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import * as McpTaskStore from "../../McpTaskStore.ts"
import * as Tasks from "./tasks.ts"
import * as Wire from "./wire.ts"

/** `-32602` for an unknown, expired or foreign task. @internal */
export const notFound = McpError.protocol(JsonRpc.ErrorCode.InvalidParams, "Failed to retrieve task: Task not found")

/** The task (failed if its replica is gone), or {@link notFound}. @internal */
export const found = (tasks: Tasks.Tasks, key: McpTaskStore.TaskKey) =>
  Effect.flatMap(
    tasks.store.get(key),
    (record) => Option.isSome(record) ? Tasks.checkRunner(tasks, record.value) : Effect.fail(notFound)
  )

/**
 * `tasks/result` (2025-11-25): waits for the task to end (running
 * `meanwhile` until then), then answers what the request would have, tagged
 * with the task, or fails with its error.
 *
 * @internal
 */
export const result = (
  tasks: Tasks.Tasks,
  key: McpTaskStore.TaskKey,
  meanwhile: Effect.Effect<never> = Effect.never
): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
  Effect.gen(function*() {
    const current = yield* found(tasks, key)
    const end = tasks.store.changes(key).pipe(
      Stream.filter((record) => McpTaskStore.isTerminal(record.status)),
      Stream.runHead
    )
    // the replica running it may die meanwhile: the task is failed then, which ends the wait
    const ended = yield* Effect.raceFirst(end, Effect.raceFirst(meanwhile, Tasks.watchRunner(tasks, current)))
    if (Option.isNone(ended)) return yield* notFound
    const record = ended.value
    if (record.status === "completed" && record.result !== undefined) {
      const meta = record.result._meta as Record<string, unknown> | undefined
      return { ...record.result, _meta: { ...meta, [McpSchema.RELATED_TASK_META_KEY]: { taskId: record.taskId } } }
    }
    if (record.error !== undefined) return yield* McpError.fromErrorObject(record.error)
    return yield* McpError.protocol(JsonRpc.ErrorCode.InternalError, `Task ${record.taskId} was ${record.status}`)
  })

/** `tasks/cancel` (2025-11-25): the cancelled task; a finished one is refused. @internal */
export const cancelLegacy = (tasks: Tasks.Tasks, key: McpTaskStore.TaskKey) =>
  Effect.gen(function*() {
    const record = yield* found(tasks, key)
    if (McpTaskStore.isTerminal(record.status)) {
      return yield* McpError.protocol(
        JsonRpc.ErrorCode.InvalidParams,
        `Cannot cancel task ${key.taskId}: it is already ${record.status}`
      )
    }
    const cancelled = yield* Tasks.cancel(tasks, key)
    return Option.isSome(cancelled) ? Wire.legacyTask(cancelled.value) : yield* notFound
  })

/** `tasks/list` (2025-11-25): the requestor's tasks, newest first. @internal */
export const list = (tasks: Tasks.Tasks, requestor: string, cursor: string | undefined, pageSize: number) =>
  Effect.map(tasks.store.list(requestor, cursor, pageSize), (page) => ({
    tasks: page.records.map(Wire.legacyTask),
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
  }))
