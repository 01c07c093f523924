/**
 * What a server declares: the capabilities derived from what is registered
 * (tools, resources, prompts, completions, tasks, extensions), laid under the options'
 * own, in each era's shape (2025-11-25: the `tasks` capability;
 * 2026-07-28: the tasks extension instead). Computed once per registry
 * value.
 *
 * @internal
 */
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import { declared } from "./extensions.ts"
import { enabled, type Registry } from "./registry.ts"

/** The capabilities of each era for the registry now. @internal */
export interface Capabilities {
  readonly legacy: () => McpSchema.ServerCapabilities
  readonly modern: () => McpSchema.ServerCapabilities
}

/** Capabilities following `current()`, recomputed when the registry value changes. @internal */
export const make = (current: () => Registry, given: McpServer.Options["capabilities"]): Capabilities => {
  let of: Registry | undefined
  let legacy: McpSchema.ServerCapabilities = {}
  let modern: McpSchema.ServerCapabilities = {}
  const refresh = () => {
    const registry = current()
    if (registry !== of) {
      of = registry
      legacy = legacyOf(registry, given)
      modern = modernOf(registry, legacy)
    }
  }
  return {
    legacy: () => {
      refresh()
      return legacy
    },
    modern: () => {
      refresh()
      return modern
    }
  }
}

const legacyOf = (current: Registry, given: McpServer.Options["capabilities"]): McpSchema.ServerCapabilities => {
  const completions = [...enabled(current.prompts), ...enabled(current.resourceTemplates)].some((d) =>
    d.completion !== undefined || Object.keys(d.complete).length > 0
  )
  return withoutUndefined({
    logging: {},
    ...(current.tools.size > 0 ? { tools: { listChanged: true } } : {}),
    ...(current.resources.size + current.resourceTemplates.size > 0
      ? { resources: { subscribe: true, listChanged: true } }
      : {}),
    ...(current.prompts.size > 0 ? { prompts: { listChanged: true } } : {}),
    ...(completions ? { completions: {} } : {}),
    ...(hasTaskTools(current) ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
    ...given,
    ...extensionsOf(current, given)
  })
}

// 2026-07-28: tasks are the extension, never the 2025-11-25 capability
const modernOf = (current: Registry, legacy: McpSchema.ServerCapabilities): McpSchema.ServerCapabilities => {
  const { tasks: _, ...rest } = legacy
  return hasTaskTools(current)
    ? { ...rest, extensions: { ...rest.extensions, [McpSchema.TASKS_EXTENSION_ID]: {} } }
    : rest
}

// the registered extensions' settings, under those the options give
const extensionsOf = (current: Registry, given: McpServer.Options["capabilities"]) => {
  const registered = declared(current)
  return registered === undefined ? {} : { extensions: { ...registered, ...given?.extensions } }
}

const hasTaskTools = (current: Registry) => {
  for (const entry of current.tools.values()) if (entry.definition.task !== "forbidden") return true
  return false
}

// a capability given as `undefined` in the options is not declared (`{ logging: undefined }`: a server that does not log)
const withoutUndefined = (capabilities: Record<string, unknown>): McpSchema.ServerCapabilities =>
  Object.fromEntries(
    Object.entries(capabilities).filter(([, value]) => value !== undefined)
  ) as McpSchema.ServerCapabilities
