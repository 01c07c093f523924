/**
 * The definitions a gateway serves in front: one per component of the
 * group's views that its filters let through, named for model providers,
 * each forwarding to its server. A component's listing passes through as
 * the server gave it, under its front name.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as McpClient from "../../McpClient.ts"
import type * as McpError from "../../McpError.ts"
import type * as McpGateway from "../../McpGateway.ts"
import type * as McpGroup from "../../McpGroup.ts"
import type * as McpPrompt from "../../McpPrompt.ts"
import type * as McpResource from "../../McpResource.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpTool from "../../McpTool.ts"
import * as UriTemplate from "../../UriTemplate.ts"
import { modelNames } from "../ai/names.ts"
import { CurrentTaskRequest } from "../server/task/call.ts"
import { allows } from "./filter.ts"
import { type Deps, forward } from "./forward.ts"

/** A definition in front, with the component it serves and what it was made from. @internal */
export interface Served {
  readonly definition: McpServer.Definition<never>
  readonly component: McpGateway.Component
  /** The listing it was made from, as JSON: an unchanged listing keeps its definition. */
  readonly source: string
}

/** The key of a definition in the registry. @internal */
export const keyOf = (kind: McpGroup.ComponentKind, name: string) => `${kind}\u0000${name}`

const passes = (
  upstreams: McpGateway.Options["upstreams"],
  server: string,
  kind: keyof McpGateway.Filters,
  name: string
) => allows(upstreams?.[server]?.[kind], name)

// a legacy server's task is created before it asks anything: it becomes a
// task in front when it asked nothing for this long (a question is a round
// of the call), or ended
const LEGACY_TASK_GRACE = Duration.millis(100)

/**
 * A tool call behind, for a client in front that asked for a task
 * (`becomeTask` makes the call a task in front, once no round is pending):
 *
 * - a 2026-07-28 server decides: the call is a task in front when it is one
 *   behind (after its own rounds);
 * - a legacy server's tool that may run as a task runs as a plain call
 *   behind, a task in front at once (its questions the task's);
 * - a legacy server's tool that must run as a task is one behind, and in
 *   front once it asked nothing for a moment (its first questions rounds of
 *   the call, as the server's own `taskAfter` would have it).
 */
