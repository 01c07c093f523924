/**
 * The group's aggregation, as pure functions: a server's lists named by the
 * hook (its parts), collision checks against the other servers' parts, the
 * views in order of connection, and the indexes that route calls by group
 * name.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as McpError from "../../McpError.ts"
import type {
  ComponentKind,
  NameHook,
  PromptEntry,
  ResourceEntry,
  ResourceTemplateEntry,
  ToolEntry,
  Views
} from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as UriTemplate from "../../UriTemplate.ts"

/** A server's lists, as the server sent them. @internal */
export interface Lists {
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly prompts: ReadonlyArray<McpSchema.Prompt>
  readonly resources: ReadonlyArray<McpSchema.Resource>
  readonly resourceTemplates: ReadonlyArray<McpSchema.ResourceTemplate>
}

/** @internal */
export type ListKey = keyof Lists

/** A server's components, named for the group. @internal */
export type Parts = Views

/** @internal */
export const emptyLists: Lists = { tools: [], prompts: [], resources: [], resourceTemplates: [] }

/** @internal */
export const emptyParts: Parts = { tools: [], prompts: [], resources: [], resourceTemplates: [] }

/** @internal */
export const kindOf: Record<ListKey, ComponentKind> = {
  tools: "tool",
  prompts: "prompt",
  resources: "resource",
  resourceTemplates: "resourceTemplate"
}

/** @internal */
export const listKeys: ReadonlyArray<ListKey> = ["tools", "prompts", "resources", "resourceTemplates"]

const describeKind: Record<ComponentKind, string> = {
  tool: "tool",
  prompt: "prompt",
  resource: "resource",
  resourceTemplate: "resource template"
}

type Entry = { readonly server: string; readonly name: string }

/** The part of one kind of one server; fails when the hook gives two components one name. */
const nameList = <K extends ListKey>(
  key: K,
  list: Lists[K],
  server: string,
  serverInfo: McpSchema.Implementation,
  hook: NameHook | undefined
): Result.Result<Parts[K], McpError.McpError> => {
  const kind = kindOf[key]
  const seen = new Set<string>()
  const entries: Array<Entry> = []
  for (const item of list as ReadonlyArray<Record<string, unknown>>) {
    const own = idOf(key, item)
    const name = hook === undefined ? own : hook(own, serverInfo, server, kind)
    if (seen.has(name)) return Result.fail(McpError.nameCollision(describeKind[kind], name, [server, server]))
    seen.add(name)
    entries.push(entryOf(key, server, name, item))
  }
  return Result.succeed(entries as unknown as Parts[K])
}

const idOf = (key: ListKey, item: Record<string, unknown>): string =>
  String(key === "resources" ? item.uri : key === "resourceTemplates" ? item.uriTemplate : item.name)

const entryOf = (key: ListKey, server: string, name: string, item: unknown): Entry => {
  switch (key) {
    case "tools":
      return { server, name, tool: item } as ToolEntry
    case "prompts":
      return { server, name, prompt: item } as PromptEntry
    case "resources":
      return { server, name, resource: item } as ResourceEntry
    case "resourceTemplates":
      return { server, name, template: item } as ResourceTemplateEntry
  }
}

/**
 * Names one kind of a server's components for the group and checks them
 * against the other servers' parts. Fails with the first collision.
 *
 * @internal
 */
export const namePart = <K extends ListKey>(
  key: K,
  list: Lists[K],
  server: string,
  serverInfo: McpSchema.Implementation,
  hook: NameHook | undefined,
  others: ReadonlyArray<readonly [string, Parts]>
): Result.Result<Parts[K], McpError.McpError> => {
  const named = nameList(key, list, server, serverInfo, hook)
  if (Result.isFailure(named)) return named
  const taken = new Map<string, string>()
  for (const [other, parts] of others) {
    if (other === server) continue
    for (const entry of parts[key] as ReadonlyArray<Entry>) taken.set(entry.name, other)
  }
  for (const entry of named.success as ReadonlyArray<Entry>) {
    const owner = taken.get(entry.name)
    if (owner !== undefined) {
      return Result.fail(McpError.nameCollision(describeKind[kindOf[key]], entry.name, [owner, server]))
    }
  }
  return named
}

/**
 * Names every kind of a server's components (see {@link namePart}).
 *
 * @internal
 */
export const nameParts = (
  lists: Lists,
  server: string,
  serverInfo: McpSchema.Implementation,
  hook: NameHook | undefined,
  others: ReadonlyArray<readonly [string, Parts]>
): Result.Result<Parts, McpError.McpError> => {
  const parts: Record<string, unknown> = {}
  for (const key of listKeys) {
    const part = namePart(key, lists[key], server, serverInfo, hook, others)
    if (Result.isFailure(part)) return Result.fail(part.failure)
    parts[key] = part.success
  }
  return Result.succeed(parts as unknown as Parts)
}

