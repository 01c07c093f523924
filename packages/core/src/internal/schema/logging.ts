/**
 * Logging: the client sets a level, the server sends log messages.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { EmptyResult, Meta, RequestMeta } from "./base.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A log severity (RFC 5424 syslog levels), from least to most severe.
 *
 * @category schemas
 * @since 0.1.0
 */
export const LoggingLevel = Schema.Literals([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
])

/**
 * @category schemas
 * @since 0.1.0
 */
export type LoggingLevel = typeof LoggingLevel.Type

/**
 * Params of `logging/setLevel`: the server should send messages at this level
 * and above.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SetLevelRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  level: LoggingLevel
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type SetLevelRequestParams = typeof SetLevelRequestParams.Type

/**
 * Params of `notifications/message`: a level, an optional logger name, and
 * any JSON data.
 *
 * @category schemas
 * @since 0.1.0
 */
export const LoggingMessageNotificationParams = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  level: LoggingLevel,
  logger: Schema.optionalKey(Schema.String),
  data: Schema.Unknown
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type LoggingMessageNotificationParams = typeof LoggingMessageNotificationParams.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `logging/setLevel`.
 *
 * @category methods
 * @since 0.1.0
 */
export const SetLevel = McpMethod.request({
  name: "logging/setLevel",
  params: SetLevelRequestParams,
  result: EmptyResult,
  from: "client",
  capability: McpMethod.serverCapability("logging")
})

/**
 * `notifications/message`: a log message from the server.
 *
 * @category methods
 * @since 0.1.0
 */
export const LoggingMessage = McpMethod.notification({
  name: "notifications/message",
  params: LoggingMessageNotificationParams,
  from: "server",
  capability: McpMethod.serverCapability("logging")
})
