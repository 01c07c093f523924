/**
 * A server of the group, as the runtime keeps it: a plain object changed only
 * while holding the group's lock, and only through the transitions below
 * (connecting → up → down → up ..., or down for good once reconnection gives
 * up).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as McpClient from "../../McpClient.ts"
import type * as McpClientSession from "../../McpClientSession.ts"
import * as McpError from "../../McpError.ts"
import type { ServerParams, ServerStatus } from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as Aggregate from "./aggregate.ts"

/** One connection to a server, in a scope of its own forked from the server's. @internal */
export interface Connection {
  readonly client: McpClient.Client
  readonly scope: Scope.Closeable
  /** Why the connection ended, once it has: its transport ended, or the group gave up on it. */
  readonly ended: Deferred.Deferred<McpError.McpError>
  /** Completed (after `ended`) when the group gives up on the connection while its session is still open. */
  readonly dropped: Deferred.Deferred<void>
  /** Asks for a liveness check now (a call failed for want of a connection, the HTTP GET stream ended). */
  readonly check: Effect.Effect<void>
  /** How many messages came from the server so far (to tell a silent server). */
  readonly heard: { messages: number }
}

/** A server's liveness settings, resolved. @internal */
export interface Liveness {
  /** `undefined`: no periodic pings (checks only when asked). */
  readonly interval: Duration.Duration | undefined
  readonly timeout: Duration.Duration
  readonly maxMissed: number
}

/** A connection that is open and listed, not yet committed to the group. @internal */
export interface Opened {
  readonly connection: Connection
  readonly lists: Aggregate.Lists
  /** Where `connection.check` asks the liveness watcher for a check. */
  readonly asked: Queue.Dequeue<void>
}

/** A server of the group: fixed identity and scope, and its mutable state. @internal */
export interface Entry {
  readonly name: string
  readonly params: ServerParams
  readonly clientOptions: McpClient.Options
  readonly liveness: Liveness
  readonly scope: Scope.Closeable
  /** Completed when it leaves the group (disconnected, or the group closed). */
  readonly removed: Deferred.Deferred<void>
  status: "connecting" | "up" | "down"
  connection: Connection | undefined
  serverInfo: McpSchema.Implementation | undefined
  /** The era and protocol version of its last connection (kept while it is down). */
  era: McpClientSession.Era | undefined
  protocolVersion: string | undefined
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
  /** The client of its last connection (kept while it is down). */
  last: McpClient.Client | undefined
  /** The stable client handed out by `group.client`, made once. */
  handle: McpClient.Client | undefined
  /** Session state set through the group, carried to new connections. */
  roots: ReadonlyArray<McpSchema.Root> | undefined
  logLevel: McpSchema.LoggingLevel | undefined
  readonly subscriptions: Set<string>
}

/** A new server, connecting, contributing nothing. @internal */
export const make = (
  name: string,
  params: ServerParams,
  clientOptions: McpClient.Options,
  liveness: Liveness,
  scope: Scope.Closeable
): Entry => ({
  name,
  params,
  clientOptions,
  liveness,
  scope,
  removed: Deferred.makeUnsafe<void>(),
  status: "connecting",
  connection: undefined,
  serverInfo: undefined,
  era: undefined,
  protocolVersion: undefined,
  error: undefined,
  reconnecting: false,
  lists: Aggregate.emptyLists,
  parts: Aggregate.emptyParts,
  withdrawn: Aggregate.emptyParts,
  refused: {},
  closing: false,
  last: undefined,
  handle: undefined,
  roots: undefined,
  logLevel: undefined,
  subscriptions: new Set()
})

/** The client options of its next connection: the roots set through the group replace the initial ones. @internal */
export const clientOptionsOf = (entry: Entry): McpClient.Options =>
  entry.roots === undefined ? entry.clientOptions : { ...entry.clientOptions, roots: entry.roots }

/** Connected (or reconnected): the opened connection's lists, named as `parts`, are the server's contribution. @internal */
export const up = (entry: Entry, opened: Opened, parts: Aggregate.Parts): void => {
  entry.connection = opened.connection
  entry.last = opened.connection.client
  entry.status = "up"
  entry.serverInfo = opened.connection.client.serverInfo
  entry.era = opened.connection.client.era
  entry.protocolVersion = opened.connection.client.protocolVersion
  entry.error = undefined
  entry.reconnecting = false
  entry.lists = opened.lists
  entry.refused = {}
  entry.parts = parts
  entry.withdrawn = Aggregate.emptyParts
}

/** The connection ended on its own: the server's components are withdrawn (calls to them name it). @internal */
export const down = (entry: Entry, reason: McpError.McpError, reconnecting: boolean): void => {
  entry.connection = undefined
  entry.status = "down"
  entry.error = reason
  entry.reconnecting = reconnecting
  entry.withdrawn = entry.parts
  entry.parts = Aggregate.emptyParts
  entry.lists = Aggregate.emptyLists
  entry.refused = {}
}

/**
 * A connection attempt failed (the first one at startup, or one of the
 * reconnection's): down with that error; `reconnecting` says whether another
 * attempt is coming (`false` once reconnection gave up).
 *
 * @internal
 */
export const failed = (entry: Entry, error: McpError.McpError, reconnecting: boolean): void => {
  entry.status = "down"
  entry.error = error
  entry.reconnecting = reconnecting
}

/** A refreshed list collided: the previous one is kept, the new one waits for its names to be free. @internal */
export const refused = <K extends Aggregate.ListKey>(
  entry: Entry,
  key: K,
  list: Aggregate.Lists[K],
  error: McpError.McpError
): void => {
  entry.error = error
  entry.refused = { ...entry.refused, [key]: list }
}

/** A refreshed list, named as `part`, replaces that part of the server's. @internal */
export const refreshed = <K extends Aggregate.ListKey>(
  entry: Entry,
  key: K,
  list: Aggregate.Lists[K],
  part: Aggregate.Parts[K]
): void => {
  entry.error = undefined
  const { [key]: _applied, ...refused } = entry.refused
  entry.refused = refused
  entry.lists = { ...entry.lists, [key]: list }
  entry.parts = { ...entry.parts, [key]: part }
}

/** Being disconnected, or the group is closing: from now on its connection's end is not a failure. @internal */
export const markClosing = (entry: Entry): void => {
  entry.closing = true
}

/** The entry as `servers` shows it. @internal */
export const statusOf = (entry: Entry): ServerStatus => ({
  name: entry.name,
  params: entry.params,
  status: entry.status,
  reconnecting: entry.reconnecting,
  ...(entry.serverInfo === undefined ? {} : { serverInfo: entry.serverInfo }),
  ...(entry.era === undefined ? {} : { era: entry.era }),
  ...(entry.protocolVersion === undefined ? {} : { protocolVersion: entry.protocolVersion }),
  ...(entry.error === undefined ? {} : { error: entry.error })
})

/** Why a server that is not up cannot be called. @internal */
export const unavailable = (entry: Entry): McpError.McpError =>
  McpError.serverUnavailable(
    entry.name,
    entry.closing
      ? "it was disconnected"
      : entry.status === "connecting"
      ? "it is still connecting"
      : `it is down${entry.error === undefined ? "" : ` (${entry.error.message})`}${
        entry.reconnecting ? "; reconnecting" : ""
      }`,
    entry.error
  )
