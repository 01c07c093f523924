/**
 * The client side of one MCP connection, in either era. Its layer settles
 * the era while it is acquired (`era: "auto"` probes with `server/discover`
 * and falls back to `initialize`), so a program can only ever hold a
 * session it can call. In the stateless era (2026-07-28) every request
 * carries the `_meta` envelope and input-required results are answered with
 * the client's own handlers; in the stateful one the layer performs the
 * initialize handshake:
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
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Capabilities from "./internal/era/capabilities.ts"
import * as Stateful from "./internal/era/stateful.ts"
import * as Stateless from "./internal/era/stateless.ts"
import * as StatelessClient from "./internal/era/statelessClient.ts"
import * as McpError from "./McpError.ts"
import type * as McpMethod from "./McpMethod.ts"
import * as McpSchema from "./McpSchema.ts"
import * as McpSession from "./McpSession.ts"
import { McpTransport } from "./McpTransport.ts"

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
  /**
   * Which era to speak: `"auto"` (default) probes with `server/discover` and
   * falls back to `initialize` on any answer but a modern one (an HTTP
   * refusal, an error, a timeout), on the same connection; `"modern"` and
   * `"legacy"` pin it.
   */
  readonly era?: "auto" | Era | undefined
  /** The most input-required rounds one request may take. Default 8. */
  readonly maxInputRounds?: number | undefined
  /** How long `era: "auto"` waits for the `server/discover` probe before it falls back to `initialize`. Default 10 s. */
  readonly probeTimeout?: Duration.Input | undefined
  /**
   * 2026-07-28 extensions this client takes, declared in every request's
   * capabilities (`capabilities.extensions`), e.g. `McpSchema.TASKS_EXTENSION_ID`.
   * Not sent in `initialize`.
   */
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
}

/**
 * The era of a session: `modern` (2026-07-28, stateless) or `legacy`
 * (2024-11-05 … 2025-11-25, after `initialize`).
 *
 * @category models
 * @since 0.2.0
 */
export type Era = "modern" | "legacy"

/**
 * Any request method but `initialize`, which the session's layer has already
 * sent.
 *
 * @category models
 * @since 0.1.0
 */
export type AfterInitialize<M extends McpMethod.Request> = M["name"] extends typeof McpSchema.Initialize.name ? never
  : M

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
  /** The era settled when the layer was acquired. */
  readonly era: Era
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
  const all = options.supportedVersions ??
    [...McpSchema.MODERN_PROTOCOL_VERSIONS, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS]
  const modern = all.filter(McpSchema.isModernProtocolVersion)
  const supported = all.filter((version) => !McpSchema.isModernProtocolVersion(version))
  const capabilities = options.capabilities ?? {}
  const era = options.era ?? "auto"
  let serverCapabilities: McpSchema.ServerCapabilities | undefined
  let protocolVersion: string | undefined
  const session = yield* McpSession.make({
    role: "client",
    handlers: options.handlers,
    notificationHandlers: options.notificationHandlers,
    observeNotification: options.observeNotification,
    capabilities: { own: capabilities, peer: () => Capabilities.ofServer(serverCapabilities, protocolVersion) },
    // a 2025-03-26 server may send batches
    acceptBatches: () => Stateful.acceptsBatches(protocolVersion),
    defaultTimeout: options.defaultTimeout,
    keepAlive: options.keepAlive
  })
  const handshakeOptions = options.initializeTimeout === undefined ? undefined : { timeout: options.initializeTimeout }

  const transport = yield* McpTransport
  if (era !== "legacy" && modern.length > 0 && transport.statefulOnly !== true) {
    const envelope: StatelessClient.Envelope = {
      version: options.protocolVersion !== undefined && modern.includes(options.protocolVersion)
        ? options.protocolVersion
        : modern[0]!,
      clientInfo: options.clientInfo,
      capabilities: modernCapabilities(capabilities, options.extensions),
      logLevel: undefined
    }
    const verdict = yield* StatelessClient.probe(session, envelope, modern, {
      timeout: era === "modern" ? options.initializeTimeout : options.probeTimeout ?? Duration.seconds(10)
    })
    if (verdict._tag === "Modern") {
      serverCapabilities = verdict.discovered.capabilities
      return modernSession(session, options, envelope, modern, verdict.discovered)
    }
    if (era === "modern") {
      return yield* McpError.handshake(`the server does not speak ${modern.join(", ")}: ${verdict.reason}`)
    }
  }

  const result = yield* session.request(McpSchema.Initialize, {
    protocolVersion: options.protocolVersion !== undefined && supported.includes(options.protocolVersion)
      ? options.protocolVersion
      : McpSchema.LATEST_PROTOCOL_VERSION,
    capabilities,
    clientInfo: options.clientInfo
  }, handshakeOptions)
  if (!supported.includes(result.protocolVersion)) {
    return yield* McpError.handshake(
      `the server answered protocol version ${result.protocolVersion}, which this client does not support (${
        supported.join(", ")
      })`
    )
  }
  serverCapabilities = result.capabilities
  protocolVersion = result.protocolVersion
  yield* session.notify(McpSchema.Initialized, {})
  return {
    ...session,
    // the current span's trace context goes along in both eras
    request: (method, params, requestOptions) =>
      StatelessClient.withEnvelopeThen(
        params,
        undefined,
        (wire) => session.request(method, wire as McpMethod.Params<typeof method>, requestOptions)
      ),
    era: "legacy",
    protocolVersion: result.protocolVersion,
    serverInfo: result.serverInfo,
    serverCapabilities: result.capabilities,
    instructions: result.instructions
  }
})

