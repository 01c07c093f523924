/**
 * The MCP client, for servers of both eras: one typed method per request on
 * an `McpClientSession` whose layer settles the era while it is acquired
 * (`era: "auto"` probes with `server/discover`, falls back to `initialize`),
 * each list also as a paging `Stream` and a {@link CachedList} that change
 * notifications refresh (`list_changed`, or a `subscriptions/listen` stream
 * in 2026-07-28), input from the client answered by the handlers of
 * {@link Options} (server→client requests, or input-required rounds; they
 * also make the client's capabilities), every notification as a `Stream`.
 * Closing the layer's scope ends the session.
 *
 * ```ts
 * const Client = McpClient.layer({ clientInfo: { name: "agent", version: "1.0.0" } })
 *   .pipe(Layer.provide(NodeMcpHttpClient.layer({ url })))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Types from "./internal/client/notificationTypes.ts"
import type * as McpClientSession from "./McpClientSession.ts"
import type * as McpError from "./McpError.ts"
import * as McpSchema from "./McpSchema.ts"
import type * as McpSession from "./McpSession.ts"
import type * as McpTask from "./McpTask.ts"
import type { McpTransport } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Notifications
// -----------------------------------------------------------------------------

/**
 * The notifications a server sends to a client.
 *
 * @category notifications
 * @since 0.1.0
 */
export type ServerNotificationMethod = Types.ServerNotificationMethod

/**
 * The params of a server notification, as declared in `McpSchema`.
 *
 * @category notifications
 * @since 0.1.0
 */
export type NotificationParams<K extends ServerNotificationMethod> = Types.NotificationParams<K>

/**
 * A notification received from the server: its method and its validated
 * params; narrow on `method` (`notification.method === "notifications/message"`).
 *
 * @category notifications
 * @since 0.1.0
 */
export type Notification = Types.Notification

/**
 * A handler of one kind of notification. Handlers run one at a time, in order
 * of arrival, on the client's dispatcher fiber: a slow handler delays the
 * next notification (never a reply). A failure is logged and ignored.
 *
 * @category notifications
 * @since 0.1.0
 */
export type NotificationHandler<P> = Types.NotificationHandler<P>

/**
 * The optional notification handlers of {@link Options}: `onLoggingMessage`,
 * `onResourceUpdated`, `onToolListChanged`, `onResourceListChanged`,
 * `onPromptListChanged`, `onElicitationComplete`, `onProgress`,
 * `onCancelled`, and `onNotification` for every notification.
 *
 * @category notifications
 * @since 0.1.0
 */
export interface NotificationHandlers extends Types.NotificationHandlers {}

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

/**
 * Sampling: the server asks the client's LLM for a message. Giving it
 * declares the `sampling` capability; `tools` and `context` add
 * `sampling.tools` and `sampling.context`. A request with `tools` or
 * `toolChoice` is refused (`-32602`) unless `tools` is `true`.
 *
 * To refuse a request (the user declined), fail with an `McpError`, e.g.
 * `McpError.protocol(-1, "User rejected sampling request")`.
 *
 * @category options
 * @since 0.1.0
 */
export interface SamplingOptions {
  readonly handler: (
    params: McpSchema.CreateMessageRequestParams,
    context: McpSession.RequestContext
  ) => Effect.Effect<McpSchema.CreateMessageResult, McpError.McpError>
  readonly tools?: boolean | undefined
  readonly context?: boolean | undefined
}

/**
 * Elicitation: the server asks the user for input. Each handler given
 * declares its mode (`elicitation.form`, `elicitation.url`); a request in a
 * mode without a handler is refused with `-32602`.
 *
 * For form mode, an `accept` result is post-processed:
 *
 * - `applyDefaults` (default `true`) fills the fields the user left out with
 *   the `default`s of the requested schema;
 * - `validate` (default `true`) checks the content against the requested
 *   schema with the `JsonSchemaValidator` (the default one unless another
 *   is provided); invalid content fails the request instead of reaching the
 *   server.
 *
 * `decline` and `cancel` results are sent without `content`.
 *
 * @category options
 * @since 0.1.0
 */
export interface ElicitationOptions {
  readonly form?:
    | ((
      params: McpSchema.ElicitRequestFormParams,
      context: McpSession.RequestContext
    ) => Effect.Effect<McpSchema.ElicitResult, McpError.McpError>)
    | undefined
  readonly url?:
    | ((
      params: McpSchema.ElicitRequestURLParams,
      context: McpSession.RequestContext
    ) => Effect.Effect<McpSchema.ElicitResult, McpError.McpError>)
    | undefined
  readonly applyDefaults?: boolean | undefined
  readonly validate?: boolean | undefined
}

