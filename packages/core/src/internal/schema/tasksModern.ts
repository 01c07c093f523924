/**
 * Tasks under 2026-07-28: the extension {@link TASKS_EXTENSION_ID}
 * (SEP-2663). The server decides to answer a `tools/call` with a task
 * (`resultType: "task"`); `tasks/get` carries the result, the error or the
 * input requests; `tasks/update` answers input; status changes come as
 * `notifications/tasks` on `subscriptions/listen`.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { JsonObject, Meta, NotificationParams, RequestMeta } from "./base.ts"
import { InputRequests } from "./stateless.ts"
import { CancelTask, GetTask, type TASKS_EXTENSION_ID, TaskStatus } from "./tasks.ts"

// -----------------------------------------------------------------------------
// Models, 2026-07-28 (tasks extension)
// -----------------------------------------------------------------------------

/**
 * A task's state under the tasks extension of 2026-07-28: as {@link Task},
 * with `ttlMs` (retention in milliseconds after creation, `null`: unlimited)
 * and `pollIntervalMs` (a suggestion) instead of `ttl` and `pollInterval`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ModernTask = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optionalKey(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttlMs: Schema.NullOr(Schema.Int),
  pollIntervalMs: Schema.optionalKey(Schema.Int)
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type ModernTask = typeof ModernTask.Type

/**
 * The JSON-RPC error a `failed` task ended with.
 *
 * @category schemas
 * @since 0.2.0
 */
export const TaskError = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type TaskError = typeof TaskError.Type

/**
 * A task with what its status carries (2026-07-28, `tasks/get` and
 * `notifications/tasks`): `inputRequests` (every outstanding server→client
 * request) when `input_required`, `result` (what the request would have
 * answered) when `completed`, `error` when `failed`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const DetailedTask = Schema.Struct({
  ...ModernTask.fields,
  inputRequests: Schema.optionalKey(InputRequests),
  result: Schema.optionalKey(JsonObject),
  error: Schema.optionalKey(TaskError)
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type DetailedTask = typeof DetailedTask.Type

/**
 * The answer of a `tools/call` the server runs as a task (2026-07-28): the
 * task itself, flat, with `resultType: "task"`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ModernCreateTaskResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  resultType: Schema.Literal("task"),
  ...ModernTask.fields
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type ModernCreateTaskResult = typeof ModernCreateTaskResult.Type

/**
 * The result of `tasks/get` under 2026-07-28: the detailed task.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ModernGetTaskResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  resultType: Schema.optionalKey(Schema.Literal("complete")),
  ...DetailedTask.fields
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type ModernGetTaskResult = typeof ModernGetTaskResult.Type

/**
 * The empty acknowledgement of `tasks/update` and `tasks/cancel` under
 * 2026-07-28.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ModernAckResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  resultType: Schema.optionalKey(Schema.Literal("complete"))
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type ModernAckResult = typeof ModernAckResult.Type

/**
 * Params of `tasks/update`: answers to some of the task's `inputRequests`,
 * by key.
 *
 * @category schemas
 * @since 0.2.0
 */
export const UpdateTaskParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  taskId: Schema.String,
  inputResponses: Schema.Record(Schema.String, Schema.Unknown)
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type UpdateTaskParams = typeof UpdateTaskParams.Type

/**
 * Params of `notifications/tasks`: the detailed task.
 *
 * @category schemas
 * @since 0.2.0
 */
export const TasksNotificationParams = Schema.Struct({ ...NotificationParams.fields, ...DetailedTask.fields })

/**
 * @category schemas
 * @since 0.2.0
 */
export type TasksNotificationParams = typeof TasksNotificationParams.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `tasks/update` (2026-07-28): the client answers some of a task's
 * `inputRequests`; the server acknowledges at once.
 *
 * @category methods
 * @since 0.2.0
 */
export const UpdateTask = McpMethod.request({
  name: "tasks/update",
  params: UpdateTaskParams,
  result: ModernAckResult,
  from: "client"
})

/**
 * `tasks/get` as a 2026-07-28 client sees it: the answer is a
 * {@link ModernGetTaskResult}.
 *
 * @category methods
 * @since 0.2.0
 */
export const GetTaskModern = McpMethod.withResult(GetTask, ModernGetTaskResult)

/**
 * `tasks/cancel` as a 2026-07-28 client sees it: the answer is an empty
 * acknowledgement.
 *
 * @category methods
 * @since 0.2.0
 */
export const CancelTaskModern = McpMethod.withResult(CancelTask, ModernAckResult)

/**
 * `notifications/tasks` (2026-07-28): a task's new state, sent only on a
 * `subscriptions/listen` stream that asked for its id.
 *
 * @category methods
 * @since 0.2.0
 */
export const TasksNotification = McpMethod.notification({
  name: "notifications/tasks",
  params: TasksNotificationParams,
  from: "server"
})
