/**
 * The stable client of a group's server (`group.client(server)`): an
 * `McpClient.Client` whose calls go to the server's current connection
 * (failing at once while it is down), whose values are those of its current
 * connection (or of its last one while it is down), and whose streams go on
 * across connections. The roots, logging level and subscriptions set through
 * it (or through the group) are kept on the server's entry and carried to
 * its new connections (`supervision.ts`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.ts"
import type * as McpClientSession from "../../McpClientSession.ts"
import type * as McpError from "../../McpError.ts"
import type { ServerNotification } from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpTask from "../../McpTask.ts"
import type * as Entry from "./entry.ts"
import * as Live from "./live.ts"
import type * as State from "./state.ts"

/** Subscribes to a resource on the server, and keeps the subscription for its new connections. @internal */
export const subscribe = (
  state: State.State,
  entry: Entry.Entry,
  uri: string,
  options: McpClient.RequestOptions | undefined
): Effect.Effect<void, McpError.McpError> =>
  Effect.tap(
    Live.call(state, entry, (client) => client.subscribeResource(uri, options)),
    () => Effect.sync(() => entry.subscriptions.add(uri))
  )

/** Ends a subscription; while the server is down there is nothing to undo on it. @internal */
export const unsubscribe = (
  state: State.State,
  entry: Entry.Entry,
  uri: string,
  options: McpClient.RequestOptions | undefined
): Effect.Effect<void, McpError.McpError> =>
  Effect.suspend(() => {
    entry.subscriptions.delete(uri)
    return entry.status === "up"
      ? Live.call(state, entry, (client) => client.unsubscribeResource(uri, options))
      : Effect.void
  })

/**
 * `watchResource` across the server's connections: renewed on each new one,
 * with one update of the URI (it may have changed meanwhile).
 *
 * @internal
 */
export const watch = (
  state: State.State,
  entry: Entry.Entry,
  uri: string,
  options: McpClient.RequestOptions | undefined
): Stream.Stream<McpSchema.ResourceUpdatedNotificationParams, McpError.McpError> =>
  Live.follow(state, entry, (client) => client.watchResource(uri, options), Stream.succeed({ uri }))

/** The server's notifications (published to the group by every connection) until it leaves the group. */
const notificationsOf = (
  entry: Entry.Entry,
  stream: Stream.Stream<ServerNotification>
): Stream.Stream<McpClient.Notification> =>
  stream.pipe(
    Stream.filter((item) => item.server === entry.name),
    Stream.map((item) => item.notification),
    Stream.interruptWhen(Deferred.await(entry.removed))
  )