/**
 * Which cached lists refresh themselves when the server says they changed.
 * A list refreshes only if it had been fetched before (a client that never
 * listed prompts does not start listing them).
 *
 * @category options
 * @since 0.1.0
 */
export interface AutoRefresh {
  readonly tools?: boolean | undefined
  readonly prompts?: boolean | undefined
  readonly resources?: boolean | undefined
}

/**
 * How a client runs.
 *
 * @category options
 * @since 0.1.0
 */
export interface Options extends NotificationHandlers {
  readonly clientInfo: McpSchema.Implementation
  /** The version proposed in `initialize`. Default: the latest. */
  readonly protocolVersion?: string | undefined
  /** The versions accepted from the server. Default: every supported revision. */
  readonly supportedVersions?: ReadonlyArray<string> | undefined
  readonly sampling?: SamplingOptions | undefined
  readonly elicitation?: ElicitationOptions | undefined
  /**
   * The initial roots. Giving them (even `[]`) declares
   * `roots: { listChanged: true }` and answers `roots/list`; change them with
   * `client.setRoots`.
   */
  readonly roots?: ReadonlyArray<McpSchema.Root> | undefined
  /**
   * Answers `roots/list` in place of the roots given (and declares
   * `roots: { listChanged: true }` as `roots` does): for a client that asks
   * someone else (a gateway, its own client).
   */
  readonly listRoots?:
    | ((context: McpSession.RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Root>, McpError.McpError>)
    | undefined
  /**
   * Sees every notification from the server as it is read, in order, before
   * anything read after it (a reply included) is handled: for a bridge that
   * must pass notifications on before the answer of the request they belong
   * to. Called on the session's reading fiber: it must not block.
   */
  readonly observeNotification?:
    | ((notification: { readonly method: string; readonly params?: unknown }) => void)
    | undefined
  /**
   * The extensions this client takes, by id with their settings, declared
   * as `capabilities.extensions` in both eras, e.g.
   * `{ [McpApps.EXTENSION_ID]: { mimeTypes: [McpApps.MIME_TYPE] } }`.
   */
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
  /** Experimental capabilities, declared as given. */
  readonly experimental?: Record<string, McpSchema.JsonObject> | undefined
  /** Default `true` (every list). */
  readonly autoRefresh?: boolean | AutoRefresh | undefined
  /** 2026-07-28: `false` follows no cached list (no `subscriptions/listen` stream; kept as fetched): a client that runs once. */
  readonly followLists?: boolean | undefined
  /** The page limit of list streams and cached lists. Default 100. */
  readonly maxPages?: number | undefined
  /** How many unread notifications each subscriber keeps before dropping the oldest. Default 1024. */
  readonly notificationBuffer?: number | undefined
  /** The default idle timeout of requests. Default 60 s. */
  readonly requestTimeout?: Duration.Input | undefined
  /** The timeout of the `initialize` request (and of the `server/discover` probe). Default: `requestTimeout`. */
  readonly initializeTimeout?: Duration.Input | undefined
  /**
   * Which era to speak: `"auto"` (default) probes with `server/discover` and
   * falls back to `initialize`; `"modern"` (2026-07-28) and `"legacy"`
   * (2024-11-05 … 2025-11-25) pin it. The client is the same in both.
   */
  readonly era?: McpClientSession.Options["era"]
  /** The most input-required rounds one request may take. Default 8. */
  readonly maxInputRounds?: number | undefined
  readonly keepAlive?: McpSession.Options["keepAlive"]
  /**
   * 2026-07-28: declare the tasks extension, so that a server may answer a
   * long `tools/call` with a task (which `callTool` then waits for). Default `true`.
   */
  readonly tasks?: boolean | undefined
}

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Per-call options: those of `McpSession.RequestOptions` (idle `timeout`,
 * `maxTotalTimeout`, `resetTimeoutOnProgress`, `onProgress`), plus `meta`,
 * merged into the request's `params._meta`.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestOptions extends McpSession.RequestOptions {
  readonly meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Options of a list stream: the per-call options of each page request, and
 * the page limit (default: the client's `maxPages`). A list longer than the
 * limit, or a server that returns a cursor it returned before, fails the
 * stream with an `InvalidResultError`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ListOptions extends RequestOptions {
  readonly maxPages?: number | undefined
}

/**
 * A server list kept by the client. In 2026-07-28 it is followed (by a `subscriptions/listen` stream)
 * only once read a second time or its `changes` streamed: a list read once opens no stream.
 *
 * @category models
 * @since 0.1.0
 */
export interface CachedList<A> {
  /** The cached list, or every page fetched (and cached) when there is none. Concurrent callers share one fetch. */
  readonly get: Effect.Effect<ReadonlyArray<A>, McpError.McpError>
  /** Fetches every page again and caches the result. */
  readonly refresh: Effect.Effect<ReadonlyArray<A>, McpError.McpError>
  /** The cached list, without fetching. */
  readonly cached: Effect.Effect<Option.Option<ReadonlyArray<A>>>
  /** The cached list, if there is one, then every list cached later. */
  readonly changes: Stream.Stream<ReadonlyArray<A>>
  /**
   * How long the server said the cached list stays fresh (2026-07-28 `ttlMs`,
   * the shortest of its pages); `undefined` when it said nothing.
   */
  readonly ttlMs: Effect.Effect<number | undefined>
}

/**
 * A tool returned a result with `isError: true` to `callToolTyped`. It is not
 * an `McpError`: the call itself worked, the tool failed. `result` is the
 * tool's result as sent.
 *
 * @category errors
 * @since 0.1.0
 */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  tool: Schema.String,
  result: McpSchema.CallToolResult
}) {
  override get message(): string {
    const text = this.result.content.flatMap((block) => block.type === "text" ? [block.text] : []).join("\n")
    return `tool ${this.tool} failed${text === "" ? "" : `: ${text}`}`
  }
}

