/**
 * Many MCP servers as one scoped service: a group of `McpClient`s, each in a
 * scope of its own inside the group's, behind aggregated views and calls
 * routed by group name. Every component keeps its server: tools and prompts
 * are named by the group's name hook, resources keep their URIs (the same URI
 * from two servers is listed twice, and calls on it name their server).
 *
 * ```ts
 * const program = Effect.gen(function*() {
 *   const group = yield* McpGroup.McpGroup
 *   yield* Console.log((yield* group.tools).map((tool) => `${tool.server}: ${tool.name}`))
 *   return yield* group.callTool("files__read_file", { path: "README.md" })
 * }).pipe(Effect.provide(NodeMcpGroup.layer({
 *   servers: { files: McpGroup.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."]) },
 *   nameHook: McpGroup.prefixed()
 * })))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type {
  PromptEntry,
  ResourceEntry,
  ResourceOptions,
  ResourceTemplateEntry,
  ServerNotification,
  ServerStatus,
  ToolEntry,
  Views
} from "./internal/group/models.ts"
import type { ServerParams } from "./internal/group/params.ts"
import type * as McpClient from "./McpClient.ts"
import type * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"
import type * as McpTask from "./McpTask.ts"
import type { McpTransport } from "./McpTransport.ts"

// The group itself (`internal/group/group.ts`, with the client) and the
// in-memory transport load when a group or an in-memory connection is made,
// not with this module: a program that imports the barrel and runs no group
// loads only this module and the parameters' constructors.
const loadInMemory = Effect.promise(() => import("./internal/group/inMemory.ts"))

// -----------------------------------------------------------------------------
// Server parameters: `StdioParams` ... `InMemoryParams`, `ServerParams`, and
// their constructors `stdio`, `http`, `sse`, `websocket`, `inMemory`
// -----------------------------------------------------------------------------

export * from "./internal/group/params.ts"

// -----------------------------------------------------------------------------
// Connector
// -----------------------------------------------------------------------------

/**
 * Turns server parameters into a client transport layer. The group builds
 * the layer once per connection, in that connection's scope. `server` is the
 * server's name in the group (for logs, stderr prefixes, ...). In-memory
 * servers never reach the connector.
 *
 * @category services
 * @since 0.1.0
 */
export class Connector extends Context.Service<Connector, {
  readonly transport: (params: ServerParams, server: string) => Layer.Layer<McpTransport, McpError.McpError>
}>()("@effect-mcp/core/McpGroup/Connector") {}

/**
 * The transport of an in-memory server: its layer built in the transport's
 * scope, one session served over an in-memory link.
 *
 * @category connectors
 * @since 0.1.0
 */
export const transportInMemory = (
  server: Layer.Layer<McpServer.McpServer, unknown>
): Layer.Layer<McpTransport, McpError.McpError> =>
  Layer.unwrap(Effect.map(loadInMemory, (InMemory) => InMemory.transport(server)))

/**
 * A connector for groups of in-memory servers only: any other kind of server
 * fails to connect with a `TransportError`.
 *
 * @category connectors
 * @since 0.1.0
 */
export const layerConnectorInMemory: Layer.Layer<Connector> = Layer.effect(
  Connector,
  Effect.map(loadInMemory, (InMemory) => InMemory.connector)
)

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

/**
 * The kinds of components a group aggregates.
 *
 * @category models
 * @since 0.1.0
 */
export type ComponentKind = "tool" | "prompt" | "resource" | "resourceTemplate"

/**
 * The kinds of components a {@link NameHook} names. Resources and templates
 * are never renamed: they keep their URIs, and the group tells the servers
 * offering one URI apart by their names.
 *
 * @category models
 * @since 0.2.0
 */
export type NamedKind = Extract<ComponentKind, "tool" | "prompt">

/**
 * Names a server's tool or prompt in the group: `name` is the server's own,
 * `server` the server's name in the group. The group routes calls by the
 * returned name and sends the server its own.
 *
 * @category models
 * @since 0.1.0
 */
