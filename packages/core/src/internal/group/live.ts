/**
 * Calls on a server's current connection, shared by the routed calls
 * (`routing.ts`) and the stable client (`handle.ts`): the connection of an
 * up server (or why there is none), a call on it whose failure for want of a
 * connection names the server, and streams that follow the server from one
 * connection to the next.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import * as Entry from "./entry.ts"
import * as State from "./state.ts"

/** A failure that means the connection itself is gone. @internal */
export const isConnectionFailure = (error: McpError.McpError): boolean =>
  error.reason._tag === "TransportError" || error.reason._tag === "ClosedError"

/** The entry of a server of the group. @internal */
export const entryOf = (state: State.State, server: string): Effect.Effect<Entry.Entry, McpError.McpError> =>
  Effect.suspend(() => {
    const entry = state.entries.get(server)
    return entry === undefined ? Effect.fail(McpError.notFound("server", server)) : Effect.succeed(entry)
  })

/** The current connection of a server that is up (and still in the group). @internal */
export const current = (state: State.State, entry: Entry.Entry): Effect.Effect<Entry.Connection, McpError.McpError> =>
  Effect.suspend(() => {
    if (entry.closing || !State.isCurrent(state, entry)) {
      return Effect.fail(McpError.serverUnavailable(entry.name, "it was disconnected"))
    }
    const connection = entry.connection
    if (entry.status !== "up" || connection === undefined) return Effect.fail(Entry.unavailable(entry))
    return Effect.succeed(connection)
  })

const isLost = (error: unknown): error is McpError.McpError => McpError.isMcpError(error) && isConnectionFailure(error)

/**
 * Calls the server's current connection. A failure for want of a connection
 * names the server when the session is over; while it is still open (an
 * HTTP session outlives its server) the failure is kept and the connection
 * is checked at once (see `supervision.ts`).
 *
 * @internal
 */
export const call = <A, E, R>(
  state: State.State,
  entry: Entry.Entry,
  f: (client: McpClient.Client) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | McpError.McpError, R> =>
  Effect.flatMap(
    current(state, entry),
    (connection) =>
      Effect.catch(f(connection.client), (error: E): Effect.Effect<never, E | McpError.McpError> =>
        isLost(error)
          ? Effect.flatMap(connection.client.session.isOpen, (isOpen) =>
            isOpen
              ? Effect.andThen(connection.check, Effect.fail(error))
              : Effect.flatMap(Deferred.poll(connection.ended), (ended) =>
                Effect.flatMap(
                  Option.getOrElse(ended, () => Effect.succeed(error)),
                  // why the connection ended, when known (a liveness drop closes it with a bare ClosedError)
                  (reason) => Effect.fail(McpError.serverUnavailable(entry.name, reason.message, reason))
                )))
          : Effect.fail(error))
  )

/**
 * What becomes of a server whose connection `previous` is over: a new
 * connection, the end (it left the group), or a failure (down for good);
 * `undefined` while it is still to be known.
 */
const next = (
  state: State.State,
  entry: Entry.Entry,
  previous: Entry.Connection
): Effect.Effect<Entry.Connection | undefined, McpError.McpError> | undefined => {
  if (entry.closing || !State.isCurrent(state, entry)) return Effect.succeed(undefined)
  const connection = entry.connection
  if (entry.status === "up" && connection !== undefined && connection !== previous) return Effect.succeed(connection)
  if (entry.status === "down" && !entry.reconnecting) return Effect.fail(Entry.unavailable(entry))
  return undefined
}

/** Waits for what becomes of the server after `previous` (see {@link next}). */
const awaitNext = (
  state: State.State,
  entry: Entry.Entry,
  previous: Entry.Connection
): Effect.Effect<Entry.Connection | undefined, McpError.McpError> =>
  // every change of an entry is published: the snapshot's changes are the moments to look again
  SubscriptionRef.changes(state.snapshot).pipe(
    Stream.map(() => next(state, entry, previous)),
    Stream.filter((decided) => decided !== undefined),
    Stream.runHead,
    Effect.flatMap(Option.match({ onNone: () => Effect.succeed(undefined), onSome: (decided) => decided })),
    Effect.raceFirst(Effect.as(Deferred.await(entry.removed), undefined))
  )

/**
 * `f` of the server's current connection, then of each new connection after
 * a reconnection (preceded by `renewed`), for as long as the server is in
 * the group. Fails at once when the server is not up, and once it is down
 * for good.
 *
 * @internal
 */
export const follow = <A>(
  state: State.State,
  entry: Entry.Entry,
  f: (client: McpClient.Client) => Stream.Stream<A, McpError.McpError>,
  renewed: Stream.Stream<A> = Stream.empty
): Stream.Stream<A, McpError.McpError> => {
  const from = (connection: Entry.Connection): Stream.Stream<A, McpError.McpError> =>
    Stream.concat(
      f(connection.client).pipe(
        // the connection going away ends its part; an open session that failed gets checked
        Stream.catchIf(isLost, (error) =>
          Stream.unwrap(Effect.map(
            connection.client.session.isOpen,
            (isOpen) => isOpen ? Stream.fromEffect(Effect.andThen(connection.check, Effect.fail(error))) : Stream.empty
          )))
      ),
      Stream.unwrap(Effect.map(
        awaitNext(state, entry, connection),
        (following) => following === undefined ? Stream.empty : Stream.concat(renewed, from(following))
      ))
    )
  return Stream.unwrap(Effect.map(current(state, entry), from))
}