/**
 * A connected MCP client.
 *
 * @category models
 * @since 0.1.0
 */
export interface Client {
  /** The session underneath, for requests this interface does not cover. */
  readonly session: McpClientSession.ClientSession
  /** The era settled when the client connected (`options.era`, default `"auto"`). */
  readonly era: McpClientSession.Era
  readonly protocolVersion: string
  readonly serverInfo: McpSchema.Implementation
  readonly serverCapabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
  /** The capabilities this client declared (derived from its options). */
  readonly capabilities: McpSchema.ClientCapabilities

  readonly ping: (options?: RequestOptions) => Effect.Effect<void, McpError.McpError>

  // tools
  readonly listTools: (
    params?: { readonly cursor?: string | undefined },
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ListToolsResult, McpError.McpError>
  readonly streamTools: (options?: ListOptions) => Stream.Stream<McpSchema.Tool, McpError.McpError>
  readonly tools: CachedList<McpSchema.Tool>
  /**
   * Calls a tool and checks its `structuredContent` against the tool's
   * `outputSchema` (unless `isError` is `true`). A mismatch, or a missing
   * `structuredContent` when the tool has an `outputSchema`, fails with an
   * `InvalidResultError`. A tool's own failure is a result with
   * `isError: true`, not an error.
   *
   * The `outputSchema` comes from the tools seen by `listTools`,
   * `streamTools` and `tools`; a tool not seen yet makes the client fetch the
   * whole list once (a name still unknown after that is not looked up again
   * until the list changes), and a failure of that fetch fails the call.
   *
   * A call run as a task (2026-07-28: the server's choice; 2025-11-25: a tool
   * listed `taskSupport: "required"`) is waited for, its input answered.
   */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /**
   * Calls a tool as a task and returns its handle at once: 2025-11-25 asks
   * for a task (the server must declare `tasks.requests.tools.call`);
   * 2026-07-28 lets the server decide (a call answered at once gives a
   * handle already `completed`, with an empty `taskId`).
   */
  readonly callToolTask: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpTask.CallOptions
  ) => Effect.Effect<McpTask.Task, McpError.McpError>
  /** A handle on a task of this server by its id (made by another client of the same principal, or before a restart). */
  readonly task: (taskId: string, options?: RequestOptions) => McpTask.Task
  /**
   * Calls a tool and decodes its `structuredContent` (or, from servers that
   * send none, the JSON of its single text block) with `schema`. A result with
   * `isError: true` fails with a {@link ToolError}; a value that does not
   * decode, with an `InvalidResultError`.
   */
  readonly callToolTyped: <S extends Schema.Top>(
    name: string,
    args: Readonly<Record<string, unknown>> | undefined,
    schema: S,
    options?: RequestOptions
  ) => Effect.Effect<S["Type"], McpError.McpError | ToolError, S["DecodingServices"]>

