/**
 * What a group's pieces share: its options, its servers (entries, by name,
 * and the order of connection), its lock, the published snapshot every read
 * uses, the notifications hub and the scope the servers' scopes are forked
 * from. Made once by the group's `make` and passed to the functions of
 * `supervision.ts` and `routing.ts`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { JsonSchemaValidator } from "../../JsonSchemaValidator.ts"
import type * as McpClient from "../../McpClient.ts"
import type * as McpError from "../../McpError.ts"
import type {
  ClientOptions,
  Connector,
  Liveness,
  NameHook,
  Options,
  ServerNotification,
  ServerParams,
  ServerStatus,
  Views
} from "../../McpGroup.ts"
import { defaultLiveness } from "../../McpGroup.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as Aggregate from "./aggregate.ts"
import * as Entry from "./entry.ts"

/** What every read sees: published by the lock holder after each change. @internal */
export interface Snapshot {
  readonly servers: ReadonlyArray<ServerStatus>
  readonly views: Views
  readonly index: Aggregate.Index
}

/** @internal */
export interface State {
  readonly options: Options
  readonly connector: Connector["Service"]
  /** The group's validator, for the clients. */
  readonly validator: Layer.Layer<never>
  readonly hook: NameHook | undefined
  readonly reconnect: Schedule.Schedule<unknown, McpError.McpError> | false
  /** Every server, by name, in order of reservation. */
  readonly entries: Map<string, Entry.Entry>
  /** The names of the servers in order of (first) connection. */
  readonly order: Array<string>
  /** Entries change only while holding it. */
  readonly withLock: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly snapshot: SubscriptionRef.SubscriptionRef<Snapshot>
  readonly notifications: PubSub.PubSub<ServerNotification>
  /** The parent of every server's scope. */
  readonly serversScope: Scope.Closeable
  /** The group is closing: no server may be added. */
  closing: boolean
}

/** @internal */
export const defaultClientInfo: McpSchema.Implementation = { name: "effect-mcp-group", version: "0.1.0" }

/**
 * Makes the state, with the servers' scope forked from the current one: a
 * finalizer added right after this runs before that scope closes.
 *
 * @internal
 */
export const make = Effect.fnUntraced(function*(
  options: Options,
  connector: Connector["Service"],
  defaultReconnect: Schedule.Schedule<unknown, McpError.McpError>
): Effect.fn.Return<State, never, Scope.Scope> {
  const validator = Layer.succeed(JsonSchemaValidator, yield* JsonSchemaValidator)
  const groupScope = yield* Effect.scope
  const lock = yield* Semaphore.make(1)
  const notifications = yield* PubSub.unbounded<ServerNotification>()
  const emptyViews = Aggregate.makeViews([])
  const snapshot = yield* SubscriptionRef.make<Snapshot>({
    servers: [],
    views: emptyViews,
    index: Aggregate.makeIndex(emptyViews)
  })
  // every server's scope is a child of this one; the group's finalizer, added
  // right after it, runs first, and closes them all at once (`closeAll`)
  const serversScope = yield* Scope.fork(groupScope, "sequential")
  return {
    options,
    connector,
    validator,
    hook: options.nameHook,
    reconnect: options.reconnect === undefined ? defaultReconnect : options.reconnect,
    entries: new Map(),
    order: [],
    withLock: Semaphore.withPermits(lock, 1),
    snapshot,
    notifications,
    serversScope,
    closing: false
  }
})

/** Whether the entry is still the server of its name (not disconnected, maybe replaced). @internal */
export const isCurrent = (state: State, entry: Entry.Entry): boolean => state.entries.get(entry.name) === entry

/** Connected servers in order of connection, then those still connecting. @internal */
export const ordered = (state: State): Array<Entry.Entry> => {
  const connected = state.order.flatMap((name) => {
    const entry = state.entries.get(name)
    return entry === undefined ? [] : [entry]
  })
  const connecting = Array.from(state.entries.values()).filter((entry) => !state.order.includes(entry.name))
  return [...connected, ...connecting]
}

/** Publishes the entries as they are now (the views are rebuilt only when asked). @internal */
export const publish = (state: State, viewsChanged: boolean): Effect.Effect<void> =>
  Effect.suspend(() => {
    const current = SubscriptionRef.getUnsafe(state.snapshot)
    const all = ordered(state)
    const views = viewsChanged ? Aggregate.makeViews(all.map((entry) => entry.parts)) : current.views
    return SubscriptionRef.set(state.snapshot, {
      servers: all.map(Entry.statusOf),
      views,
      index: viewsChanged ? Aggregate.makeIndex(views) : current.index
    })
  })

/** The parts of every other server, for the collision checks. @internal */
export const othersOf = (state: State, entry: Entry.Entry): ReadonlyArray<readonly [string, Aggregate.Parts]> =>
  Array.from(state.entries.values()).flatMap((other) => other === entry ? [] : [[other.name, other.parts] as const])

/**
 * A server's liveness settings: its own laid over the group's, laid over the
 * defaults; `false` (its own, or the group's when it has none) leaves only
 * the checks asked for (no periodic pings).
 *
 * @internal
 */
export const livenessFor = (state: State, own: Liveness | false | undefined): Entry.Liveness => {
  const group = state.options.liveness
  const off = own === false || (own === undefined && group === false)
  const merged: Liveness = { ...(group === false ? {} : group), ...(own === false ? {} : own) }
  const interval = merged.interval === undefined ? defaultLiveness.interval : Duration.fromInputUnsafe(merged.interval)
  return {
    interval: off || !Duration.isFinite(interval) ? undefined : interval,
    timeout: merged.timeout === undefined ? defaultLiveness.timeout : Duration.fromInputUnsafe(merged.timeout),
    maxMissed: Math.max(1, Math.floor(merged.maxMissed ?? defaultLiveness.maxMissed))
  }
}

/**
 * A server's client options: the group's, then the era of its parameters,
 * then its own, with its notifications published to the group.
 *
 * @internal
 */
export const clientOptionsFor = (
  state: State,
  name: string,
  params: ServerParams,
  own: ClientOptions | undefined
): McpClient.Options => {
  const base = typeof state.options.client === "function" ? state.options.client(name) : state.options.client
  const merged: ClientOptions = { ...base, ...(params.era === undefined ? {} : { era: params.era }), ...own }
  const onNotification = merged.onNotification
  return {
    ...merged,
    clientInfo: merged.clientInfo ?? defaultClientInfo,
    // the views follow the cached lists
    autoRefresh: true,
    onNotification: (notification) =>
      Effect.andThen(
        PubSub.publish(state.notifications, { server: name, notification }),
        onNotification === undefined ? Effect.void : onNotification(notification)
      )
  }
}
