/**
 * `McpGroup` on Node: the connector that turns server parameters into the
 * Node client transports (signing in to protected HTTP servers with OAuth if
 * asked), the group layer with it and the JSON Schema validator, and the
 * reading of an `mcp.json` file.
 *
 * ```ts
 * const main = Effect.gen(function*() {
 *   const servers = yield* NodeMcpGroup.loadConfig("mcp.json")
 *   const group = yield* McpGroup.make({ servers, nameHook: McpGroup.prefixed() })
 *   yield* Console.log((yield* group.tools).map((entry) => entry.name).join("\n"))
 * }).pipe(Effect.scoped, Effect.provide(NodeMcpGroup.layerConnector()))
 * ```
 *
 * @since 0.1.0
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpConfig from "@effect-mcp/core/McpConfig"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpGroup from "@effect-mcp/core/McpGroup"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import { McpTransport as McpTransportService } from "@effect-mcp/core/McpTransport"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as NodeMcpAuthorizer from "./NodeMcpAuthorizer.ts"
import * as NodeMcpAuthStore from "./NodeMcpAuthStore.ts"
import * as NodeMcpHttpClient from "./NodeMcpHttpClient.ts"
import * as NodeMcpOAuth from "./NodeMcpOAuth.ts"
import * as NodeMcpStdio from "./NodeMcpStdio.ts"
import * as NodeMcpWebSocket from "./NodeMcpWebSocket.ts"

/**
 * How the connector runs stdio servers.
 *
 * @category models
 * @since 0.1.0
 */
export interface ConnectorOptions {
  /** What becomes of the children's stderr (see `NodeMcpStdio.StderrMode`). Default `"forward"`. */
  readonly stderr?: NodeMcpStdio.StderrMode | undefined
  /** Receives each child's stderr, with the server's name (modes `"forward"` and `"capture"`). */
  readonly onStderr?: ((server: string, text: string) => Effect.Effect<void>) | undefined
  /**
   * The delays of the children's shutdown. A group closes its servers at
   * once, so closing it takes about the longest of their shutdowns (at most
   * `closeTimeout` + `termTimeout` + `killTimeout`), however many servers
   * ignore the end of their stdin.
   */
  readonly shutdown?: NodeMcpStdio.ShutdownOptions | undefined
  /** OAuth for HTTP servers (see {@link AuthOptions}). Default: none (only static headers). */
  readonly auth?: AuthOptions | undefined
}

/**
 * How the connector signs in to protected HTTP servers (Streamable HTTP and
 * HTTP+SSE) when they ask for it (`NodeMcpOAuth`): the first request a server
 * refuses runs the authorization code flow in the user's browser (by default
 * `NodeMcpAuthorizer.makeLoopback`, one listener per callback port for the
 * whole group), the tokens are kept in the store (by default the file of
 * `NodeMcpAuthStore`) and refreshed silently, and later runs reuse them. A
 * server's `oauth` settings (`McpGroup.OAuthParams`) name a pre-registered
 * client, the scopes, a callback port; `oauth: false` or a static
 * `Authorization` header turns OAuth off for it.
 *
 * @category models
 * @since 0.1.0
 */
export interface AuthOptions {
  /** Where tokens and client registrations are kept. Default `NodeMcpAuthStore.make()` (the user's file). */
  readonly store?: McpAuth.McpAuthStore["Service"] | undefined
  /**
   * The user-facing step, for every server. Default: a loopback authorizer
   * (`NodeMcpAuthorizer.makeLoopback` with `loopback`) per callback port,
   * opened at the first HTTP connection that needs it and closed with the
   * connector.
   */
  readonly authorizer?: McpAuth.McpAuthorizer["Service"] | undefined
  /** Options of the default loopback authorizers (the port comes from each server's `callbackPort`, default `0`). */
  readonly loopback?: Omit<NodeMcpAuthorizer.LoopbackOptions, "port"> | undefined
  /** How the client describes itself to authorization servers (dynamic registration). */
  readonly clientMetadata?: NodeMcpOAuth.Options["clientMetadata"] | undefined
}

