/**
 * The models of `McpGroup` (re-exported there): each server's status, the
 * entries of the views, notifications, and the options of resource requests.
 *
 * @since 0.1.0
 */
import type * as McpClient from "../../McpClient.ts"
import type * as McpClientSession from "../../McpClientSession.ts"
import type * as McpError from "../../McpError.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type { ServerParams } from "./params.ts"

/**
 * A server of the group and how it is doing. `error` is why it is down, or
 * why its last reconnection attempt failed, or, while it is up, why a
 * `list_changed` refresh was refused (a refreshed list that would collide is
 * refused, and the server keeps its previous one, until a disconnection or a
 * failure frees the names).
 *
 * A server whose session ends (its process exits, its connection drops) or
 * that stops answering (see {@link Liveness}) goes down: its components are
 * withdrawn, calls to them fail with a `ServerUnavailableError` naming it,
 * and it is reconnected on the `reconnect` schedule; the others are not
 * touched. Over HTTP a session outlives its server: the end of its GET
 * stream, or a call that fails for want of a connection, makes the group
 * ping the server at once, and a ping that fails the same way (or goes
 * unanswered) counts as the server going down.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerStatus {
  readonly name: string
  readonly params: ServerParams
  readonly status: "connecting" | "up" | "down"
  /** Once connected: what the server said it is (kept while it is down, until it reconnects). */
  readonly serverInfo?: McpSchema.Implementation | undefined
  /** Once connected: the era its client settled on (`"auto"` resolves to one of them), like `serverInfo`. */
  readonly era?: McpClientSession.Era | undefined
  /** Once connected: the protocol version negotiated, like `serverInfo`. */
  readonly protocolVersion?: string | undefined
  readonly error?: McpError.McpError | undefined
  /** Down, with a reconnection attempt scheduled or under way. */
  readonly reconnecting: boolean
}

/**
 * A tool of the group: `name` is its group name, `tool` the server's
 * declaration (with the server's name).
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolEntry {
  readonly server: string
  readonly name: string
  readonly tool: McpSchema.Tool
}

/**
 * A resource of the group: `name` is its URI (resources are never renamed: a
 * URI two servers list is listed twice, once with each).
 *
 * @category models
 * @since 0.1.0
 */
export interface ResourceEntry {
  readonly server: string
  readonly name: string
  readonly resource: McpSchema.Resource
}

/**
 * A resource template of the group: `name` is its URI template (never
 * renamed, like resources).
 *
 * @category models
 * @since 0.1.0
 */
export interface ResourceTemplateEntry {
  readonly server: string
  readonly name: string
  readonly template: McpSchema.ResourceTemplate
}

/**
 * A prompt of the group: `name` is its group name.
 *
 * @category models
 * @since 0.1.0
 */
export interface PromptEntry {
  readonly server: string
  readonly name: string
  readonly prompt: McpSchema.Prompt
}

/**
 * Every component of the group's up servers, in order of connection, each
 * under its group name (given by the {@link NameHook} to tools and prompts;
 * resources and templates under their URIs).
 *
 * @category models
 * @since 0.1.0
 */
export interface Views {
  readonly tools: ReadonlyArray<ToolEntry>
  readonly resources: ReadonlyArray<ResourceEntry>
  readonly resourceTemplates: ReadonlyArray<ResourceTemplateEntry>
  readonly prompts: ReadonlyArray<PromptEntry>
}

/**
 * A notification from one server of the group.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerNotification {
  readonly server: string
  readonly notification: McpClient.Notification
}

/**
 * Options of the calls on a resource (`readResource`, `subscribeResource`,
 * `watchResource`, ...) and of `complete`: `server` names the server to ask,
 * and skips routing by URI. It is needed when several servers offer the URI
 * (list it, or have templates that match it): without it such a call fails
 * with an `AmbiguousError` naming them.
 *
 * @category models
 * @since 0.2.0
 */
export interface ResourceOptions extends McpClient.RequestOptions {
  readonly server?: string | undefined
}

/**
 * Options of `readResource` (see {@link ResourceOptions}).
 *
 * @category models
 * @since 0.1.0
 */
export type ReadResourceOptions = ResourceOptions
