/**
 * The registry of an `McpServer`: its tools, resources, resource templates,
 * prompts and extensions, each by name, URI or id with whether it is enabled,
 * and the list-changed notification of each listed kind.
 *
 * @internal
 */
import type * as McpExtension from "../../McpExtension.ts"
import type * as McpPrompt from "../../McpPrompt.ts"
import type * as McpResource from "../../McpResource.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpTool from "../../McpTool.ts"

/** @internal */
export interface Entry<D> {
  readonly definition: D
  readonly enabled: boolean
}

/** @internal */
export interface Registry {
  readonly tools: ReadonlyMap<string, Entry<McpTool.McpTool>>
  readonly resources: ReadonlyMap<string, Entry<McpResource.McpResource>>
  readonly resourceTemplates: ReadonlyMap<string, Entry<McpResource.McpResourceTemplate>>
  readonly prompts: ReadonlyMap<string, Entry<McpPrompt.McpPrompt>>
  readonly extensions: ReadonlyMap<string, Entry<McpExtension.McpExtension>>
}

/** @internal */
export type Kind = keyof Registry

/** @internal */
export const kindOf = (definition: McpServer.Definition<any>): Kind => {
  switch (definition._tag) {
    case "McpTool":
      return "tools"
    case "McpResource":
      return "resources"
    case "McpResourceTemplate":
      return "resourceTemplates"
    case "McpPrompt":
      return "prompts"
    case "McpExtension":
      return "extensions"
  }
}

/** @internal */
export const keyOf = (definition: McpServer.Definition<any>): string => {
  switch (definition._tag) {
    case "McpTool":
    case "McpPrompt":
      return definition.name
    case "McpResource":
      return definition.uri
    case "McpResourceTemplate":
      return definition.uriTemplate
    case "McpExtension":
      return definition.id
  }
}

/** The kinds clients list (and are told of changes of). @internal */
export type Listed = Exclude<Kind, "extensions">

/** @internal */
export const isListed = (kind: Kind): kind is Listed => kind !== "extensions"

/** @internal */
export const listChanged = {
  tools: McpSchema.ToolListChanged,
  resources: McpSchema.ResourceListChanged,
  resourceTemplates: McpSchema.ResourceListChanged,
  prompts: McpSchema.PromptListChanged
} as const

/** @internal */
export const enabled = <D>(map: ReadonlyMap<string, Entry<D>>): Array<D> => {
  const out: Array<D> = []
  for (const entry of map.values()) if (entry.enabled) out.push(entry.definition)
  return out
}

/** A change of one definition's entry: its new entry given its current one (`undefined`: none). @internal */
export type Change = readonly [
  McpServer.Definition<any>,
  (entry: Entry<any> | undefined) => Entry<any> | undefined
]

/** The registry after `changes`, and the kinds that changed. @internal */
export const applyChanges = (
  current: Registry,
  changes: ReadonlyArray<Change>
): readonly [ReadonlySet<Kind>, Registry] => {
  const changed = new Set<Kind>()
  const maps: Partial<Record<Kind, Map<string, Entry<any>>>> = {}
  for (const [definition, f] of changes) {
    const kind = kindOf(definition)
    const key = keyOf(definition)
    const map = maps[kind] ?? (current[kind] as ReadonlyMap<string, Entry<any>>)
    const before = map.get(key)
    const after = f(before)
    if (after === before) continue
    // each kind's map copied once, at its first change
    const writable = maps[kind] ??= new Map(map)
    if (after === undefined) writable.delete(key)
    else writable.set(key, after)
    changed.add(kind)
  }
  if (changed.size === 0) return [changed, current]
  const next: Record<string, unknown> = { ...current }
  for (const kind of changed) next[kind] = maps[kind]
  return [changed, next as unknown as Registry]
}
