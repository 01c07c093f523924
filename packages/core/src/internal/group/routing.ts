/**
 * The group's calls: a group name found in the published routing index
 * leads to a server, which is called with its own name; a URI leads to the
 * one server that offers it, or to an `AmbiguousError` naming those that do
 * (unless the call names its server). A name that is not in the views is a
 * down server's (the call fails naming it) or nobody's; a call that fails
 * for want of a connection names its server (`live.ts`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type { Group, ResourceOptions } from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpTask from "../../McpTask.ts"
import * as Aggregate from "./aggregate.ts"
import * as Entry from "./entry.ts"
import * as Handle from "./handle.ts"
import * as Live from "./live.ts"
import type * as State from "./state.ts"

/** A name that is not in the views: a down server's, or nobody's. */
const missing = (
  state: State.State,
  key: Aggregate.ListKey,
  kind: string,
  name: string,
  uri?: boolean
): McpError.McpError => {
  const down = Array.from(state.entries.values()).flatMap((entry) =>
    entry.status === "up" ? [] : [[entry.name, entry.withdrawn] as const]
  )
  const owner = Aggregate.ownerOf(down, key, name, uri)
  const entry = owner === undefined ? undefined : state.entries.get(owner)
  return entry === undefined ? McpError.notFound(kind, name) : Entry.unavailable(entry)
}

