/**
 * Building blocks shared by every area of the MCP schema: metadata, tokens,
 * the result base, pagination, roles, annotations, icons and implementation
 * info.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

// -----------------------------------------------------------------------------
// JSON
// -----------------------------------------------------------------------------

/**
 * Any JSON object (a string-keyed record; arrays and `null` are rejected).
 *
 * @category schemas
 * @since 0.1.0
 */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/**
 * @category schemas
 * @since 0.1.0
 */
export type JsonObject = typeof JsonObject.Type

/**
 * The `_meta` field of results, notifications and most objects: a free-form
 * JSON object. Keys prefixed `modelcontextprotocol.io/` and `mcp.dev/` are
 * reserved by the spec.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Meta = JsonObject

/**
 * @category schemas
 * @since 0.1.0
 */
export type Meta = typeof Meta.Type

// -----------------------------------------------------------------------------
// Tokens
// -----------------------------------------------------------------------------

/**
 * A progress token: a string or an integer chosen by the requester.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ProgressToken = Schema.Union([Schema.String, Schema.Int])

/**
 * @category schemas
 * @since 0.1.0
 */
export type ProgressToken = typeof ProgressToken.Type

/**
 * An opaque pagination cursor.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Cursor = Schema.String

/**
 * @category schemas
 * @since 0.1.0
 */
export type Cursor = typeof Cursor.Type

// -----------------------------------------------------------------------------
// Params and results
// -----------------------------------------------------------------------------

/**
 * The `_meta` of request params: an optional `progressToken` (asks the
 * receiver for `notifications/progress`) plus any other keys, such as
 * `io.modelcontextprotocol/related-task`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const RequestMeta = Schema.StructWithRest(
  Schema.Struct({ progressToken: Schema.optionalKey(ProgressToken) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/**
 * @category schemas
 * @since 0.1.0
 */
export type RequestMeta = typeof RequestMeta.Type

/**
 * Params of a request that takes nothing but `_meta` (e.g. `ping`). Every
 * field is optional, so a missing `params` (validated as `{}`) passes.
 *
 * @category schemas
 * @since 0.1.0
 */
export const RequestParams = Schema.Struct({ _meta: Schema.optionalKey(RequestMeta) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type RequestParams = typeof RequestParams.Type

/**
 * Params of a notification that takes nothing but `_meta` (e.g. the
 * `list_changed` notifications).
 *
 * @category schemas
 * @since 0.1.0
 */
export const NotificationParams = Schema.Struct({ _meta: Schema.optionalKey(Meta) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type NotificationParams = typeof NotificationParams.Type

/**
 * The base of every result: an optional `_meta`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Result = Schema.Struct({ _meta: Schema.optionalKey(Meta) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type Result = typeof Result.Type

/**
 * A result that carries no data (`ping`, `resources/subscribe`, …).
 *
 * @category schemas
 * @since 0.1.0
 */
export const EmptyResult = Result

/**
 * @category schemas
 * @since 0.1.0
 */
export type EmptyResult = typeof EmptyResult.Type

/**
 * Params of a paginated list request: an optional `cursor` from a previous
 * page's `nextCursor`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const PaginatedRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  cursor: Schema.optionalKey(Cursor)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type PaginatedRequestParams = typeof PaginatedRequestParams.Type

/**
 * The base of a paginated list result: `nextCursor` is present when more
 * pages may follow.
 *
 * @category schemas
 * @since 0.1.0
 */
export const PaginatedResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  nextCursor: Schema.optionalKey(Cursor)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type PaginatedResult = typeof PaginatedResult.Type

// -----------------------------------------------------------------------------
// Common types
// -----------------------------------------------------------------------------

/**
 * The sender or recipient of messages in a conversation.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Role = Schema.Literals(["user", "assistant"])

/**
 * @category schemas
 * @since 0.1.0
 */
export type Role = typeof Role.Type

/**
 * Hints for the client about how to use or show an object. `priority` is
 * documented as 0 (least important) to 1 (most important); the range is not
 * enforced. `lastModified` (ISO 8601) is new in 2025-06-18.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Annotations = Schema.Struct({
  audience: Schema.optionalKey(Schema.Array(Role)),
  priority: Schema.optionalKey(Schema.Finite),
  lastModified: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Annotations = typeof Annotations.Type

/**
 * An icon for a UI (2025-11-25): an `http(s):` or `data:` URI, an optional
 * MIME type, sizes such as `"48x48"` or `"any"`, and a theme.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Icon = Schema.Struct({
  src: Schema.String,
  mimeType: Schema.optionalKey(Schema.String),
  sizes: Schema.optionalKey(Schema.Array(Schema.String)),
  theme: Schema.optionalKey(Schema.Literals(["light", "dark"]))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Icon = typeof Icon.Type

/**
 * The name and version of an MCP implementation (`clientInfo` /
 * `serverInfo`). `title` is new in 2025-06-18; `icons`, `description` and
 * `websiteUrl` in 2025-11-25.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Implementation = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  version: Schema.String,
  description: Schema.optionalKey(Schema.String),
  icons: Schema.optionalKey(Schema.Array(Icon)),
  websiteUrl: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Implementation = typeof Implementation.Type