  // resources
  readonly listResources: (
    params?: { readonly cursor?: string | undefined },
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ListResourcesResult, McpError.McpError>
  readonly streamResources: (options?: ListOptions) => Stream.Stream<McpSchema.Resource, McpError.McpError>
  readonly resources: CachedList<McpSchema.Resource>
  readonly listResourceTemplates: (
    params?: { readonly cursor?: string | undefined },
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ListResourceTemplatesResult, McpError.McpError>
  readonly streamResourceTemplates: (
    options?: ListOptions
  ) => Stream.Stream<McpSchema.ResourceTemplate, McpError.McpError>
  readonly resourceTemplates: CachedList<McpSchema.ResourceTemplate>
  readonly readResource: (
    uri: string,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  readonly subscribeResource: (uri: string, options?: RequestOptions) => Effect.Effect<void, McpError.McpError>
  readonly unsubscribeResource: (uri: string, options?: RequestOptions) => Effect.Effect<void, McpError.McpError>
  /**
   * Subscribes to a resource for as long as the stream runs and emits its
   * `notifications/resources/updated` (for the URI and its sub-resources).
   * Watchers of one URI share a single server subscription, released by the
   * last one.
   */
  readonly watchResource: (
    uri: string,
    options?: RequestOptions
  ) => Stream.Stream<McpSchema.ResourceUpdatedNotificationParams, McpError.McpError>

  // prompts
  readonly listPrompts: (
    params?: { readonly cursor?: string | undefined },
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.ListPromptsResult, McpError.McpError>
  readonly streamPrompts: (options?: ListOptions) => Stream.Stream<McpSchema.Prompt, McpError.McpError>
  readonly prompts: CachedList<McpSchema.Prompt>
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>

  // utilities
  readonly complete: (
    params: Omit<McpSchema.CompleteRequestParams, "_meta">,
    options?: RequestOptions
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  readonly setLoggingLevel: (
    level: McpSchema.LoggingLevel,
    options?: RequestOptions
  ) => Effect.Effect<void, McpError.McpError>

  // roots
  /** The roots given to the server. */
  readonly roots: Effect.Effect<ReadonlyArray<McpSchema.Root>>
  /**
   * Replaces the roots and sends `notifications/roots/list_changed`. Fails
   * with an `UnsupportedError` (and changes nothing) when the client was
   * built without `roots`.
   */
  readonly setRoots: (roots: ReadonlyArray<McpSchema.Root>) => Effect.Effect<void, McpError.McpError>

  // notifications
  /**
   * Every server notification, from the moment the stream starts running
   * until the session ends. Each subscriber buffers up to
   * `notificationBuffer` unread notifications and drops the oldest beyond.
   * To be sure not to miss anything sent after a point, use
   * {@link Client.subscribe}.
   */
  readonly notifications: Stream.Stream<Notification>
  /**
   * Subscribes now, in the current scope, and returns the stream of every
   * notification received from now on.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<Notification>, never, Scope.Scope>
  /** The params of one kind of notification, e.g. `notificationsOf(McpSchema.LoggingMessage)`. */
  readonly notificationsOf: <K extends ServerNotificationMethod>(
    method: K | { readonly name: K }
  ) => Stream.Stream<NotificationParams<K>>
}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * A connected MCP client.
 *
 * @category services
 * @since 0.1.0
 */
export class McpClient extends Context.Service<McpClient, Client>()("@effect-mcp/core/McpClient") {}

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * Connects over the transport in context: runs the session and its
 * `initialize` handshake, and returns the client once the server has
 * answered. The session lasts as long as the scope.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = Effect.fn("McpClient.make")(function*(
  options: Options
): Effect.fn.Return<Client, McpError.McpError, McpTransport | Scope.Scope> {
  // the client's machinery is loaded with the first client, not with this module
  const Internal = yield* Effect.promise(() => import("./internal/client/client.ts"))
  return yield* Internal.make(options)
})

/**
 * A connected client as a scoped layer: acquiring it performs the handshake,
 * releasing it ends the session.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options: Options
): Layer.Layer<McpClient, McpError.McpError, McpTransport> => Layer.effect(McpClient, make(options))
