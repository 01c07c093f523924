/**
 * Many MCP servers as one scoped service: a group of `McpClient`s, each in a
 * scope of its own inside the group's, behind aggregated views and routed
 * calls.
 *
 * - **Servers** are {@link ServerParams}: stdio, Streamable HTTP, legacy
 *   HTTP+SSE, WebSocket, or an in-memory `McpServer` layer. The transports
 *   come from the {@link Connector} in context (`NodeMcpGroup.layerConnector()`
 *   on Node); in-memory servers are served here. The static form
 *   ({@link layer} with `servers`) connects them concurrently; at run time,
 *   `connect` and `disconnect` add and remove servers on the live group.
 * - **Views.** `tools`, `resources`, `resourceTemplates` and `prompts` list
 *   every server's components, in order of connection, each entry naming its
 *   server and its group name (after the {@link NameHook}). `changes` streams
 *   every new set of views. `callTool`, `getPrompt`, `readResource` and
 *   `complete` find the server by group name (resources by URI, exact or
 *   through a template) and call it with the server's own name.
 * - **Collisions.** Two servers offering a name fail the second one's
 *   connection with a `NameCollisionError` naming both, unless a `nameHook`
 *   namespaces them ({@link prefixed}). Aggregation is atomic: a server whose
 *   components collide or whose listing fails adds nothing and leaves the
 *   group as it was; a `list_changed` refresh that would collide is refused
 *   the same way (the server keeps its previous components, with the error
 *   in its status) until a disconnection or failure frees the name.
 * - **Failures.** A server whose session ends (its process exits, its
 *   connection drops, keep-alive fails) is marked down and its components are
 *   withdrawn; calls to them fail with a `ServerUnavailableError` naming it,
 *   and it is reconnected on the `reconnect` schedule. The others are not
 *   touched. Over HTTP a session outlives its server, so a call that fails
 *   for want of a connection makes the group ping the server, and a ping
 *   that fails the same way counts as the server going down (give
 *   `client.keepAlive` to notice it without a call).
 * - **Scopes.** `disconnect` closes exactly that server's scope (its process
 *   or connection ends). Closing the group's scope closes every server, one
 *   at a time, in reverse order of connection.
 *
 * ```ts
 * const Group = NodeMcpGroup.layer({
 *   servers: {
 *     files: McpGroup.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."]),
 *     search: McpGroup.http("http://127.0.0.1:3000/mcp")
 *   },
 *   nameHook: McpGroup.prefixed()
 * })
 * const program = Effect.gen(function*() {
 *   const group = yield* McpGroup.McpGroup
 *   for (const { server, name } of yield* group.tools) yield* Console.log(`${server}: ${name}`)
 *   yield* group.callTool("files__read_file", { path: "README.md" })
 * }).pipe(Effect.provide(Group))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Internal from "./internal/group/group.ts"
import * as InMemory from "./internal/group/inMemory.ts"
import type { JsonSchemaValidator } from "./JsonSchemaValidator.ts"
import type * as McpClient from "./McpClient.ts"
import * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"
import { McpTransport } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Server parameters
// -----------------------------------------------------------------------------

/**
 * A server spawned as a child process, spoken to over its stdin and stdout.
 *
 * @category models
 * @since 0.1.0
 */
export interface StdioParams {
  readonly _tag: "Stdio"
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Laid over this process's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
}

/**
 * A Streamable HTTP server (the client falls back to HTTP+SSE for a legacy one).
 *
 * @category models
 * @since 0.1.0
 */
export interface StreamableHttpParams {
  readonly _tag: "StreamableHttp"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** OAuth settings for a protected server (`false`: never sign in). See {@link OAuthParams}. */
  readonly oauth?: OAuthParams | false | undefined
}

/**
 * How a connector that supports OAuth (`NodeMcpGroup` with `auth`) signs in
 * to a protected HTTP server: all optional, the defaults are discovery and
 * dynamic registration (or a Client ID Metadata Document).
 *
 * @category models
 * @since 0.1.0
 */
export interface OAuthParams {
  /** A pre-registered client id (no dynamic registration). */
  readonly clientId?: string | undefined
  /** Its secret, for a confidential pre-registered client. */
  readonly clientSecret?: string | undefined
  /** The scopes to ask for (space separated), instead of what the server advertises. */
  readonly scope?: string | undefined
  /** The URL of a Client ID Metadata Document, used as the client id where the authorization server supports it. */
  readonly clientMetadataUrl?: string | undefined
  /** The port of the loopback redirect URI (`http://127.0.0.1:<port>/callback`), for a client registered with a fixed one. */
  readonly callbackPort?: number | undefined
}

