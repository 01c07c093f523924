/**
 * A gateway's sessions of its own with its servers: a call that must be told
 * apart from the others (the server may ask its client questions, or send
 * it logs, which say nothing of the call they belong to) takes one for as
 * long as it runs, so whatever the server sends on it belongs to that call.
 *
 * - A session is opened by the group (`openSession`: a new connection, a new
 *   process for a stdio server) with the capabilities of the client it
 *   serves, so the server sees what that client can be asked; it is reused
 *   by later calls of clients with the same capabilities, the same client's
 *   first (its roots and log level are then already set).
 * - At most `max` per server; a call beyond waits for one. One unused for
 *   `idleMillis` is closed (on `Clock`), as is one whose connection ended.
 * - A question or log the server sends while no call holds the session has
 *   nobody to go to: a question is refused, a log dropped.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type * as McpGroup from "../../McpGroup.ts"
import type * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpSession from "../../McpSession.ts"
import * as Capabilities from "./capabilities.ts"

/** What a server sends for the call holding its session. @internal */
export type Event =
  | { readonly _tag: "Progress"; readonly progress: McpSession.Progress }
  | { readonly _tag: "Log"; readonly params: McpSchema.LoggingMessageNotificationParams }
  | {
    readonly _tag: "Input"
    readonly method: McpMethod.Request
    readonly params: unknown
    readonly key: string | undefined
    readonly reply: Deferred.Deferred<unknown, McpError.McpError>
  }
  | { readonly _tag: "Done"; readonly exit: Exit.Exit<unknown, McpError.McpError> }

/** The call holding a session: where its server's messages go. @internal */
export interface Owner {
  readonly offer: (event: Event) => void
}

/** A session of the gateway's own with a server. @internal */
export interface Lease {
  readonly server: string
  readonly key: string
  readonly scope: Scope.Closeable
  client: McpClient.Client | undefined
  owner: Owner | undefined
  /** Whom it served last (see `acquire`): the caller sets it. */
  affinity: unknown
  /** Whose roots the server was given last (the `affinity` of the call it asked in), if anyone's. */
  rootsOf: unknown
  /** Done once the server asked for the roots after it was told they changed (see `forward.ts`). */
  rootsAsked: Deferred.Deferred<void> | undefined
  /** The log level set on it (`undefined`: none yet). */
  logLevel: McpSchema.LoggingLevel | undefined
  idleSince: number
}

interface PerServer {
  readonly leases: Set<Lease>
  readonly idle: Array<Lease>
  opening: number
  /** The sessions being opened, by kind (capabilities). */
  readonly openingKeys: Map<string, number>
  waiters: Array<Deferred.Deferred<void>>
}

/** @internal */
export interface Pool {
  /**
   * A session declaring `capabilities` for one call, released with the scope;
   * one that served `affinity` last is preferred (the caller then updates it).
   */
  readonly acquire: (
    server: string,
    capabilities: Capabilities.Bridged,
    affinity: unknown
  ) => Effect.Effect<Lease, McpError.McpError, Scope.Scope>
  /** Opens a session declaring `capabilities` ahead of the call that needs one, unless one is ready (or the limit reached). */
  readonly prewarm: (server: string, capabilities: Capabilities.Bridged) => Effect.Effect<void>
  /** How many sessions are open now, by server. */
  readonly sizes: () => Readonly<Record<string, number>>
}

/** @internal */
export interface Settings {
  readonly max: (server: string) => number
  readonly idleMillis: number
  /** How long a call waits for a session when all are taken. */
  readonly waitMillis: number
}

const LOG_LEVELS: ReadonlySet<unknown> = new Set(McpSchema.LoggingLevel.literals)

