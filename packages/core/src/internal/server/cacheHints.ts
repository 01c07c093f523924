/**
 * The cache hints of a server's 2026-07-28 answers (`ttlMs`, `cacheScope`):
 * an answer about several definitions lives as long as the shortest-lived,
 * and is private if any is; a definition without hints of its own has the
 * server's.
 *
 * @internal
 */
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"

/** What may carry hints of its own: a definition. @internal */
export type Cached = { readonly cache?: Partial<McpSchema.CacheHints> | undefined }

/** The server's hints, from its options (default: nothing is claimed). @internal */
export const defaultsOf = (cache: McpServer.Options["cache"]): McpSchema.CacheHints => ({
  ttlMs: cache?.ttlMs ?? 0,
  cacheScope: cache?.cacheScope ?? "private"
})

/** The hints of an answer about `items`. @internal */
export const of = (defaults: McpSchema.CacheHints, items: ReadonlyArray<Cached>): McpSchema.CacheHints => {
  if (items.length === 0) return defaults
  let ttlMs = Infinity
  let cacheScope: McpSchema.CacheHints["cacheScope"] = "public"
  for (const item of items) {
    ttlMs = Math.min(ttlMs, Math.max(0, item.cache?.ttlMs ?? defaults.ttlMs))
    if ((item.cache?.cacheScope ?? defaults.cacheScope) === "private") cacheScope = "private"
  }
  return { ttlMs, cacheScope }
}

/** `result` with the hints of `items`, for a modern request (a legacy answer has none). @internal */
export const withHints = <A extends object>(
  defaults: McpSchema.CacheHints,
  context: McpServer.RequestContext,
  result: A,
  items: ReadonlyArray<Cached>
): A => context.era === "modern" ? { ...result, ...of(defaults, items) } : result
