/**
 * The protocol versions a server session speaks, split by era (2026-07-28
 * and later: modern, stateless; the earlier ones: negotiated by
 * `initialize`), computed once per list of versions.
 *
 * @internal
 */
import * as McpSchema from "../../McpSchema.ts"

/** Every version served, and those of each era. @internal */
export interface Versions {
  readonly all: ReadonlyArray<string>
  readonly modern: ReadonlyArray<string>
  readonly supported: ReadonlyArray<string>
}

const versionsOf = (all: ReadonlyArray<string>): Versions => ({
  all,
  modern: all.filter(McpSchema.isModernProtocolVersion),
  supported: all.filter((version) => !McpSchema.isModernProtocolVersion(version))
})

const defaults = versionsOf([...McpSchema.MODERN_PROTOCOL_VERSIONS, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS])
const cache = new WeakMap<ReadonlyArray<string>, Versions>()

/** The versions of `all` (every version we speak when `undefined`). @internal */
export const cached = (all: ReadonlyArray<string> | undefined): Versions => {
  if (all === undefined) return defaults
  let versions = cache.get(all)
  if (versions === undefined) cache.set(all, versions = versionsOf(all))
  return versions
}
