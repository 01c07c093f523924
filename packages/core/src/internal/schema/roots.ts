/**
 * Roots: the directories or files a client lets a server work on.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { Meta, NotificationParams, RequestParams } from "./base.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A root: a URI (`file://` for now) and an optional display name.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Root = Schema.Struct({
  uri: Schema.String,
  name: Schema.optionalKey(Schema.String),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Root = typeof Root.Type

/**
 * The result of `roots/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ListRootsResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  roots: Schema.Array(Root)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ListRootsResult = typeof ListRootsResult.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `roots/list`: the server asks the client for its roots.
 *
 * @category methods
 * @since 0.1.0
 */
export const ListRoots = McpMethod.request({
  name: "roots/list",
  params: RequestParams,
  result: ListRootsResult,
  from: "server",
  capability: McpMethod.clientCapability("roots")
})

/**
 * `notifications/roots/list_changed`.
 *
 * @category methods
 * @since 0.1.0
 */
export const RootsListChanged = McpMethod.notification({
  name: "notifications/roots/list_changed",
  params: NotificationParams,
  from: "client",
  capability: McpMethod.clientCapability("roots", "listChanged")
})
