/**
 * A gateway, assembled: an `McpServer` whose definitions follow the group's
 * views (`definitions.ts`, one registry change per change of the views),
 * whose calls are forwarded (`forward.ts`, with the sessions of `pool.ts`),
 * whose skills are those of the servers behind (`skills.ts`),
 * whose clients see what the policy lets them, whose resource subscriptions
 * are the servers' behind, and whose clients hear of the resources updated
 * behind.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as McpChangeBus from "../../McpChangeBus.ts"
import type * as McpError from "../../McpError.ts"
import type * as McpGateway from "../../McpGateway.ts"
import type * as McpGroup from "../../McpGroup.ts"
import * as McpSchema from "../../McpSchema.ts"
import * as McpServer from "../../McpServer.ts"
import { keyOf as registryKeyOf, kindOf } from "../server/registry.ts"
import * as Capabilities from "./capabilities.ts"
import * as Definitions from "./definitions.ts"
import type { Deps } from "./forward.ts"
import * as Pool from "./pool.ts"
import * as Skills from "./skills.ts"

/**
 * Fetches again the lists of `kind` of every server up: what changed here
 * then reaches this replica's clients (and the bus) as any change does.
 */
const relist = (group: McpGroup.Group) => (change: McpChangeBus.Change): Effect.Effect<void> =>
  change._tag !== "ListChanged" ?
    Effect.void :
    Effect.flatMap(
      group.servers,
      (servers) =>
        Effect.forEach(servers, (status) =>
          status.status !== "up" ? Effect.void : group.client(status.name).pipe(
            Effect.flatMap((client): Effect.Effect<unknown, McpError.McpError> =>
              change.kind === "tools"
                ? client.tools.refresh
                : change.kind === "prompts"
                ? client.prompts.refresh
                : Effect.andThen(client.resources.refresh, client.resourceTemplates.refresh)
            ),
            Effect.ignore
          ), { concurrency: "unbounded", discard: true })
    )

const KIND_OF: Record<Exclude<ReturnType<typeof kindOf>, "extensions">, McpGroup.ComponentKind> = {
  tools: "tool",
  prompts: "prompt",
  resources: "resource",
  resourceTemplates: "resourceTemplate"
}

/** @internal */
export const make = (
  group: McpGroup.Group,
  options: McpGateway.Options
): Effect.Effect<McpServer.Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { callTimeout, policy, sessionIdleTimeout, upstreams, ...serverOptions } = options
    let served = new Map<string, Definitions.Served>()
    const componentOf = (definition: McpServer.Definition<any>) => {
      const kind = kindOf(definition)
      return kind === "extensions"
        ? undefined
        : served.get(Definitions.keyOf(KIND_OF[kind], registryKeyOf(definition)))?.component
    }

    const timeout = Duration.fromInputUnsafe(callTimeout ?? Duration.seconds(60))
    const pool = yield* Pool.make(group, {
      max: (server) => Math.max(1, upstreams?.[server]?.sessions ?? 8),
      idleMillis: Duration.toMillis(Duration.fromInputUnsafe(sessionIdleTimeout ?? Duration.minutes(5))),
      waitMillis: Duration.toMillis(timeout)
    })
    const deps: Deps = { group, pool, callTimeout: timeout }
    // the skills extension, while a server behind declares it
    const skills = yield* Skills.make(deps, { upstreams, policy })

    const server = yield* McpServer.make({
      name: "effect-mcp-gateway",
      version: "0.3.0",
      // servers behind come and go: every list may change
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        completions: {}
      },
      ...serverOptions,
      visible: policy === undefined ? serverOptions.visible : (definition, context) => {
        const component = componentOf(definition)
        return (component === undefined || policy(component, { auth: context.auth, context })) &&
          (serverOptions.visible?.(definition, context) ?? true)
      },
      // a resource followed in front is subscribed to behind
      onSubscriptions: (uri, subscribed) => {
        const target = Definitions.subscriptionTarget(served, uri) ?? skills.ownerOf(uri)
        const routed = target === undefined ? undefined : { server: target }
        return subscribed ? group.subscribeResource(uri, routed) : group.unsubscribeResource(uri, routed)
      }
    })

    // how long each server said its lists stay fresh (2026-07-28), by server and kind
    const freshness = (views: McpGroup.Views) =>
      Effect.gen(function*() {
        const ttls = new Map<string, Partial<Record<McpGroup.ComponentKind, number | undefined>>>()
        const names = new Set(
          [...views.tools, ...views.prompts, ...views.resources, ...views.resourceTemplates].map((entry) =>
            entry.server
          )
        )
        for (const name of names) {
          const client = yield* Effect.option(group.client(name))
          if (client._tag === "None") continue
          ttls.set(name, {
            tool: yield* client.value.tools.ttlMs,
            prompt: yield* client.value.prompts.ttlMs,
            resource: yield* client.value.resources.ttlMs,
            resourceTemplate: yield* client.value.resourceTemplates.ttlMs
          })
        }
        return (server: string, kind: McpGroup.ComponentKind) => ttls.get(server)?.[kind]
      })

    // one change of the registry at a time: the extension's template takes the key of a template it replaces
    const lock = yield* Semaphore.make(1)
    const apply = (views: McpGroup.Views) =>
      Effect.gen(function*() {
        const own = yield* skills.sync(views)
        const next = yield* Definitions.fromViews(
          deps,
          views,
          upstreams,
          served,
          yield* freshness(views),
          skills.covers
        )
        const register: Array<McpServer.Definition<never>> = [...own.register]
        const unregister: Array<McpServer.Definition<never>> = [...own.unregister]
        for (const [key, entry] of next) if (served.get(key) !== entry) register.push(entry.definition)
        for (const [key, entry] of served) if (!next.has(key)) unregister.push(entry.definition)
        served = next
        // one update: what is unregistered goes before what is registered
        if (register.length > 0 || unregister.length > 0) yield* server.update({ register, unregister })
      }).pipe(Semaphore.withPermits(lock, 1))

    // the views now (the first lists are whole), then each change (`changes` starts with the views it sees)
    yield* apply(yield* group.views)
    yield* group.changes.pipe(Stream.runForEach(apply), Effect.forkScoped)
    // a server's capabilities (its extensions) come with its status, its components may not change
    yield* group.serverChanges.pipe(Stream.runForEach(() => Effect.flatMap(group.views, apply)), Effect.forkScoped)

    // another replica saw a list change behind (its own connections to the same servers): look again here
    const bus = yield* Effect.serviceOption(McpChangeBus.McpChangeBus)
    if (bus._tag === "Some") yield* bus.value.changes.pipe(Stream.runForEach(relist(group)), Effect.forkScoped)

    // the sessions of its own with each legacy server that 2026-07-28 calls take, ready for the first
    // before the gateway serves (opened side by side; one that fails is opened at the first call)
    yield* Effect.forEach(
      (yield* group.servers).filter((status) => status.era === "legacy"),
      (status) => pool.prewarm(status.name, Capabilities.ALL),
      { concurrency: "unbounded", discard: true }
    )

    // what changed behind is told in front
    const notifications = yield* group.subscribe
    yield* notifications.pipe(
      Stream.runForEach(({ notification }) =>
        notification.method === McpSchema.ResourceUpdated.name
          ? server.notifyResourceUpdated(notification.params.uri)
          : Effect.void
      ),
      Effect.forkScoped
    )

    return server
  })
