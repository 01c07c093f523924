/**
 * How to reach one server of a group: the parameters of each kind of server
 * and their constructors. Public through `McpGroup`, which re-exports this
 * module (`McpGroup.stdio(...)`, `McpGroup.ServerParams`, ...).
 *
 * @since 0.1.0
 */
import type * as Layer from "effect/Layer"
import type * as McpClient from "../../McpClient.ts"
import type * as McpError from "../../McpError.ts"
import type * as McpServer from "../../McpServer.ts"

/**
 * What every kind of server takes besides how to reach it.
 *
 * @category models
 * @since 0.2.0
 */
export interface CommonParams {
  /**
   * The era its client speaks (see `McpClient.Options`): `"auto"` probes with
   * `server/discover` and falls back to `initialize`, `"modern"` and
   * `"legacy"` pin it. Laid over the group's client options, under the
   * server's own (`ServerConfig.client`, `ConnectOptions.client`).
   */
  readonly era?: McpClient.Options["era"]
}

/**
 * A server spawned as a child process, spoken to over its stdin and stdout.
 *
 * @category models
 * @since 0.1.0
 */
export interface StdioParams extends CommonParams {
  readonly _tag: "Stdio"
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Laid over a small default set of this process's variables (all of them with `inheritEnv`). */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
  /** Pass this process's whole environment to the child, not the default set. Default `false`. */
  readonly inheritEnv?: boolean | undefined
}

/**
 * A Streamable HTTP server (the client falls back to HTTP+SSE for a legacy one).
 *
 * @category models
 * @since 0.1.0
 */
export interface StreamableHttpParams extends CommonParams {
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
export interface SseParams extends CommonParams {
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
export interface WebSocketParams extends CommonParams {
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
export interface InMemoryParams extends CommonParams {
  readonly _tag: "InMemory"
  readonly server: Layer.Layer<McpServer.McpServer, unknown>
}

/**
 * A server that cannot be reached as configured: `McpConfig.decode` makes
 * one for an entry naming a variable that is not set, so that the other
 * servers of the file stay usable. Connecting it fails with `error` (a
 * `ConfigError` naming the variable, the server and the field), as a server
 * that fails to start: the group's `startupFailure` applies.
 *
 * @category models
 * @since 0.2.0
 */
export interface UnresolvedParams extends CommonParams {
  readonly _tag: "Unresolved"
  readonly error: McpError.McpError
}

/**
 * How to reach one server: stdio, Streamable HTTP, legacy HTTP+SSE,
 * WebSocket, or an in-memory `McpServer` layer (or, from a config, an
 * unresolved entry: {@link UnresolvedParams}). The transports come from the
 * `McpGroup.Connector` in context (`NodeMcpGroup.layerConnector()` on Node);
 * the group serves in-memory servers itself, and fails unresolved ones.
 *
 * @category models
 * @since 0.1.0
 */
export type ServerParams =
  | StdioParams
  | StreamableHttpParams
  | SseParams
  | WebSocketParams
  | InMemoryParams
  | UnresolvedParams

const eraOf = (options: CommonParams | undefined): CommonParams =>
  options?.era === undefined ? {} : { era: options.era }

/**
 * A server started as a child process, `command` with `args`, that speaks
 * MCP over its stdin and stdout.
 *
 * @category constructors
 * @since 0.1.0
 */
export const stdio = (
  command: string,
  args?: ReadonlyArray<string>,
  options?: CommonParams & {
    readonly env?: Readonly<Record<string, string>> | undefined
    readonly cwd?: string | undefined
    readonly inheritEnv?: boolean | undefined
  }
): StdioParams => ({
  _tag: "Stdio",
  command,
  ...(args === undefined ? {} : { args }),
  ...(options?.env === undefined ? {} : { env: options.env }),
  ...(options?.cwd === undefined ? {} : { cwd: options.cwd }),
  ...(options?.inheritEnv === undefined ? {} : { inheritEnv: options.inheritEnv }),
  ...eraOf(options)
})

/**
 * What `http` and `sse` take besides the URL.
 *
 * @category models
 * @since 0.1.0
 */
export interface HttpOptions extends CommonParams {
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
  ...(options?.oauth === undefined ? {} : { oauth: options.oauth }),
  ...eraOf(options)
})

/**
 * A server reached over Streamable HTTP at `url`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const http = (url: string | URL, options?: HttpOptions): StreamableHttpParams =>
  remote("StreamableHttp", url, options)

/**
 * A server reached over the legacy HTTP+SSE transport at `url`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const sse = (url: string | URL, options?: HttpOptions): SseParams => remote("Sse", url, options)

/**
 * A server reached over a WebSocket at `url`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const websocket = (
  url: string | URL,
  options?: CommonParams & { readonly headers?: Readonly<Record<string, string>> | undefined }
): WebSocketParams => remote("WebSocket", url, { headers: options?.headers, era: options?.era })

/**
 * A server run in this process from its layer, connected in memory.
 *
 * @category constructors
 * @since 0.1.0
 */
export const inMemory = (
  server: Layer.Layer<McpServer.McpServer, unknown>,
  options?: CommonParams
): InMemoryParams => ({
  _tag: "InMemory",
  server,
  ...eraOf(options)
})
