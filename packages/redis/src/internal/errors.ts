/**
 * Redis failures as `McpError`s: a transport error whose text says which
 * operation failed and why, with any password in a URL blanked out.
 *
 * @internal
 */
import * as McpError from "@effect-mcp/core/McpError"
import * as Effect from "effect/Effect"
import type * as Redis from "effect/persistence/Redis"

/** A Redis URL safe to print: its password (and user) replaced. @internal */
export const redactUrl = (url: string): string => {
  const parsed = URL.parse(url)
  if (parsed === null) return "(an invalid Redis URL)"
  if (parsed.password !== "" || parsed.username !== "") {
    parsed.username = parsed.username === "" ? "" : "***"
    parsed.password = parsed.password === "" ? "" : "***"
  }
  return parsed.toString()
}

const describe = (cause: unknown): string => {
  const message = cause instanceof Error ? cause.message : String(cause)
  // node-redis reports a refused connection as an AggregateError without a message
  if (message === "" && cause instanceof AggregateError) {
    return cause.errors.map((error) => (error instanceof Error ? error.message : String(error))).join("; ")
  }
  return message === "" ? "unknown error" : message
}

/** The `McpError` of a failed Redis operation. @internal */
export const fromRedis = (operation: string, cause: unknown): McpError.McpError =>
  McpError.transport(`Redis ${operation} failed: ${describe(cause)}`, { cause })

/** Maps a `RedisError` to an `McpError` naming the operation. @internal */
export const mapRedis =
  (operation: string) => <A, R>(self: Effect.Effect<A, Redis.RedisError, R>): Effect.Effect<A, McpError.McpError, R> =>
    Effect.mapError(self, (error) => fromRedis(operation, error.cause))
