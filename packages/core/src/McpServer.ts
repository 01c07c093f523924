/**
 * An MCP server: a registry of tools, resources, resource templates and
 * prompts, served over any number of connections.
 *
 * - Register with layers (`McpServer.register(...)`, composable like the rest
 *   of an app, unregistered when their scope closes) or at runtime
 *   (`server.register`, `unregister`, `enable`, `disable`), which sends the
 *   matching `notifications/…/list_changed` to every initialized session.
 * - Each connection is a session (`McpServer.serve`, `McpServer.layerSession`)
 *   with its own log level and resource subscriptions.
 * - Handlers receive a {@link RequestContext}: the request, the client, progress,
 *   logging filtered by the session's level, sampling, elicitation, roots.
 * - Middleware wraps every inbound request and notification, outermost first.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { HeaderParam } from "./internal/jsonSchema/headers.ts"
import * as InternalContext from "./internal/server/context.ts"
import * as Logging from "./internal/server/logging.ts"
import { makeServer } from "./internal/server/server.ts"
import * as JsonRpc from "./JsonRpc.ts"
import type * as McpAuth from "./McpAuth.ts"
import * as McpError from "./McpError.ts"
import type * as McpExtension from "./McpExtension.ts"
import type * as McpMethod from "./McpMethod.ts"
import type * as McpPrompt from "./McpPrompt.ts"
import type * as McpResource from "./McpResource.ts"
import type * as McpSchema from "./McpSchema.ts"
import * as McpServerSession from "./McpServerSession.ts"
import type * as McpSession from "./McpSession.ts"
import type * as McpTaskStore from "./McpTaskStore.ts"
import type * as McpTool from "./McpTool.ts"
import { McpTransport, RequestOrigin } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Contexts
// -----------------------------------------------------------------------------

/**
 * Options of a server→client request made from a handler.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestOptions extends McpSession.RequestOptions {
  /**
   * The key of this input in a 2026-07-28 input-required result (default:
   * derived from the method and params). Unique within the handler.
   */
  readonly inputKey?: string | undefined
}

/**
 * The answer to a form elicitation, with accepted content decoded by the
 * caller's Schema.
 *
 * @category models
 * @since 0.1.0
 */
export type Elicited<A> =
  | { readonly action: "accept"; readonly content: A }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/**
 * A form elicitation: the message, the Schema of the wanted value (a struct of
 * strings, numbers, booleans, literal enums and arrays of literals), and the
 * value each field starts with, in its JSON form.
 *
 * @category models
 * @since 0.1.0
 */
export interface ElicitOptions<S extends Schema.Top> {
  readonly message: string
  readonly schema: S
  readonly defaults?: { readonly [K in keyof S["Encoded"]]?: S["Encoded"][K] } | undefined
  readonly timeout?: RequestOptions["timeout"]
  /** See {@link RequestOptions.inputKey}. */
  readonly inputKey?: string | undefined
}

/**
 * What every handler can use: the client and the way back to it.
 *
 * @category models
 * @since 0.1.0
 */
