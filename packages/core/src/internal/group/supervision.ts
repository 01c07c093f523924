/**
 * The life of a group's servers.
 *
 * - Connecting is two steps: opening (transport, handshake, listing in a new
 *   connection scope; no lock, so servers open concurrently) and committing
 *   (naming and collision checks, under the lock). A failed commit closes the
 *   connection it was given and leaves every entry as it was.
 * - Each connection to a server is a scope forked from the server's. The
 *   server's supervisor fiber lives in the server's scope: it waits for the
 *   connection to end (its session ends, or the liveness watcher drops it),
 *   marks the server down, closes the connection's scope
 *   (a stdio server's process tree goes with it) and reconnects on the
 *   schedule.
 * - While a server is up, its lists follow `list_changed`; a refreshed list
 *   that would collide is refused until its names are free.
 * - While a server is up, a liveness watcher (in the connection's scope)
 *   pings it when it has been silent for an interval, or at once when asked
 *   (a call failed for want of a connection, the HTTP GET stream ended);
 *   too many pings unanswered in a row, or one that fails for want of a
 *   connection, end the connection. `client.ping` is `server/discover` on a
 *   2026-07-28 connection (that revision has no `ping`).
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
import * as Pull from "effect/Pull"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type { ClientOptions } from "../../McpGroup.ts"
import { McpTransport } from "../../McpTransport.ts"
import * as Secrets from "../config/secrets.ts"
import * as ClientHooks from "../http/clientHooks.ts"
import * as Aggregate from "./aggregate.ts"
import * as Entry from "./entry.ts"
import * as InMemory from "./inMemory.ts"
import { isConnectionFailure } from "./live.ts"
import * as State from "./state.ts"

const isMethodNotFound = (error: McpError.McpError): boolean =>
  error.reason._tag === "ProtocolError" && error.reason.code === JsonRpc.ErrorCode.MethodNotFound

// -----------------------------------------------------------------------------
// opening
// -----------------------------------------------------------------------------

/**
 * The transport of a connection: the messages from the server counted, the
 * reason it ends recorded, the end of an HTTP GET stream reported as a
 * reason to check the server, and the secrets of its params (the values of
 * its config's variables) masked in its errors.
 */