/**
 * The OAuth side of a connector: its store and its authorizers (by callback
 * port), made once per connector.
 *
 * @category models
 * @since 0.1.0
 */
export interface AuthContext {
  readonly options: AuthOptions
  readonly store: McpAuth.McpAuthStore["Service"]
  readonly authorizer: (port: number) => Effect.Effect<McpAuth.McpAuthorizer["Service"], McpError.McpError>
}

/**
 * Makes the {@link AuthContext} of a connector: the loopback listeners it
 * opens live as long as the current scope.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeAuthContext: (options: AuthOptions) => Effect.Effect<AuthContext, never, Scope.Scope> = Effect.fn(
  "NodeMcpGroup.makeAuthContext"
)(function*(options: AuthOptions) {
  const scope = yield* Effect.scope
  const store = options.store ?? (yield* NodeMcpAuthStore.make())
  const fixed = options.authorizer
  const authorizers = new Map<number, McpAuth.McpAuthorizer["Service"]>()
  const lock = yield* Semaphore.make(1)
  const authorizer = (port: number): Effect.Effect<McpAuth.McpAuthorizer["Service"], McpError.McpError> =>
    fixed !== undefined ? Effect.succeed(fixed) : lock.withPermit(Effect.suspend(() => {
      const known = authorizers.get(port)
      if (known !== undefined) return Effect.succeed(known)
      return NodeMcpAuthorizer.makeLoopback({ ...options.loopback, port }).pipe(
        Scope.provide(scope),
        Effect.tap((made) => Effect.sync(() => void authorizers.set(port, made)))
      )
    }))
  return { options, store, authorizer }
})

/** `true` when the params carry a static `Authorization` header. */
const hasAuthorizationHeader = (headers: Readonly<Record<string, string>> | undefined): boolean =>
  headers !== undefined && Object.keys(headers).some((name) => name.toLowerCase() === "authorization")

/**
 * The OAuth client auth of an HTTP server, or `undefined` when it does not
 * sign in (no auth context, `oauth: false`, or a static `Authorization`
 * header).
 *
 * @category constructors
 * @since 0.1.0
 */
export const clientAuth = (
  params: McpGroup.StreamableHttpParams | McpGroup.SseParams,
  auth: AuthContext | undefined
): Effect.Effect<McpAuth.ClientAuth | undefined, McpError.McpError, Scope.Scope> => {
  const oauth = params.oauth
  if (auth === undefined || oauth === false || hasAuthorizationHeader(params.headers)) return Effect.succeed(undefined)
  return Effect.gen(function*() {
    const authorizer = yield* auth.authorizer(oauth?.callbackPort ?? 0)
    const clientMetadata = auth.options.clientMetadata
    return yield* NodeMcpOAuth.make({
      serverUrl: params.url,
      ...(clientMetadata === undefined ? {} : { clientMetadata }),
      ...(oauth?.clientId === undefined
        ? {}
        : {
          client: {
            clientId: oauth.clientId,
            ...(oauth.clientSecret === undefined ? {} : { clientSecret: oauth.clientSecret })
          }
        }),
      ...(oauth?.scope === undefined ? {} : { scope: oauth.scope }),
      ...(oauth?.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: oauth.clientMetadataUrl })
    }).pipe(
      Effect.provideService(McpAuth.McpAuthStore, auth.store),
      Effect.provideService(McpAuth.McpAuthorizer, authorizer)
    )
  })
}

/**
 * The connector's transport for one server.
 *
 * @category constructors
 * @since 0.1.0
 */
