/**
 * The client's wiring: the session (with the notification hub watching its
 * transport), the typed requests, list streams and caches, tool-result
 * checks, resource watches, and the notification dispatcher.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { JsonSchemaValidator } from "../../JsonSchemaValidator.ts"
import type {
  AutoRefresh,
  Client,
  ListOptions,
  Notification,
  NotificationHandlers,
  NotificationParams,
  Options,
  RequestOptions,
  ServerNotificationMethod
} from "../../McpClient.ts"
import * as McpClientSession from "../../McpClientSession.ts"
import * as McpError from "../../McpError.ts"
import * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import { McpTransport } from "../../McpTransport.ts"
import * as Headers from "../jsonSchema/headers.ts"
import * as Cache from "./cache.ts"
import * as Calls from "./calls.ts"
import * as Handlers from "./handlers.ts"
import * as Listen from "./listen.ts"
import { withMeta } from "./meta.ts"
import * as Notifications from "./notifications.ts"
import { DEFAULT_MAX_PAGES, type Page, paginate } from "./paginate.ts"
import * as TaskRunner from "./taskRunner.ts"

const DEFAULT_NOTIFICATION_BUFFER = 1024

type Cursor = { readonly cursor?: string | undefined } | undefined

const paginated = (params: Cursor, options: RequestOptions | undefined): McpSchema.PaginatedRequestParams =>
  withMeta(params?.cursor === undefined ? {} : { cursor: params.cursor }, options)

/** `true` when an update of `updated` concerns a watch of `uri` (the URI itself or a sub-resource). */
const covers = (uri: string, updated: string): boolean =>
  updated === uri || updated.startsWith(uri.endsWith("/") ? uri : `${uri}/`)

const userHandler = (
  options: NotificationHandlers,
  notification: Notification
): Effect.Effect<void, unknown> | undefined => {
  switch (notification.method) {
    case "notifications/message":
      return options.onLoggingMessage?.(notification.params)
    case "notifications/resources/updated":
      return options.onResourceUpdated?.(notification.params)
    case "notifications/tools/list_changed":
      return options.onToolListChanged?.(notification.params)
    case "notifications/resources/list_changed":
      return options.onResourceListChanged?.(notification.params)
    case "notifications/prompts/list_changed":
      return options.onPromptListChanged?.(notification.params)
    case "notifications/elicitation/complete":
      return options.onElicitationComplete?.(notification.params)
    case "notifications/progress":
      return options.onProgress?.(notification.params)
    case "notifications/cancelled":
      return options.onCancelled?.(notification.params)
    case "notifications/tasks/status":
    case "notifications/tasks":
    case "notifications/subscriptions/acknowledged":
      return undefined
  }
}

const guarded = (name: string, effect: Effect.Effect<void, unknown> | undefined): Effect.Effect<void> =>
  effect === undefined
    ? Effect.void
    : Effect.catchCause(effect, (cause) => Effect.logWarning(`notification handler for ${name} failed`, cause))

// tools/list with its entries taken as they come: each is checked on its own
const ListToolsEntries = McpMethod.withResult(
  McpSchema.ListTools,
  Schema.Struct({ ...McpSchema.PaginatedResult.fields, tools: Schema.Array(Schema.Unknown) })
)
const validTool = McpMethod.validator(McpSchema.Tool)
const nameOf = (entry: unknown): string => {
  const name = typeof entry === "object" && entry !== null ? (entry as { readonly name?: unknown }).name : undefined
  return typeof name === "string" ? JSON.stringify(name) : "(unnamed)"
}

