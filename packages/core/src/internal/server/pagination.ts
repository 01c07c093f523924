/**
 * Opaque cursors for the list methods: a page offset, base64url-encoded
 * with a prefix so that a cursor from elsewhere is recognised as invalid.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Result from "effect/Result"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"

const PREFIX = "mcp-page:"

/** @internal */
export const encodeCursor = (offset: number): string => Base64Url.encode(`${PREFIX}${offset}`)

/** @internal */
export const decodeCursor = (cursor: string): number | undefined => {
  const decoded = Base64Url.decodeString(cursor)
  if (Result.isFailure(decoded) || !decoded.success.startsWith(PREFIX)) return undefined
  const offset = Number(decoded.success.slice(PREFIX.length))
  return Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined
}

/** One page of `items` from `cursor`, and the cursor of the next page if there is one. @internal */
export const page = <A>(
  items: ReadonlyArray<A>,
  cursor: string | undefined,
  pageSize: number
): Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly nextCursor?: string }, McpError.McpError> => {
  const offset = cursor === undefined ? 0 : decodeCursor(cursor)
  if (offset === undefined || offset > items.length) {
    return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`))
  }
  const end = offset + pageSize
  return Effect.succeed(
    end < items.length
      ? { items: items.slice(offset, end), nextCursor: encodeCursor(end) }
      : { items: items.slice(offset) }
  )
}