export type NameHook = (
  name: string,
  serverInfo: McpSchema.Implementation,
  server: string,
  kind: NamedKind
) => string

/**
 * A name hook that prefixes names with the server's name and a separator
 * (default `"__"`), for the kinds given (default tools and prompts).
 *
 * @category constructors
 * @since 0.1.0
 */
export const prefixed = (options?: {
  readonly separator?: string | undefined
  readonly kinds?: ReadonlyArray<NamedKind> | undefined
}): NameHook => {
  const separator = options?.separator ?? "__"
  const kinds = new Set<NamedKind>(options?.kinds ?? ["tool", "prompt"])
  return (name, _serverInfo, server, kind) => kinds.has(kind) ? `${server}${separator}${name}` : name
}

/**
 * The client options of a group's servers: those of `McpClient.Options`,
 * with `clientInfo` optional (default `effect-mcp-group`). Cached lists
 * always refresh on `list_changed` (the views depend on it), whatever
 * `autoRefresh` says.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClientOptions extends Omit<McpClient.Options, "clientInfo"> {
  readonly clientInfo?: McpSchema.Implementation | undefined
}

/**
 * How the group checks that a server still answers. Every `interval`, a
 * server that sent nothing during the last one is pinged (`ping`; a
 * 2026-07-28 server has no `ping`, so it is asked `server/discover`). An
 * answer, even an error, means it is alive; a ping unanswered after
 * `timeout` is missed, and `maxMissed` misses in a row take the server down
 * (after about `maxMissed × (interval + timeout)` of silence): its calls
 * fail at once with a `ServerUnavailableError`, its connection is closed (a
 * stdio server's process tree is killed) and it is reconnected on the
 * `reconnect` schedule. A ping that fails for want of a connection takes it
 * down at once. Besides the schedule, a server is checked at once when its
 * HTTP GET stream ends or a call fails for want of a connection (also with
 * `liveness: false`, which only turns the periodic pings off).
 *
 * @category models
 * @since 0.2.0
 */
export interface Liveness {
  /** How long a server may stay silent before it is pinged, and the time between pings. Default 30 s. */
  readonly interval?: Duration.Input | undefined
  /** How long a ping may take. Default 10 s. */
  readonly timeout?: Duration.Input | undefined
  /** How many pings in a row may go unanswered before the server is down. Default 2. */
  readonly maxMissed?: number | undefined
}

/**
 * Every 30 s of silence, a ping that may take 10 s; 2 missed in a row take
 * the server down.
 *
 * @category constructors
 * @since 0.2.0
 */
export const defaultLiveness: {
  readonly interval: Duration.Duration
  readonly timeout: Duration.Duration
  readonly maxMissed: number
} = { interval: Duration.seconds(30), timeout: Duration.seconds(10), maxMissed: 2 }

/**
 * A server of the static form: its parameters, and optionally client options
 * of its own, laid over the group's (and over the `era` of its parameters),
 * and liveness settings of its own.
 *
 * @category models
 * @since 0.1.0
 */
export type ServerConfig = ServerParams | {
  readonly params: ServerParams
  readonly client?: ClientOptions | undefined
  /** Laid over the group's `liveness`; `false`: no periodic pings of this server. */
  readonly liveness?: Liveness | false | undefined
}

/**
 * Options of `connect`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ConnectOptions {
  /** Laid over the group's client options, for this server. */
  readonly client?: ClientOptions | undefined
  /** Laid over the group's `liveness`; `false`: no periodic pings of this server. */
  readonly liveness?: Liveness | false | undefined
}