/** @internal */
export const make = Effect.fnUntraced(function*(
  options: Options
): Effect.fn.Return<Client, McpError.McpError, McpTransport | Scope.Scope> {
  const validator = yield* JsonSchemaValidator
  const transport = yield* McpTransport
  const scope = yield* Effect.scope
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES
  const currentRoots = yield* Ref.make<ReadonlyArray<McpSchema.Root>>(options.roots ?? [])
  // 2025-11-25: the server may ask for sampling and elicitation as tasks
  const ownHandlers = Handlers.handlers(options, validator, currentRoots)
  const runnable = options.tasks === false ? undefined : TaskRunner.capabilities(ownHandlers)
  // the extensions taken are declared in both eras (2026-07-28 adds the tasks extension)
  const declared = options.extensions === undefined
    ? Handlers.capabilities(options)
    : { ...Handlers.capabilities(options), extensions: options.extensions }
  const capabilities = runnable === undefined ? declared : { ...declared, tasks: runnable }
  const handlerList = runnable === undefined ? ownHandlers : yield* TaskRunner.wrap(ownHandlers, scope)
  const hub = yield* Notifications.make(options.notificationBuffer ?? DEFAULT_NOTIFICATION_BUFFER)

  const session = yield* McpClientSession.make({
    clientInfo: options.clientInfo,
    capabilities,
    ...(options.tasks === false ? {} : { extensions: { [McpSchema.TASKS_EXTENSION_ID]: {}, ...options.extensions } }),
    protocolVersion: options.protocolVersion,
    supportedVersions: options.supportedVersions,
    handlers: handlerList,
    initializeTimeout: options.initializeTimeout ?? options.requestTimeout,
    defaultTimeout: options.requestTimeout,
    keepAlive: options.keepAlive,
    observeNotification: options.observeNotification === undefined ? hub.observe : (message) => {
      hub.observe(message)
      options.observeNotification!(message)
    },
    era: options.era,
    maxInputRounds: options.maxInputRounds
  })

  // ---------------------------------------------------------------------------
  // lists
  // ---------------------------------------------------------------------------

  // every tool seen in a page, by name: where callTool finds outputSchemas
  const toolIndex = new Map<string, McpSchema.Tool>()
  const indexTools = (tools: ReadonlyArray<McpSchema.Tool>) => {
    for (const tool of tools) toolIndex.set(tool.name, tool)
  }

  const listTools = Effect.fnUntraced(function*(params?: Cursor, requestOptions?: RequestOptions) {
    const page = yield* session.request(ListToolsEntries, paginated(params, requestOptions), requestOptions)
    // an entry that is not a tool, or (2026-07-28) a tool with invalid
    // x-mcp-header declarations, is left out: one bad tool does not cost the others
    const tools: Array<McpSchema.Tool> = []
    const problems: Array<string> = []
    for (const entry of page.tools) {
      const tool = validTool(entry)
      const problem = Exit.isFailure(tool)
        ? Option.getOrElse(Cause.findErrorOption(tool.cause), () => "not a tool")
        : session.era === "modern"
        ? Headers.invalidReason(tool.value.inputSchema)
        : undefined
      if (problem === undefined && Exit.isSuccess(tool)) tools.push(tool.value)
      else problems.push(`tool ${nameOf(entry)} left out: ${problem}`)
    }
    yield* Effect.forEach(problems, (problem) => Effect.logWarning(problem), { discard: true }).pipe(
      Effect.provideService(Logger.LogToStderr, true)
    )
    indexTools(tools)
    return { ...page, tools } as McpSchema.ListToolsResult
  })
  const listResources = (params?: Cursor, requestOptions?: RequestOptions) =>
    session.request(McpSchema.ListResources, paginated(params, requestOptions), requestOptions)
  const listResourceTemplates = (params?: Cursor, requestOptions?: RequestOptions) =>
    session.request(McpSchema.ListResourceTemplates, paginated(params, requestOptions), requestOptions)
  const listPrompts = (params?: Cursor, requestOptions?: RequestOptions) =>
    session.request(McpSchema.ListPrompts, paginated(params, requestOptions), requestOptions)

  const stream = <R extends McpSchema.PaginatedResult, A>(
    method: string,
    list: (params: Cursor, options: RequestOptions | undefined) => Effect.Effect<R, McpError.McpError>,
    items: (result: R) => ReadonlyArray<A>
  ) =>
  (listOptions?: ListOptions & { readonly onPage?: (page: Page<A>) => void }): Stream.Stream<A, McpError.McpError> =>
    paginate({
      method,
      maxPages: listOptions?.maxPages ?? maxPages,
      fetch: (cursor) =>
        Effect.map(list({ cursor }, listOptions), (result) => ({
          items: items(result),
          nextCursor: result.nextCursor,
          ttlMs: (result as { readonly ttlMs?: unknown }).ttlMs as number | undefined
        })),
      ...(listOptions?.onPage === undefined ? {} : { onPage: listOptions.onPage })
    })

  // every page of a list, with the shortest freshness its pages gave (2026-07-28)
  const fetchAll = <A>(
    stream: (
      listOptions?: ListOptions & { readonly onPage?: (page: Page<A>) => void }
    ) => Stream.Stream<A, McpError.McpError>
  ) =>
    Effect.suspend(() => {
      let ttlMs: number | undefined
      const onPage = (page: Page<A>) => {
        if (typeof page.ttlMs === "number") {
          ttlMs = Math.max(0, ttlMs === undefined ? page.ttlMs : Math.min(ttlMs, page.ttlMs))
        }
      }
      return Effect.map(Stream.runCollect(stream({ onPage })), (items): Cache.Fetched<A> => ({ items, ttlMs }))
    })

  const streamTools = stream(McpSchema.ListTools.name, listTools, (result) => result.tools)
  const streamResources = stream(McpSchema.ListResources.name, listResources, (result) => result.resources)
  const streamResourceTemplates = stream(
    McpSchema.ListResourceTemplates.name,
    listResourceTemplates,
    (result) => result.resourceTemplates
  )
  const streamPrompts = stream(McpSchema.ListPrompts.name, listPrompts, (result) => result.prompts)

  const autoRefresh = (key: keyof AutoRefresh): boolean =>
    typeof options.autoRefresh === "object" ? options.autoRefresh[key] !== false : options.autoRefresh !== false

  // 2026-07-28: change notifications come on a subscriptions/listen stream,
  // opened once something follows changes: a cached list read again or whose
  // changes are streamed (with auto-refresh, unless `followLists: false`), a
  // watched resource; a list read once opens nothing
  const listen = session.era === "modern" ? yield* Listen.make(session, scope) : undefined
  const followOf = (kind: Listen.ListKind): Cache.Follow | undefined =>
    listen === undefined || !autoRefresh(kind) || options.followLists === false ? undefined : {
      start: listen.follow(kind),
      ready: listen.ready(kind),
      acks: listen.acks
    }

  const tools = yield* Cache.make(
    Effect.map(fetchAll(streamTools), (fetched) => {
      // a complete list replaces what pages taught us
      toolIndex.clear()
      indexTools(fetched.items)
      return fetched
    }),
    followOf("tools")
  )
  const resources = yield* Cache.make(fetchAll(streamResources), followOf("resources"))
  const resourceTemplates = yield* Cache.make(fetchAll(streamResourceTemplates), followOf("resources"))
  const prompts = yield* Cache.make(fetchAll(streamPrompts), followOf("prompts"))

  // ---------------------------------------------------------------------------
  // tools
  // ---------------------------------------------------------------------------

  const { callTool, callToolTask, callToolTyped, task } = Calls.make({
    session,
    transport,
    options,
    validator,
    handlers: handlerList,
    subscribe: hub.subscribe,
    toolIndex,
    tools
  })

  // ---------------------------------------------------------------------------
  // resources
  // ---------------------------------------------------------------------------

  const subscribeResource = (uri: string, requestOptions?: RequestOptions) =>
    listen !== undefined
      ? listen.watch(uri)
      : Effect.asVoid(session.request(McpSchema.Subscribe, withMeta({ uri }, requestOptions), requestOptions))
  const unsubscribeResource = (uri: string, requestOptions?: RequestOptions) =>
    listen !== undefined
      ? listen.unwatch(uri)
      : Effect.asVoid(session.request(McpSchema.Unsubscribe, withMeta({ uri }, requestOptions), requestOptions))

  // watchers per URI: the first subscribes on the server, the last unsubscribes
  // (2026-07-28: the listen stream's filter takes the URI in and out)
  const watchers = new Map<string, number>()
  const watchLock = yield* Semaphore.make(1)
  const acquireWatch = (uri: string, requestOptions: RequestOptions | undefined) =>
    listen !== undefined ? listen.watch(uri) : Semaphore.withPermits(watchLock, 1)(Effect.suspend(() => {
      const count = watchers.get(uri) ?? 0
      return Effect.tap(
        count === 0 ? subscribeResource(uri, requestOptions) : Effect.void,
        () => Effect.sync(() => watchers.set(uri, count + 1))
      )
    }))
  const releaseWatch = (uri: string) =>
    listen !== undefined ? listen.unwatch(uri) : Semaphore.withPermits(watchLock, 1)(Effect.suspend(() => {
      const count = watchers.get(uri) ?? 0
      if (count > 1) {
        watchers.set(uri, count - 1)
        return Effect.void
      }
      watchers.delete(uri)
      return Effect.ignore(unsubscribeResource(uri))
    }))

  const watchResource = (
    uri: string,
    requestOptions?: RequestOptions
  ): Stream.Stream<McpSchema.ResourceUpdatedNotificationParams, McpError.McpError> =>
    Stream.unwrap(Effect.gen(function*() {
      const notifications = yield* hub.subscribe
      yield* Effect.acquireRelease(acquireWatch(uri, requestOptions), () => releaseWatch(uri))
      return notifications.pipe(
        Stream.filter((notification) =>
          notification.method === "notifications/resources/updated" && covers(uri, notification.params.uri)
        ),
        Stream.map((notification) => notification.params as McpSchema.ResourceUpdatedNotificationParams)
      )
    }))

  // ---------------------------------------------------------------------------
  // notifications
  // ---------------------------------------------------------------------------

  const forkRefresh = <A>(cache: Cache.Cache<A>) =>
    Effect.forkIn(
      Effect.catchCause(cache.refresh, (cause) => Effect.logWarning("refreshing a list failed", cause)),
      scope
    )

  const invalidate = <A>(cache: Cache.Cache<A>, refresh: boolean): Effect.Effect<void> =>
    Effect.flatMap(cache.invalidate, (hadList) => hadList && refresh ? Effect.asVoid(forkRefresh(cache)) : Effect.void)

  // the client's own reaction, before subscribers and handlers see the notification
  const react = (notification: Notification): Effect.Effect<void> => {
    switch (notification.method) {
      case "notifications/tools/list_changed":
        return Effect.andThen(Effect.sync(() => toolIndex.clear()), invalidate(tools, autoRefresh("tools")))
      case "notifications/prompts/list_changed":
        return invalidate(prompts, autoRefresh("prompts"))
      case "notifications/resources/list_changed":
        return Effect.andThen(
          invalidate(resources, autoRefresh("resources")),
          invalidate(resourceTemplates, autoRefresh("resources"))
        )
      // a listen stream is (re)open: the lists it follows that were fetched before
      // it was acknowledged are fetched again, in case they changed meanwhile
      // (a list unchanged is not a change); one fetched after it is current
      case "notifications/subscriptions/acknowledged": {
        if (listen === undefined) return Effect.void
        const agreed = listen.acknowledged(notification.params.notifications)
        const catchUp = <A>(cache: Cache.Cache<A>) =>
          Effect.asVoid(Effect.forkIn(
            Effect.catchCause(cache.catchUp, (cause) => Effect.logWarning("refreshing a list failed", cause)),
            scope
          ))
        return Effect.forEach(agreed, (kind) => {
          switch (kind) {
            case "tools":
              return catchUp(tools)
            case "prompts":
              return catchUp(prompts)
            case "resources":
              return Effect.andThen(catchUp(resources), catchUp(resourceTemplates))
          }
        }, { discard: true })
      }
      default:
        return Effect.void
    }
  }

  yield* hub.run((notification) =>
    react(notification).pipe(
      Effect.andThen(hub.publish(notification)),
      Effect.andThen(guarded(notification.method, userHandler(options, notification))),
      Effect.andThen(guarded(notification.method, options.onNotification?.(notification)))
    )
  ).pipe(Effect.provideService(Logger.LogToStderr, true), Effect.forkScoped)
  // the peer went away: subscribers get what was received, then their streams end
  yield* Effect.forkScoped(Effect.andThen(session.awaitClose, hub.end))

  const notificationsOf = <K extends ServerNotificationMethod>(
    method: K | { readonly name: K }
  ): Stream.Stream<NotificationParams<K>> => {
    const name = typeof method === "string" ? method : method.name
    return hub.stream.pipe(
      Stream.filter((notification) => notification.method === name),
      Stream.map((notification) => notification.params as NotificationParams<K>)
    )
  }

  // ---------------------------------------------------------------------------
  // the client
  // ---------------------------------------------------------------------------

  return {
    session,
    era: session.era,
    protocolVersion: session.protocolVersion,
    serverInfo: session.serverInfo,
    serverCapabilities: session.serverCapabilities,
    instructions: session.instructions,
    capabilities,
    ping: (requestOptions?: RequestOptions) =>
      Effect.asVoid(session.request(McpSchema.Ping, withMeta({}, requestOptions), requestOptions)),
    listTools,
    streamTools,
    tools,
    callTool,
    callToolTask,
    callToolTyped,
    task,
    listResources,
    streamResources,
    resources,
    listResourceTemplates,
    streamResourceTemplates,
    resourceTemplates,
    readResource: (uri: string, requestOptions?: RequestOptions) =>
      session.request(McpSchema.ReadResource, withMeta({ uri }, requestOptions), requestOptions),
    subscribeResource,
    unsubscribeResource,
    watchResource,
    listPrompts,
    streamPrompts,
    prompts,
    getPrompt: (name: string, args?: Readonly<Record<string, string>>, requestOptions?: RequestOptions) =>
      session.request(
        McpSchema.GetPrompt,
        withMeta(args === undefined ? { name } : { name, arguments: args }, requestOptions),
        requestOptions
      ),
    complete: (params: Omit<McpSchema.CompleteRequestParams, "_meta">, requestOptions?: RequestOptions) =>
      session.request(McpSchema.Complete, withMeta(params, requestOptions), requestOptions),
    setLoggingLevel: (level: McpSchema.LoggingLevel, requestOptions?: RequestOptions) =>
      Effect.asVoid(session.request(McpSchema.SetLevel, withMeta({ level }, requestOptions), requestOptions)),
    roots: Ref.get(currentRoots),
    setRoots: Effect.fnUntraced(function*(roots: ReadonlyArray<McpSchema.Root>) {
      if (options.roots === undefined) {
        return yield* McpError.unsupported(McpSchema.RootsListChanged.name, "client roots")
      }
      yield* Ref.set(currentRoots, roots)
      yield* session.notify(McpSchema.RootsListChanged, {})
    }),
    notifications: hub.stream,
    subscribe: hub.subscribe,
    notificationsOf
  }
})