/** The pool of a gateway over `group`; its sessions close with the scope. @internal */
export const make = (group: McpGroup.Group, settings: Settings): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.gen(function*() {
    // the sessions' scopes close at once when the pool's does (each may wait on a stdio server's end)
    const scope = yield* Scope.fork(yield* Effect.scope, "parallel")
    const clock = yield* Clock.clockWith(Effect.succeed)
    const servers = new Map<string, PerServer>()
    const perServer = (server: string): PerServer => {
      let found = servers.get(server)
      if (found === undefined) {
        servers.set(server, found = { leases: new Set(), idle: [], opening: 0, openingKeys: new Map(), waiters: [] })
      }
      return found
    }

    const close = (state: PerServer, lease: Lease): Effect.Effect<void> =>
      Effect.suspend(() => {
        state.leases.delete(lease)
        const at = state.idle.indexOf(lease)
        if (at >= 0) state.idle.splice(at, 1)
        return Scope.close(lease.scope, Exit.void)
      })

    const wake = (state: PerServer) => {
      const waiter = state.waiters.shift()
      if (waiter !== undefined) Deferred.doneUnsafe(waiter, Exit.void)
    }

    const ask = (lease: Lease, method: McpMethod.Request, params: unknown): Effect.Effect<any, McpError.McpError> =>
      Effect.suspend(() => {
        const owner = lease.owner
        if (owner === undefined) {
          return Effect.fail(McpError.protocol(
            JsonRpc.ErrorCode.InternalError,
            `${method.name} was asked while no call was in progress: there is no client to ask`
          ))
        }
        // a server of ours names the input (see `McpSchema.INPUT_KEY_META_KEY`)
        const { _meta, ...rest } = (params ?? {}) as { readonly _meta?: Record<string, unknown> }
        // (and the task behind stays behind: the client in front knows its own)
        const { [McpSchema.INPUT_KEY_META_KEY]: named, [McpSchema.RELATED_TASK_META_KEY]: _task, ...meta } = _meta ?? {}
        const reply = Deferred.makeUnsafe<unknown, McpError.McpError>()
        owner.offer({
          _tag: "Input",
          method,
          params: Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta },
          key: typeof named === "string" ? named : undefined,
          reply
        })
        return Deferred.await(reply)
      })

    const clientOptions = (lease: Lease, bridged: Capabilities.Bridged): McpGroup.ClientOptions => ({
      extensions: { ...Capabilities.refusing.extensions, ...bridged.extensions },
      ...(bridged.sampling === undefined ? {} : {
        sampling: {
          handler: (params) => ask(lease, McpSchema.CreateMessage, params),
          tools: bridged.sampling.tools !== undefined,
          context: bridged.sampling.context !== undefined
        }
      }),
      ...(bridged.elicitation === undefined ? {} : {
        // the client in front checks and completes its answers
        elicitation: {
          ...(bridged.elicitation.form === undefined ? {} : { form: (params) => ask(lease, McpSchema.Elicit, params) }),
          ...(bridged.elicitation.url === undefined ? {} : { url: (params) => ask(lease, McpSchema.Elicit, params) }),
          applyDefaults: false,
          validate: false
        }
      }),
      ...(bridged.roots === undefined ? {} : {
        listRoots: () =>
          Effect.map(ask(lease, McpSchema.ListRoots, {}), (result: McpSchema.ListRootsResult) => {
            lease.rootsOf = lease.affinity
            return result.roots
          }).pipe(
            // told once the answer is on its way (after this handler's turn)
            Effect.ensuring(Effect.suspend(() => {
              const asked = lease.rootsAsked
              lease.rootsAsked = undefined
              return asked === undefined
                ? Effect.void
                : Effect.asVoid(Effect.forkDetach(Effect.andThen(Effect.yieldNow, Deferred.succeed(asked, undefined))))
            }))
          )
      }),
      observeNotification: (notification) => {
        if (notification.method !== McpSchema.LoggingMessage.name || lease.owner === undefined) return
        const params = notification.params as McpSchema.LoggingMessageNotificationParams | undefined
        if (params !== undefined && LOG_LEVELS.has(params.level)) lease.owner.offer({ _tag: "Log", params })
      }
    })

    const open = (server: string, state: PerServer, bridged: Capabilities.Bridged, key: string) =>
      Effect.gen(function*() {
        const lease: Lease = {
          server,
          key,
          scope: yield* Scope.fork(scope, "sequential"),
          client: undefined,
          owner: undefined,
          affinity: undefined,
          rootsOf: undefined,
          rootsAsked: undefined,
          logLevel: undefined,
          idleSince: 0
        }
        lease.client = yield* group.openSession(server, clientOptions(lease, bridged)).pipe(
          Scope.provide(lease.scope),
          Effect.onError(() => Scope.close(lease.scope, Exit.void))
        )
        state.leases.add(lease)
        return lease
      })

    // a session being opened counts toward the limit, and as one of its kind on the way
    const opening = <A, E>(state: PerServer, key: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => {
        state.opening++
        state.openingKeys.set(key, (state.openingKeys.get(key) ?? 0) + 1)
        return Effect.ensuring(
          effect,
          Effect.sync(() => {
            state.opening--
            const left = state.openingKeys.get(key)! - 1
            if (left === 0) state.openingKeys.delete(key)
            else state.openingKeys.set(key, left)
          })
        )
      })

    const release = (state: PerServer, lease: Lease): Effect.Effect<void> =>
      Effect.flatMap(lease.client!.session.isOpen, (isOpen) => {
        lease.owner = undefined
        if (!isOpen) return Effect.andThen(close(state, lease), Effect.sync(() => wake(state)))
        lease.idleSince = clock.currentTimeMillisUnsafe()
        state.idle.push(lease)
        // after: a waiter woken takes it at once (a deferred's waiter runs when it is done)
        wake(state)
        return Effect.void
      })

    const take = (
      server: string,
      bridged: Capabilities.Bridged,
      affinity: unknown
    ): Effect.Effect<Lease, McpError.McpError> =>
      Effect.suspend(() => {
        const state = perServer(server)
        const key = Capabilities.keyOf(bridged)
        const same = state.idle.findIndex((lease) => lease.key === key && lease.affinity === affinity)
        const found = same >= 0 ? same : state.idle.findIndex((lease) => lease.key === key)
        if (found >= 0) return Effect.succeed(state.idle.splice(found, 1)[0]!)
        if (state.leases.size + state.opening < settings.max(server)) {
          return opening(state, key, open(server, state, bridged, key))
        }
        // full: an unused session of other capabilities makes room (the place kept for this call
        // while it closes: a later call waits), else wait for one
        const oldest = state.idle[0]
        if (oldest !== undefined) {
          return opening(state, key, Effect.andThen(close(state, oldest), open(server, state, bridged, key)))
        }
        const waiter = Deferred.makeUnsafe<void>()
        state.waiters.push(waiter)
        const leave = Effect.sync(() => {
          const at = state.waiters.indexOf(waiter)
          if (at >= 0) {
            state.waiters.splice(at, 1)
          } // passed on: another waiter may use the place this one leaves
          else wake(state)
        })
        return Effect.andThen(
          Deferred.await(waiter).pipe(
            Effect.onInterrupt(() => leave),
            Effect.timeoutOrElse({
              duration: settings.waitMillis,
              orElse: () =>
                Effect.andThen(
                  leave,
                  Effect.fail(McpError.protocol(
                    JsonRpc.ErrorCode.ServerError,
                    `all ${state.leases.size} of the gateway's sessions with this server are taken (by calls that run, ` +
                      `or wait for their client's answer): try again later`
                  ))
                )
            })
          ),
          take(server, bridged, affinity)
        )
      })

    // sessions unused for a while are closed
    const sweep = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      const stale: Array<readonly [PerServer, Lease]> = []
      for (const state of servers.values()) {
        for (const lease of state.idle) if (now - lease.idleSince >= settings.idleMillis) stale.push([state, lease])
      }
      return Effect.forEach(stale, ([state, lease]) => close(state, lease), { discard: true })
    })
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Math.max(1, settings.idleMillis / 2)), sweep)))

    // one unused session of its kind kept ready (or being opened), opened while the call that took the last one runs
    const prewarm = (server: string, capabilities: Capabilities.Bridged): Effect.Effect<void> =>
      Effect.suspend(() => {
        const state = perServer(server)
        const key = Capabilities.keyOf(capabilities)
        if (
          state.leases.size + state.opening >= settings.max(server) || (state.openingKeys.get(key) ?? 0) > 0 ||
          state.idle.some((lease) => lease.key === key)
        ) {
          return Effect.void
        }
        return opening(state, key, open(server, state, capabilities, key)).pipe(
          Effect.flatMap((lease) => release(state, lease)),
          Effect.catchCause((cause) => Effect.logDebug(`server "${server}": a session opened ahead failed`, cause))
        )
      })

    return {
      // the wait (and the opening) can be interrupted; once taken, a session is given back with the scope
      acquire: (server, bridged, affinity) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.tap(
            restore(take(server, bridged, affinity)),
            (lease) => Effect.addFinalizer(() => release(perServer(server), lease))
          )
        ).pipe(Effect.tap(() => Effect.forkIn(prewarm(server, bridged), scope, { startImmediately: true }))),
      prewarm,
      sizes: () => Object.fromEntries(Array.from(servers, ([server, state]) => [server, state.leases.size]))
    }
  })
