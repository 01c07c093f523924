/**
 * Tasks (experimental, new in 2025-11-25): durable handles for long-running
 * requests, polled with `tasks/get` and collected with `tasks/result`.
 *
 * Either side may receive task-augmented requests, so the `tasks/*` methods
 * are sent by "both" and their declarations carry no capability: which side
 * must declare `tasks.*` depends on the direction. Use
 * {@link taskRequestCapability} and {@link taskAugmentationCapability}.
 *
 * Under 2026-07-28 tasks are the extension {@link TASKS_EXTENSION_ID}; its
 * shapes are in `tasksModern.ts`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { Meta, NotificationParams, PaginatedRequestParams, PaginatedResult, RequestMeta } from "./base.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * The `_meta` key that associates a message with a task; its value is a
 * {@link RelatedTaskMetadata}.
 *
 * @category constants
 * @since 0.1.0
 */
export const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task" as const

/**
 * The `_meta` key of a `CreateTaskResult` that a host may hand to the model as
 * an immediate tool result while the task runs (provisional guidance).
 *
 * @category constants
 * @since 0.1.0
 */
export const MODEL_IMMEDIATE_RESPONSE_META_KEY = "io.modelcontextprotocol/model-immediate-response" as const

/**
 * The id of the tasks extension of 2026-07-28 (SEP-2663): a client declares
 * it per request in `capabilities.extensions`, a server in its discovered
 * capabilities.
 *
 * @category constants
 * @since 0.2.0
 */
export const TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks" as const

/**
 * The state of a task. `completed`, `failed` and `cancelled` are terminal.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TaskStatus = Schema.Literals(["working", "input_required", "completed", "failed", "cancelled"])

/**
 * @category schemas
 * @since 0.1.0
 */
export type TaskStatus = typeof TaskStatus.Type

/**
 * The `task` field of a task-augmented request's params: asks the receiver to
 * run it as a task, keeping it `ttl` milliseconds after creation.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TaskMetadata = Schema.Struct({ ttl: Schema.optionalKey(Schema.Int) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type TaskMetadata = typeof TaskMetadata.Type

/**
 * The value under {@link RELATED_TASK_META_KEY} in `_meta`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const RelatedTaskMetadata = Schema.Struct({ taskId: Schema.String })

/**
 * @category schemas
 * @since 0.1.0
 */
export type RelatedTaskMetadata = typeof RelatedTaskMetadata.Type

/**
 * A task's state. Timestamps are ISO 8601; `ttl` is the retention in
 * milliseconds (`null`: unlimited); `pollInterval` is a suggestion in
 * milliseconds.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Task = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optionalKey(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttl: Schema.NullOr(Schema.Int),
  pollInterval: Schema.optionalKey(Schema.Int)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Task = typeof Task.Type

/**
 * The immediate answer to a task-augmented request (`tools/call`,
 * `sampling/createMessage`, `elicitation/create` with a `task` param). The
 * real result comes later from `tasks/result`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CreateTaskResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  task: Task
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CreateTaskResult = typeof CreateTaskResult.Type

/**
 * Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TaskRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  taskId: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type TaskRequestParams = typeof TaskRequestParams.Type

/**
 * The result of `tasks/get`: the task itself.
 *
 * @category schemas
 * @since 0.1.0
 */
export const GetTaskResult = Schema.Struct({ ...Task.fields, _meta: Schema.optionalKey(Meta) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type GetTaskResult = typeof GetTaskResult.Type

/**
 * The result of `tasks/result`: the result of the original request (e.g. a
 * `CallToolResult`), so any object. Validate it against the original method's
 * result schema.
 *
 * @category schemas
 * @since 0.1.0
 */
export const GetTaskPayloadResult = Schema.StructWithRest(
  Schema.Struct({ _meta: Schema.optionalKey(Meta) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/**
 * @category schemas
 * @since 0.1.0
 */
export type GetTaskPayloadResult = typeof GetTaskPayloadResult.Type

/**
 * The result of `tasks/cancel`: the task, now `cancelled`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CancelTaskResult = GetTaskResult

/**
 * @category schemas
 * @since 0.1.0
 */
export type CancelTaskResult = typeof CancelTaskResult.Type

/**
 * The result of `tasks/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ListTasksResult = Schema.Struct({ ...PaginatedResult.fields, tasks: Schema.Array(Task) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type ListTasksResult = typeof ListTasksResult.Type

/**
 * Params of `notifications/tasks/status`: the full task.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TaskStatusNotificationParams = Schema.Struct({ ...NotificationParams.fields, ...Task.fields })

/**
 * @category schemas
 * @since 0.1.0
 */
export type TaskStatusNotificationParams = typeof TaskStatusNotificationParams.Type

// -----------------------------------------------------------------------------
// Capabilities
// -----------------------------------------------------------------------------

/**
 * The capability the receiver must declare before a request of this method
 * may carry a `task` param. Receivers that did not declare it process the
 * request normally and ignore `task`.
 *
 * @category capabilities
 * @since 0.1.0
 */
export const taskAugmentationCapability = {
  "tools/call": McpMethod.serverCapability("tasks", "requests", "tools", "call"),
  "sampling/createMessage": McpMethod.clientCapability("tasks", "requests", "sampling", "createMessage"),
  "elicitation/create": McpMethod.clientCapability("tasks", "requests", "elicitation", "create")
} as const

/**
 * The capability the receiver of a `tasks/*` request must have declared:
 * `tasks.list` for `tasks/list`, `tasks.cancel` for `tasks/cancel`, and
 * `tasks` for `tasks/get` and `tasks/result`.
 *
 * @category capabilities
 * @since 0.1.0
 */
export const taskRequestCapability = (
  method: "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel",
  receiver: "client" | "server"
): McpMethod.Capability => {
  const path = method === "tasks/list" ? ["tasks", "list"] : method === "tasks/cancel" ? ["tasks", "cancel"] : ["tasks"]
  return receiver === "server" ? McpMethod.serverCapability(...path) : McpMethod.clientCapability(...path)
}

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `tasks/get`: polls a task's state.
 *
 * @category methods
 * @since 0.1.0
 */
export const GetTask = McpMethod.request({
  name: "tasks/get",
  params: TaskRequestParams,
  result: GetTaskResult,
  from: "both"
})

/**
 * `tasks/result`: waits for a task to finish and returns the original
 * request's result.
 *
 * @category methods
 * @since 0.1.0
 */
export const GetTaskPayload = McpMethod.request({
  name: "tasks/result",
  params: TaskRequestParams,
  result: GetTaskPayloadResult,
  from: "both"
})

/**
 * `tasks/list`: lists the requester's tasks, paginated.
 *
 * @category methods
 * @since 0.1.0
 */
export const ListTasks = McpMethod.request({
  name: "tasks/list",
  params: PaginatedRequestParams,
  result: ListTasksResult,
  from: "both"
})

/**
 * `tasks/cancel`: cancels a task (use this, not `notifications/cancelled`,
 * for tasks).
 *
 * @category methods
 * @since 0.1.0
 */
export const CancelTask = McpMethod.request({
  name: "tasks/cancel",
  params: TaskRequestParams,
  result: CancelTaskResult,
  from: "both"
})

/**
 * `notifications/tasks/status`: the receiver of a task tells the requester
 * its new state (optional; requesters must keep polling).
 *
 * @category methods
 * @since 0.1.0
 */
export const TaskStatusNotification = McpMethod.notification({
  name: "notifications/tasks/status",
  params: TaskStatusNotificationParams,
  from: "both"
})
