/**
 * The server side of one MCP connection, in both eras, decided per message.
 * A request whose `_meta` names a 2026-07-28 version is served statelessly
 * (`internal/era/stateless.ts`): its client is read from that `_meta`, its
 * result carries `resultType` and the server's info, and input from the
 * client is asked through multi round-trip results. Otherwise the stateful
 * rules apply (`internal/era/stateful.ts`): `initialize`, then
 * `notifications/initialized`, and until then only `ping`. Handlers see the
 * era and the client in their context and are written once for both.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Held from "./internal/era/held.ts"
import * as RequestState from "./internal/era/requestState.ts"
import * as Stateful from "./internal/era/stateful.ts"
import * as Stateless from "./internal/era/stateless.ts"
import * as Versions from "./internal/era/versions.ts"
import * as Shared from "./internal/server/sessionHandlers.ts"
import { make as makeEngine } from "./internal/session/engine.ts"
import type * as McpError from "./McpError.ts"
import * as McpMethod from "./McpMethod.ts"
import * as McpSchema from "./McpSchema.ts"
import * as McpSession from "./McpSession.ts"
import { McpTransport } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * The lifecycle state of a server session.
 *
 * @category models
 * @since 0.1.0
 */
export type State = Stateful.ServerState

/**
 * What a server handler learns of the request and of the client.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestContext extends McpSession.RequestContext {
  /** `modern`: a stateless 2026-07-28 request; `legacy`: a request of an initialized session. */
  readonly era: Era
  /** The client's info and capabilities: its `initialize` params, or the request's `_meta`. */
  readonly clientParams: McpSchema.InitializeRequestParams
  readonly protocolVersion: string
  /** `true` when the client declared the capability, e.g. `["sampling", "tools"]`. */
  readonly checkClientCapability: (...path: ReadonlyArray<string>) => boolean
  /** A modern request's `_meta` log level (none: no log notifications); `undefined` for legacy ones. */
  readonly logLevel: McpSchema.LoggingLevel | undefined
  /**
   * Asks the client for input (`elicitation/create`, `sampling/createMessage`,
   * `roots/list`): a server→client request in a legacy session, an
   * input-required round in a modern request (the handler is run again with
   * the answer on the client's retry).
   */
  readonly input: <M extends McpMethod.Request>(
    method: M,
    params: McpMethod.Params<M>,
    options?: McpSession.RequestOptions & { readonly inputKey?: string | undefined }
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>
  /**
   * A modern request's log notifications: sent on its behalf when `level`
   * passes its `_meta` level (none: nothing is sent). `undefined` in a
   * legacy session, whose level is the server's to keep.
   */
  readonly log?: ((params: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>) | undefined
}

/**
 * The era of a request: `modern` (2026-07-28, stateless) or `legacy`
 * (2024-11-05 … 2025-11-25, in an initialized session).
 *
 * @category models
 * @since 0.2.0
 */
export type Era = "modern" | "legacy"

/**
 * The key that seals the `requestState` of input-required results (see
 * {@link makeSealingKey}); share one between the replicas of a server.
 *
 * @category models
 * @since 0.2.0
 */
export interface SealingKey {
  readonly hmac: RequestState.HmacKey
  readonly maxBytes: number
}

/**
 * Makes a {@link SealingKey} from a secret (random when none is given: good
 * for one process only), bounding sealed states to `maxBytes` (default 64 KiB).
 *
 * @category constructors
 * @since 0.2.0
 */
export const makeSealingKey = (
  secret?: string | Uint8Array | undefined,
  maxBytes?: number | undefined
): Effect.Effect<SealingKey> => RequestState.makeKey(secret, maxBytes ?? 64 * 1024)

/**
 * A server request handler.
 *
 * @category models
 * @since 0.1.0
 */
export interface Handler {
  readonly method: McpMethod.Request
  readonly handle: (params: any, context: RequestContext) => Effect.Effect<unknown, McpError.McpError>
  /**
   * Whether a modern request with these params is held rather than replayed
   * (see {@link HeldCalls}): its handler runs once, while the client answers
   * its input-required rounds.
   */
  readonly hold?: ((params: any) => boolean) | undefined
  /**
   * Whether running the request again is safe: a held call whose replica
   * died tells its client so (a tool marked idempotent or read-only).
   */
  readonly idempotent?: ((params: any) => boolean) | undefined
}

/**
 * The calls a server holds (2026-07-28; see `McpTool.Info.hold`), each
 * waiting at most `ttl` for its client's retry (then interrupted; a late
 * retry gets `-32602`), at most `max` at once (beyond, `-32000`).
 *
 * @category models
 * @since 0.3.0
 */
export interface HeldCalls {
  readonly settings: { readonly max: number; readonly ttlMillis: number }
  /** How many calls are held now. */
  readonly size: Effect.Effect<number>
}

/**
 * Makes the {@link HeldCalls} of a server; their fibers end with the scope
 * in context, if there is one.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeHeldCalls = (
  options?: {
    readonly max?: number | undefined
    readonly ttl?: Duration.Input | undefined
    /** This replica's id in a cluster: the sealed states name it as their calls' holder. */
    readonly replica?: string | undefined
  }
): Effect.Effect<HeldCalls> => Held.make(Held.settingsOf(options))

