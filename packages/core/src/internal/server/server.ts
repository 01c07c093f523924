/**
 * The implementation of `McpServer`: the registry, the live sessions, and the
 * request handlers each session is served with.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.ts"
import { McpChangeBus } from "../../McpChangeBus.ts"
import * as McpError from "../../McpError.ts"
import type * as McpMethod from "../../McpMethod.ts"
import type * as McpPrompt from "../../McpPrompt.ts"
import * as McpResource from "../../McpResource.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import * as McpServerSession from "../../McpServerSession.ts"
import * as McpSession from "../../McpSession.ts"
import { McpSessionRegistry } from "../../McpSessionRegistry.ts"
import type * as McpTool from "../../McpTool.ts"
import { type HeaderParam, headerParams } from "../jsonSchema/headers.ts"
import * as Metrics from "../metrics.ts"
import * as Tasks from "../task/tasks.ts"
import * as CacheHints from "./cacheHints.ts"
import type { Cached } from "./cacheHints.ts"
import * as Capabilities from "./capabilities.ts"
import * as ChangeBus from "./changeBus.ts"
import { CurrentRequestContext, type LiveSession, requestContext, sessionContext } from "./context.ts"
import * as Demand from "./demand.ts"
import * as Extensions from "./extensions.ts"
import * as Failure from "./failure.ts"
import * as Pagination from "./pagination.ts"
import {
  applyChanges,
  type Change,
  enabled,
  type Entry,
  isListed,
  type Kind,
  listChanged,
  type Listed,
  type Registry
} from "./registry.ts"
import { withServices } from "./services.ts"
import * as Subscriptions from "./subscriptions.ts"
import * as TaskCall from "./task/call.ts"
import * as TaskHandlers from "./task/handlers.ts"
import * as TaskListen from "./task/listen.ts"
import * as Visibility from "./visibility.ts"

// -----------------------------------------------------------------------------
// Registry
// -----------------------------------------------------------------------------

// tools are listed by name: the same order on every replica and every call
const byName = (a: { readonly name: string }, b: { readonly name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

// computed once per tool definition
const headerCache = new WeakMap<McpTool.McpTool<any>, ReadonlyArray<HeaderParam>>()
const headersOf = (tool: McpTool.McpTool<any>): ReadonlyArray<HeaderParam> => {
  let params = headerCache.get(tool)
  if (params === undefined) {
    params = headerParams(tool.tool.inputSchema)
    headerCache.set(tool, params)
  }
  return params
}

// -----------------------------------------------------------------------------
// Server
// -----------------------------------------------------------------------------

const MAX_COMPLETIONS = 100

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

    // what this replica's clients are told of a change; `announce` also tells the other replicas
    const broadcast = (kind: Listed) =>
      Effect.andThen(
        Effect.forEach(sessions, (live) =>
          live.session === undefined
            ? Effect.void
            : Effect.flatMap(
              live.session.state,
              (state) =>
                state._tag === "Initialized" ? Effect.ignore(live.session!.notify(listChanged[kind], {})) : Effect.void
            ), {
          discard: true
        }),
        Subscriptions.listChanged(listeners, kind === "resourceTemplates" ? "resources" : kind, listChanged[kind].name)
      )

    const resourceUpdated = (uri: string) =>
      Effect.andThen(
        Effect.forEach(sessions, (live) =>
          live.session !== undefined && live.subscriptions?.has(uri) === true
            ? Effect.ignore(live.session.notify(McpSchema.ResourceUpdated, { uri }))
            : Effect.void, { discard: true }),
        Subscriptions.resourceUpdated(listeners, uri)
      )

    // with a change bus, the other replicas hear of the changes made here, and this one of theirs
    const bus = Option.getOrUndefined(yield* Effect.serviceOption(McpChangeBus))
    const announce = (kind: Listed) =>
      bus === undefined
        ? broadcast(kind)
        : Effect.andThen(
          broadcast(kind),
          bus.publish({ _tag: "ListChanged", kind: kind === "resourceTemplates" ? "resources" : kind })
        )
    if (bus !== undefined) yield* ChangeBus.follow(bus, broadcast, resourceUpdated)

    // changes of the registry: the sessions and listeners are told once per kind changed
    const update = (changes: ReadonlyArray<Change>) =>
      Effect.flatMap(
        Ref.modify(registry, (current) => {
          const [changed, next] = applyChanges(current, changes)
          return [[changed, current, next] as const, next]
        }),
        ([changed, before, after]) =>
          Effect.forEach(
            changed,
            (kind) => isListed(kind) ? announce(kind) : Effect.sync(() => Extensions.reattach(attached, before, after)),
            { discard: true }
          )
      )

    // the extensions registered, each told how to announce its list changes
    const attached = Extensions.attachments({ listChanged: announce })

    // registrations bound to the services of the registering context
    const registering = (
      definitions: ReadonlyArray<McpServer.Definition<any>>,
      services: Context.Context<any>
    ): Array<Change> =>
      Extensions.withParts(definitions).map((definition) => {
        const entry = { definition: withServices(definition, services), enabled: true }
        return [definition, () => entry]
      })

    const setEnabled = (definition: McpServer.Definition<any>, value: boolean) =>
      update(
        Extensions.withParts([definition]).map((part): Change => [
          part,
          (entry) => entry === undefined || entry.enabled === value ? entry : { ...entry, enabled: value }
        ])
      )

    // -------------------------------------------------------------------------
    // handlers, shared by the sessions
    // -------------------------------------------------------------------------

    // the server's part of each session, by the session its handlers are given
    const lives = new WeakMap<McpSession.Session, LiveSession>()

    const handler = <M extends McpMethod.Request>(
      method: M,
      handle: (
        params: McpMethod.Params<M>,
        context: McpServer.RequestContext,
        live: LiveSession,
        raw: McpServerSession.RequestContext
      ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>,
      hold?: (params: McpMethod.Params<M>) => boolean,
      idempotent?: (params: McpMethod.Params<M>) => boolean
    ): McpServerSession.Handler => ({
      method,
      hold,
      idempotent,
      handle: (params: McpMethod.Params<M>, sessionContext: McpServerSession.RequestContext) => {
        const live = lives.get(sessionContext.session)!
        const context = requestContext(live, sessionContext, live.session!)
        const run = middleware.length === 0 ? handle(params, context, live, sessionContext) : middleware.reduceRight<
          Effect.Effect<unknown, McpError.McpError>
        >(
          (next, wrap) => wrap(context, method.name, params, next),
          Effect.suspend(() => handle(params, context, live, sessionContext))
        )
        // `updateContext` rather than `provideService`, which builds a function per call
        return Effect.updateContext(run, (current) =>
          Context.add(current, CurrentRequestContext, context)) as Effect.Effect<
            McpMethod.Result<M>,
            McpError.McpError
          >
      }
    })

    const handlersOf = () => {
      const visible = options.visible
      const shown = <D extends McpServer.Definition<any>>(items: Array<D>, context: McpServer.RequestContext) =>
        Visibility.shown(visible, items, context)
      const reachable = <D extends McpServer.Definition<any>>(
        entry: Entry<D> | undefined,
        context: McpServer.RequestContext
      ) =>
        Visibility.reachable(visible, entry, context)
      const readHolds = (params: McpSchema.ReadResourceRequestParams) =>
        Visibility.readHolds(Ref.getUnsafe(registry), params.uri)

      const list = <D extends Cached & McpServer.Definition<any>>(
        kind: Kind,
        cursor: string | undefined,
        context: McpServer.RequestContext,
        order?: (a: D, b: D) => number
      ) =>
        Effect.flatMap(Ref.get(registry), (current) => {
          const all = shown(enabled(current[kind] as unknown as ReadonlyMap<string, Entry<D>>), context)
          return Pagination.page(order === undefined ? all : all.sort(order), cursor, pageSize)
        })

      return [
        handler(McpSchema.Discover, (_, context) =>
          Effect.map(Ref.get(registry), (current) =>
            withHints(context, {
              supportedVersions,
              capabilities: capabilities.modern(),
              ...(options.instructions === undefined ? {} : { instructions: options.instructions })
            }, []))),
        handler(McpSchema.SubscriptionsListen, (params, context, live) =>
          Subscriptions.listen(
            listeners,
            demand,
            live,
            params.notifications,
            capabilities.modern(),
            context,
            (taskIds) => TaskListen.watch(tasks, taskIds, context, live)
          )),
        handler(McpSchema.ListTools, (params, context) =>
          Effect.map(list<McpTool.McpTool>("tools", params.cursor, context, byName), (page) =>
            withHints(
              context,
              withCursor({
                tools: page.items.map((tool) =>
                  tool.tool
                )
              }, page.nextCursor),
              page.items
            ))),
        handler(
          McpSchema.CallTool,
          (params, context, live, raw) => {
            const tool = reachable(Ref.getUnsafe(registry).tools.get(params.name), context)
            if (tool === undefined) {
              return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown tool: ${params.name}`))
            }
            // a task only when the tool takes one and a 2025-11-25 request does not ask
            return tool.task === "forbidden" && (context.era === "modern" || params.task === undefined)
              ? tool.call(params.arguments, context)
              : TaskCall.call(tasks, tool, params, context, raw, live) as Effect.Effect<
                McpSchema.CallToolResult,
                McpError.McpError
              >
          },
          (params) =>
            Ref.getUnsafe(registry).tools.get(params.name)?.definition.hold === true,
          (params) => {
            const annotations = Ref.getUnsafe(registry).tools.get(params.name)?.definition.tool.annotations
            return annotations?.idempotentHint === true || annotations?.readOnlyHint === true
          }
        ),
        handler(McpSchema.GetTask, TaskHandlers.get(tasks) as never),
        handler(McpSchema.CancelTask, TaskHandlers.cancel(tasks) as never),
        handler(McpSchema.UpdateTask, TaskHandlers.update(tasks) as never),
        handler(McpSchema.GetTaskPayload, TaskHandlers.result(tasks) as never),
        handler(McpSchema.ListTasks, TaskHandlers.list(tasks, pageSize) as never),
        handler(McpSchema.ListResources, (params, context) =>
          Effect.gen(function*() {
            const current = yield* Ref.get(registry)
            const listed = yield* Effect.forEach(
              shown(enabled(current.resourceTemplates), context),
              (template) =>
                template.list === undefined
                  ? Effect.succeed([])
                  : Effect.map(template.list(context), (resources) =>
                    resources.map((resource) => ({ resource, cache: template.cache })))
            )
            const all: ReadonlyArray<{ readonly resource: McpSchema.Resource } & Cached> = [
              ...shown(enabled(current.resources), context),
              ...listed.flat()
            ]
            const page = yield* Pagination.page(all, params.cursor, pageSize)
            return withHints(
              context,
              withCursor({
                resources: page.items.map((item) =>
                  item.resource
                )
              }, page.nextCursor),
              page.items
            )
          })),
        handler(McpSchema.ListResourceTemplates, (params, context) =>
          Effect.map(list<McpResource.McpResourceTemplate>("resourceTemplates", params.cursor, context), (page) =>
            withHints(
              context,
              withCursor({
                resourceTemplates: page.items.map((template) =>
                  template.template
                )
              }, page.nextCursor),
              page.items
            ))),
        handler(
          McpSchema.ReadResource,
          (params, context) =>
            Effect.flatMap(Ref.get(registry), (current) => {
              // a retry with input answers is about one caller: not to be cached
              const retried = "requestState" in params || "inputResponses" in params
              const answer = (
                definition: Cached,
                read: Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
              ) =>
                Effect.map(
                  read,
                  (result) =>
                    withHints(
                      context,
                      result,
                      retried ? [{ cache: { ttlMs: 0, cacheScope: "private" } }] : [definition]
                    )
                )
              const resource = reachable(current.resources.get(params.uri), context)
              if (resource !== undefined) {
                return answer(resource, resource.read(context))
              }
              for (const template of shown(enabled(current.resourceTemplates), context)) {
                const variables = template.match(params.uri)
                if (Option.isSome(variables)) {
                  return answer(template, template.read(params.uri, variables.value, context))
                }
              }
              const notFound = McpResource.notFound(params.uri)
              // 2026-07-28 answers an unknown resource as bad params
              return Effect.fail(
                context.era === "modern"
                  ? McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Resource not found: ${params.uri}`, {
                    uri: params.uri
                  })
                  : notFound
              )
            }),
          readHolds,
          () =>
            true
        ),
        handler(McpSchema.Subscribe, (params, _, live) =>
          Effect.suspend(() => {
            if (live.subscriptions?.has(params.uri) === true) {
              return Effect.succeed({})
            }
            return Effect.as(
              Effect.tap(
                Demand.acquire(demand, params.uri),
                () =>
                  Effect.sync(() =>
                    (live.subscriptions ??= new Set()).add(params.uri)
                  )
              ),
              {}
            )
          })),
        handler(McpSchema.Unsubscribe, (params, _, live) =>
          Effect.suspend(() =>
            live.subscriptions?.delete(params.uri) === true
              ? Effect.as(Demand.release(demand, params.uri), {})
              : Effect.succeed({})
          )),
        handler(McpSchema.ListPrompts, (params, context) =>
          Effect.map(list<McpPrompt.McpPrompt>("prompts", params.cursor, context), (page) =>
            withHints(
              context,
              withCursor({
                prompts: page.items.map((prompt) =>
                  prompt.prompt
                )
              }, page.nextCursor),
              page.items
            ))),
        handler(
          McpSchema.GetPrompt,
          (params, context) =>
            Effect.flatMap(Ref.get(registry), (current) => {
              const prompt = reachable(current.prompts.get(params.name), context)
              if (prompt === undefined) {
                return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown prompt: ${params.name}`))
              }
              return prompt.get(params.arguments ?? {}, context)
            }),
          (params) =>
            Ref.getUnsafe(registry).prompts.get(params.name)?.definition.hold === true,
          () =>
            true
        ),
        handler(McpSchema.Complete, (params, context) =>
          Effect.flatMap(Ref.get(registry), (current): Effect.Effect<McpSchema.CompleteResult, McpError.McpError> => {
            const ref = params.ref
            const owner = ref.type === "ref/prompt"
              ? reachable(current.prompts.get(ref.name), context)
              : reachable(current.resourceTemplates.get(ref.uri), context)
            if (owner === undefined) {
              const what = ref.type === "ref/prompt" ? `prompt ${ref.name}` : `resource template ${ref.uri}`
              return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown ${what}`))
            }
            if (owner.completion !== undefined) {
              return owner.completion(params, context)
            }
            const complete = owner.complete[params.argument.name]
            if (complete === undefined) {
              return Effect.succeed({ completion: { values: [], hasMore: false } })
            }
            const site = ref.type === "ref/prompt"
              ? Failure.siteOf(context, "prompt", ref.name, params.argument.name)
              : Failure.siteOf(context, "resource", ref.uri, params.argument.name)
            return Effect.map(
              Failure.guard(
                site,
                Effect.suspend(() =>
                  complete(params.argument.value, { arguments: params.context?.arguments ?? {} })
                )
              ),
              (values) => ({
                completion: {
                  values: values.slice(0, MAX_COMPLETIONS),
                  total: values.length,
                  hasMore: values.length > MAX_COMPLETIONS
                }
              })
            )
          })),
        handler(McpSchema.SetLevel, (params, _, live) =>
          Effect.sync(() => {
            live.logLevel = params.level
            return {}
          }))
      ]
    }

    const notificationHandlersOf = () =>
      options.onRootsListChanged === undefined ? [] : [
        // given the server session (see `McpServerSession`)
        McpSession.notificationHandler(McpSchema.RootsListChanged, (params, server) =>
          Effect.gen(function*() {
            const live = lives.get(server)!
            const session = live.session!
            const client = yield* session.clientParams
            if (Option.isNone(client)) {
              return
            }
            const state = yield* session.state
            const context = {
              kind: "notification" as const,
              method: McpSchema.RootsListChanged.name,
              ...sessionContext(
                live,
                session,
                client.value,
                state._tag === "NotInitialized" ? "" : state.protocolVersion
              )
            }
            const run = middleware.reduceRight<Effect.Effect<unknown, McpError.McpError>>(
              (next, wrap) =>
                wrap(context, McpSchema.RootsListChanged.name, params, next),
              options.onRootsListChanged!(context)
            )
            yield* Effect.ignore(run)
          }))
      ]

    // -------------------------------------------------------------------------
    // the service
    // -------------------------------------------------------------------------

    const capabilities = Capabilities.make(() =>
      Ref.getUnsafe(registry), options.capabilities)
    const handlers = handlersOf()
    const notificationHandlers = notificationHandlersOf()
    const handlerOf = Extensions.handlerOf(
      () => Ref.getUnsafe(registry),
      options.visible,
      (request) =>
        handler(request.method, (params, context) =>
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
          update(registering([definition], services))),
      unregister: (definition) =>
        update(Extensions.withParts([definition]).map((part): Change => [part, () => undefined])),
      update: (changes) =>
        Effect.flatMap(Effect.context<any>(), (services) =>
          update([
            ...Extensions.withParts(changes.unregister ?? []).map((
              definition
            ): Change => [definition, () => undefined]),
            ...registering(changes.register ?? [], services)
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
        return entry === undefined ? [] : headersOf(entry.definition)
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

const withCursor = <A extends object>(result: A, nextCursor: string | undefined): A =>
  nextCursor === undefined ? result : { ...result, nextCursor }
