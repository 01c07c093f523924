/**
 * The notifications a client receives, as types (re-exported by `McpClient`).
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as McpMethod from "../../McpMethod.ts"
import type * as McpSchema from "../../McpSchema.ts"

/**
 * The notifications a server sends to a client.
 *
 * @internal
 */
export type ServerNotificationMethod =
  | "notifications/cancelled"
  | "notifications/progress"
  | "notifications/message"
  | "notifications/resources/updated"
  | "notifications/resources/list_changed"
  | "notifications/tools/list_changed"
  | "notifications/prompts/list_changed"
  | "notifications/elicitation/complete"
  | "notifications/tasks/status"
  | "notifications/tasks"
  | "notifications/subscriptions/acknowledged"

/**
 * The params of a server notification, as declared in `McpSchema`.
 *
 * @internal
 */
export type NotificationParams<K extends ServerNotificationMethod> = McpMethod.Params<
  (typeof McpSchema.notifications)[K]
>

/**
 * A notification received from the server: its method and its validated
 * params. Narrow on `method`:
 *
 * ```ts
 * if (notification.method === "notifications/message") notification.params.level
 * ```
 *
 * @internal
 */
export type Notification = {
  readonly [K in ServerNotificationMethod]: { readonly method: K; readonly params: NotificationParams<K> }
}[ServerNotificationMethod]

/**
 * A handler of one kind of notification. Handlers run one at a time, in order
 * of arrival, on the client's dispatcher fiber: a slow handler delays the
 * next notification (never a reply). A failure is logged and ignored.
 *
 * @internal
 */
export type NotificationHandler<P> = (params: P) => Effect.Effect<void, unknown>

/**
 * The optional notification handlers of {@link Options}.
 *
 * @internal
 */
export interface NotificationHandlers {
  /** `notifications/message`: a log message (see `setLoggingLevel`). */
  readonly onLoggingMessage?: NotificationHandler<McpSchema.LoggingMessageNotificationParams> | undefined
  /** `notifications/resources/updated`: a subscribed resource changed. */
  readonly onResourceUpdated?: NotificationHandler<McpSchema.ResourceUpdatedNotificationParams> | undefined
  /** `notifications/tools/list_changed` (after `client.tools` was invalidated). */
  readonly onToolListChanged?: NotificationHandler<McpSchema.NotificationParams> | undefined
  /** `notifications/resources/list_changed` (after `client.resources` and `client.resourceTemplates` were invalidated). */
  readonly onResourceListChanged?: NotificationHandler<McpSchema.NotificationParams> | undefined
  /** `notifications/prompts/list_changed` (after `client.prompts` was invalidated). */
  readonly onPromptListChanged?: NotificationHandler<McpSchema.NotificationParams> | undefined
  /** `notifications/elicitation/complete`: a URL-mode elicitation finished. */
  readonly onElicitationComplete?: NotificationHandler<McpSchema.ElicitationCompleteNotificationParams> | undefined
  /** `notifications/progress`, for any request (per-call progress goes to `RequestOptions.onProgress`). */
  readonly onProgress?: NotificationHandler<McpSchema.ProgressNotificationParams> | undefined
  /** `notifications/cancelled`: the server cancelled one of its requests (its handler is interrupted). */
  readonly onCancelled?: NotificationHandler<McpSchema.CancelledNotificationParams> | undefined
  /** Every notification, after the specific handler. */
  readonly onNotification?: ((notification: Notification) => Effect.Effect<void, unknown>) | undefined
}