/**
 * A HTTP+SSE (2024-11-05) server.
 *
 * @category models
 * @since 0.1.0
 */
export interface SseParams {
  readonly _tag: "Sse"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** OAuth settings for a protected server (`false`: never sign in). See {@link OAuthParams}. */
  readonly oauth?: OAuthParams | false | undefined
}

/**
 * A WebSocket server (subprotocol `mcp`).
 *
 * @category models
 * @since 0.1.0
 */
export interface WebSocketParams {
  readonly _tag: "WebSocket"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * An `McpServer` served in this process over an in-memory link. Its layer is
 * built for each connection, in the connection's scope: give
 * `Layer.succeed(McpServer.McpServer, server)` to keep one server across
 * reconnections.
 *
 * @category models
 * @since 0.1.0
 */
export interface InMemoryParams {
  readonly _tag: "InMemory"
  readonly server: Layer.Layer<McpServer.McpServer, unknown>
}

/**
 * How to reach one server.
 *
 * @category models
 * @since 0.1.0
 */
export type ServerParams = StdioParams | StreamableHttpParams | SseParams | WebSocketParams | InMemoryParams

/**
 * @category constructors
 * @since 0.1.0
 */
export const stdio = (
  command: string,
  args?: ReadonlyArray<string>,
  options?: { readonly env?: Readonly<Record<string, string>> | undefined; readonly cwd?: string | undefined }
): StdioParams => ({
  _tag: "Stdio",
  command,
  ...(args === undefined ? {} : { args }),
  ...(options?.env === undefined ? {} : { env: options.env }),
  ...(options?.cwd === undefined ? {} : { cwd: options.cwd })
})

/**
 * What `http` and `sse` take besides the URL.
 *
 * @category models
 * @since 0.1.0
 */
export interface HttpOptions {
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly oauth?: OAuthParams | false | undefined
}

const remote = <Tag extends "StreamableHttp" | "Sse" | "WebSocket">(
  _tag: Tag,
  url: string | URL,
  options: HttpOptions | undefined
) => ({
  _tag,
  url: String(url),
  ...(options?.headers === undefined ? {} : { headers: options.headers }),
  ...(options?.oauth === undefined ? {} : { oauth: options.oauth })
})

/**
 * @category constructors
 * @since 0.1.0
 */
export const http = (url: string | URL, options?: HttpOptions): StreamableHttpParams =>
  remote("StreamableHttp", url, options)

/**
 * @category constructors
 * @since 0.1.0
 */
export const sse = (url: string | URL, options?: HttpOptions): SseParams => remote("Sse", url, options)

/**
 * @category constructors
 * @since 0.1.0
 */
export const websocket = (
  url: string | URL,
  options?: { readonly headers?: Readonly<Record<string, string>> | undefined }
): WebSocketParams => remote("WebSocket", url, { headers: options?.headers })

/**
 * @category constructors
 * @since 0.1.0
 */
export const inMemory = (server: Layer.Layer<McpServer.McpServer, unknown>): InMemoryParams => ({
  _tag: "InMemory",
  server
})

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
export const transportInMemory: (
  server: Layer.Layer<McpServer.McpServer, unknown>
) => Layer.Layer<McpTransport, McpError.McpError> = InMemory.transport

/**
 * A connector for groups of in-memory servers only: any other kind of server
 * fails to connect with a `TransportError`.
 *
 * @category connectors
 * @since 0.1.0
 */
export const layerConnectorInMemory: Layer.Layer<Connector> = Layer.succeed(Connector, {
  transport: (params) =>
    params._tag === "InMemory"
      ? InMemory.transport(params.server)
      : Layer.effect(
        McpTransport,
        Effect.fail(McpError.transport(
          `no transport for ${params._tag} servers: this connector connects in-memory servers only ` +
            `(on Node, provide NodeMcpGroup.layerConnector())`
        ))
      )
})

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
 * Names a server's component in the group: `name` is the server's own (a
 * tool's or prompt's name, a resource's URI, a template's URI template),
 * `server` the server's name in the group. The group routes calls by the
 * returned name and sends the server its own. A resource template renamed
 * by the hook must stay a template whose expressions match those of the
 * original (a prefix or suffix of literal text is fine).
 *
 * @category models
 * @since 0.1.0
 */
export type NameHook = (
  name: string,
  serverInfo: McpSchema.Implementation,
  server: string,
  kind: ComponentKind
) => string

/**
 * A name hook that prefixes names with the server's name and a separator
 * (default `"__"`), for the kinds given (default tools and prompts; resources
 * and templates keep their URIs unless listed).
 *
 * @category constructors
 * @since 0.1.0
 */
export const prefixed = (options?: {
  readonly separator?: string | undefined
  readonly kinds?: ReadonlyArray<ComponentKind> | undefined
}): NameHook => {
  const separator = options?.separator ?? "__"
  const kinds = new Set<ComponentKind>(options?.kinds ?? ["tool", "prompt"])
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
 * A server of the static form: its parameters, and optionally client options
 * of its own, laid over the group's.
 *
 * @category models
 * @since 0.1.0
 */
export type ServerConfig = ServerParams | {
  readonly params: ServerParams
  readonly client?: ClientOptions | undefined
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
  /** Names components in the group. Default: their own names (collisions fail). */
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
   * Per-server options are laid over them.
   */
  readonly client?: ClientOptions | ((server: string) => ClientOptions) | undefined
  /**
   * What a server of `servers` that fails to connect does to the group:
   * `"fail"` (default) fails the whole group (every server connected so far
   * is closed); `"down"` keeps it in the group, down with its error, and
   * retries it on the `reconnect` schedule.
   */
  readonly startupFailure?: "fail" | "down" | undefined
}

/**
 * Exponential from 1 s, doubling, at most 30 s between attempts, 10 attempts.
 *
 * @category constructors
 * @since 0.1.0
 */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = Internal.defaultReconnect

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A server of the group and how it is doing. `error` is why it is down (or
 * why its last reconnection attempt failed, or why a `list_changed` refresh
 * was refused while it is up).
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerStatus {
  readonly name: string
  readonly params: ServerParams
  readonly status: "connecting" | "up" | "down"
  readonly serverInfo?: McpSchema.Implementation | undefined
  readonly error?: McpError.McpError | undefined
  /** Down, with a reconnection attempt scheduled or under way. */
  readonly reconnecting: boolean
}

/**
 * A tool of the group: `name` is its group name, `tool` the server's
 * declaration (with the server's name).
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolEntry {
  readonly server: string
  readonly name: string
  readonly tool: McpSchema.Tool
}

/**
 * A resource of the group: `name` is its group URI.
 *
 * @category models
 * @since 0.1.0
 */
export interface ResourceEntry {
  readonly server: string
  readonly name: string
  readonly resource: McpSchema.Resource
}

/**
 * A resource template of the group: `name` is its group URI template.
 *
 * @category models
 * @since 0.1.0
 */
export interface ResourceTemplateEntry {
  readonly server: string
  readonly name: string
  readonly template: McpSchema.ResourceTemplate
}

/**
 * A prompt of the group: `name` is its group name.
 *
 * @category models
 * @since 0.1.0
 */
export interface PromptEntry {
  readonly server: string
  readonly name: string
  readonly prompt: McpSchema.Prompt
}

/**
 * Every component of the group's up servers, in order of connection.
 *
 * @category models
 * @since 0.1.0
 */
export interface Views {
  readonly tools: ReadonlyArray<ToolEntry>
  readonly resources: ReadonlyArray<ResourceEntry>
  readonly resourceTemplates: ReadonlyArray<ResourceTemplateEntry>
  readonly prompts: ReadonlyArray<PromptEntry>
}

/**
 * A notification from one server of the group.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServerNotification {
  readonly server: string
  readonly notification: McpClient.Notification
}

/**
 * Options of `readResource`: a `server` skips routing by URI.
 *
 * @category models
 * @since 0.1.0
 */
export interface ReadResourceOptions extends McpClient.RequestOptions {
  readonly server?: string | undefined
}

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
  readonly connect: (name: string, params: ServerParams, options?: ConnectOptions) => Effect.Effect<void, McpError.McpError>
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
   * Reads a resource: by group URI among the listed resources, else through
   * the first template (in order of connection) that matches it, else on the
   * only server that declares resources, if there is just one.
   */
  readonly readResource: (
    uri: string,
    options?: ReadResourceOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>
  /** Completes an argument of a prompt (group name) or resource template (group URI template). */
  readonly complete: (
    ref: McpSchema.PromptReference | McpSchema.ResourceTemplateReference,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> | undefined },
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  /**
   * The client of an up server, for everything else. It is the client of the
   * server's current connection: after a reconnection, ask again.
   */
  readonly client: (server: string) => Effect.Effect<McpClient.Client, McpError.McpError>
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
 * (their components are added in the order given). Closing the scope closes
 * every server in reverse order of connection.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (
  options?: Options
) => Effect.Effect<Group, McpError.McpError, Connector | JsonSchemaValidator | Scope.Scope> = Effect.fn(
  "McpGroup.make"
)(function*(options?: Options) {
  return yield* Internal.make(options ?? {}, yield* Connector)
})

/**
 * The group as a scoped layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<McpGroup, McpError.McpError, Connector | JsonSchemaValidator> =>
  Layer.effect(McpGroup, make(options))
