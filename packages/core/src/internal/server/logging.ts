/**
 * MCP logging levels (RFC 5424 severities) and how Effect's log levels map
 * onto them.
 *
 * @internal
 */
import type * as LogLevel from "effect/LogLevel"
import * as McpSchema from "../../McpSchema.ts"

const order: ReadonlyArray<McpSchema.LoggingLevel> = McpSchema.LoggingLevel.literals

/** `true` when a message at `level` passes a session whose threshold is `threshold`. @internal */
export const passes = (level: McpSchema.LoggingLevel, threshold: McpSchema.LoggingLevel | undefined): boolean =>
  threshold === undefined || order.indexOf(level) >= order.indexOf(threshold)

/** The MCP level of an Effect log level. @internal */
export const fromEffect = (level: LogLevel.LogLevel): McpSchema.LoggingLevel => {
  switch (level) {
    case "Fatal":
      return "critical"
    case "Error":
      return "error"
    case "Warn":
      return "warning"
    case "Info":
      return "info"
    default:
      return "debug"
  }
}
