/**
 * The group's aggregation, as pure functions: a server's lists named for
 * the group (its parts: tools and prompts by the hook, resources and
 * templates under their URIs), collision checks of tools and prompts
 * against the other servers' parts, the views in order of connection, and
 * the indexes that route calls by group name or URI.
 *
 * @internal
 */
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

type Entry = { readonly server: string; readonly name: string }

/** A tool or prompt list named by the hook; fails when the hook gives two of them one name. */
const nameList = <K extends "tools" | "prompts">(
  key: K,
  list: Lists[K],
  server: string,
  serverInfo: McpSchema.Implementation,
  hook: NameHook | undefined
): Result.Result<Parts[K], McpError.McpError> => {
  const kind = key === "tools" ? "tool" : "prompt"
  const seen = new Set<string>()
  const entries: Array<Entry> = []
  for (const item of list) {
    const name = hook === undefined ? item.name : hook(item.name, serverInfo, server, kind)
    if (seen.has(name)) return Result.fail(McpError.nameCollision(kind, name, [server, server]))
    seen.add(name)
    entries.push(
      key === "tools" ? { server, name, tool: item } as ToolEntry : { server, name, prompt: item } as PromptEntry
    )
  }
  return Result.succeed(entries as unknown as Parts[K])
}

/**
 * Names one kind of a server's components for the group: tools and prompts
 * by the hook, checked against the other servers' parts (fails with the
 * first collision); resources and templates under their URIs, which never
 * collide.
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
  if (key === "resources") {
    const resources = list as Lists["resources"]
    const part: Parts["resources"] = resources.map((resource) => ({ server, name: resource.uri, resource }))
    return Result.succeed(part as unknown as Parts[K])
  }
  if (key === "resourceTemplates") {
    const templates = list as Lists["resourceTemplates"]
    const part: Parts["resourceTemplates"] = templates.map((template) => ({
      server,
      name: template.uriTemplate,
      template
    }))
    return Result.succeed(part as unknown as Parts[K])
  }
  const named = nameList(key as "tools" | "prompts", list as Lists["tools" | "prompts"], server, serverInfo, hook)
  if (Result.isFailure(named)) return Result.fail(named.failure)
  const taken = new Map<string, string>()
  for (const [other, parts] of others) {
    if (other === server) continue
    for (const entry of parts[key] as ReadonlyArray<Entry>) taken.set(entry.name, other)
  }
  for (const entry of named.success as ReadonlyArray<Entry>) {
    const owner = taken.get(entry.name)
    if (owner !== undefined) return Result.fail(McpError.nameCollision(kindOf[key], entry.name, [owner, server]))
  }
  return named as Result.Result<Parts[K], McpError.McpError>
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
  /** The template, when it parses. */
  readonly parsed: UriTemplate.UriTemplate | undefined
}

/** The views indexed by group name (tools, prompts) and URI (resources, templates). @internal */
export interface Index {
  readonly tools: ReadonlyMap<string, ToolEntry>
  readonly prompts: ReadonlyMap<string, PromptEntry>
  /** Every listing of a URI, in order of connection. */
  readonly resources: ReadonlyMap<string, ReadonlyArray<ResourceEntry>>
  readonly templates: ReadonlyArray<TemplateRoute>
  /** Every server's template of a URI template, in order of connection. */
  readonly templatesByUri: ReadonlyMap<string, ReadonlyArray<ResourceTemplateEntry>>
}

const parseTemplate = (source: string): UriTemplate.UriTemplate | undefined => {
  const parsed = UriTemplate.parse(source)
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

const groupBy = <A extends Entry>(entries: ReadonlyArray<A>): ReadonlyMap<string, ReadonlyArray<A>> => {
  const out = new Map<string, Array<A>>()
  for (const entry of entries) {
    const same = out.get(entry.name)
    if (same === undefined) out.set(entry.name, [entry])
    else same.push(entry)
  }
  return out
}

/** @internal */
export const makeIndex = (views: Views): Index => ({
  tools: new Map(views.tools.map((entry) => [entry.name, entry])),
  prompts: new Map(views.prompts.map((entry) => [entry.name, entry])),
  resources: groupBy(views.resources),
  templates: views.resourceTemplates.map((entry) => ({ entry, parsed: parseTemplate(entry.template.uriTemplate) })),
  templatesByUri: groupBy(views.resourceTemplates)
})

/**
 * Where a call on a URI goes: the one server that offers it, or the servers
 * among which the caller must choose.
 *
 * @internal
 */
export type Route =
  | { readonly _tag: "Server"; readonly server: string }
  | { readonly _tag: "Ambiguous"; readonly servers: ReadonlyArray<string> }

const routeOf = (entries: ReadonlyArray<Entry>): Route | undefined => {
  const servers = Array.from(new Set(entries.map((entry) => entry.server)))
  if (servers.length === 0) return undefined
  // named in a stable order, whatever the order of connection
  return servers.length === 1 ? { _tag: "Server", server: servers[0]! } : { _tag: "Ambiguous", servers: servers.sort() }
}

/**
 * The server of a URI: the servers that list it, else those with a template
 * that matches it; `undefined` when no server offers it.
 *
 * @internal
 */
export const routeResource = (index: Index, uri: string): Route | undefined =>
  routeOf(index.resources.get(uri) ?? []) ??
    routeOf(
      index.templates.flatMap((route) =>
        route.parsed !== undefined && UriTemplate.test(route.parsed, uri) ? [route.entry] : []
      )
    )

/**
 * The server of a completion reference, and the reference it knows: a
 * prompt by its group name, a resource template by its URI template (else a
 * resource by its URI).
 *
 * @internal
 */
export const routeReference = (
  index: Index,
  ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference
):
  | {
    readonly _tag: "Server"
    readonly server: string
    readonly ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference
  }
  | { readonly _tag: "Ambiguous"; readonly servers: ReadonlyArray<string> }
  | undefined =>
{
  if (ref.type === "ref/prompt") {
    const entry = index.prompts.get(ref.name)
    return entry === undefined
      ? undefined
      : { _tag: "Server", server: entry.server, ref: { ...ref, name: entry.prompt.name } }
  }
  const route = routeOf(index.templatesByUri.get(ref.uri) ?? []) ?? routeOf(index.resources.get(ref.uri) ?? [])
  return route === undefined || route._tag === "Ambiguous" ? route : { ...route, ref }
}

/**
 * The first server whose withdrawn parts (it is down) had a component of
 * that group name (or, for a URI, a template that matches it).
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
