/**
 * A stored task as each era puts it on the wire: 2025-11-25's `Task` (`ttl`,
 * `pollInterval`), 2026-07-28's flat `CreateTaskResult` and `DetailedTask`
 * (`ttlMs`, `pollIntervalMs`, and the result, error or input requests the
 * status carries).
 *
 * @internal
 */
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpTaskStore from "../../McpTaskStore.ts"

const iso = (millis: number): string => new Date(millis).toISOString()

const common = (record: McpTaskStore.TaskRecord) => ({
  taskId: record.taskId,
  status: record.status,
  ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
  createdAt: iso(record.createdAt),
  lastUpdatedAt: iso(record.lastUpdatedAt)
})

/** 2025-11-25: the `Task` of `tasks/get`, `tasks/list`, `tasks/cancel` and status notifications. @internal */
export const legacyTask = (record: McpTaskStore.TaskRecord): McpSchema.Task => ({
  ...common(record),
  ttl: record.ttlMs,
  pollInterval: record.pollIntervalMs
})

/** 2026-07-28: a task's state without what its status carries. @internal */
export const modernTask = (record: McpTaskStore.TaskRecord) => ({
  ...common(record),
  ttlMs: record.ttlMs,
  pollIntervalMs: record.pollIntervalMs
})

/** 2026-07-28: the answer of a `tools/call` that became a task. @internal */
export const modernCreated = (record: McpTaskStore.TaskRecord) => ({
  resultType: "task" as const,
  ...modernTask(record)
})

/** 2026-07-28: `tasks/get` and `notifications/tasks`: the state and what its status carries. @internal */
export const modernDetailed = (record: McpTaskStore.TaskRecord): Record<string, unknown> => {
  const task: Record<string, unknown> = modernTask(record)
  switch (record.status) {
    case "input_required":
      task.inputRequests = record.inputRequests
      break
    case "completed":
      if (record.result !== undefined) task.result = record.result
      break
    case "failed":
      if (record.error !== undefined) task.error = record.error
      break
  }
  return task
}