const watchedTransport = (
  state: State.State,
  entry: Entry.Entry,
  ended: Deferred.Deferred<McpError.McpError>,
  heard: Entry.Connection["heard"],
  check: Effect.Effect<void>
) => {
  const secrets = Secrets.maskedOf(entry.params)
  const masked = (error: McpError.McpError) => Secrets.maskError(error, secrets)
  return Layer.effect(
    McpTransport,
    Effect.gen(function*() {
      const transport = yield* McpTransport
      return McpTransport.of({
        ...transport,
        send: secrets.length === 0
          ? transport.send
          : (frame) => Effect.mapError(transport.send(frame), masked),
        incoming: transport.incoming.pipe(
          Stream.mapError(masked),
          Stream.map((message) => {
            heard.messages++
            return message
          }),
          Stream.onExit((exit) => {
            if (Exit.isSuccess(exit)) {
              return Deferred.succeed(ended, McpError.closed("the server closed the connection"))
            }
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
      connectorTransport(state, entry).pipe(
        Layer.provide(Layer.succeed(ClientHooks.OnListenEnd, check))
      )
    )
  )
}

/** The transport layer of a server: in-memory ones served here, unresolved ones failed, others the connector's. */
const connectorTransport = (state: State.State, entry: Entry.Entry): Layer.Layer<McpTransport, McpError.McpError> => {
  switch (entry.params._tag) {
    case "InMemory":
      return InMemory.transport(entry.params.server)
    case "Unresolved":
      return Layer.effect(McpTransport, Effect.fail(entry.params.error))
    default:
      return state.connector.transport(entry.params, entry.name)
  }
}

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

/** Transport, handshake and listing, in a new connection scope (closed on failure). @internal */
export const open = (state: State.State, entry: Entry.Entry): Effect.Effect<Entry.Opened, McpError.McpError> =>
  Effect.suspend(() => {
    if (entry.closing) return Effect.fail(McpError.serverUnavailable(entry.name, "it was disconnected"))
    const scope = Scope.forkUnsafe(entry.scope, "sequential")
    return Effect.gen(function*() {
      const ended = yield* Deferred.make<McpError.McpError>()
      const dropped = yield* Deferred.make<void>()
      const asked = yield* Queue.sliding<void>(1)
      const check = Effect.asVoid(Queue.offer(asked, undefined))
      const heard = { messages: 0 }
      const client = yield* Layer.buildWithMemoMap(
        McpClient.layer(Entry.clientOptionsOf(entry)).pipe(
          Layer.provide([watchedTransport(state, entry, ended, heard, check), state.validator])
        ),
        Layer.makeMemoMapUnsafe(),
        scope
      ).pipe(Effect.map(Context.get(McpClient.McpClient)))
      const lists = yield* fetchLists(client)
      return { connection: { client, scope, ended, dropped, check, heard }, lists, asked }
    }).pipe(
      Effect.onError(() => Scope.close(scope, Exit.void)),
      Effect.mapError((error) => Secrets.maskError(error, Secrets.maskedOf(entry.params)))
    )
  })

/**
 * A session of its own with the server, in the current scope: a new
 * connection made like the server's (its transport, its client options, the
 * era its connection settled on), with `options` laid over them; its
 * notifications are its own, not the group's. Not part of the views,
 * liveness or reconnection.
 *
 * @internal
 */
export const openSession = (
  state: State.State,
  entry: Entry.Entry,
  options: ClientOptions | undefined
): Effect.Effect<McpClient.Client, McpError.McpError, Scope.Scope> =>
  Effect.suspend(() => {
    if (entry.closing) return Effect.fail(McpError.serverUnavailable(entry.name, "it was disconnected"))
    const { onNotification: _, ...base } = Entry.clientOptionsOf(entry)
    const clientOptions: McpClient.Options = {
      ...base,
      ...(entry.era === undefined ? {} : { era: entry.era }),
      ...options,
      clientInfo: options?.clientInfo ?? base.clientInfo
    }
    return Layer.build(
      McpClient.layer(clientOptions).pipe(Layer.provide([connectorTransport(state, entry), state.validator]))
    ).pipe(
      Effect.map(Context.get(McpClient.McpClient)),
      Effect.mapError((error) => Secrets.maskError(error, Secrets.maskedOf(entry.params)))
    )
  })

// -----------------------------------------------------------------------------
// committing, and following the lists
// -----------------------------------------------------------------------------

/** Names the opened server's components and adds them, or fails and changes nothing. Under the lock. */
const commit = (state: State.State, entry: Entry.Entry, opened: Entry.Opened): Effect.Effect<void, McpError.McpError> =>
  Effect.suspend(() => {
    if (entry.closing || !State.isCurrent(state, entry)) {
      return Effect.fail(McpError.serverUnavailable(entry.name, "it was disconnected while connecting"))
    }
    const serverInfo = opened.connection.client.serverInfo
    const parts = Aggregate.nameParts(opened.lists, entry.name, serverInfo, state.hook, State.othersOf(state, entry))
    if (Result.isFailure(parts)) return Effect.fail(parts.failure)
    Entry.up(entry, opened, parts.success)
    if (!state.order.includes(entry.name)) state.order.push(entry.name)
    return State.publish(state, true)
  })

/** A refreshed list (after `list_changed`): replaces that part of the server's, unless it collides. Under the lock. */
const refresh = <K extends Aggregate.ListKey>(
  state: State.State,
  entry: Entry.Entry,
  connection: Entry.Connection,
  key: K,
  list: Aggregate.Lists[K]
): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (entry.connection !== connection || entry.status !== "up" || entry.lists[key] === list) return Effect.void
    const serverInfo = entry.serverInfo ?? State.defaultClientInfo
    const part = Aggregate.namePart(key, list, entry.name, serverInfo, state.hook, State.othersOf(state, entry))
    if (Result.isFailure(part)) {
      Entry.refused(entry, key, list, part.failure)
      return Effect.andThen(
        Effect.logWarning(
          `server "${entry.name}": its new ${key} list is refused, the previous one is kept`,
          part.failure
        ),
        State.publish(state, false)
      )
    }
    Entry.refreshed(entry, key, list, part.success)
    return State.publish(state, true)
  })

/** Names were freed: the lists refused for a collision get another chance. Under the lock. @internal */
export const retryRefused = (state: State.State): Effect.Effect<void> =>
  Effect.suspend(() =>
    Effect.forEach(Array.from(state.entries.values()), (entry) => {
      const connection = entry.connection
      if (connection === undefined) return Effect.void
      return Effect.forEach(Aggregate.listKeys, (key) => {
        const list = entry.refused[key]
        return list === undefined ? Effect.void : refresh(state, entry, connection, key, list)
      }, { discard: true })
    }, { discard: true })
  )

/** The views follow the client's cached lists, which `list_changed` refreshes. */
const watchLists = (state: State.State, entry: Entry.Entry, connection: Entry.Connection): Effect.Effect<void> => {
  const client = connection.client
  const capabilities = client.serverCapabilities
  const watch = <K extends Aggregate.ListKey>(
    key: K,
    declared: unknown,
    cache: McpClient.CachedList<Aggregate.Lists[K][number]>
  ) =>
    declared === undefined ? Effect.void : cache.changes.pipe(
      Stream.runForEach((list) => state.withLock(refresh(state, entry, connection, key, list as Aggregate.Lists[K]))),
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

// -----------------------------------------------------------------------------
// liveness, and what carries over to a new connection
// -----------------------------------------------------------------------------

/**
 * Pings the server when it was silent for a whole interval, or at once when
 * asked; ends the connection (through `ended`) when `maxMissed` pings in a
 * row go unanswered, or when one fails for want of a connection. An answer,
 * even an error, means the server is alive.
 */
const watchLiveness = (entry: Entry.Entry, connection: Entry.Connection, asked: Queue.Dequeue<void>) => {
  const { interval, maxMissed, timeout } = entry.liveness
  const whenAsked = Effect.as(Queue.take(asked), true)
  const wait = interval === undefined
    ? whenAsked
    : Effect.raceFirst(Effect.as(Effect.sleep(interval), false), whenAsked)
  const heard = connection.heard
  const end = (error: McpError.McpError) =>
    Effect.andThen(Deferred.succeed(connection.ended, error), Deferred.succeed(connection.dropped, undefined))
  let seen = heard.messages
  const loop = (missed: number): Effect.Effect<void> =>
    Effect.flatMap(wait, (checkNow) => {
      if (!checkNow && heard.messages !== seen) {
        // it spoke during the interval: alive
        seen = heard.messages
        return loop(0)
      }
      return Effect.flatMap(Effect.exit(connection.client.ping({ timeout })), (exit) => {
        seen = heard.messages
        const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
        if (Option.isNone(error)) return loop(0)
        if (isConnectionFailure(error.value)) return end(error.value)
        if (error.value.reason._tag !== "TimeoutError") return loop(0)
        if (missed + 1 < maxMissed) return loop(missed + 1)
        return end(McpError.transport(
          `the server stopped answering: ${maxMissed} ping${maxMissed === 1 ? "" : "s"} in a row got no answer ` +
            `within ${Duration.format(timeout)}`
        ))
      })
    })
  return Effect.asVoid(loop(0))
}

/** The logging level and the subscriptions set through the group, renewed on a new connection. */
const restore = (entry: Entry.Entry, connection: Entry.Connection): Effect.Effect<void> => {
  const client = connection.client
  const level = entry.logLevel
  const uris = Array.from(entry.subscriptions)
  if (level === undefined && uris.length === 0) return Effect.void
  return Effect.all([
    level === undefined ? Effect.void : client.setLoggingLevel(level),
    Effect.forEach(uris, (uri) => client.subscribeResource(uri), { discard: true })
  ], { discard: true }).pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning(`MCP server "${entry.name}": its logging level or subscriptions could not be renewed`, cause)
    ),
    Effect.forkIn(connection.scope, { startImmediately: true }),
    Effect.asVoid
  )
}

/** Commits an opened connection (closing it if refused), follows its lists and watches its liveness. @internal */
export const commitOpened = (
  state: State.State,
  entry: Entry.Entry,
  opened: Entry.Opened
): Effect.Effect<void, McpError.McpError> =>
  state.withLock(commit(state, entry, opened)).pipe(
    Effect.onError(() => Scope.close(opened.connection.scope, Exit.void)),
    Effect.andThen(watchLists(state, entry, opened.connection)),
    Effect.andThen(
      watchLiveness(entry, opened.connection, opened.asked).pipe(
        Effect.forkIn(opened.connection.scope, { startImmediately: true })
      )
    ),
    Effect.andThen(restore(entry, opened.connection))
  )

/** Opens and commits. @internal */
export const openAndCommit = (state: State.State, entry: Entry.Entry): Effect.Effect<void, McpError.McpError> =>
  Effect.flatMap(open(state, entry), (opened) => commitOpened(state, entry, opened))

// -----------------------------------------------------------------------------
// failures and reconnection
// -----------------------------------------------------------------------------

/** The connection ended on its own: withdraw the server's components. Under the lock. */
const markDown = (
  state: State.State,
  entry: Entry.Entry,
  connection: Entry.Connection,
  reason: McpError.McpError
): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (entry.connection !== connection || entry.closing) return Effect.void
    Entry.down(entry, reason, state.reconnect !== false)
    return Effect.logWarning(`MCP server "${entry.name}" is down: ${reason.message}`).pipe(
      Effect.andThen(State.publish(state, true)),
      Effect.andThen(retryRefused(state))
    )
  })

/** One reconnection attempt; its failure is recorded on the server (still down, still reconnecting). */
const attempt = (state: State.State, entry: Entry.Entry): Effect.Effect<void, McpError.McpError> =>
  openAndCommit(state, entry).pipe(
    Effect.tapError((error) =>
      state.withLock(Effect.suspend(() => {
        if (!State.isCurrent(state, entry)) return Effect.void
        Entry.failed(entry, error, true)
        return State.publish(state, false)
      }))
    )
  )

/**
 * Attempts to reconnect on the schedule; `true` once back up. The schedule
 * is stepped by hand: before every attempt, one step (fed the error before
 * it: the one the server went down with, then each failed attempt's) and a
 * sleep of its delay. So the first attempt comes after the schedule's first
 * delay, and each step the schedule allows is one attempt. When the schedule
 * is done, the server stays down with the last error.
 */
const reconnectOnSchedule = (state: State.State, entry: Entry.Entry): Effect.Effect<boolean> => {
  const reconnect = state.reconnect
  if (reconnect === false) return Effect.succeed(false)
  const gaveUp = (error: McpError.McpError) =>
    state.withLock(Effect.suspend(() => {
      Entry.failed(entry, error, false)
      return State.publish(state, false)
    })).pipe(
      Effect.andThen(Effect.logWarning(`MCP server "${entry.name}" stays down: reconnection gave up`, error)),
      Effect.as(false)
    )
  return Effect.flatMap(Schedule.toStepWithSleep(reconnect), (next) => {
    const loop = (error: McpError.McpError): Effect.Effect<boolean> =>
      Pull.matchEffect(next(error), {
        onSuccess: () => attempt(state, entry).pipe(Effect.as(true), Effect.catch(loop)),
        onFailure: Effect.failCause,
        onDone: () => gaveUp(error)
      })
    return loop(entry.error ?? McpError.closed())
  })
}

/** One round: wait for the connection to end, withdraw, reconnect. `true` when there is a new connection to watch. */
const superviseOnce = (state: State.State, entry: Entry.Entry): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const connection = entry.connection
    if (connection !== undefined) {
      yield* Effect.raceFirst(connection.client.session.awaitClose, Deferred.await(connection.dropped))
      if (entry.closing) return false
      const reason = yield* Deferred.poll(connection.ended).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed(McpError.closed("the session ended")),
          onSome: (ended) => ended
        }))
      )
      yield* state.withLock(markDown(state, entry, connection, reason))
      // whatever is left of it (a process tree, sockets) goes now
      yield* Scope.close(connection.scope, Exit.void)
    }
    if (entry.closing) return false
    return yield* reconnectOnSchedule(state, entry)
  })

/** Watches a server for as long as its scope lasts (in a fiber of that scope). @internal */
export const supervise = (state: State.State, entry: Entry.Entry): Effect.Effect<void> =>
  superviseOnce(state, entry).pipe(
    Effect.repeat({ while: (again) => again }),
    Effect.asVoid,
    Effect.forkIn(entry.scope, { startImmediately: true }),
    Effect.asVoid
  )
