/**
 * The server side of one MCP connection, in the stateful era (2024-11-05 to
 * 2025-11-25): it answers `initialize` (negotiating the version), waits for
 * `notifications/initialized`, and until then answers only `ping`. Handlers
 * receive the client's initialize params and can check its capabilities.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stateful from "./internal/era/stateful.ts"
import type * as McpError from "./McpError.ts"
import * as McpMethod from "./McpMethod.ts"
import * as McpSchema from "./McpSchema.ts"
import * as McpSession from "./McpSession.ts"
import type { McpTransport } from "./McpTransport.ts"

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
  /** The client's `initialize` params: its info and capabilities. */
  readonly clientParams: McpSchema.InitializeRequestParams
  readonly protocolVersion: string
  /** `true` when the client declared the capability, e.g. `["sampling", "tools"]`. */
  readonly checkClientCapability: (...path: ReadonlyArray<string>) => boolean
}

/**
 * A server request handler.
 *
 * @category models
 * @since 0.1.0
 */
export interface Handler {
  readonly method: McpMethod.Request
  readonly handle: (params: any, context: RequestContext) => Effect.Effect<unknown, McpError.McpError>
}

/**
 * Declares a server request handler; `params` is validated and typed from the
 * method's declaration.
 *
 * @category constructors
 * @since 0.1.0
 */
export const handler = <M extends McpMethod.Request>(
  method: M,
  handle: (params: McpMethod.Params<M>, context: RequestContext) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>
): Handler => ({ method, handle })

/**
 * How a server session runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly serverInfo: McpSchema.Implementation
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions?: string | undefined
  /** The versions this server speaks, preferred first. Default: every supported revision, newest first. */
  readonly protocolVersions?: ReadonlyArray<string> | undefined
  readonly handlers?: ReadonlyArray<Handler> | undefined
  readonly notificationHandlers?: ReadonlyArray<McpSession.NotificationHandler> | undefined
  readonly defaultTimeout?: Duration.Input | undefined
  readonly keepAlive?: McpSession.Options["keepAlive"]
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
export const make = Effect.fn("McpServerSession.make")(function*(
  options: Options
): Effect.fn.Return<ServerSession, never, McpTransport | Scope.Scope> {
  const supported = options.protocolVersions ?? McpSchema.SUPPORTED_PROTOCOL_VERSIONS
  const state = yield* Ref.make<State>({ _tag: "NotInitialized" })
  const clientCapabilities = () => clientOf(Ref.getUnsafe(state))?.capabilities

  const initialize = McpSession.handler(McpSchema.Initialize, (params) => {
    const protocolVersion = Stateful.negotiate(params.protocolVersion, supported)
    return Effect.as(Ref.set(state, { _tag: "Initializing", client: params, protocolVersion }), {
      protocolVersion,
      capabilities: options.capabilities,
      serverInfo: options.serverInfo,
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    })
  })

  const initialized = McpSession.notificationHandler(
    McpSchema.Initialized,
    () =>
      Ref.update(state, (current): State =>
        current._tag === "Initializing"
          ? { _tag: "Initialized", client: current.client, protocolVersion: current.protocolVersion }
          : current
      ),
    { inline: true }
  )

  const wrap = (handler: Handler): McpSession.Handler => ({
    method: handler.method,
    handle: (params, context) => {
      // admission guarantees the handshake is done before any of these runs
      const current = Ref.getUnsafe(state) as Exclude<State, { readonly _tag: "NotInitialized" }>
      return handler.handle(params, {
        ...context,
        clientParams: current.client,
        protocolVersion: current.protocolVersion,
        checkClientCapability: (...path) =>
          McpMethod.hasCapability(current.client.capabilities, McpMethod.clientCapability(...path))
      })
    }
  })

  const session = yield* McpSession.make({
    role: "server",
    handlers: [initialize, ...(options.handlers ?? []).map(wrap)],
    notificationHandlers: [initialized, ...(options.notificationHandlers ?? [])],
    capabilities: { own: options.capabilities, peer: clientCapabilities },
    admit: (message, kind) => Stateful.admitOnServer(Ref.getUnsafe(state), message, kind),
    acceptBatches: () => {
      const current = Ref.getUnsafe(state)
      return Stateful.acceptsBatches(current._tag === "NotInitialized" ? undefined : current.protocolVersion)
    },
    defaultTimeout: options.defaultTimeout,
    keepAlive: options.keepAlive
  })

  return {
    ...session,
    state: Ref.get(state),
    clientParams: Effect.map(Ref.get(state), (current) => Option.fromUndefinedOr(clientOf(current))),
    checkClientCapability: (...path) =>
      Effect.sync(() => McpMethod.hasCapability(clientCapabilities(), McpMethod.clientCapability(...path)))
  }
})

/**
 * A server session as a scoped layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpServerSession, never, McpTransport> =>
  Layer.effect(McpServerSession, make(options))
