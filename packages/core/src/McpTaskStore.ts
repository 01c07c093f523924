/**
 * Where a server keeps its tasks (long-running calls a client polls): their
 * status, result or error, and the input they wait for. The store holds data
 * only, each record JSON-serialisable and found by its {@link TaskKey} (the
 * requestor and the task id), so that another process sharing the store can
 * answer `tasks/get` for a task that runs elsewhere. The fibers running the
 * tasks stay with the server that started them.
 *
 * The default, {@link layerMemory}, keeps at most 10,000 tasks in this
 * process and forgets each `ttlMs` after its creation (on `Clock`).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import * as Memory from "./internal/task/memoryStore.ts"
import * as Status from "./internal/task/status.ts"
import type * as JsonRpc from "./JsonRpc.ts"
import type * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * How a task is found: by whom it was created for and its id. A task is never
 * found with another requestor's key.
 *
 * @category models
 * @since 0.2.0
 */
export interface TaskKey {
  /** The principal of the request that created it, or its session's id. */
  readonly requestor: string
  readonly taskId: string
}

/**
 * A request the task waits on the client to answer (an `elicitation/create`,
 * `sampling/createMessage` or `roots/list`).
 *
 * @category models
 * @since 0.2.0
 */
export interface InputRequest {
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Everything known of a task; plain JSON.
 *
 * @category models
 * @since 0.2.0
 */
export interface TaskRecord extends TaskKey {
  readonly status: McpSchema.TaskStatus
  readonly statusMessage?: string | undefined
  /** Epoch milliseconds (`Clock`). */
  readonly createdAt: number
  readonly lastUpdatedAt: number
  /** How long after its creation the task is kept; `null`: until removed. */
  readonly ttlMs: number | null
  /** How often a client should poll, in milliseconds. */
  readonly pollIntervalMs: number
  /** The request's answer, once `completed`. */
  readonly result?: Readonly<Record<string, unknown>> | undefined
  /** The request's JSON-RPC error, once `failed`. */
  readonly error?: JsonRpc.ErrorObject | undefined
  /** The input it waits for, by key (status `input_required` while any). */
  readonly inputRequests: Readonly<Record<string, InputRequest>>
  /** Answers given to it and not yet taken by the running task, by key. */
  readonly inputResponses: Readonly<Record<string, unknown>>
  /**
   * In a cluster (an `McpSessionRegistry` in context): the replica whose
   * fiber runs the task. When that replica is gone, the next replica asked
   * about the task fails it.
   */
  readonly runner?: string | undefined
}

/**
 * A page of a requestor's tasks.
 *
 * @category models
 * @since 0.2.0
 */
export interface Page {
  readonly records: ReadonlyArray<TaskRecord>
  readonly nextCursor?: string | undefined
}

/**
 * The store's operations. Each fails with an `McpError` when the store cannot
 * answer (full, unreachable).
 *
 * @category models
 * @since 0.2.0
 */
export interface Service {
  /** Stores a new task (an id in use is refused); when it succeeds a `get` finds it (from any process sharing the store). */
  readonly create: (record: TaskRecord) => Effect.Effect<void, McpError.McpError>
  /** The task, unless it does not exist, expired, or belongs to another requestor. */
  readonly get: (key: TaskKey) => Effect.Effect<Option.Option<TaskRecord>, McpError.McpError>
  /**
   * Changes a task atomically: `f` is given the current record and returns
   * the next (`undefined`: no change). The record after it, if the task exists.
   */
  readonly update: (
    key: TaskKey,
    f: (record: TaskRecord) => TaskRecord | undefined
  ) => Effect.Effect<Option.Option<TaskRecord>, McpError.McpError>
  /** A requestor's tasks, newest first, `limit` a page. */
  readonly list: (
    requestor: string,
    cursor: string | undefined,
    limit: number
  ) => Effect.Effect<Page, McpError.McpError>
  /**
   * The task's current version, then every later one as it is updated (a
   * slow reader may skip to the newest); ends when the task is removed or
   * expires, at once if it does not exist.
   */
  readonly changes: (key: TaskKey) => Stream.Stream<TaskRecord, McpError.McpError>
  /** Forgets a task. */
  readonly remove: (key: TaskKey) => Effect.Effect<void, McpError.McpError>
}

/**
 * The task store a server uses. `McpServer` takes the one in its context, or
 * makes an in-memory one of its own.
 *
 * @category services
 * @since 0.2.0
 */
export class McpTaskStore extends Context.Service<McpTaskStore, Service>()("@effect-mcp/core/McpTaskStore") {}

/**
 * Whether a status is final (`completed`, `failed`, `cancelled`).
 *
 * @category predicates
 * @since 0.2.0
 */
export const isTerminal: (status: McpSchema.TaskStatus) => boolean = Status.isTerminal

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

/**
 * How a server keeps and runs the tasks of its tool calls: the `tasks` of
 * `McpServer.Options`. A type of this module rather than of `McpServer`, so
 * that the task machinery the server and the client share needs neither role.
 *
 * @category models
 * @since 0.2.0
 */
export interface TaskOptions {
  /** How long a task is kept after its creation. Default 1 hour. */
  readonly ttl?: Duration.Input | undefined
  /** The longest `ttl` a 2025-11-25 client may ask for. Default 24 hours. */
  readonly maxTtl?: Duration.Input | undefined
  /** How often clients are told to poll. Default 1 second. */
  readonly pollInterval?: Duration.Input | undefined
  /**
   * 2026-07-28: how long a call of a tool with `task: "optional"` or
   * `"required"` runs as a plain request before it becomes a task. Default 0
   * (at once); a tool's own `taskAfter` wins.
   */
  readonly after?: Duration.Input | undefined
}

// -----------------------------------------------------------------------------
// In memory
// -----------------------------------------------------------------------------

/**
 * Options of the in-memory store.
 *
 * @category models
 * @since 0.2.0
 */
export interface MemoryOptions {
  /**
   * The most tasks kept. At the limit, expired tasks go first, then the
   * oldest finished ones; when every task is still running, `create` fails.
   * Default 10,000.
   */
  readonly capacity?: number | undefined
}

/**
 * An in-memory store: tasks live as long as this process, each `ttlMs`
 * after its creation at most (checked on `Clock` when the store is used; no
 * timers).
 *
 * @category constructors
 * @since 0.2.0
 */
export const makeMemory: (options?: MemoryOptions) => Effect.Effect<Service> = Memory.make

/**
 * The in-memory store as a layer.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory = (options?: MemoryOptions): Layer.Layer<McpTaskStore> =>
  Layer.effect(McpTaskStore, makeMemory(options))