const callAsTask = (
  client: McpClient.Client,
  name: string,
  args: Record<string, unknown> | undefined,
  options: McpClient.RequestOptions,
  support: McpTool.TaskSupport,
  becomeTask: Effect.Effect<void>
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> =>
  Effect.gen(function*() {
    if (client.era === "legacy" && support === "optional") {
      yield* becomeTask
      return yield* client.callTool(name, args, options)
    }
    const task = yield* client.callToolTask(name, args, options)
    if (task.taskId === "") return yield* task.result
    // cancelled in front: cancelled behind
    const result = yield* Effect.forkChild(
      Effect.onInterrupt(task.result, () => Effect.forkDetach(Effect.ignore(task.cancel), { startImmediately: true })),
      { startImmediately: true }
    )
    if (client.era === "legacy") yield* Effect.raceFirst(Effect.sleep(LEGACY_TASK_GRACE), Fiber.await(result))
    yield* becomeTask
    return yield* Fiber.join(result)
  })

const tool = (deps: Deps, component: McpGateway.Component, listing: McpSchema.Tool): McpTool.McpTool => {
  const task = listing.execution?.taskSupport ?? "forbidden"
  return {
    _tag: "McpTool",
    name: component.name,
    tool: { ...listing, name: component.name },
    task,
    // a task in front when there is one behind (`callAsTask`), not after a time
    taskAfter: Duration.infinity,
    // the call behind must not run twice: a modern client's rounds resume it
    hold: true,
    call: (args, context) =>
      Effect.flatMap(CurrentTaskRequest, (becomeTask) =>
        forward(
          deps,
          component.server,
          context,
          (client, options) =>
            becomeTask === undefined || task === "forbidden"
              ? client.callTool(component.upstreamName, args as Record<string, unknown> | undefined, options)
              : callAsTask(
                client,
                component.upstreamName,
                args as Record<string, unknown> | undefined,
                options,
                task,
                becomeTask
              ),
          becomeTask !== undefined && task !== "forbidden"
        ))
  }
}

const prompt = (deps: Deps, component: McpGateway.Component, listing: McpSchema.Prompt): McpPrompt.McpPrompt => ({
  _tag: "McpPrompt",
  name: component.name,
  prompt: { ...listing, name: component.name },
  hold: true,
  get: (args, context) =>
    forward(
      deps,
      component.server,
      context,
      (client, options) => client.getPrompt(component.upstreamName, args, options)
    ),
  complete: {},
  completion: (params, context) =>
    forward(
      deps,
      component.server,
      context,
      (client, options) =>
        client.complete(completeParams(params, { type: "ref/prompt", name: component.upstreamName }), options)
    )
})

// what a completion asks, without the front request's `_meta`
const completeParams = (
  params: McpSchema.CompleteRequestParams,
  ref: McpSchema.CompleteRequestParams["ref"]
): Omit<McpSchema.CompleteRequestParams, "_meta"> =>
  params.context === undefined
    ? { ref, argument: params.argument }
    : { ref, argument: params.argument, context: params.context }

const resource = (
  deps: Deps,
  component: McpGateway.Component,
  listing: McpSchema.Resource
): McpResource.McpResource => ({
  _tag: "McpResource",
  uri: component.name,
  resource: listing,
  hold: true,
  read: (context) =>
    forward(deps, component.server, context, (client, options) => client.readResource(listing.uri, options))
})

const template = (
  deps: Deps,
  component: McpGateway.Component,
  listing: McpSchema.ResourceTemplate,
  parsed: UriTemplate.UriTemplate
): McpResource.McpResourceTemplate => ({
  _tag: "McpResourceTemplate",
  uriTemplate: component.name,
  template: listing,
  hold: true,
  match: (uri) => UriTemplate.match(parsed, uri),
  read: (uri, _, context) =>
    forward(deps, component.server, context, (client, options) => client.readResource(uri, options)),
  list: undefined,
  complete: {},
  completion: (params, context) =>
    forward(
      deps,
      component.server,
      context,
      (client, options) => client.complete(completeParams(params, params.ref), options)
    )
})

/**
 * What the views give in front, by registry key; a component whose listing
 * did not change keeps the definition it had (`previous`). `ttlOf` gives the
 * cache hint of a server's list (2026-07-28), which its definitions carry;
 * the templates `covered` are served by the gateway's own (its skills'
 * template, `skills.ts`), not passed through.
 *
 * @internal
 */
export const fromViews = (
  deps: Deps,
  views: McpGroup.Views,
  upstreams: McpGateway.Options["upstreams"],
  previous: ReadonlyMap<string, Served>,
  ttlOf: (server: string, kind: McpGroup.ComponentKind) => number | undefined,
  covered: (server: string, uriTemplate: string) => boolean = () => false
): Effect.Effect<Map<string, Served>> =>
  Effect.gen(function*() {
    const served = new Map<string, Served>()
    const add = (
      kind: McpGroup.ComponentKind,
      name: string,
      server: string,
      upstreamName: string,
      listing: unknown,
      make: (component: McpGateway.Component) => McpServer.Definition<never> | undefined
    ) => {
      const key = keyOf(kind, name)
      if (served.has(key)) return
      const ttlMs = ttlOf(server, kind)
      const source = JSON.stringify([server, upstreamName, listing, ttlMs])
      const before = previous.get(key)
      if (before !== undefined && before.source === source) {
        served.set(key, before)
        return
      }
      const component: McpGateway.Component = { kind, name, server, upstreamName }
      const made = make(component)
      if (made === undefined) return
      // the server's cache hint of the list it came from (the answer of a merged list takes the shortest)
      const definition = ttlMs === undefined ? made : { ...made, cache: { ttlMs, cacheScope: "private" as const } }
      served.set(key, { definition, component, source })
    }

    const tools = views.tools.filter((entry) => passes(upstreams, entry.server, "tools", entry.tool.name))
    const toolNames = modelNames(tools.map((entry) => entry.name))
    tools.forEach((entry, i) => {
      const name = toolNames[i]
      if (name !== undefined) {
        add("tool", name, entry.server, entry.tool.name, entry.tool, (c) => tool(deps, c, entry.tool))
      }
    })

    const prompts = views.prompts.filter((entry) => passes(upstreams, entry.server, "prompts", entry.prompt.name))
    const promptNames = modelNames(prompts.map((entry) => entry.name))
    prompts.forEach((entry, i) => {
      const name = promptNames[i]
      if (name !== undefined) {
        add("prompt", name, entry.server, entry.prompt.name, entry.prompt, (c) => prompt(deps, c, entry.prompt))
      }
    })

    // resources keep their URIs; one that two servers list is the first's
    for (const entry of views.resources) {
      if (!passes(upstreams, entry.server, "resources", entry.resource.uri)) continue
      add("resource", entry.resource.uri, entry.server, entry.resource.uri, entry.resource, (c) =>
        resource(deps, c, entry.resource))
    }
    for (const entry of views.resourceTemplates) {
      const uriTemplate = entry.template.uriTemplate
      if (!passes(upstreams, entry.server, "resources", uriTemplate) || covered(entry.server, uriTemplate)) {
        continue
      }
      const parsed = UriTemplate.parse(uriTemplate)
      if (Result.isFailure(parsed)) {
        yield* Effect.logWarning(
          `server "${entry.server}": resource template ${JSON.stringify(uriTemplate)} left out: ${parsed.failure}`
        )
        continue
      }
      add("resourceTemplate", uriTemplate, entry.server, uriTemplate, entry.template, (c) =>
        template(deps, c, entry.template, parsed.success))
    }
    return served
  })

/** The server and URI of a resource subscription: the resource's, or a template's that matches it. @internal */
export const subscriptionTarget = (served: ReadonlyMap<string, Served>, uri: string): string | undefined => {
  const exact = served.get(keyOf("resource", uri))
  if (exact !== undefined) return exact.component.server
  for (const entry of served.values()) {
    const definition = entry.definition
    if (definition._tag === "McpResourceTemplate" && Option.isSome(definition.match(uri))) return entry.component.server
  }
  return undefined
}
