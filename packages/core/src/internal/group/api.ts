/**
 * The bodies of `McpGroup`'s constructors (`prefixed`, `make`), light like
 * `reconnect.ts`: the group itself (`group.ts`) and the client are loaded
 * when a group is made, not when `McpGroup` is imported.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as McpError from "../../McpError.ts"
import type { Connector, Group, NamedKind, NameHook, Options } from "../../McpGroup.ts"

/** A name hook that prefixes names with the server's name. @internal */
export const prefixed = (options?: {
  readonly separator?: string | undefined
  readonly kinds?: ReadonlyArray<NamedKind> | undefined
}): NameHook => {
  const separator = options?.separator ?? "__"
  const kinds = new Set<NamedKind>(options?.kinds ?? ["tool", "prompt"])
  return (name, _serverInfo, server, kind) => kinds.has(kind) ? `${server}${separator}${name}` : name
}

/** Makes a group with the given connector, loading the group first. @internal */
export const make = (
  options: Options | undefined,
  connector: Connector["Service"]
): Effect.Effect<Group, McpError.McpError, Scope.Scope> =>
  // the group and the client are loaded when a group is made, not with this module
  Effect.flatMap(
    Effect.promise(() => import("./group.ts")),
    (Internal) => Internal.make(options ?? {}, connector)
  )
