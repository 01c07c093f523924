/**
 * The registry of an `McpServer`: its tools, resources, resource templates and
 * prompts, each by name or URI with whether it is enabled, and the list-changed
 * notification of each kind.
 *
 * @internal
 */
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
  }
}

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