export const transport = (
  params: McpGroup.ServerParams,
  server: string,
  options?: ConnectorOptions,
  auth?: AuthContext
): Layer.Layer<McpTransport.McpTransport, McpError.McpError> => {
  switch (params._tag) {
    case "Stdio": {
      const onStderr = options?.onStderr
      return NodeMcpStdio.layerClient({
        command: params.command,
        args: params.args,
        env: params.env,
        inheritEnv: params.inheritEnv,
        cwd: params.cwd,
        stderr: options?.stderr,
        shutdown: options?.shutdown,
        onStderr: onStderr === undefined ? undefined : (text) => onStderr(server, text)
      })
    }
    case "StreamableHttp":
      return Layer.unwrap(Effect.map(
        clientAuth(params, auth),
        (clientAuth) => NodeMcpHttpClient.layer({ url: params.url, headers: params.headers, auth: clientAuth })
      ))
    case "Sse":
      return Layer.unwrap(Effect.map(
        clientAuth(params, auth),
        (clientAuth) => NodeMcpHttpClient.layerSse({ url: params.url, headers: params.headers, auth: clientAuth })
      ))
    case "WebSocket":
      return NodeMcpWebSocket.layerClient({ url: params.url, headers: params.headers })
    case "InMemory":
      return McpGroup.transportInMemory(params.server)
    case "Unresolved":
      return Layer.effect(McpTransportService, Effect.fail(params.error))
  }
}

/**
 * The Node connector: stdio, Streamable HTTP, HTTP+SSE, WebSocket and
 * in-memory servers.
 *
 * | params | transport |
 * | --- | --- |
 * | `Stdio` | `NodeMcpStdio.layerClient` (the child's process tree ends with its connection) |
 * | `StreamableHttp` | `NodeMcpHttpClient.layer` (falls back to HTTP+SSE) |
 * | `Sse` | `NodeMcpHttpClient.layerSse` |
 * | `WebSocket` | `NodeMcpWebSocket.layerClient` |
 * | `InMemory` | `McpGroup.transportInMemory` |
 * | `Unresolved` | fails with its `error` (a config entry naming an unset variable) |
 *
 * With `auth`, HTTP servers sign in with OAuth when they ask for it (see
 * {@link AuthOptions}).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerConnector = (options: ConnectorOptions = {}): Layer.Layer<McpGroup.Connector> =>
  options.auth === undefined
    ? Layer.succeed(McpGroup.Connector, { transport: (params, server) => transport(params, server, options) })
    : Layer.effect(
      McpGroup.Connector,
      Effect.map(makeAuthContext(options.auth), (auth) => ({
        transport: (params: McpGroup.ServerParams, server: string) => transport(params, server, options, auth)
      }))
    )

/**
 * A group on Node: `McpGroup.layer` with the Node connector and the
 * `@cfworker/json-schema` validator.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options?: McpGroup.Options & { readonly connector?: ConnectorOptions | undefined }
): Layer.Layer<McpGroup.McpGroup, McpError.McpError> =>
  McpGroup.layer(options).pipe(
    Layer.provide(layerConnector(options?.connector))
  )

/**
 * Reads and decodes an `mcp.json` file (see `McpConfig`). A file that cannot
 * be read, is not JSON or is not a valid configuration fails with a
 * `ConfigError` naming the file (and the server and field). `${VAR}` and
 * `${VAR:-default}` are read from this process's environment; a server
 * naming an unset variable is unresolved (`McpGroup.UnresolvedParams`): it
 * fails when connected, and the others connect as usual.
 *
 * @category config
 * @since 0.1.0
 */
export const loadConfig: (
  path: string
) => Effect.Effect<Record<string, McpGroup.ServerParams>, McpError.McpError> = Effect.fn("NodeMcpGroup.loadConfig")(
  function*(path: string) {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) => McpError.config(path, `cannot be read: ${error.message}`))
    )
    return yield* McpConfig.parse(text, path, { env: process.env })
  },
  // the file system is loaded when a file is read, not with this module
  (effect) =>
    Effect.flatMap(
      Effect.promise(() => import("@effect/platform-node/NodeFileSystem")),
      (NodeFileSystem) => Effect.provide(effect, NodeFileSystem.layer)
    )
)

/**
 * A group of the servers of an `mcp.json` file.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerConfig = (
  path: string,
  options?: Omit<McpGroup.Options, "servers"> & { readonly connector?: ConnectorOptions | undefined }
): Layer.Layer<McpGroup.McpGroup, McpError.McpError> =>
  Layer.unwrap(Effect.map(loadConfig(path), (servers) => layer({ ...options, servers })))
