/**
 * The group's calls: a group name (or URI) found in the published routing
 * index leads to a server, which is called with its own name. A name that is
 * not in the views is a down server's (the call fails naming it) or
 * nobody's; a call that fails for want of a connection names its server.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type { Group, ReadResourceOptions } from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as Aggregate from "./aggregate.ts"
import * as Entry from "./entry.ts"
import type * as State from "./state.ts"

/** How long the ping that checks a server after a failed call may take. */
const PROBE_TIMEOUT = Duration.seconds(10)

/** A failure that means the connection itself is gone. */
const isConnectionFailure = (error: McpError.McpError): boolean =>
  error.reason._tag === "TransportError" || error.reason._tag === "ClosedError"

/** The client of an up server. */
const clientOf = (state: State.State, server: string): Effect.Effect<McpClient.Client, McpError.McpError> =>
  Effect.suspend(() => {
    const entry = state.entries.get(server)
    if (entry === undefined) return Effect.fail(McpError.notFound("server", server))
    if (entry.status !== "up" || entry.connection === undefined) return Effect.fail(Entry.unavailable(entry))
    return Effect.succeed(entry.connection.client)
  })

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

/**
 * After a call failed for want of a connection while the session is still
 * open (an HTTP server that went away leaves the session open): one ping,
 * and if that fails the same way, the connection is ended with its error,
 * which the supervisor takes as the server going down.
 */
const probe = (entry: Entry.Entry, connection: Entry.Connection): Effect.Effect<void> =>
  connection.client.ping({ timeout: PROBE_TIMEOUT }).pipe(
    Effect.catchIf(isConnectionFailure, (error) =>
      Effect.andThen(Deferred.succeed(connection.ended, error), Scope.close(connection.scope, Exit.void))),
    Effect.ignore,
    // in the server's scope: closing the connection's from a fiber of its own would wait for itself
    Effect.forkIn(entry.scope, { startImmediately: true }),
    Effect.asVoid
  )

/** Calls a server; a failure that means it went away names it. */
const call = <A>(
  state: State.State,
  server: string,
  f: (client: McpClient.Client) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  Effect.flatMap(clientOf(state, server), (client) =>
    f(client).pipe(
      Effect.catchIf(isConnectionFailure, (error) =>
        Effect.flatMap(client.session.isOpen, (isOpen) => {
          if (!isOpen) return Effect.fail(McpError.serverUnavailable(server, error.message, error))
          const entry = state.entries.get(server)
          const connection = entry?.connection
          return Effect.andThen(
            entry !== undefined && connection !== undefined && connection.client === client
              ? probe(entry, connection)
              : Effect.void,
            Effect.fail(error)
          )
        }))
    ))

/** The group's routed calls. @internal */
export const make = (
  state: State.State
): Pick<Group, "callTool" | "getPrompt" | "readResource" | "complete" | "client"> => {
  const index = Effect.map(SubscriptionRef.get(state.snapshot), (current) => current.index)

  const callTool = Effect.fn("McpGroup.callTool")(function*(
    name: string,
    args?: Readonly<Record<string, unknown>>,
    requestOptions?: McpClient.RequestOptions
  ) {
    const entry = (yield* index).tools.get(name)
    if (entry === undefined) return yield* missing(state, "tools", "tool", name)
    return yield* call(state, entry.server, (client) => client.callTool(entry.tool.name, args, requestOptions))
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

  const readResource = Effect.fn("McpGroup.readResource")(function*(
    uri: string,
    readOptions?: ReadResourceOptions
  ) {
    const { server, ...requestOptions } = readOptions ?? {}
    if (server !== undefined) return yield* call(state, server, (client) => client.readResource(uri, requestOptions))
    const route = Aggregate.routeResource(yield* index, uri)
    if (route !== undefined) {
      return yield* call(state, route.server, (client) => client.readResource(route.uri, requestOptions))
    }
    const error = missing(state, "resources", "resource", uri, true)
    if (error.reason._tag !== "NotFoundError") return yield* error
    // a URI nobody listed: the only server with resources, if there is one
    const candidates = Array.from(state.entries.values()).filter((entry) =>
      entry.status === "up" && entry.connection?.client.serverCapabilities.resources !== undefined
    )
    if (candidates.length !== 1) return yield* error
    return yield* call(state, candidates[0]!.name, (client) => client.readResource(uri, requestOptions))
  })

  const complete = Effect.fn("McpGroup.complete")(function*(
    ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> | undefined },
    requestOptions?: McpClient.RequestOptions
  ) {
    const route = Aggregate.routeReference(yield* index, ref)
    if (route === undefined) {
      return yield* ref.type === "ref/prompt"
        ? missing(state, "prompts", "prompt", ref.name)
        : missing(state, "resourceTemplates", "resource template", ref.uri)
    }
    const completionContext = context?.arguments === undefined ? undefined : { arguments: context.arguments }
    return yield* call(state, route.server, (client) =>
      client.complete(
        completionContext === undefined
          ? { ref: route.ref, argument }
          : { ref: route.ref, argument, context: completionContext },
        requestOptions
      ))
  })

  const client = Effect.fn("McpGroup.client")(function*(server: string) {
    return yield* clientOf(state, server)
  })

  return { callTool, getPrompt, readResource, complete, client }
}
