/**
 * A gateway's filters: which of a server's components it serves, by the
 * server's own names (or URIs), `*` standing for any run of characters.
 *
 * @internal
 */
import type * as McpGateway from "../../McpGateway.ts"

const compiled = new WeakMap<ReadonlyArray<string>, RegExp>()

const regexpOf = (patterns: ReadonlyArray<string>): RegExp => {
  let regexp = compiled.get(patterns)
  if (regexp === undefined) {
    const alternatives = patterns.map((pattern) =>
      pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join(".*")
    )
    regexp = new RegExp(`^(?:${alternatives.join("|")})$`, "s")
    compiled.set(patterns, regexp)
  }
  return regexp
}

/** Whether `filter` lets `name` through: allowed (or no `allow`), and not denied. @internal */
export const allows = (filter: McpGateway.Filter | undefined, name: string): boolean => {
  if (filter === undefined) return true
  if (filter.allow !== undefined && !regexpOf(filter.allow).test(name)) return false
  return filter.deny === undefined || !regexpOf(filter.deny).test(name)
}