/**
 * How a group runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The servers connected (concurrently) when the group is made, by name. */
  readonly servers?: Readonly<Record<string, ServerConfig>> | undefined
  /**
   * Names tools and prompts in the group. Default: their own names, and a
   * name two servers offer fails the second one's connection with a
   * `NameCollisionError` naming both; {@link prefixed} namespaces them.
   * Resources and templates keep their URIs and never collide.
   */
  readonly nameHook?: NameHook | undefined
  /**
   * The delays between reconnection attempts of a server that went down
   * (each attempt is a full connection: transport, handshake, listing); the
   * first attempt comes after the first delay. When the schedule ends, the
   * server stays down. `false` never reconnects. Default
   * {@link defaultReconnect}.
   */
  readonly reconnect?: Schedule.Schedule<unknown, McpError.McpError> | false | undefined
  /**
   * Client options for every server, or a function of the server's name.
   * A server's `era` (in its parameters) and its own options are laid over
   * them.
   */
  readonly client?: ClientOptions | ((server: string) => ClientOptions) | undefined
  /**
   * What a server of `servers` that fails to connect does to the group:
   * `"fail"` (default) fails the whole group (every server connected so far
   * is closed); `"down"` keeps it in the group, down with its error, and
   * retries it on the `reconnect` schedule.
   */
  readonly startupFailure?: "fail" | "down" | undefined
  /**
   * How the group checks that its servers still answer (see
   * {@link Liveness}; default {@link defaultLiveness}); `false`: no periodic
   * pings. A server's own settings are laid over these.
   */
  readonly liveness?: Liveness | false | undefined
}

/**
 * Exponential from 1 s, doubling, at most 30 s between attempts, 10 attempts.
 *
 * @category constructors
 * @since 0.1.0
 */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
  Schedule.upTo({ times: 10 })
)

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

export type * from "./internal/group/models.ts"

/**
 * A live group.
 *
 * @category models
 * @since 0.1.0
 */
