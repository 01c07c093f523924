/**
 * The group's runtime.
 *
 * - Every server is an entry with a scope of its own, forked from one scope
 *   of the group's ("servers"); each connection to it is a scope forked from
 *   the server's. The server's supervisor fiber lives in the server's scope:
 *   it waits for the connection's session to end, marks the server down,
 *   closes the connection's scope and reconnects on the schedule.
 * - Entries are plain objects, changed only while holding the group's lock;
 *   after each change the lock holder publishes a snapshot (statuses, views
 *   and routing index) to a `SubscriptionRef`, which every read uses.
 * - Connecting is two steps: opening (transport, handshake, listing; no lock,
 *   so servers open concurrently) and committing (naming and collision
 *   checks, under the lock). A failed commit closes the connection it was
 *   given and leaves every entry as it was.
 * - The group's finalizer (added right after the servers' scope is forked, so
 *   it runs before that scope closes) closes the servers one at a time, in
 *   reverse order of connection.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as JsonRpc from "../../JsonRpc.ts"
import { JsonSchemaValidator } from "../../JsonSchemaValidator.ts"
import * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type {
  ClientOptions,
  Connector,
  Group,
  Options,
  ReadResourceOptions,
  ServerConfig,
  ServerNotification,
  ServerParams,
  ServerStatus,
  Views
} from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import { McpTransport } from "../../McpTransport.ts"
import * as InMemory from "./inMemory.ts"
import * as Aggregate from "./aggregate.ts"

/** @internal */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
  Schedule.upTo({ times: 10 })
)

const DEFAULT_CLIENT_INFO: McpSchema.Implementation = { name: "effect-mcp-group", version: "0.1.0" }

/** How long the ping that checks a server after a failed call may take. */
const PROBE_TIMEOUT = Duration.seconds(10)

interface Connection {
  readonly client: McpClient.Client
  readonly scope: Scope.Closeable
  /** Why the transport ended, once it has. */
  readonly ended: Deferred.Deferred<McpError.McpError>
}

interface Opened {
  readonly connection: Connection
  readonly lists: Aggregate.Lists
}

interface Entry {
  readonly name: string
  readonly params: ServerParams
  readonly clientOptions: McpClient.Options
  readonly scope: Scope.Closeable
  status: "connecting" | "up" | "down"
  connection: Connection | undefined
  serverInfo: McpSchema.Implementation | undefined
  error: McpError.McpError | undefined
  reconnecting: boolean
  /** The lists as the server sent them (to tell a refreshed list from the one already aggregated). */
  lists: Aggregate.Lists
  /** What the server contributes to the views (empty unless it is up). */
  parts: Aggregate.Parts
  /** What it contributed before it went down: calls to those names fail naming it. */
  withdrawn: Aggregate.Parts
  /** Refreshed lists refused for a collision, applied once their names are free. */
  refused: Partial<Aggregate.Lists>
  /** Being disconnected (or the group is closing): its connection's end is not a failure. */
  closing: boolean
}

interface Snapshot {
  readonly servers: ReadonlyArray<ServerStatus>
  readonly views: Views
  readonly index: Aggregate.Index
}

const paramsOf = (config: ServerConfig): ServerParams => "params" in config ? config.params : config

const ownOptionsOf = (config: ServerConfig): ClientOptions | undefined => "params" in config ? config.client : undefined

/** A failure that means the connection itself is gone. */
const isConnectionFailure = (error: McpError.McpError): boolean =>
  error.reason._tag === "TransportError" || error.reason._tag === "ClosedError"

const isMethodNotFound = (error: McpError.McpError): boolean =>
  error.reason._tag === "ProtocolError" && error.reason.code === JsonRpc.ErrorCode.MethodNotFound