// 2026-07-28 has no `tasks` capability (tasks are an extension there)
const modernCapabilities = (
  capabilities: McpSchema.ClientCapabilities,
  extensions: Options["extensions"]
): McpSchema.ClientCapabilities => {
  const { tasks: _, ...rest } = capabilities
  return extensions === undefined ? rest : { ...rest, extensions: { ...rest.extensions, ...extensions } }
}

// the stateless session: every request with the envelope, input-required
// results answered, and the removed methods handled on this side
const modernSession = (
  session: McpSession.Session,
  options: Options,
  envelope: StatelessClient.Envelope,
  versions: ReadonlyArray<string>,
  discovered: McpSchema.DiscoverResult
): ClientSession => {
  const handlers = new Map<string, McpSession.Handler>()
  for (const handler of options.handlers ?? []) handlers.set(handler.method.name, handler)
  const rounds: StatelessClient.Rounds = {
    session,
    envelope,
    versions,
    handlers,
    maxRounds: options.maxInputRounds ?? 8
  }
  const discover = (requestOptions?: McpSession.RequestOptions) =>
    StatelessClient.request(rounds, McpSchema.Discover, {}, requestOptions)
  const request = <M extends McpMethod.Request>(
    method: M,
    params: McpMethod.Params<M>,
    requestOptions?: McpSession.RequestOptions
  ): Effect.Effect<McpMethod.Result<M>, McpError.McpError> => {
    switch (method.name) {
      // the log level travels in each request's _meta
      case McpSchema.SetLevel.name:
        return Effect.sync(() => {
          envelope.logLevel = (params as McpSchema.SetLevelRequestParams).level
          return {} as McpMethod.Result<M>
        })
      // the revision has no ping: discover is the cheapest request
      case McpSchema.Ping.name:
        return Effect.as(discover(requestOptions), {} as McpMethod.Result<M>)
      default:
        return Stateless.LEGACY_ONLY.has(method.name)
          ? Effect.fail(McpError.unsupported(method.name, "a 2026-07-28 server (the method was removed)"))
          : StatelessClient.request(rounds, method, params, requestOptions)
    }
  }
  const serverInfo = discovered._meta?.[McpSchema.MetaKey.serverInfo] as McpSchema.Implementation | undefined
  return {
    ...session,
    request,
    // the client sends no notification in this revision but cancellation
    notify: (method, params) => method.name === McpSchema.Cancelled.name ? session.notify(method, params) : Effect.void,
    ping: (pingOptions) => Effect.asVoid(discover(pingOptions)),
    era: "modern",
    protocolVersion: envelope.version,
    serverInfo: serverInfo ?? { name: "unknown", version: "0" },
    serverCapabilities: discovered.capabilities,
    instructions: discovered.instructions
  }
}

/**
 * An initialized client session as a scoped layer over a transport.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpClientSession, McpError.McpError, McpTransport> =>
  Layer.effect(McpClientSession, make(options))