/** The stable client of a server that has been up (its `last` client is set). @internal */
export const make = (state: State.State, entry: Entry.Entry): McpClient.Client => {
  const latest = (): McpClient.Client => entry.connection?.client ?? entry.last!
  const call = <A, E, R>(f: (client: McpClient.Client) => Effect.Effect<A, E, R>) => Live.call(state, entry, f)
  const stream = <A>(f: (client: McpClient.Client) => Stream.Stream<A, McpError.McpError>) =>
    Stream.unwrap(Effect.map(Live.current(state, entry), (connection) => f(connection.client)))
  const cachedList = <A>(pick: (client: McpClient.Client) => McpClient.CachedList<A>): McpClient.CachedList<A> => ({
    get: call((client) => pick(client).get),
    refresh: call((client) => pick(client).refresh),
    cached: Effect.flatMap(
      Effect.option(Live.current(state, entry)),
      Option.match({
        onNone: () => Effect.succeed(Option.none()),
        onSome: (connection) => pick(connection.client).cached
      })
    ),
    // each connection's cached list, then every later one; ends once the server is down for good
    changes: Stream.ignore(Live.follow(state, entry, (client) => pick(client).changes)),
    ttlMs: Effect.flatMap(
      Effect.option(Live.current(state, entry)),
      Option.match({ onNone: () => Effect.succeed(undefined), onSome: (connection) => pick(connection.client).ttlMs })
    )
  })
  const notifications = notificationsOf(entry, Stream.fromPubSub(state.notifications))
  // each step of a task's handle goes to the server's current connection, through one handle per
  // connection (what it learned, a final state, serves the next step: no second following)
  const taskOf = (taskId: string, options: McpClient.RequestOptions | undefined): McpTask.Task => {
    const handles = new WeakMap<McpClient.Client, McpTask.Task>()
    const on = (client: McpClient.Client): McpTask.Task => {
      const known = handles.get(client)
      if (known !== undefined) return known
      const handle = client.task(taskId, options)
      handles.set(client, handle)
      return handle
    }
    return {
      taskId,
      poll: call((client) => on(client).poll),
      status: stream((client) => on(client).status),
      result: call((client) => on(client).result),
      cancel: call((client) => on(client).cancel)
    }
  }

  return {
    get session(): McpClientSession.ClientSession {
      return latest().session
    },
    get era() {
      return latest().era
    },
    get protocolVersion() {
      return latest().protocolVersion
    },
    get serverInfo() {
      return latest().serverInfo
    },
    get serverCapabilities() {
      return latest().serverCapabilities
    },
    get instructions() {
      return latest().instructions
    },
    get capabilities() {
      return latest().capabilities
    },
    ping: (options) => call((client) => client.ping(options)),
    listTools: (params, options) => call((client) => client.listTools(params, options)),
    streamTools: (options) => stream((client) => client.streamTools(options)),
    tools: cachedList((client) => client.tools),
    callTool: (name, args, options) => call((client) => client.callTool(name, args, options)),
    callToolTask: (name, args, options) =>
      Effect.map(
        call((client) => client.callToolTask(name, args, options)),
        (task) => task.taskId === "" ? task : taskOf(task.taskId, options)
      ),
    task: (taskId, options) => taskOf(taskId, options),
    callToolTyped: <S extends Schema.Top>(
      name: string,
      args: Readonly<Record<string, unknown>> | undefined,
      schema: S,
      options?: McpClient.RequestOptions
    ) => call((client) => client.callToolTyped(name, args, schema, options)),
    listResources: (params, options) => call((client) => client.listResources(params, options)),
    streamResources: (options) => stream((client) => client.streamResources(options)),
    resources: cachedList((client) => client.resources),
    listResourceTemplates: (params, options) => call((client) => client.listResourceTemplates(params, options)),
    streamResourceTemplates: (options) => stream((client) => client.streamResourceTemplates(options)),
    resourceTemplates: cachedList((client) => client.resourceTemplates),
    readResource: (uri, options) => call((client) => client.readResource(uri, options)),
    subscribeResource: (uri, options) => subscribe(state, entry, uri, options),
    unsubscribeResource: (uri, options) => unsubscribe(state, entry, uri, options),
    watchResource: (uri, options) => watch(state, entry, uri, options),
    listPrompts: (params, options) => call((client) => client.listPrompts(params, options)),
    streamPrompts: (options) => stream((client) => client.streamPrompts(options)),
    prompts: cachedList((client) => client.prompts),
    getPrompt: (name, args, options) => call((client) => client.getPrompt(name, args, options)),
    complete: (params, options) => call((client) => client.complete(params, options)),
    setLoggingLevel: (level, options) =>
      Effect.tap(
        call((client) => client.setLoggingLevel(level, options)),
        () => Effect.sync(() => entry.logLevel = level)
      ),
    roots: Effect.suspend(() =>
      entry.connection === undefined
        ? Effect.succeed(entry.roots ?? entry.clientOptions.roots ?? [])
        : entry.connection.client.roots
    ),
    setRoots: (roots) =>
      Effect.tap(
        call((client) => client.setRoots(roots)),
        () => Effect.sync(() => entry.roots = roots)
      ),
    notifications,
    subscribe: Effect.map(
      PubSub.subscribe(state.notifications),
      (subscription) => notificationsOf(entry, Stream.fromSubscription(subscription))
    ),
    notificationsOf: <K extends McpClient.ServerNotificationMethod>(method: K | { readonly name: K }) => {
      const name = typeof method === "string" ? method : method.name
      return notifications.pipe(
        Stream.filter((notification) => notification.method === name),
        Stream.map((notification) => notification.params as McpClient.NotificationParams<K>)
      )
    }
  }
}