/**
 * Declares a server request handler; `params` is validated and typed from the
 * method's declaration.
 *
 * @category constructors
 * @since 0.1.0
 */
export const handler = <M extends McpMethod.Request>(
  method: M,
  handle: (
    params: McpMethod.Params<M>,
    context: RequestContext
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>
): Handler => ({ method, handle })

/**
 * How a server session runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly serverInfo: McpSchema.Implementation
  /** The capabilities, or a function that reads them (a long-lived session whose server's features change). */
  readonly capabilities: McpSchema.ServerCapabilities | (() => McpSchema.ServerCapabilities)
  readonly instructions?: string | undefined
  /** The versions this server speaks, preferred first. Default: every supported revision, newest first. */
  readonly protocolVersions?: ReadonlyArray<string> | undefined
  readonly handlers?: ReadonlyArray<Handler> | undefined
  /** Looked up for a request method `handlers` has none for (an extension's, registered later). */
  readonly handlerOf?: ((method: string) => Handler | undefined) | undefined
  readonly notificationHandlers?: ReadonlyArray<McpSession.NotificationHandler> | undefined
  readonly defaultTimeout?: Duration.Input | undefined
  readonly keepAlive?: McpSession.Options["keepAlive"]
  /** Seals the state of input-required results; default: a random key of this session. */
  readonly sealingKey?: SealingKey | undefined
  /** How long an input-required result's state may be retried. Default: 10 minutes. */
  readonly requestStateTtl?: Duration.Input | undefined
  /** Where the requests of handlers with `hold` are held; default: a set of this session's. */
  readonly heldCalls?: HeldCalls | undefined
}

/**
 * A running server session.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerSession extends McpSession.Session {
  readonly state: Effect.Effect<State>
  /** The client's initialize params, once `initialize` has been answered. */
  readonly clientParams: Effect.Effect<Option.Option<McpSchema.InitializeRequestParams>>
  /** `true` when the client declared the capability (`false` before `initialize`). */
  readonly checkClientCapability: (...path: ReadonlyArray<string>) => Effect.Effect<boolean>
}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * A running server session.
 *
 * @category services
 * @since 0.1.0
 */
export class McpServerSession extends Context.Service<McpServerSession, ServerSession>()(
  "@effect-mcp/core/McpServerSession"
) {}

const clientOf = (state: State) => state._tag === "NotInitialized" ? undefined : state.client

/**
 * Serves one connection over the transport in context, for as long as the
 * scope lasts.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(
  options: Options
): Effect.fn.Return<ServerSession, never, McpTransport | Scope.Scope> {
  // untraced: a span made here would be the parent of the session's fibers
  // and live as long as the session
  const versions = Versions.cached(options.protocolVersions)
  const sealingKey = options.sealingKey ?? (yield* makeSealingKey())
  const stateTtl = Duration.toMillis(Duration.fromInputUnsafe(options.requestStateTtl ?? Duration.minutes(10)))
  const state = yield* Ref.make<State>({ _tag: "NotInitialized" })
  const clientCapabilities = () => clientOf(Ref.getUnsafe(state))?.capabilities
  const transport = yield* McpTransport
  // the session's own held calls, made when a handler first holds one, unless the server shares its own
  const scope = yield* Effect.scope
  let heldCalls = options.heldCalls as Held.HeldCalls | undefined
  const held = Effect.suspend(() =>
    heldCalls !== undefined
      ? Effect.succeed(heldCalls)
      : Effect.map(Scope.provide(Held.make(), scope), (made) => heldCalls ??= made)
  )

  let server: ServerSession | undefined
  yield* makeEngine(transport, {
    role: "server",
    handlers: Shared.handlersOf(options.handlers),
    handlerOf: Shared.handlerOf(options.handlerOf),
    notificationHandlers: Shared.notificationHandlersOf(options.notificationHandlers),
    capabilities: { own: options.capabilities, peer: clientCapabilities },
    admit: (message, kind) =>
      Stateless.isModern(message.method, message.params)
        ? Stateless.admit(message, kind, versions.modern, versions.all)
        : Stateful.admitOnServer(Ref.getUnsafe(state), message, kind),
    acceptBatches: () => {
      const current = Ref.getUnsafe(state)
      return Stateful.acceptsBatches(current._tag === "NotInitialized" ? undefined : current.protocolVersion)
    },
    defaultTimeout: options.defaultTimeout,
    // pings go to an initialized legacy session only: a modern client is never sent a request
    keepAlive: options.keepAlive === undefined
      ? undefined
      : { ...options.keepAlive, when: () => Ref.getUnsafe(state)._tag === "Initialized" }
  }, (session) => {
    server = {
      ...session,
      state: Ref.get(state),
      clientParams: Effect.map(Ref.get(state), (current) => Option.fromUndefinedOr(clientOf(current))),
      checkClientCapability: (...path) =>
        Effect.sync(() => McpMethod.hasCapability(clientCapabilities(), McpMethod.clientCapability(...path)))
    }
    Shared.attach(session, {
      options,
      versions,
      sealingKey,
      stateTtl,
      state,
      server,
      held,
      capabilityCheckOf: undefined,
      capabilityCheck: Shared.declaresNothing
    })
  })
  return server!
})

/**
 * A server session as a scoped layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpServerSession, never, McpTransport> =>
  Layer.effect(McpServerSession, make(options))
