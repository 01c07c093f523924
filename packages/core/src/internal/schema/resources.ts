/**
 * Resources: listing, templates, reading, subscriptions and their
 * notifications.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import {
  Annotations,
  EmptyResult,
  Icon,
  Meta,
  NotificationParams,
  PaginatedRequestParams,
  PaginatedResult,
  RequestMeta
} from "./base.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A resource the server can read. `title` and `_meta` are new in 2025-06-18,
 * `icons` in 2025-11-25; `size` (bytes, before encoding) in 2025-03-26.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Resource = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  mimeType: Schema.optionalKey(Schema.String),
  annotations: Schema.optionalKey(Annotations),
  size: Schema.optionalKey(Schema.Int),
  icons: Schema.optionalKey(Schema.Array(Icon)),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Resource = typeof Resource.Type

/**
 * A family of resources described by an RFC 6570 URI template.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ResourceTemplate = Schema.Struct({
  uriTemplate: Schema.String,
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  mimeType: Schema.optionalKey(Schema.String),
  annotations: Schema.optionalKey(Annotations),
  icons: Schema.optionalKey(Schema.Array(Icon)),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ResourceTemplate = typeof ResourceTemplate.Type

/**
 * The contents of a text resource.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TextResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optionalKey(Schema.String),
  text: Schema.String,
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type TextResourceContents = typeof TextResourceContents.Type

/**
 * The contents of a binary resource (`blob` is base64).
 *
 * @category schemas
 * @since 0.1.0
 */
export const BlobResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optionalKey(Schema.String),
  blob: Schema.String,
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type BlobResourceContents = typeof BlobResourceContents.Type

/**
 * Text or binary resource contents.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ResourceContents = Schema.Union([TextResourceContents, BlobResourceContents]).annotate({
  expected: "resource contents with a `text` or a `blob`"
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ResourceContents = typeof ResourceContents.Type

/**
 * The result of `resources/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ListResourcesResult = Schema.Struct({ ...PaginatedResult.fields, resources: Schema.Array(Resource) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type ListResourcesResult = typeof ListResourcesResult.Type

/**
 * The result of `resources/templates/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ListResourceTemplatesResult = Schema.Struct({
  ...PaginatedResult.fields,
  resourceTemplates: Schema.Array(ResourceTemplate)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ListResourceTemplatesResult = typeof ListResourceTemplatesResult.Type

/**
 * Params naming one resource by URI (`resources/read`, `resources/subscribe`,
 * `resources/unsubscribe`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ResourceRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  uri: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ResourceRequestParams = typeof ResourceRequestParams.Type

/**
 * Params of `resources/read`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ReadResourceRequestParams = ResourceRequestParams

/**
 * @category schemas
 * @since 0.1.0
 */
export type ReadResourceRequestParams = typeof ReadResourceRequestParams.Type

/**
 * The result of `resources/read`: one or more contents (a resource may have
 * sub-resources).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ReadResourceResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  contents: Schema.Array(ResourceContents)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ReadResourceResult = typeof ReadResourceResult.Type

/**
 * Params of `resources/subscribe`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SubscribeRequestParams = ResourceRequestParams

/**
 * @category schemas
 * @since 0.1.0
 */
export type SubscribeRequestParams = typeof SubscribeRequestParams.Type

/**
 * Params of `resources/unsubscribe`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const UnsubscribeRequestParams = ResourceRequestParams

/**
 * @category schemas
 * @since 0.1.0
 */
export type UnsubscribeRequestParams = typeof UnsubscribeRequestParams.Type

/**
 * Params of `notifications/resources/updated` (the URI may be a sub-resource
 * of the subscribed one).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ResourceUpdatedNotificationParams = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  uri: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ResourceUpdatedNotificationParams = typeof ResourceUpdatedNotificationParams.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `resources/list`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ListResources = McpMethod.request({
  name: "resources/list",
  params: PaginatedRequestParams,
  result: ListResourcesResult,
  from: "client",
  capability: McpMethod.serverCapability("resources")
})

/**
 * `resources/templates/list`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ListResourceTemplates = McpMethod.request({
  name: "resources/templates/list",
  params: PaginatedRequestParams,
  result: ListResourceTemplatesResult,
  from: "client",
  capability: McpMethod.serverCapability("resources")
})

/**
 * `resources/read`. An unknown URI is answered with error `-32002`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ReadResource = McpMethod.request({
  name: "resources/read",
  params: ReadResourceRequestParams,
  result: ReadResourceResult,
  from: "client",
  capability: McpMethod.serverCapability("resources")
})

/**
 * `resources/subscribe`: asks for `notifications/resources/updated` on a URI.
 *
 * @category methods
 * @since 0.1.0
 */
export const Subscribe = McpMethod.request({
  name: "resources/subscribe",
  params: SubscribeRequestParams,
  result: EmptyResult,
  from: "client",
  capability: McpMethod.serverCapability("resources", "subscribe")
})

/**
 * `resources/unsubscribe`.
 *
 * @category methods
 * @since 0.1.0
 */
export const Unsubscribe = McpMethod.request({
  name: "resources/unsubscribe",
  params: UnsubscribeRequestParams,
  result: EmptyResult,
  from: "client",
  capability: McpMethod.serverCapability("resources", "subscribe")
})

/**
 * `notifications/resources/updated`: a subscribed resource changed.
 *
 * @category methods
 * @since 0.1.0
 */
export const ResourceUpdated = McpMethod.notification({
  name: "notifications/resources/updated",
  params: ResourceUpdatedNotificationParams,
  from: "server",
  capability: McpMethod.serverCapability("resources", "subscribe")
})

/**
 * `notifications/resources/list_changed`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ResourceListChanged = McpMethod.notification({
  name: "notifications/resources/list_changed",
  params: NotificationParams,
  from: "server",
  capability: McpMethod.serverCapability("resources", "listChanged")
})