export interface NotificationContext {
  readonly kind: "notification" | "request"
  readonly method: string
  /** `modern`: a stateless 2026-07-28 request; `legacy`: a session of 2024-11-05 … 2025-11-25. */
  readonly era: McpServerSession.Era
  readonly clientInfo: McpSchema.Implementation
  readonly clientCapabilities: McpSchema.ClientCapabilities
  readonly protocolVersion: string
  /** `true` when the client declared the capability, e.g. `checkClientCapability("sampling", "tools")`. */
  readonly checkClientCapability: (...path: ReadonlyArray<string>) => boolean
  /**
   * The level the client asked to be sent logs from: its session's
   * `logging/setLevel`, or a modern request's `_meta` level; `undefined`
   * when it asked for none (a legacy session is then sent every level, a
   * modern request none).
   */
  readonly logLevel: McpSchema.LoggingLevel | undefined
  /** Sends `notifications/message` when `level` passes the threshold: the session's `logging/setLevel`, or a modern request's `_meta` level (none: nothing is sent). */
  readonly log: (level: McpSchema.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
  /** `sampling/createMessage`; fails with `UnsupportedError` (nothing sent) if the client lacks `sampling` (or `sampling.tools` when tools are given). */
  readonly createMessage: (
    params: McpSchema.CreateMessageRequestParams,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.CreateMessageResult, McpError.McpError>
  /**
   * Form elicitation: asks for a value of `schema` and decodes the accepted content with it.
   * In a modern request this ends the round with an input-required result; the
   * client's retry runs the handler again and this call returns its answer.
   */
  readonly elicit: <S extends Schema.Top>(
    options: ElicitOptions<S>
  ) => Effect.Effect<Elicited<S["Type"]>, McpError.McpError, S["DecodingServices"]>
  /** URL elicitation (2025-11-25): sends the user to `url`; complete it with {@link NotificationContext.completeUrlElicitation}. */
  readonly elicitUrl: (options: {
    readonly message: string
    readonly url: string
    readonly elicitationId: string
  }) => Effect.Effect<McpSchema.ElicitResult, McpError.McpError>
  /** `notifications/elicitation/complete` for a URL elicitation. */
  readonly completeUrlElicitation: (elicitationId: string) => Effect.Effect<void, McpError.McpError>
  /** `roots/list`. */
  readonly listRoots: (options?: RequestOptions) => Effect.Effect<ReadonlyArray<McpSchema.Root>, McpError.McpError>
  /**
   * Asks the client for input with a request of its own (`elicitation/create`
   * in either mode, `sampling/createMessage`, `roots/list`), params and
   * result as they are on the wire: a request in a legacy session, an
   * input-required round in a modern request.
   */
  readonly input: McpServerSession.RequestContext["input"]
  /** Any notification to this session. */
  readonly notify: <M extends McpMethod.Notification>(
    method: M,
    params: McpMethod.Params<M>
  ) => Effect.Effect<void, McpError.McpError>
  readonly session: McpServerSession.ServerSession
}

/**
 * What a request handler receives.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestContext extends NotificationContext {
  readonly kind: "request"
  readonly requestId: JsonRpc.RequestId
  readonly meta: Readonly<Record<string, unknown>> | undefined
  readonly progressToken: McpSchema.ProgressToken | undefined
  /**
   * The verified token the request came with, on a protected HTTP server
   * (`auth` option); else `undefined`. Also `yield* McpAuth.CurrentAuth`.
   */
  readonly auth: McpAuth.AuthInfo | undefined
  /** `notifications/progress` for this request; does nothing when the client sent no progress token. */
  readonly reportProgress: (progress: {
    readonly progress: number
    readonly total?: number
    readonly message?: string
  }) => Effect.Effect<void>
}

/**
 * The context of the request being handled, for code deep inside a handler
 * (and for the logger bridge). `undefined` outside a request.
 *
 * @category references
 * @since 0.1.0
 */
export const CurrentRequestContext: Context.Reference<RequestContext | undefined> =
  InternalContext.CurrentRequestContext

/**
 * The context of the request being handled, if any.
 *
 * @category accessors
 * @since 0.1.0
 */
export const currentRequestContext: Effect.Effect<Option.Option<RequestContext>> = Effect.gen(function*() {
  return Option.fromUndefinedOr(yield* CurrentRequestContext)
})

/**
 * Middleware: wraps every inbound request (`context.kind === "request"`) and
 * notification, outermost first. It may observe, short-circuit (return
 * without running `next`), or run `next` with more services, e.g.
 * `Effect.provideService(next, CurrentUser, user)` where `CurrentUser` is a
 * `Context.Reference` that handlers read.
 *
 * @category models
 * @since 0.1.0
 */
export type Middleware = (
  context: RequestContext | (NotificationContext & { readonly kind: "notification" }),
  method: string,
  params: unknown,
  next: Effect.Effect<unknown, McpError.McpError>
) => Effect.Effect<unknown, McpError.McpError>

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * Anything that can be registered.
 *
 * @category models
 * @since 0.1.0
 */
export type Definition<R = never> =
  | McpTool.McpTool<R>
  | McpResource.McpResource<R>
  | McpResource.McpResourceTemplate<R>
  | McpPrompt.McpPrompt<R>
  | McpExtension.McpExtension<R>

/**
 * @since 0.2.0
 */
export declare namespace Definition {
  /**
   * The services the handlers of the given definitions need.
   *
   * @category models
   * @since 0.2.0
   */
  export type Services<D> = D extends Definition<infer R> ? R : never
}

/**
 * How a server runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly icons?: ReadonlyArray<McpSchema.Icon> | undefined
  readonly websiteUrl?: string | undefined
  readonly instructions?: string | undefined
  /** Items per page of every `.../list` answer. Default 100. */
  readonly pageSize?: number | undefined
  readonly middleware?: ReadonlyArray<Middleware> | undefined
  /**
   * Capabilities added to those derived from what is registered when a
   * session starts (e.g. `{ tools: { listChanged: true } }` for a server that
   * registers its first tool later, or `experimental`); one given as
   * `undefined` is not declared (`{ logging: undefined }`).
   */
  readonly capabilities?:
    | { readonly [K in keyof McpSchema.ServerCapabilities]?: McpSchema.ServerCapabilities[K] | undefined }
    | undefined
  readonly protocolVersions?: ReadonlyArray<string> | undefined
  /**
   * Whether a definition is shown to the request's client (in lists) and
   * reachable by it (calls, reads, completions): a hidden one is unknown to
   * it, as if it were not registered. For views per user: `context.auth` is
   * the request's verified token (subject, client, scopes). Default: all.
   */
  readonly visible?: ((definition: Definition<any>, context: RequestContext) => boolean) | undefined
  /**
   * Told when a resource URI gains its first subscriber (a legacy
   * `resources/subscribe`, or a `subscriptions/listen` stream naming it) and
   * when it loses its last (`subscribed: false`): for servers whose resources
   * change elsewhere (a gateway's upstreams). A failure to subscribe fails
   * the `resources/subscribe` that asked (a listen stream logs it).
   */
  readonly onSubscriptions?: ((uri: string, subscribed: boolean) => Effect.Effect<void, McpError.McpError>) | undefined
  /** Called when a client says its roots changed. */
  readonly onRootsListChanged?: ((context: NotificationContext) => Effect.Effect<void>) | undefined
  readonly defaultTimeout?: Duration.Input | undefined
  readonly keepAlive?: McpSession.Options["keepAlive"]
  /**
   * Cache hints of 2026-07-28 answers (`server/discover`, the list methods,
   * `resources/read`); a definition's own `cache` wins for its entries.
   * Default: `{ ttlMs: 0, cacheScope: "private" }` (nothing is claimed).
   */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  /**
   * The `requestState` of input-required results: sealed with `secret` (give
   * every replica the same; default: a random key of this server), valid for
   * `ttl` (default 10 minutes), at most `maxBytes` long (default 64 KiB).
   */
  readonly requestState?: {
    readonly secret?: string | Uint8Array | undefined
    readonly ttl?: Duration.Input | undefined
    readonly maxBytes?: number | undefined
  } | undefined
  /**
   * Held calls (definitions with `hold`, 2026-07-28): at most `max` held at
   * once (default 10,000; beyond, a new one is refused with `-32000`), each
   * waiting at most `ttl` for its client's retry (default 10 minutes; then
   * its handler is interrupted and a late retry gets `-32602`).
   */
  readonly hold?: {
    readonly max?: number | undefined
    readonly ttl?: Duration.Input | undefined
  } | undefined
  /**
   * Calls of tools declared with `task` run as tasks: the handler's fiber
   * belongs to the server, the client polls (`tasks/get`) and may cancel.
   * Tasks are kept in the `McpTaskStore` in context, or in memory; their
   * `ttl`, `maxTtl`, `pollInterval` and `after` are `McpTaskStore.TaskOptions`.
   */
  readonly tasks?: McpTaskStore.TaskOptions | undefined
}

