/**
 * The implementation of `McpServer`: the registry, the live sessions, and the
 * request handlers each session is served with, assembled from their parts
 * (`tools.ts`, `resources.ts`, `prompts.ts`, `completion.ts`,
 * `notifications.ts`, `changes.ts`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { McpChangeBus } from "../../McpChangeBus.ts"
import type * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import * as McpServerSession from "../../McpServerSession.ts"
import type * as McpSession from "../../McpSession.ts"
import { McpSessionRegistry } from "../../McpSessionRegistry.ts"
import * as Metrics from "../metrics.ts"
import * as Tasks from "../task/tasks.ts"
import * as CacheHints from "./cacheHints.ts"
import type { Cached } from "./cacheHints.ts"
import * as Capabilities from "./capabilities.ts"
import * as ChangeBus from "./changeBus.ts"
import * as Changes from "./changes.ts"
import * as Completion from "./completion.ts"
import type { LiveSession } from "./context.ts"
import * as Demand from "./demand.ts"
import * as Extensions from "./extensions.ts"
import { handler } from "./handler.ts"
import * as Notifications from "./notifications.ts"
import * as Prompts from "./prompts.ts"
import type { Change, Registry } from "./registry.ts"
import * as Resources from "./resources.ts"
import type { ServerState } from "./state.ts"
import * as Subscriptions from "./subscriptions.ts"
import * as TaskHandlers from "./task/handlers.ts"
import * as TaskListen from "./task/listen.ts"
import * as Tools from "./tools.ts"

/** @internal */
export const makeServer = (options: McpServer.Options): Effect.Effect<McpServer.Server> =>
  Effect.gen(function*() {
    const serverInfo = implementation(options)
    const pageSize = options.pageSize ?? 100
    const middleware = options.middleware ?? []
    const registry = yield* Ref.make<Registry>({
      tools: new Map(),
      resources: new Map(),
      resourceTemplates: new Map(),
      prompts: new Map(),
      extensions: new Map()
    })
    const sessions = new Set<LiveSession>()
    const listeners = Subscriptions.make()
    const demand = Demand.make(options.onSubscriptions)
    // in a cluster, held calls and tasks are recorded as this replica's, and others' are looked after when it is gone
    const cluster = Option.getOrUndefined(yield* Effect.serviceOption(McpSessionRegistry))
    const tasks = yield* Tasks.make(
      options.tasks,
      cluster === undefined ? undefined : { replica: cluster.replicaId, isLive: cluster.isLive }
    )
    const sealingKey = yield* McpServerSession.makeSealingKey(
      options.requestState?.secret,
      options.requestState?.maxBytes
    )
    const heldCalls = yield* McpServerSession.makeHeldCalls({ ...options.hold, replica: cluster?.replicaId })
    const supportedVersions = options.protocolVersions ??
      [...McpSchema.MODERN_PROTOCOL_VERSIONS, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS]
    const defaults = CacheHints.defaultsOf(options.cache)
    const withHints = <A extends object>(
      context: McpServer.RequestContext,
      result: A,
      items: ReadonlyArray<Cached>
    ): A => CacheHints.withHints(defaults, context, result, items)

    // the server's part of each session, by the session its handlers are given
    const lives = new WeakMap<McpSession.Session, LiveSession>()

    const state: ServerState = {
      options,
      pageSize,
      middleware,
      registry,
      sessions,
      lives,
      listeners,
      demand,
      tasks,
      withHints
    }

    // with a change bus, the other replicas hear of the changes made here, and this one of theirs
    const bus = Option.getOrUndefined(yield* Effect.serviceOption(McpChangeBus))
    const { broadcast, resourceUpdated, setEnabled, update } = Changes.make(state, bus)
    if (bus !== undefined) yield* ChangeBus.follow(bus, broadcast, resourceUpdated)

    // -------------------------------------------------------------------------
    // handlers, shared by the sessions
    // -------------------------------------------------------------------------

    const capabilities = Capabilities.make(() => Ref.getUnsafe(registry), options.capabilities)

    const handlers = [
      handler(state, McpSchema.Discover, (_, context) =>
        Effect.map(Ref.get(registry), (current) =>
          withHints(context, {
            supportedVersions,
            capabilities: capabilities.modern(),
            ...(options.instructions === undefined ? {} : { instructions: options.instructions })
          }, []))),
      handler(state, McpSchema.SubscriptionsListen, (params, context, live) =>
        Subscriptions.listen(
          listeners,
          demand,
          live,
          params.notifications,
          capabilities.modern(),
          context,
          (taskIds) => TaskListen.watch(tasks, taskIds, context, live)
        )),
      ...Tools.handlers(state),
      handler(state, McpSchema.GetTask, TaskHandlers.get(tasks) as never),
      handler(state, McpSchema.CancelTask, TaskHandlers.cancel(tasks) as never),
      handler(state, McpSchema.UpdateTask, TaskHandlers.update(tasks) as never),
      handler(state, McpSchema.GetTaskPayload, TaskHandlers.result(tasks) as never),
      handler(state, McpSchema.ListTasks, TaskHandlers.list(tasks, pageSize) as never),
      ...Resources.handlers(state),
      ...Prompts.handlers(state),
      ...Completion.handlers(state),
      handler(state, McpSchema.SetLevel, (params, _, live) =>
        Effect.sync(() => {
          live.logLevel = params.level
          return {}
        }))
    ]

    // -------------------------------------------------------------------------
    // the service
    // -------------------------------------------------------------------------

    const notificationHandlers = Notifications.handlers(state)
    const handlerOf = Extensions.handlerOf(
      () => Ref.getUnsafe(registry),
      options.visible,
      (request) =>
        handler(state, request.method, (params, context) =>
          request.handle(params, context) as Effect.Effect<any, McpError.McpError>)
    )

    const serve = (counted: boolean) =>
      Effect.gen(function*() {
        const live: LiveSession = {
          session: undefined,
          shared: undefined,
          logLevel: undefined,
          subscriptions: undefined,
          closing: undefined,
          listens: undefined
        }
        const session = yield* McpServerSession.make({
          serverInfo,
          // read when asked: a long-lived session (modern HTTP requests share one) sees changes
          capabilities: capabilities.legacy,
          instructions: options.instructions,
          protocolVersions: options.protocolVersions,
          handlers,
          handlerOf,
          notificationHandlers,
          defaultTimeout: options.defaultTimeout,
          keepAlive: options.keepAlive,
          sealingKey,
          requestStateTtl: options.requestState?.ttl,
          heldCalls
        })
        live.session = session
        lives.set(session, live)
        if (counted) {
          sessions.add(live)
          yield* Metrics.trackSession
        }
        // before the session ends: listen streams answer their graceful end
        yield* Effect.addFinalizer(() =>
          counted
            ? Effect.andThen(
              Subscriptions.end(live),
              Effect.suspend(() => {
                sessions.delete(live)
                const uris = live.subscriptions
                live.subscriptions = undefined
                return uris === undefined
                  ? Effect.void
                  : Effect.forEach(uris, (uri) =>
                    Demand.release(demand, uri), { discard: true })
              })
            )
            : Subscriptions.end(live)
        )
        return session
      })

    return {
      serverInfo,
      register: (definition) =>
        Effect.flatMap(Effect.context<any>(), (services) =>
          update(Changes.registering([definition], services))),
      unregister: (definition) =>
        update(Extensions.withParts([definition]).map((part): Change => [part, () => undefined])),
      update: (changes) =>
        Effect.flatMap(Effect.context<any>(), (services) =>
          update([
            ...Extensions.withParts(changes.unregister ?? []).map((
              definition
            ): Change => [definition, () => undefined]),
            ...Changes.registering(changes.register ?? [], services)
          ])),
      enable: (definition) => setEnabled(definition, true),
      disable: (definition) => setEnabled(definition, false),
      notifyResourceUpdated: (uri) =>
        bus === undefined
          ? resourceUpdated(uri)
          : Effect.andThen(resourceUpdated(uri), bus.publish({ _tag: "ResourceUpdated", uri })),
      serve: serve(true),
      serveRequests: serve(false),
      sessionCount: Effect.sync(() => sessions.size),
      supportedVersions,
      heldCalls,
      sealingKey,
      toolHeaders: (name) => {
        const entry = Ref.getUnsafe(registry).tools.get(name)
        return entry === undefined ? [] : Tools.headersOf(entry.definition)
      }
    }
  })

const implementation = (options: McpServer.Options): McpSchema.Implementation => {
  const info: Record<string, unknown> = { name: options.name, version: options.version }
  for (const key of ["title", "description", "icons", "websiteUrl"] as const) {
    if (options[key] !== undefined) info[key] = options[key]
  }
  return info as McpSchema.Implementation
}