/** Calls a server by name. */
const call = <A>(
  state: State.State,
  server: string,
  f: (client: McpClient.Client) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  Effect.flatMap(Live.entryOf(state, server), (entry) => Live.call(state, entry, f))

const requestOptionsOf = (options: ResourceOptions | undefined): McpClient.RequestOptions | undefined => {
  if (options === undefined) return undefined
  const { server: _server, ...requestOptions } = options
  return requestOptions
}

/** The group's routed calls. @internal */
export const make = (
  state: State.State
): Pick<
  Group,
  | "callTool"
  | "callToolTask"
  | "getPrompt"
  | "readResource"
  | "subscribeResource"
  | "unsubscribeResource"
  | "watchResource"
  | "complete"
  | "client"
> => {
  const index = Effect.map(SubscriptionRef.get(state.snapshot), (current) => current.index)

  /**
   * The server of a call on a URI: the one named, else the one that offers
   * it, else the only server that declares resources.
   */
  const serverOf = (uri: string, server: string | undefined): Effect.Effect<string, McpError.McpError> => {
    if (server !== undefined) return Effect.as(Live.entryOf(state, server), server)
    return Effect.flatMap(index, (current) => {
      const route = Aggregate.routeResource(current, uri)
      if (route !== undefined) {
        return route._tag === "Server"
          ? Effect.succeed(route.server)
          : Effect.fail(McpError.ambiguous("resource", uri, route.servers))
      }
      const error = missing(state, "resources", "resource", uri, true)
      if (error.reason._tag !== "NotFoundError") return Effect.fail(error)
      // a URI nobody offers: the only server with resources, if there is one
      const candidates = Array.from(state.entries.values()).filter((entry) =>
        entry.status === "up" && entry.connection?.client.serverCapabilities.resources !== undefined
      )
      return candidates.length === 1 ? Effect.succeed(candidates[0]!.name) : Effect.fail(error)
    })
  }

  const callTool = Effect.fn("McpGroup.callTool")(function*(
    name: string,
    args?: Readonly<Record<string, unknown>>,
    requestOptions?: McpClient.RequestOptions
  ) {
    const entry = (yield* index).tools.get(name)
    if (entry === undefined) return yield* missing(state, "tools", "tool", name)
    return yield* call(state, entry.server, (client) => client.callTool(entry.tool.name, args, requestOptions))
  })

  // the handle is the server's stable client's: it follows reconnections
  const callToolTask = Effect.fn("McpGroup.callToolTask")(function*(
    name: string,
    args?: Readonly<Record<string, unknown>>,
    requestOptions?: McpTask.CallOptions
  ) {
    const entry = (yield* index).tools.get(name)
    if (entry === undefined) return yield* missing(state, "tools", "tool", name)
    const stable = yield* client(entry.server)
    return yield* stable.callToolTask(entry.tool.name, args, requestOptions)
  })

  const getPrompt = Effect.fn("McpGroup.getPrompt")(function*(
    name: string,
    args?: Readonly<Record<string, string>>,
    requestOptions?: McpClient.RequestOptions
  ) {
    const entry = (yield* index).prompts.get(name)
    if (entry === undefined) return yield* missing(state, "prompts", "prompt", name)
    return yield* call(state, entry.server, (client) => client.getPrompt(entry.prompt.name, args, requestOptions))
  })

  const readResource = Effect.fn("McpGroup.readResource")(function*(uri: string, options?: ResourceOptions) {
    const server = yield* serverOf(uri, options?.server)
    return yield* call(state, server, (client) => client.readResource(uri, requestOptionsOf(options)))
  })

  const subscribeResource = Effect.fn("McpGroup.subscribeResource")(function*(uri: string, options?: ResourceOptions) {
    const entry = yield* Effect.flatMap(serverOf(uri, options?.server), (server) => Live.entryOf(state, server))
    yield* Handle.subscribe(state, entry, uri, requestOptionsOf(options))
  })

  const unsubscribeResource = Effect.fn("McpGroup.unsubscribeResource")(function*(
    uri: string,
    options?: ResourceOptions
  ) {
    // the server it was subscribed on, even if it no longer lists it (or is down)
    const subscribed = options?.server === undefined
      ? Array.from(state.entries.values()).filter((entry) => entry.subscriptions.has(uri))
      : []
    const entry = subscribed.length === 1
      ? subscribed[0]!
      : yield* Effect.flatMap(serverOf(uri, options?.server), (server) => Live.entryOf(state, server))
    yield* Handle.unsubscribe(state, entry, uri, requestOptionsOf(options))
  })

  const watchResource = (
    uri: string,
    options?: ResourceOptions
  ): Stream.Stream<McpSchema.ResourceUpdatedNotificationParams, McpError.McpError> =>
    Stream.unwrap(Effect.map(
      Effect.flatMap(serverOf(uri, options?.server), (server) => Live.entryOf(state, server)),
      (entry) => Handle.watch(state, entry, uri, requestOptionsOf(options))
    ))

  const complete = Effect.fn("McpGroup.complete")(function*(
    ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> | undefined },
    options?: ResourceOptions
  ) {
    const server = options?.server
    const found = Aggregate.routeReference(yield* index, ref)
    const route = server === undefined
      ? found
      : ref.type === "ref/prompt"
      ? found?._tag === "Server" && found.server === server ? found : undefined
      : { _tag: "Server" as const, server, ref }
    if (route === undefined) {
      return yield* ref.type === "ref/prompt"
        ? missing(state, "prompts", "prompt", ref.name)
        : missing(state, "resourceTemplates", "resource template", ref.uri)
    }
    if (route._tag === "Ambiguous") {
      return yield* McpError.ambiguous(
        "resource template",
        (ref as McpSchema.ResourceTemplateReference).uri,
        route.servers
      )
    }
    const completionContext = context?.arguments === undefined ? undefined : { arguments: context.arguments }
    const requestOptions = requestOptionsOf(options)
    return yield* call(state, route.server, (client) =>
      client.complete(
        completionContext === undefined
          ? { ref: route.ref, argument }
          : { ref: route.ref, argument, context: completionContext },
        requestOptions
      ))
  })

  const client = Effect.fn("McpGroup.client")(function*(server: string) {
    const entry = yield* Live.entryOf(state, server)
    yield* Live.current(state, entry)
    if (entry.handle === undefined) entry.handle = Handle.make(state, entry)
    return entry.handle
  })

  return {
    callTool,
    callToolTask,
    getPrompt,
    readResource,
    subscribeResource,
    unsubscribeResource,
    watchResource,
    complete,
    client
  }
}