/**
 * A running server.
 *
 * @category models
 * @since 0.1.0
 */
export interface Server {
  readonly serverInfo: McpSchema.Implementation
  /** Adds (or replaces, by name, URI or URI template) a definition, enabled. */
  readonly register: <R>(definition: Definition<R>) => Effect.Effect<void, never, R>
  readonly unregister: (definition: Definition<any>) => Effect.Effect<void>
  /**
   * Registers and unregisters many definitions in one change: the sessions
   * and listeners are told once per kind that changed.
   */
  readonly update: <R>(changes: {
    readonly register?: ReadonlyArray<Definition<R>> | undefined
    readonly unregister?: ReadonlyArray<Definition<any>> | undefined
  }) => Effect.Effect<void, never, R>
  /** Shows a registered definition again. */
  readonly enable: (definition: Definition<any>) => Effect.Effect<void>
  /** Hides a registered definition from lists and calls without removing it. */
  readonly disable: (definition: Definition<any>) => Effect.Effect<void>
  /** Sends `notifications/resources/updated` to the sessions subscribed to `uri`. */
  readonly notifyResourceUpdated: (uri: string) => Effect.Effect<void>
  /** Serves one connection over the transport in context, for as long as the scope lasts. */
  readonly serve: Effect.Effect<McpServerSession.ServerSession, never, McpTransport | Scope.Scope>
  /**
   * Serves the 2026-07-28 requests of many clients over one transport (what
   * the Streamable HTTP transport does with its modern requests); not a
   * connection, so not counted in `sessionCount`.
   */
  readonly serveRequests: Effect.Effect<McpServerSession.ServerSession, never, McpTransport | Scope.Scope>
  /** How many connections are being served. */
  readonly sessionCount: Effect.Effect<number>
  /** Every protocol version served, newest first (stateless ones, then stateful ones). */
  readonly supportedVersions: ReadonlyArray<string>
  /** The parameters of a registered tool mirrored into `Mcp-Param-*` HTTP headers (`x-mcp-header`). */
  readonly toolHeaders: (tool: string) => ReadonlyArray<HeaderParam>
  /** The calls held now (see `McpTool.Info.hold`). */
  readonly heldCalls: McpServerSession.HeldCalls
  /**
   * The key sealing `requestState`: in a cluster, the HTTP route opens a
   * retry's state with it to tell which replica holds its call.
   */
  readonly sealingKey: McpServerSession.SealingKey
}

