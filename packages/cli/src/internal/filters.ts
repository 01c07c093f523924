/**
 * The filters of `effect-mcp serve`'s flags (`--allow-tools`, `--deny-tools`,
 * and the same for prompts and resources): patterns over every server's own
 * names (or URIs), `*` standing for any run of characters, as in an
 * `mcp.json` entry's filters. They are laid over the config's: a component is
 * served when both let it through.
 *
 * @internal
 */
import type * as McpGateway from "@effect-mcp/core/McpGateway"

/** The patterns of the filter flags, by kind. */
export interface Flags {
  readonly allowTools: ReadonlyArray<string>
  readonly denyTools: ReadonlyArray<string>
  readonly allowPrompts: ReadonlyArray<string>
  readonly denyPrompts: ReadonlyArray<string>
  readonly allowResources: ReadonlyArray<string>
  readonly denyResources: ReadonlyArray<string>
}

/** A filter compiled: `allow` absent lets everything through. */
interface Compiled {
  readonly allow: RegExp | undefined
  readonly deny: RegExp | undefined
}

/** A pattern as a regular expression's source: `*` for any run of characters, the rest literal. */
const source = (pattern: string): string =>
  pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join(".*")

/** One regular expression matching any of the patterns (none: `undefined`). */
const compile = (patterns: ReadonlyArray<string>): RegExp | undefined =>
  patterns.length === 0 ? undefined : new RegExp(`^(?:${patterns.map(source).join("|")})$`, "s")

const filter = (allow: ReadonlyArray<string>, deny: ReadonlyArray<string>): Compiled => ({
  allow: compile(allow),
  deny: compile(deny)
})

const passes = (compiled: Compiled, name: string): boolean =>
  (compiled.allow === undefined || compiled.allow.test(name)) &&
  (compiled.deny === undefined || !compiled.deny.test(name))

/**
 * The flags as a gateway policy (every client sees the same), or
 * `undefined` when no flag is given.
 */
export const policy = (flags: Flags): McpGateway.Policy | undefined => {
  const patterns = [
    flags.allowTools,
    flags.denyTools,
    flags.allowPrompts,
    flags.denyPrompts,
    flags.allowResources,
    flags.denyResources
  ]
  if (patterns.every((list) => list.length === 0)) return undefined
  const tools = filter(flags.allowTools, flags.denyTools)
  const prompts = filter(flags.allowPrompts, flags.denyPrompts)
  const resources = filter(flags.allowResources, flags.denyResources)
  return (component) => {
    switch (component.kind) {
      case "tool":
        return passes(tools, component.upstreamName)
      case "prompt":
        return passes(prompts, component.upstreamName)
      default:
        return passes(resources, component.upstreamName)
    }
  }
}
