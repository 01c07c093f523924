/**
 * The client side of one MCP connection. Its layer performs the initialize
 * handshake while it is acquired, so a program can only ever hold an
 * initialized session:
 *
 * - there is no `initialize` to call, and `request` does not accept the
 *   `initialize` method (a second handshake does not compile);
 * - the service exists only inside the layer's scope; closing the scope ends
 *   the session, shuts its transport down and fails whatever is pending.
 *
 * Requests that need a capability the server did not declare fail with an
 * `UnsupportedError` before anything is sent.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as McpError from "./McpError.ts"
import type * as McpMethod from "./McpMethod.ts"
import * as McpSchema from "./McpSchema.ts"
import * as McpSession from "./McpSession.ts"
import type { McpTransport } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * How a client session runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly clientInfo: McpSchema.Implementation
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
  /** The version proposed in `initialize`. Default: the latest. */
  readonly protocolVersion?: string | undefined
  /** The versions accepted from the server. Default: every supported revision. */
  readonly supportedVersions?: ReadonlyArray<string> | undefined
  /** Handlers of server→client requests (sampling, elicitation, roots, ...). */
  readonly handlers?: ReadonlyArray<McpSession.Handler> | undefined
  readonly notificationHandlers?: ReadonlyArray<McpSession.NotificationHandler> | undefined
  /** Sees every notification from the server, in order (see `McpSession.Options`). */
  readonly observeNotification?: McpSession.Options["observeNotification"]
  /** The idle timeout of the `initialize` request. Default: the session default. */
  readonly initializeTimeout?: Duration.Input | undefined
  readonly defaultTimeout?: Duration.Input | undefined
  readonly keepAlive?: McpSession.Options["keepAlive"]
}

/**
 * Any request method but `initialize`, which the session's layer has already
 * sent.
 *
 * @category models
 * @since 0.1.0
 */
export type AfterInitialize<M extends McpMethod.Request> = M["name"] extends typeof McpSchema.Initialize.name ? never : M

/**
 * Any notification but `notifications/initialized`.
 *
 * @category models
 * @since 0.1.0
 */
export type AfterInitialized<M extends McpMethod.Notification> = M["name"] extends typeof McpSchema.Initialized.name ?
  never
  : M

/**
 * An initialized client session.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClientSession extends Omit<McpSession.Session, "request" | "notify"> {
  readonly request: <M extends McpMethod.Request>(
    method: AfterInitialize<M>,
    params: McpMethod.Params<M>,
    options?: McpSession.RequestOptions
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>
  readonly notify: <M extends McpMethod.Notification>(
    method: AfterInitialized<M>,
    params: McpMethod.Params<M>
  ) => Effect.Effect<void, McpError.McpError>
  /** The negotiated protocol version. */
  readonly protocolVersion: string
  readonly serverInfo: McpSchema.Implementation
  readonly serverCapabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * An initialized client session.
 *
 * @category services
 * @since 0.1.0
 */
export class McpClientSession extends Context.Service<McpClientSession, ClientSession>()(
  "@effect-mcp/core/McpClientSession"
) {}

/**
 * Connects over the transport in context: runs the session, sends
 * `initialize`, checks the server's answer, sends `notifications/initialized`
 * and only then returns the session.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = Effect.fn("McpClientSession.make")(function*(
  options: Options
): Effect.fn.Return<ClientSession, McpError.McpError, McpTransport | Scope.Scope> {
  const supported = options.supportedVersions ?? McpSchema.SUPPORTED_PROTOCOL_VERSIONS
  const capabilities = options.capabilities ?? {}
  let serverCapabilities: McpSchema.ServerCapabilities | undefined
  const session = yield* McpSession.make({
    role: "client",
    handlers: options.handlers,
    notificationHandlers: options.notificationHandlers,
    observeNotification: options.observeNotification,
    capabilities: { own: capabilities, peer: () => serverCapabilities },
    defaultTimeout: options.defaultTimeout,
    keepAlive: options.keepAlive
  })
  const result = yield* session.request(McpSchema.Initialize, {
    protocolVersion: options.protocolVersion ?? McpSchema.LATEST_PROTOCOL_VERSION,
    capabilities,
    clientInfo: options.clientInfo
  }, options.initializeTimeout === undefined ? undefined : { timeout: options.initializeTimeout })
  if (!supported.includes(result.protocolVersion)) {
    return yield* McpError.handshake(
      `the server answered protocol version ${result.protocolVersion}, which this client does not support (${
        supported.join(", ")
      })`
    )
  }
  serverCapabilities = result.capabilities
  yield* session.notify(McpSchema.Initialized, {})
  return {
    ...session,
    protocolVersion: result.protocolVersion,
    serverInfo: result.serverInfo,
    serverCapabilities: result.capabilities,
    instructions: result.instructions
  }
})

/**
 * An initialized client session as a scoped layer over a transport.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpClientSession, McpError.McpError, McpTransport> =>
  Layer.effect(McpClientSession, make(options))