/**
 * A running server.
 *
 * @category services
 * @since 0.1.0
 */
export class McpServer extends Context.Service<McpServer, Server>()("@effect-mcp/core/McpServer") {}

/**
 * Makes a server.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (options: Options) => Effect.Effect<Server> = Effect.fn("McpServer.make")(
  (options: Options) => makeServer(options)
)

/**
 * A server as a layer, with the definitions given after the options
 * registered while it lasts (the same as {@link register} provided with it).
 *
 * @example
 * ```ts
 * import { McpServer, McpTool } from "@effect-mcp/core"
 * import { Effect, Schema } from "effect"
 *
 * const notes: Array<string> = []
 * const addNote = McpTool.make("add_note", {
 *   input: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.sync(() => notes.push(text)).pipe(Effect.as("added"))
 * })
 * const listNotes = McpTool.make("list_notes", {
 *   output: Schema.Array(Schema.String),
 *   handler: () => Effect.sync(() => [...notes])
 * })
 *
 * const Server = McpServer.layer({ name: "notes", version: "1.0.0" }, addNote, listNotes)
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <const Definitions extends ReadonlyArray<Definition<any>> = []>(
  options: Options,
  ...definitions: Definitions
): Layer.Layer<McpServer, never, Definition.Services<Definitions[number]>> => {
  const server = Layer.effect(McpServer, make(options))
  return definitions.length === 0
    ? server as Layer.Layer<McpServer, never, any>
    : register(...definitions).pipe(Layer.provideMerge(server))
}

/**
 * Registers definitions while the layer lasts: added when it is built,
 * removed when its scope closes. Handler requirements are taken from the
 * layer's context.
 *
 * @category layers
 * @since 0.1.0
 */
export const register = <const Definitions extends ReadonlyArray<Definition<any>>>(
  ...definitions: Definitions
): Layer.Layer<never, never, McpServer | Definition.Services<Definitions[number]>> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* McpServer
    for (const definition of definitions) {
      yield* Effect.acquireRelease(server.register(definition), () => server.unregister(definition))
    }
  }))

/**
 * Serves one connection over the transport in context.
 *
 * @category constructors
 * @since 0.1.0
 */
export const serve: Effect.Effect<McpServerSession.ServerSession, never, McpServer | McpTransport | Scope.Scope> =
  Effect
    .flatMap(McpServer, (server) => server.serve)

/**
 * One served connection as a layer (its session, to await its end).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSession: Layer.Layer<McpServerSession.McpServerSession, never, McpServer | McpTransport> = Layer
  .effect(
    McpServerSession.McpServerSession,
    serve
  )

/**
 * The error a handler fails with when the request can only go on after the
 * user completes URL-mode elicitations (2025-11-25, `-32042`).
 *
 * @category errors
 * @since 0.1.0
 */
export const urlElicitationRequired = (
  elicitations: ReadonlyArray<McpSchema.ElicitRequestURLParams>,
  message = "This request needs the user to complete an interaction first"
): McpError.McpError => McpError.protocol(JsonRpc.ErrorCode.UrlElicitationRequired, message, { elicitations })

// -----------------------------------------------------------------------------
// Logging bridge
// -----------------------------------------------------------------------------

const bridge = Logger.make<unknown, void>(({ fiber, logLevel, message }) => {
  const context = fiber.getRef(CurrentRequestContext)
  if (context === undefined) return
  const parts = Array.isArray(message) ? message : [message]
  const data = parts.length === 1 ? parts[0] : parts
  // keeps the request's origin, so that Streamable HTTP answers the log line on the request's stream
  Effect.runFork(
    Effect.provideService(context.log(Logging.fromEffect(logLevel), data), RequestOrigin, fiber.getRef(RequestOrigin))
  )
})

/**
 * Forwards a handler's ordinary `Effect.log*` calls to its client as
 * `notifications/message`, at the matching level and filtered by the
 * session's `logging/setLevel` threshold (the threshold is a filter on what
 * is forwarded; it does not change how `Effect.log` itself behaves). Other
 * loggers are kept.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerLogger: Layer.Layer<never> = Logger.layer([bridge], { mergeWithExisting: true })