/**
 * The views of the servers' parts, in the order given.
 *
 * @internal
 */
export const makeViews = (parts: ReadonlyArray<Parts>): Views => ({
  tools: parts.flatMap((part) => part.tools),
  prompts: parts.flatMap((part) => part.prompts),
  resources: parts.flatMap((part) => part.resources),
  resourceTemplates: parts.flatMap((part) => part.resourceTemplates)
})

// -----------------------------------------------------------------------------
// Routing
// -----------------------------------------------------------------------------

interface TemplateRoute {
  readonly entry: ResourceTemplateEntry
  /** The group template, when it parses. */
  readonly group: UriTemplate.UriTemplate | undefined
  /** The server's template, when it parses. */
  readonly own: UriTemplate.UriTemplate | undefined
}

/** The views indexed by group name. @internal */
export interface Index {
  readonly tools: ReadonlyMap<string, ToolEntry>
  readonly prompts: ReadonlyMap<string, PromptEntry>
  readonly resources: ReadonlyMap<string, ResourceEntry>
  readonly templates: ReadonlyArray<TemplateRoute>
  readonly templatesByName: ReadonlyMap<string, ResourceTemplateEntry>
}

const parseTemplate = (source: string): UriTemplate.UriTemplate | undefined => {
  const parsed = UriTemplate.parse(source)
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

/** @internal */
export const makeIndex = (views: Views): Index => ({
  tools: new Map(views.tools.map((entry) => [entry.name, entry])),
  prompts: new Map(views.prompts.map((entry) => [entry.name, entry])),
  resources: new Map(views.resources.map((entry) => [entry.name, entry])),
  templates: views.resourceTemplates.map((entry) => {
    const own = parseTemplate(entry.template.uriTemplate)
    return { entry, own, group: entry.name === entry.template.uriTemplate ? own : parseTemplate(entry.name) }
  }),
  templatesByName: new Map(views.resourceTemplates.map((entry) => [entry.name, entry]))
})

/** Where a URI is read: the server and the URI it knows. @internal */
export interface ResourceRoute {
  readonly server: string
  readonly uri: string
}

/**
 * The server of a group URI: a listed resource, else the first template that
 * matches it (the server's URI is the server's template expanded with what
 * the group template matched).
 *
 * @internal
 */
export const routeResource = (index: Index, uri: string): ResourceRoute | undefined => {
  const listed = index.resources.get(uri)
  if (listed !== undefined) return { server: listed.server, uri: listed.resource.uri }
  for (const route of index.templates) {
    if (route.group === undefined) continue
    const matched = UriTemplate.match(route.group, uri)
    if (Option.isNone(matched)) continue
    if (route.entry.name === route.entry.template.uriTemplate) return { server: route.entry.server, uri }
    if (route.own === undefined) continue
    return { server: route.entry.server, uri: UriTemplate.expand(route.own, matched.value as never) }
  }
  return undefined
}

/**
 * The server of a completion reference, and the reference it knows.
 *
 * @internal
 */
export const routeReference = (
  index: Index,
  ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference
):
  | { readonly server: string; readonly ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference }
  | undefined =>
{
  if (ref.type === "ref/prompt") {
    const entry = index.prompts.get(ref.name)
    return entry === undefined ? undefined : { server: entry.server, ref: { ...ref, name: entry.prompt.name } }
  }
  const template = index.templatesByName.get(ref.uri)
  if (template !== undefined) {
    return { server: template.server, ref: { ...ref, uri: template.template.uriTemplate } }
  }
  const resource = index.resources.get(ref.uri)
  return resource === undefined ? undefined : { server: resource.server, ref: { ...ref, uri: resource.resource.uri } }
}

/**
 * The server whose withdrawn parts (it is down) had a component of that
 * group name.
 *
 * @internal
 */
export const ownerOf = (
  withdrawn: ReadonlyArray<readonly [string, Parts]>,
  key: ListKey,
  name: string,
  uri?: boolean
): string | undefined => {
  for (const [server, parts] of withdrawn) {
    if ((parts[key] as ReadonlyArray<Entry>).some((entry) => entry.name === name)) return server
    if (uri === true) {
      for (const template of parts.resourceTemplates) {
        const parsed = parseTemplate(template.name)
        if (parsed !== undefined && UriTemplate.test(parsed, name)) return server
      }
    }
  }
  return undefined
}
