/**
 * A client's handle on a task: a long-running `tools/call` the server runs
 * on after answering, which the client follows, answers input for, waits
 * on, or cancels (`McpClient.callToolTask`, `McpClient.task`). The same
 * handle serves both eras: 2025-11-25's experimental tasks (the client asks
 * for a task) and 2026-07-28's tasks extension (the server decides).
 *
 * @since 0.2.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as Status from "./internal/task/status.ts"
import type * as McpClient from "./McpClient.ts"
import type * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"

/**
 * A task's state, as the server last reported it.
 *
 * @category models
 * @since 0.2.0
 */
export interface TaskState {
  readonly taskId: string
  readonly status: McpSchema.TaskStatus
  readonly statusMessage?: string | undefined
  /** ISO 8601. */
  readonly createdAt: string
  readonly lastUpdatedAt: string
  /** How long the server keeps the task after its creation, in milliseconds (`null`: no limit). */
  readonly ttlMs: number | null
  /** How often the server asks to be polled, in milliseconds. */
  readonly pollIntervalMs?: number | undefined
}

/**
 * A handle on a task.
 *
 * @category models
 * @since 0.2.0
 */
export interface Task {
  readonly taskId: string
  /** One `tasks/get`. */
  readonly poll: Effect.Effect<TaskState, McpError.McpError>
  /**
   * The task's states as they change, ending with a final one (`completed`,
   * `failed`, `cancelled`). Polls at the server's `pollInterval` (on
   * `Clock`); in 2026-07-28, input the task asks for is answered with the
   * client's own sampling, elicitation and roots handlers (`tasks/update`).
   */
  readonly status: Stream.Stream<TaskState, McpError.McpError>
  /**
   * Waits for the end: the tool's result once `completed`; its JSON-RPC
   * error once `failed`; a `ProtocolError` once `cancelled`. Answers input
   * as {@link Task.status} does.
   */
  readonly result: Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /** `tasks/cancel`. */
  readonly cancel: Effect.Effect<void, McpError.McpError>
}

/**
 * Options of `McpClient.callToolTask`.
 *
 * @category models
 * @since 0.2.0
 */
export interface CallOptions extends McpClient.RequestOptions {
  /** 2025-11-25: how long the server should keep the task (it may choose otherwise). */
  readonly ttl?: Duration.Input | undefined
}

/**
 * The state of a 2025-11-25 `Task` (as `tasks/get` and `tasks/list` give it).
 *
 * @category constructors
 * @since 0.2.0
 */
export const fromLegacyTask = (task: McpSchema.Task): TaskState => ({
  taskId: task.taskId,
  status: task.status,
  ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  createdAt: task.createdAt,
  lastUpdatedAt: task.lastUpdatedAt,
  ttlMs: task.ttl,
  ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval })
})

/**
 * Whether a status is final.
 *
 * @category predicates
 * @since 0.2.0
 */
export const isTerminal: (status: McpSchema.TaskStatus) => boolean = Status.isTerminal