/** @internal */
export const make = Effect.fnUntraced(function*(
  options: Options,
  connector: Connector["Service"]
): Effect.fn.Return<Group, McpError.McpError, JsonSchemaValidator | Scope.Scope> {
  const validatorLayer = Layer.succeed(JsonSchemaValidator, yield* JsonSchemaValidator)
  const groupScope = yield* Effect.scope
  const hook = options.nameHook
  const reconnect = options.reconnect === undefined ? defaultReconnect : options.reconnect
  const lock = yield* Semaphore.make(1)
  const withLock = Semaphore.withPermits(lock, 1)
  const notifications = yield* PubSub.unbounded<ServerNotification>()
  const emptyViews = Aggregate.makeViews([])
  const state = yield* SubscriptionRef.make<Snapshot>({
    servers: [],
    views: emptyViews,
    index: Aggregate.makeIndex(emptyViews)
  })

  /** Every server, by name, in order of reservation. */
  const entries = new Map<string, Entry>()
  /** The names of the servers in order of (first) connection. */
  const order: Array<string> = []
  let groupClosing = false

  // every server's scope is a child of this one; the finalizer added right
  // after it runs first, and closes them in reverse order of connection
  const serversScope = yield* Scope.fork(groupScope, "sequential")

  // ---------------------------------------------------------------------------
  // state
  // ---------------------------------------------------------------------------

  /** Connected servers in order of connection, then those still connecting. */
  const ordered = (): Array<Entry> => {
    const connected = order.flatMap((name) => {
      const entry = entries.get(name)
      return entry === undefined ? [] : [entry]
    })
    const connecting = Array.from(entries.values()).filter((entry) => !order.includes(entry.name))
    return [...connected, ...connecting]
  }

  const statusOf = (entry: Entry): ServerStatus => ({
    name: entry.name,
    params: entry.params,
    status: entry.status,
    reconnecting: entry.reconnecting,
    ...(entry.serverInfo === undefined ? {} : { serverInfo: entry.serverInfo }),
    ...(entry.error === undefined ? {} : { error: entry.error })
  })

  /** Publishes the entries as they are now (the views are rebuilt only when asked). */
  const publish = (viewsChanged: boolean): Effect.Effect<void> =>
    Effect.suspend(() => {
      const current = SubscriptionRef.getUnsafe(state)
      const all = ordered()
      const views = viewsChanged ? Aggregate.makeViews(all.map((entry) => entry.parts)) : current.views
      return SubscriptionRef.set(state, {
        servers: all.map(statusOf),
        views,
        index: viewsChanged ? Aggregate.makeIndex(views) : current.index
      })
    })

  const othersOf = (entry: Entry): ReadonlyArray<readonly [string, Aggregate.Parts]> =>
    Array.from(entries.values()).flatMap((other) => other === entry ? [] : [[other.name, other.parts] as const])

  const clientOptionsFor = (name: string, own: ClientOptions | undefined): McpClient.Options => {
    const base = typeof options.client === "function" ? options.client(name) : options.client
    const merged: ClientOptions = { ...base, ...own }
    const onNotification = merged.onNotification
    return {
      ...merged,
      clientInfo: merged.clientInfo ?? DEFAULT_CLIENT_INFO,
      // the views follow the cached lists
      autoRefresh: true,
      onNotification: (notification) =>
        Effect.andThen(
          PubSub.publish(notifications, { server: name, notification }),
          onNotification === undefined ? Effect.void : onNotification(notification)
        )
    }
  }

  const unavailable = (entry: Entry): McpError.McpError =>
    McpError.serverUnavailable(
      entry.name,
      entry.status === "connecting"
        ? "it is still connecting"
        : `it is down${entry.error === undefined ? "" : ` (${entry.error.message})`}${
          entry.reconnecting ? "; reconnecting" : ""
        }`,
      entry.error
    )

  // ---------------------------------------------------------------------------
  // connections
  // ---------------------------------------------------------------------------

  /** The transport of a connection, with the reason it ends recorded. */
  const watchedTransport = (entry: Entry, ended: Deferred.Deferred<McpError.McpError>) =>
    Layer.effect(
      McpTransport,
      Effect.gen(function*() {
        const transport = yield* McpTransport
        return McpTransport.of({
          ...transport,
          incoming: transport.incoming.pipe(
            Stream.onExit((exit) => {
              if (Exit.isSuccess(exit)) return Deferred.succeed(ended, McpError.closed("the server closed the connection"))
              const error = Cause.findErrorOption(exit.cause)
              return Deferred.succeed(
                ended,
                Option.isSome(error) ? error.value : McpError.closed("the connection was closed")
              )
            })
          )
        })
      })
    ).pipe(
      Layer.provide(
        entry.params._tag === "InMemory"
          ? InMemory.transport(entry.params.server)
          : connector.transport(entry.params, entry.name)
      )
    )

  const fetchLists = (client: McpClient.Client): Effect.Effect<Aggregate.Lists, McpError.McpError> => {
    const capabilities = client.serverCapabilities
    const none = Effect.succeed([])
    return Effect.all({
      tools: capabilities.tools === undefined ? none : client.tools.get,
      prompts: capabilities.prompts === undefined ? none : client.prompts.get,
      resources: capabilities.resources === undefined ? none : client.resources.get,
      // servers from before templates (or that have none) may not know the method
      resourceTemplates: capabilities.resources === undefined
        ? none
        : client.resourceTemplates.get.pipe(Effect.catchIf(isMethodNotFound, () => none))
    }, { concurrency: "unbounded" })
  }

  /** Transport, handshake and listing, in a new connection scope (closed on failure). */
  const open = (entry: Entry): Effect.Effect<Opened, McpError.McpError> =>
    Effect.suspend(() => {
      if (entry.closing) return Effect.fail(McpError.serverUnavailable(entry.name, "it was disconnected"))
      const scope = Scope.forkUnsafe(entry.scope, "sequential")
      return Effect.gen(function*() {
        const ended = yield* Deferred.make<McpError.McpError>()
        const client = yield* Layer.buildWithMemoMap(
          McpClient.layer(entry.clientOptions).pipe(Layer.provide([watchedTransport(entry, ended), validatorLayer])),
          Layer.makeMemoMapUnsafe(),
          scope
        ).pipe(Effect.map(Context.get(McpClient.McpClient)))
        const lists = yield* fetchLists(client)
        return { connection: { client, scope, ended }, lists }
      }).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
    })

  /** Names the opened server's components and adds them, or fails and changes nothing. Under the lock. */
  const commit = (entry: Entry, opened: Opened): Effect.Effect<void, McpError.McpError> =>
    Effect.suspend(() => {
      if (entry.closing || entries.get(entry.name) !== entry) {
        return Effect.fail(McpError.serverUnavailable(entry.name, "it was disconnected while connecting"))
      }
      const serverInfo = opened.connection.client.serverInfo
      const parts = Aggregate.nameParts(opened.lists, entry.name, serverInfo, hook, othersOf(entry))
      if (Result.isFailure(parts)) return Effect.fail(parts.failure)
      entry.connection = opened.connection
      entry.status = "up"
      entry.serverInfo = serverInfo
      entry.error = undefined
      entry.reconnecting = false
      entry.lists = opened.lists
      entry.refused = {}
      entry.parts = parts.success
      entry.withdrawn = Aggregate.emptyParts
      if (!order.includes(entry.name)) order.push(entry.name)
      return publish(true)
    })

  /** A refreshed list (after `list_changed`): replaces that part of the server's, unless it collides. Under the lock. */
  const refresh = <K extends Aggregate.ListKey>(
    entry: Entry,
    connection: Connection,
    key: K,
    list: Aggregate.Lists[K]
  ): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (entry.connection !== connection || entry.status !== "up" || entry.lists[key] === list) return Effect.void
      const part = Aggregate.namePart(key, list, entry.name, entry.serverInfo ?? DEFAULT_CLIENT_INFO, hook, othersOf(entry))
      if (Result.isFailure(part)) {
        entry.error = part.failure
        entry.refused = { ...entry.refused, [key]: list }
        return Effect.andThen(
          Effect.logWarning(`server "${entry.name}": its new ${key} list is refused, the previous one is kept`, part.failure),
          publish(false)
        )
      }
      entry.error = undefined
      const { [key]: _applied, ...refused } = entry.refused
      entry.refused = refused
      entry.lists = { ...entry.lists, [key]: list }
      entry.parts = { ...entry.parts, [key]: part.success }
      return publish(true)
    })

  /** Names were freed: the lists refused for a collision get another chance. Under the lock. */
  const retryRefused: Effect.Effect<void> = Effect.suspend(() =>
    Effect.forEach(Array.from(entries.values()), (entry) => {
      const connection = entry.connection
      if (connection === undefined) return Effect.void
      return Effect.forEach(
        Aggregate.listKeys,
        (key) => {
          const list = entry.refused[key]
          return list === undefined ? Effect.void : refresh(entry, connection, key, list)
        },
        { discard: true }
      )
    }, { discard: true })
  )

  /** The views follow the client's cached lists, which `list_changed` refreshes. */
  const watchLists = (entry: Entry, connection: Connection): Effect.Effect<void> => {
    const client = connection.client
    const capabilities = client.serverCapabilities
    const watch = <K extends Aggregate.ListKey>(
      key: K,
      declared: unknown,
      cache: McpClient.CachedList<Aggregate.Lists[K][number]>
    ) =>
      declared === undefined ? Effect.void : cache.changes.pipe(
        Stream.runForEach((list) => withLock(refresh(entry, connection, key, list as Aggregate.Lists[K]))),
        Effect.forkIn(connection.scope, { startImmediately: true }),
        Effect.asVoid
      )
    return Effect.all([
      watch("tools", capabilities.tools, client.tools),
      watch("prompts", capabilities.prompts, client.prompts),
      watch("resources", capabilities.resources, client.resources),
      watch("resourceTemplates", capabilities.resources, client.resourceTemplates)
    ], { discard: true })
  }

  /** Commits an opened connection (closing it if refused) and follows its lists. */
  const commitOpened = (entry: Entry, opened: Opened): Effect.Effect<void, McpError.McpError> =>
    withLock(commit(entry, opened)).pipe(
      Effect.onError(() => Scope.close(opened.connection.scope, Exit.void)),
      Effect.andThen(watchLists(entry, opened.connection))
    )

  const openAndCommit = (entry: Entry): Effect.Effect<void, McpError.McpError> =>
    Effect.flatMap(open(entry), (opened) => commitOpened(entry, opened))

  // ---------------------------------------------------------------------------
  // failures and reconnection
  // ---------------------------------------------------------------------------

  /** The connection ended on its own: withdraw the server's components. Under the lock. */
  const markDown = (entry: Entry, connection: Connection, reason: McpError.McpError): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (entry.connection !== connection || entry.closing) return Effect.void
      entry.connection = undefined
      entry.status = "down"
      entry.error = reason
      entry.reconnecting = reconnect !== false
      entry.withdrawn = entry.parts
      entry.parts = Aggregate.emptyParts
      entry.lists = Aggregate.emptyLists
      entry.refused = {}
      return Effect.logWarning(`MCP server "${entry.name}" is down: ${reason.message}`).pipe(
        Effect.andThen(publish(true)),
        Effect.andThen(retryRefused)
      )
    })

  /** Attempts to reconnect on the schedule (the first after its first delay); `true` once back up. */
  const reconnectOnSchedule = (entry: Entry): Effect.Effect<boolean> => {
    if (reconnect === false) return Effect.succeed(false)
    let first = true
    const attempt = Effect.suspend(() => {
      if (first) {
        first = false
        return Effect.fail(entry.error ?? McpError.closed())
      }
      return openAndCommit(entry).pipe(
        Effect.tapError((error) =>
          withLock(Effect.suspend(() => {
            if (entries.get(entry.name) !== entry) return Effect.void
            entry.error = error
            return publish(false)
          }))
        )
      )
    })
    return Effect.retry(attempt, reconnect).pipe(
      Effect.as(true),
      Effect.catch((error) =>
        withLock(Effect.suspend(() => {
          entry.reconnecting = false
          entry.error = error
          return publish(false)
        })).pipe(
          Effect.andThen(Effect.logWarning(`MCP server "${entry.name}" stays down: reconnection gave up`, error)),
          Effect.as(false)
        )
      )
    )
  }

  /** One round: wait for the connection to end, withdraw, reconnect. `true` when there is a new connection to watch. */
  const superviseOnce = (entry: Entry): Effect.Effect<boolean> =>
    Effect.gen(function*() {
      const connection = entry.connection
      if (connection !== undefined) {
        yield* connection.client.session.awaitClose
        if (entry.closing) return false
        const reason = yield* Deferred.poll(connection.ended).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.succeed(McpError.closed("the session ended")),
            onSome: (ended) => ended
          }))
        )
        yield* withLock(markDown(entry, connection, reason))
        // whatever is left of it (a process tree, sockets) goes now
        yield* Scope.close(connection.scope, Exit.void)
      }
      if (entry.closing) return false
      return yield* reconnectOnSchedule(entry)
    })

  /** Watches a server for as long as its scope lasts. */
  const supervise = (entry: Entry): Effect.Effect<void> =>
    superviseOnce(entry).pipe(
      Effect.repeat({ while: (again) => again }),
      Effect.asVoid,
      Effect.forkIn(entry.scope, { startImmediately: true }),
      Effect.asVoid
    )

  // ---------------------------------------------------------------------------
  // adding and removing servers
  // ---------------------------------------------------------------------------

  /** Takes the name and makes the server's entry and scope. Under the lock. */
  const reserve = (name: string, params: ServerParams, own: ClientOptions | undefined): Effect.Effect<Entry, McpError.McpError> =>
    Effect.suspend(() => {
      if (groupClosing) return Effect.fail(McpError.closed("the group is closing"))
      if (entries.has(name)) return Effect.fail(McpError.nameCollision("server", name, [name, name]))
      const entry: Entry = {
        name,
        params,
        clientOptions: clientOptionsFor(name, own),
        scope: Scope.forkUnsafe(serversScope, "sequential"),
        status: "connecting",
        connection: undefined,
        serverInfo: undefined,
        error: undefined,
        reconnecting: false,
        lists: Aggregate.emptyLists,
        parts: Aggregate.emptyParts,
        withdrawn: Aggregate.emptyParts,
        refused: {},
        closing: false
      }
      entries.set(name, entry)
      return Effect.as(publish(false), entry)
    })

  /** Removes the server (if it is still the one of that name) and closes its scope. */
  const remove = (entry: Entry): Effect.Effect<void> =>
    withLock(Effect.suspend(() => {
      entry.closing = true
      if (entries.get(entry.name) !== entry) return Effect.void
      entries.delete(entry.name)
      const at = order.indexOf(entry.name)
      if (at >= 0) order.splice(at, 1)
      // a server that contributed nothing leaves the views as they are
      const contributed = entry.parts !== Aggregate.emptyParts
      return Effect.andThen(publish(contributed), contributed ? retryRefused : Effect.void)
    })).pipe(Effect.andThen(Scope.close(entry.scope, Exit.void)))

  const connect = Effect.fn("McpGroup.connect")(function*(
    name: string,
    params: ServerParams,
    connectOptions?: { readonly client?: ClientOptions | undefined }
  ) {
    yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const entry = yield* withLock(reserve(name, params, connectOptions?.client))
        yield* restore(openAndCommit(entry)).pipe(Effect.onError(() => remove(entry)))
        yield* supervise(entry)
      })
    )
  })

  const disconnect = Effect.fn("McpGroup.disconnect")(function*(name: string) {
    const entry = entries.get(name)
    if (entry === undefined) return yield* McpError.notFound("server", name)
    yield* Effect.uninterruptible(remove(entry))
  })

  /** Closes every server, those still connecting first, then in reverse order of connection. */
  const closeAll: Effect.Effect<void> = Effect.suspend(() => {
    groupClosing = true
    const closing = ordered().reverse()
    for (const entry of closing) entry.closing = true
    return Effect.forEach(closing, (entry) => Scope.close(entry.scope, Exit.void), { discard: true })
  })

  yield* Effect.addFinalizer(() => Effect.andThen(closeAll, PubSub.shutdown(notifications)))

  // ---------------------------------------------------------------------------
  // the static servers: opened concurrently, committed in the order given
  // ---------------------------------------------------------------------------

  const initial = Object.entries(options.servers ?? {})
  if (initial.length > 0) {
    const reserved = yield* withLock(
      Effect.forEach(initial, ([name, config]) => reserve(name, paramsOf(config), ownOptionsOf(config)))
    )
    const opened = yield* Effect.forEach(reserved, (entry) => Effect.exit(open(entry)), { concurrency: "unbounded" })
    for (let i = 0; i < reserved.length; i++) {
      const entry = reserved[i]!
      const exit = opened[i]!
      const result = Exit.isSuccess(exit) ? yield* Effect.exit(commitOpened(entry, exit.value)) : exit
      if (Exit.isSuccess(result)) {
        yield* supervise(entry)
        continue
      }
      const error = Cause.findErrorOption(result.cause)
      if (options.startupFailure === "down" && Option.isSome(error)) {
        yield* withLock(Effect.suspend(() => {
          entry.status = "down"
          entry.error = error.value
          entry.reconnecting = reconnect !== false
          return publish(false)
        }))
        yield* Effect.logWarning(`MCP server "${entry.name}" could not connect: ${error.value.message}`)
        yield* supervise(entry)
        continue
      }
      yield* closeAll
      return yield* Effect.failCause(result.cause)
    }
  }

  // ---------------------------------------------------------------------------
  // routing
  // ---------------------------------------------------------------------------

  const snapshot = SubscriptionRef.get(state)

  const clientOf = (server: string): Effect.Effect<McpClient.Client, McpError.McpError> =>
    Effect.suspend(() => {
      const entry = entries.get(server)
      if (entry === undefined) return Effect.fail(McpError.notFound("server", server))
      if (entry.status !== "up" || entry.connection === undefined) return Effect.fail(unavailable(entry))
      return Effect.succeed(entry.connection.client)
    })

  /** A name that is not in the views: a down server's, or nobody's. */
  const missing = (key: Aggregate.ListKey, kind: string, name: string, uri?: boolean): McpError.McpError => {
    const down = Array.from(entries.values()).flatMap((entry) =>
      entry.status === "up" ? [] : [[entry.name, entry.withdrawn] as const]
    )
    const owner = Aggregate.ownerOf(down, key, name, uri)
    const entry = owner === undefined ? undefined : entries.get(owner)
    return entry === undefined ? McpError.notFound(kind, name) : unavailable(entry)
  }

  /**
   * After a call failed for want of a connection while the session is still
   * open (an HTTP server that went away leaves the session open): one ping,
   * and if that fails the same way, the connection is ended with its error,
   * which the supervisor takes as the server going down.
   */
  const probe = (entry: Entry, connection: Connection): Effect.Effect<void> =>
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
    server: string,
    f: (client: McpClient.Client) => Effect.Effect<A, McpError.McpError>
  ): Effect.Effect<A, McpError.McpError> =>
    Effect.flatMap(clientOf(server), (client) =>
      f(client).pipe(
        Effect.catchIf(isConnectionFailure, (error) =>
          Effect.flatMap(client.session.isOpen, (isOpen) => {
            if (!isOpen) return Effect.fail(McpError.serverUnavailable(server, error.message, error))
            const entry = entries.get(server)
            const connection = entry?.connection
            return Effect.andThen(
              entry !== undefined && connection !== undefined && connection.client === client
                ? probe(entry, connection)
                : Effect.void,
              Effect.fail(error)
            )
          }))
      ))

  const callTool = Effect.fn("McpGroup.callTool")(function*(
    name: string,
    args?: Readonly<Record<string, unknown>>,
    requestOptions?: McpClient.RequestOptions
  ) {
    const entry = (yield* snapshot).index.tools.get(name)
    if (entry === undefined) return yield* missing("tools", "tool", name)
    return yield* call(entry.server, (client) => client.callTool(entry.tool.name, args, requestOptions))
  })

  const getPrompt = Effect.fn("McpGroup.getPrompt")(function*(
    name: string,
    args?: Readonly<Record<string, string>>,
    requestOptions?: McpClient.RequestOptions
  ) {
    const entry = (yield* snapshot).index.prompts.get(name)
    if (entry === undefined) return yield* missing("prompts", "prompt", name)
    return yield* call(entry.server, (client) => client.getPrompt(entry.prompt.name, args, requestOptions))
  })

  const readResource = Effect.fn("McpGroup.readResource")(function*(
    uri: string,
    readOptions?: ReadResourceOptions
  ) {
    const { server, ...requestOptions } = readOptions ?? {}
    if (server !== undefined) return yield* call(server, (client) => client.readResource(uri, requestOptions))
    const route = Aggregate.routeResource((yield* snapshot).index, uri)
    if (route !== undefined) {
      return yield* call(route.server, (client) => client.readResource(route.uri, requestOptions))
    }
    const error = missing("resources", "resource", uri, true)
    if (error.reason._tag !== "NotFoundError") return yield* error
    // a URI nobody listed: the only server with resources, if there is one
    const candidates = Array.from(entries.values()).filter((entry) =>
      entry.status === "up" && entry.connection?.client.serverCapabilities.resources !== undefined
    )
    if (candidates.length !== 1) return yield* error
    return yield* call(candidates[0]!.name, (client) => client.readResource(uri, requestOptions))
  })

  const complete = Effect.fn("McpGroup.complete")(function*(
    ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> | undefined },
    requestOptions?: McpClient.RequestOptions
  ) {
    const route = Aggregate.routeReference((yield* snapshot).index, ref)
    if (route === undefined) {
      return yield* ref.type === "ref/prompt"
        ? missing("prompts", "prompt", ref.name)
        : missing("resourceTemplates", "resource template", ref.uri)
    }
    const completionContext = context?.arguments === undefined ? undefined : { arguments: context.arguments }
    return yield* call(route.server, (client) =>
      client.complete(
        completionContext === undefined
          ? { ref: route.ref, argument }
          : { ref: route.ref, argument, context: completionContext },
        requestOptions
      ))
  })

  const views = Effect.map(snapshot, (current) => current.views)

  return {
    connect,
    disconnect,
    servers: Effect.map(snapshot, (current) => current.servers),
    serverChanges: SubscriptionRef.changes(state).pipe(
      Stream.map((current) => current.servers),
      Stream.changesWith((a, b) => a === b)
    ),
    tools: Effect.map(views, (current) => current.tools),
    resources: Effect.map(views, (current) => current.resources),
    resourceTemplates: Effect.map(views, (current) => current.resourceTemplates),
    prompts: Effect.map(views, (current) => current.prompts),
    views,
    changes: SubscriptionRef.changes(state).pipe(
      Stream.map((current) => current.views),
      Stream.changesWith((a, b) => a === b)
    ),
    callTool,
    readResource,
    getPrompt,
    complete,
    client: Effect.fn("McpGroup.client")(function*(server: string) {
      return yield* clientOf(server)
    }),
    notifications: Stream.fromPubSub(notifications),
    subscribe: Effect.map(PubSub.subscribe(notifications), Stream.fromSubscription)
  }
})
