/**
 * Every message of MCP revision 2025-11-25 as an Effect Schema, and every
 * method declared once with `McpMethod` ({@link requests} and
 * {@link notifications} index them by name). Schemas are plain JSON shapes
 * (decoded and encoded types are the same; unknown fields pass through), and
 * messages of older revisions are accepted: fields added later are optional,
 * and shapes that changed accept both forms (legacy elicitation enums,
 * `{ toolResult }` tool results, single-block sampling content). A request's
 * capability is the one its receiver must have declared; a notification's
 * is the one that makes sending it meaningful.
 *
 * @since 0.1.0
 */
import { Complete } from "./internal/schema/completion.ts"
import { Elicit, ElicitationComplete } from "./internal/schema/elicitation.ts"
import { Initialize, Initialized, Ping } from "./internal/schema/lifecycle.ts"
import { LoggingMessage, SetLevel } from "./internal/schema/logging.ts"
import { Cancelled, Progress } from "./internal/schema/notifications.ts"
import { GetPrompt, ListPrompts, PromptListChanged } from "./internal/schema/prompts.ts"
import {
  ListResources,
  ListResourceTemplates,
  ReadResource,
  ResourceListChanged,
  ResourceUpdated,
  Subscribe,
  Unsubscribe
} from "./internal/schema/resources.ts"
import { ListRoots, RootsListChanged } from "./internal/schema/roots.ts"
import { CreateMessage } from "./internal/schema/sampling.ts"
import { Discover, SubscriptionsAcknowledged, SubscriptionsListen } from "./internal/schema/stateless.ts"
import { CancelTask, GetTask, GetTaskPayload, ListTasks, TaskStatusNotification } from "./internal/schema/tasks.ts"
import { TasksNotification, UpdateTask } from "./internal/schema/tasksModern.ts"
import { CallTool, ListTools, ToolListChanged } from "./internal/schema/tools.ts"
import type * as McpMethod from "./McpMethod.ts"

export * from "./internal/schema/base.ts"
export * from "./internal/schema/completion.ts"
export * from "./internal/schema/content.ts"
export * from "./internal/schema/elicitation.ts"
export * from "./internal/schema/lifecycle.ts"
export * from "./internal/schema/logging.ts"
export * from "./internal/schema/notifications.ts"
export * from "./internal/schema/prompts.ts"
export * from "./internal/schema/resources.ts"
export * from "./internal/schema/roots.ts"
export * from "./internal/schema/sampling.ts"
export * from "./internal/schema/stateless.ts"
export * from "./internal/schema/tasks.ts"
export * from "./internal/schema/tasksModern.ts"
export * from "./internal/schema/tools.ts"

// -----------------------------------------------------------------------------
// Protocol versions
// -----------------------------------------------------------------------------

/**
 * The newest protocol revision this SDK speaks.
 *
 * @category protocol versions
 * @since 0.1.0
 */
export const LATEST_PROTOCOL_VERSION = "2025-11-25" as const

/**
 * Every protocol revision this SDK speaks, newest first.
 *
 * @category protocol versions
 * @since 0.1.0
 */
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const

/**
 * A protocol revision this SDK speaks.
 *
 * @category protocol versions
 * @since 0.1.0
 */
export type ProtocolVersion = typeof SUPPORTED_PROTOCOL_VERSIONS[number]

/**
 * `true` when `version` is one of {@link SUPPORTED_PROTOCOL_VERSIONS}.
 *
 * @category protocol versions
 * @since 0.1.0
 */
export const isSupportedProtocolVersion = (version: unknown): version is ProtocolVersion =>
  (SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<unknown>).includes(version)

// -----------------------------------------------------------------------------
// Lookup tables
// -----------------------------------------------------------------------------

// Each key must equal its declaration's name (checked by the compiler).
const byRequestName = <const T extends { readonly [K in keyof T]: McpMethod.Request<K & string> }>(table: T): T => table

const byNotificationName = <const T extends { readonly [K in keyof T]: McpMethod.Notification<K & string> }>(
  table: T
): T => table

/**
 * Every request of MCP 2024-11-05 … 2026-07-28, keyed by method name.
 *
 * @category lookup tables
 * @since 0.1.0
 */
export const requests = byRequestName({
  "initialize": Initialize,
  "ping": Ping,
  "completion/complete": Complete,
  "logging/setLevel": SetLevel,
  "prompts/list": ListPrompts,
  "prompts/get": GetPrompt,
  "resources/list": ListResources,
  "resources/templates/list": ListResourceTemplates,
  "resources/read": ReadResource,
  "resources/subscribe": Subscribe,
  "resources/unsubscribe": Unsubscribe,
  "tools/list": ListTools,
  "tools/call": CallTool,
  "sampling/createMessage": CreateMessage,
  "elicitation/create": Elicit,
  "roots/list": ListRoots,
  "tasks/get": GetTask,
  "tasks/result": GetTaskPayload,
  "tasks/list": ListTasks,
  "tasks/cancel": CancelTask,
  "tasks/update": UpdateTask,
  "server/discover": Discover,
  "subscriptions/listen": SubscriptionsListen
})

/**
 * Every notification of MCP 2024-11-05 … 2026-07-28, keyed by method name.
 *
 * @category lookup tables
 * @since 0.1.0
 */
export const notifications = byNotificationName({
  "notifications/cancelled": Cancelled,
  "notifications/progress": Progress,
  "notifications/initialized": Initialized,
  "notifications/message": LoggingMessage,
  "notifications/resources/updated": ResourceUpdated,
  "notifications/resources/list_changed": ResourceListChanged,
  "notifications/tools/list_changed": ToolListChanged,
  "notifications/prompts/list_changed": PromptListChanged,
  "notifications/roots/list_changed": RootsListChanged,
  "notifications/elicitation/complete": ElicitationComplete,
  "notifications/tasks/status": TaskStatusNotification,
  "notifications/tasks": TasksNotification,
  "notifications/subscriptions/acknowledged": SubscriptionsAcknowledged
})

/**
 * The name of a request method of MCP 2025-11-25.
 *
 * @category lookup tables
 * @since 0.1.0
 */
export type RequestMethod = keyof typeof requests

/**
 * The name of a notification method of MCP 2025-11-25.
 *
 * @category lookup tables
 * @since 0.1.0
 */
export type NotificationMethod = keyof typeof notifications
