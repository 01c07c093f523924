/**
 * The group's runtime, assembled: its state (`state.ts`), the servers'
 * entries and their transitions (`entry.ts`), their supervision
 * (`supervision.ts`), the routed calls (`routing.ts`) and the stable clients
 * (`handle.ts`).
 *
 * - Every server is an entry with a scope of its own, forked from one scope
 *   of the group's ("servers").
 * - Entries are plain objects, changed only while holding the group's lock;
 *   after each change the lock holder publishes a snapshot (statuses, views
 *   and routing index) to a `SubscriptionRef`, which every read uses.
 * - The group's finalizer (added right after the servers' scope is forked, so
 *   it runs before that scope closes) closes the servers at once: first it
 *   stops taking servers and marks every server closing (so no supervisor
 *   reconnects one, and every follower ends), then it closes their scopes
 *   concurrently, and only then does it shut the notifications hub down
 *   (see `closeAll`).
 * - Tools and prompts are named by the hook and must not collide; resources
 *   and templates keep their URIs, and calls on a URI several servers offer
 *   need their server (`aggregate.ts`, `routing.ts`).
 * - Each up server is watched for liveness (`supervision.ts`), and
 *   `group.client(server)` is a stable client that follows its connections
 *   (`handle.ts`, `live.ts`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as McpError from "../../McpError.ts"
import type { ConnectOptions, Connector, Group, Options, ServerConfig, ServerParams } from "../../McpGroup.ts"
import { defaultReconnect } from "../../McpGroup.ts"
import * as Aggregate from "./aggregate.ts"
import * as Entry from "./entry.ts"
import * as Routing from "./routing.ts"
import * as State from "./state.ts"
import * as Supervision from "./supervision.ts"

const paramsOf = (config: ServerConfig): ServerParams => "params" in config ? config.params : config

const ownOptionsOf = (config: ServerConfig): ConnectOptions | undefined =>
  "params" in config ? { client: config.client, liveness: config.liveness } : undefined

/** @internal */
export const make = Effect.fnUntraced(function*(
  options: Options,
  connector: Connector["Service"]
): Effect.fn.Return<Group, McpError.McpError, Scope.Scope> {
  const state = yield* State.make(options, connector, defaultReconnect)

  // ---------------------------------------------------------------------------
  // adding and removing servers
  // ---------------------------------------------------------------------------

  /** Takes the name and makes the server's entry and scope. Under the lock. */
  const reserve = (
    name: string,
    params: ServerParams,
    own: ConnectOptions | undefined
  ): Effect.Effect<Entry.Entry, McpError.McpError> =>
    Effect.suspend(() => {
      if (state.closing) return Effect.fail(McpError.closed("the group is closing"))
      if (state.entries.has(name)) return Effect.fail(McpError.nameCollision("server", name, [name, name]))
      const entry = Entry.make(
        name,
        params,
        State.clientOptionsFor(state, name, params, own?.client),
        State.livenessFor(state, own?.liveness),
        Scope.forkUnsafe(state.serversScope, "sequential")
      )
      state.entries.set(name, entry)
      return Effect.as(State.publish(state, false), entry)
    })

  /** Removes the server (if it is still the one of that name) and closes its scope. */
  const remove = (entry: Entry.Entry): Effect.Effect<void> =>
    state.withLock(Effect.suspend(() => {
      Entry.markClosing(entry)
      Deferred.doneUnsafe(entry.removed, Exit.void)
      if (!State.isCurrent(state, entry)) return Effect.void
      state.entries.delete(entry.name)
      const at = state.order.indexOf(entry.name)
      if (at >= 0) state.order.splice(at, 1)
      // a server that contributed nothing leaves the views as they are
      const contributed = entry.parts !== Aggregate.emptyParts
      return Effect.andThen(
        State.publish(state, contributed),
        contributed ? Supervision.retryRefused(state) : Effect.void
      )
    })).pipe(Effect.andThen(Scope.close(entry.scope, Exit.void)))

  const connect = Effect.fn("McpGroup.connect")(function*(
    name: string,
    params: ServerParams,
    connectOptions?: ConnectOptions
  ) {
    yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const entry = yield* state.withLock(reserve(name, params, connectOptions))
        yield* restore(Supervision.openAndCommit(state, entry)).pipe(Effect.onError(() => remove(entry)))
        yield* Supervision.supervise(state, entry)
      })
    )
  })

  const disconnect = Effect.fn("McpGroup.disconnect")(function*(name: string) {
    const entry = state.entries.get(name)
    if (entry === undefined) return yield* McpError.notFound("server", name)
    yield* Effect.uninterruptible(remove(entry))
  })

  /**
   * Closes every server at once, bounded by the slowest close rather than
   * their sum (a stdio server that ignores the end of its stdin takes up to
   * its `closeTimeout` + `termTimeout`).
   *
   * - Before any close starts, the group stops taking servers and every
   *   server is marked closing and removed: a supervisor that sees its
   *   connection end stops instead of marking the server down and
   *   reconnecting it (whichever of the two its scope closes first), a
   *   reconnection under way is given up, and the streams following it
   *   end. This order is kept: it is what keeps a closing server from being
   *   restarted.
   * - The closes start together (those still connecting first, then in
   *   reverse order of connection) and run concurrently: servers are
   *   independent, so none waits for another, and the order in which they
   *   end is not defined (reverse order of connection is no longer kept).
   * - One close that fails (a finalizer's defect) does not stop the others;
   *   their failures are combined once all have ended.
   */
  const closeAll: Effect.Effect<void> = Effect.suspend(() => {
    state.closing = true
    const closing = State.ordered(state).reverse()
    for (const entry of closing) {
      Entry.markClosing(entry)
      Deferred.doneUnsafe(entry.removed, Exit.void)
    }
    return Effect.forEach(closing, (entry) => Effect.exit(Scope.close(entry.scope, Exit.void)), {
      concurrency: "unbounded"
    }).pipe(Effect.flatMap(Exit.asVoidAll))
  })

  // the first finalizer since the servers' scope was forked: it runs before that scope closes. The
  // notifications hub is shut down once every server has closed: what they send while closing still
  // reaches the subscribers.
  yield* Effect.addFinalizer(() => Effect.ensuring(closeAll, PubSub.shutdown(state.notifications)))

  // ---------------------------------------------------------------------------
  // the static servers: opened concurrently, committed in the order given
  // ---------------------------------------------------------------------------

  const initial = Object.entries(options.servers ?? {})
  if (initial.length > 0) {
    const reserved = yield* state.withLock(
      Effect.forEach(initial, ([name, config]) => reserve(name, paramsOf(config), ownOptionsOf(config)))
    )
    const opened = yield* Effect.forEach(reserved, (entry) => Effect.exit(Supervision.open(state, entry)), {
      concurrency: "unbounded"
    })
    for (let i = 0; i < reserved.length; i++) {
      const entry = reserved[i]!
      const exit = opened[i]!
      const result = Exit.isSuccess(exit)
        ? yield* Effect.exit(Supervision.commitOpened(state, entry, exit.value))
        : exit
      if (Exit.isSuccess(result)) {
        yield* Supervision.supervise(state, entry)
        continue
      }
      const error = Cause.findErrorOption(result.cause)
      if (options.startupFailure === "down" && Option.isSome(error)) {
        // down with its error, and reconnected on the schedule like a server that went down
        yield* state.withLock(Effect.suspend(() => {
          Entry.failed(entry, error.value, state.reconnect !== false)
          return State.publish(state, false)
        }))
        yield* Effect.logWarning(`MCP server "${entry.name}" could not connect: ${error.value.message}`)
        yield* Supervision.supervise(state, entry)
        continue
      }
      yield* closeAll
      return yield* Effect.failCause(result.cause)
    }
  }

  // ---------------------------------------------------------------------------
  // the service
  // ---------------------------------------------------------------------------

  const snapshot = SubscriptionRef.get(state.snapshot)
  const views = Effect.map(snapshot, (current) => current.views)

  return {
    connect,
    disconnect,
    servers: Effect.map(snapshot, (current) => current.servers),
    serverChanges: SubscriptionRef.changes(state.snapshot).pipe(
      Stream.map((current) => current.servers),
      Stream.changesWith((a, b) => a === b)
    ),
    tools: Effect.map(views, (current) => current.tools),
    resources: Effect.map(views, (current) => current.resources),
    resourceTemplates: Effect.map(views, (current) => current.resourceTemplates),
    prompts: Effect.map(views, (current) => current.prompts),
    views,
    changes: SubscriptionRef.changes(state.snapshot).pipe(
      Stream.map((current) => current.views),
      Stream.changesWith((a, b) => a === b)
    ),
    ...Routing.make(state),
    openSession: (name, clientOptions) =>
      Effect.suspend(() => {
        const entry = state.entries.get(name)
        return entry === undefined
          ? Effect.fail(McpError.notFound("server", name))
          : Supervision.openSession(state, entry, clientOptions)
      }),
    notifications: Stream.fromPubSub(state.notifications),
    subscribe: Effect.map(PubSub.subscribe(state.notifications), Stream.fromSubscription)
  }
})