export interface Group {
  /**
   * Connects a server and adds its components, atomically: on failure
   * (connection, handshake, listing, collision) nothing is added and the
   * server's scope is closed. A name already in the group fails with a
   * `NameCollisionError` of kind `"server"`.
   */
  readonly connect: (
    name: string,
    params: ServerParams,
    options?: ConnectOptions
  ) => Effect.Effect<void, McpError.McpError>
  /**
   * Removes a server's components and closes its scope (its process or
   * connection ends before this returns). An unknown name fails with a
   * `NotFoundError`.
   */
  readonly disconnect: (name: string) => Effect.Effect<void, McpError.McpError>
  /** Every server, in order of connection (those still connecting last). */
  readonly servers: Effect.Effect<ReadonlyArray<ServerStatus>>
  /** `servers` now, then every change of status. */
  readonly serverChanges: Stream.Stream<ReadonlyArray<ServerStatus>>
  readonly tools: Effect.Effect<ReadonlyArray<ToolEntry>>
  readonly resources: Effect.Effect<ReadonlyArray<ResourceEntry>>
  readonly resourceTemplates: Effect.Effect<ReadonlyArray<ResourceTemplateEntry>>
  readonly prompts: Effect.Effect<ReadonlyArray<PromptEntry>>
  /** The four views at once. */
  readonly views: Effect.Effect<Views>
  /** The views now, then every new set of views. */
  readonly changes: Stream.Stream<Views>
  /**
   * Calls a tool by group name on its server (see `McpClient.callTool`). A
   * tool of a server that is down, or that goes away during the call, fails
   * with a `ServerUnavailableError`; an unknown one with a `NotFoundError`.
   */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /**
   * Calls a tool by group name as a task (see `McpClient.callToolTask`); the
   * handle's steps go to the server's current connection. A task of a known
   * id: `client(server)` then `task(taskId)`.
   */
  readonly callToolTask: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpTask.CallOptions
  ) => Effect.Effect<McpTask.Task, McpError.McpError>
  /**
   * Reads a resource on `options.server`, else on the server that lists its
   * URI, else on the server whose templates match it, else on the only
   * server that declares resources, if there is just one. A URI that several
   * servers list (or, listed by none, whose templates several servers have)
   * fails with an `AmbiguousError` naming them.
   */
  readonly readResource: (
    uri: string,
    options?: ResourceOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  /**
   * Subscribes to a resource on its server (routed like `readResource`). The
   * subscription is renewed on the server's new connections, until
   * `unsubscribeResource`.
   */
  readonly subscribeResource: (uri: string, options?: ResourceOptions) => Effect.Effect<void, McpError.McpError>
  /** Ends a subscription of `subscribeResource` (routed like it). */
  readonly unsubscribeResource: (uri: string, options?: ResourceOptions) => Effect.Effect<void, McpError.McpError>
  /**
   * `McpClient.watchResource` on the resource's server (routed like
   * `readResource`), for as long as the stream runs. It follows the server
   * across reconnections: once it is back, the watch is renewed on the new
   * connection and one update of the URI is emitted (it may have changed
   * meanwhile). The stream ends when the server leaves the group and fails
   * with a `ServerUnavailableError` when reconnection gives up.
   */
  readonly watchResource: (
    uri: string,
    options?: ResourceOptions
  ) => Stream.Stream<McpSchema.ResourceUpdatedNotificationParams, McpError.McpError>
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>
  /**
   * Completes an argument of a prompt (group name) or resource template (URI
   * template; one that several servers have needs `options.server`).
   */
  readonly complete: (
    ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> | undefined },
    options?: ResourceOptions
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  /**
   * The client of an up server, for everything else (a server that is not up
   * fails with a `ServerUnavailableError`). It follows the server across
   * reconnections: each call goes to its current connection, and fails at
   * once with a `ServerUnavailableError` while it is down (or once it was
   * disconnected). Its values (`serverInfo`, `era`, `session`, ...) are those
   * of the current connection, or of the last one while it is down; its
   * cached lists' `changes`, `watchResource` and notifications go on across
   * connections; the roots, the logging level and the subscriptions set
   * through it are carried to new connections.
   */
  readonly client: (server: string) => Effect.Effect<McpClient.Client, McpError.McpError>
  /**
   * Opens a session of its own with a server of the group, in the current
   * scope: a new connection (a new process, for a stdio server) made with the
   * server's parameters, client options and settled era, with `options` laid
   * over them. Its notifications and server→client requests are its own (its
   * handlers answer them); it takes no part in the views, liveness or
   * reconnection; closing the scope closes it. For requests that must be told
   * apart from the group's (a gateway's calls that the server may ask
   * questions of). An unknown server fails with a `NotFoundError`.
   */
  readonly openSession: (
    server: string,
    options?: ClientOptions
  ) => Effect.Effect<McpClient.Client, McpError.McpError, Scope.Scope>
  /** Every notification of every server, from the moment the stream runs. */
  readonly notifications: Stream.Stream<ServerNotification>
  /** Subscribes now, in the current scope: every notification from now on. */
  readonly subscribe: Effect.Effect<Stream.Stream<ServerNotification>, never, Scope.Scope>
}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * A live group of MCP servers.
 *
 * @category services
 * @since 0.1.0
 */
export class McpGroup extends Context.Service<McpGroup, Group>()("@effect-mcp/core/McpGroup") {}

/**
 * Makes a group in the current scope and connects `servers` concurrently
 * (their components are added in the order given).
 *
 * Closing the scope closes every server at once, so it takes as long as the
 * slowest server (a stdio server that ignores the end of its stdin and
 * SIGTERM: its `closeTimeout` + `termTimeout`), not the sum; the order in
 * which servers finish closing is not defined. What is ordered: before any
 * server closes, the group stops taking servers (`connect` fails with a
 * `ClosedError`) and stops supervising them (none is reconnected); the
 * group's own resources (the `notifications` hub) close after every server;
 * a layer built on the group (a gateway, say) closes before it, as layers
 * do.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = Effect.fn("McpGroup.make")(function*(
  options?: Options
): Effect.fn.Return<Group, McpError.McpError, Connector | Scope.Scope> {
  const connector = yield* Connector
  const Internal = yield* Effect.promise(() => import("./internal/group/group.ts"))
  return yield* Internal.make(options ?? {}, connector)
})

/**
 * The group as a scoped layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<McpGroup, McpError.McpError, Connector> =>
  Layer.effect(McpGroup, make(options))
