/**
 * `McpGateway` on Node: the servers of an `mcp.json` (or given in code)
 * served as one, over whichever server transport you put in front.
 *
 * ```ts
 * const Gateway = NodeMcpGateway.layerConfig("mcp.json")
 * NodeMcpRuntime.runMain(Layer.launch(NodeMcpHttpServer.layer({ port: 8080 }).pipe(Layer.provide(Gateway))))
 * ```
 *
 * @since 0.3.0
 */
import * as McpConfig from "@effect-mcp/core/McpConfig"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpGateway from "@effect-mcp/core/McpGateway"
import * as McpGroup from "@effect-mcp/core/McpGroup"
import * as McpServer from "@effect-mcp/core/McpServer"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as NodeMcpGroup from "./NodeMcpGroup.ts"

/**
 * The servers of a config file and what the gateway serves of each (the
 * `"tools"`, `"prompts"` and `"resources"` filters of their entries).
 *
 * @category models
 * @since 0.3.0
 */
export interface Config {
  readonly servers: Readonly<Record<string, McpGroup.ServerParams>>
  readonly upstreams: Readonly<Record<string, McpGateway.UpstreamOptions>>
}

/**
 * Reads an `mcp.json` file for a gateway: its servers (as
 * `NodeMcpGroup.loadConfig` reads them, `${VAR}` from this process's
 * environment) and their filters. Errors name the file, the server and the
 * field.
 *
 * @category config
 * @since 0.3.0
 */
export const loadConfig: (path: string) => Effect.Effect<Config, McpError.McpError> = Effect.fn(
  "NodeMcpGateway.loadConfig"
)(
  function*(path: string) {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) => McpError.config(path, `cannot be read: ${error.message}`))
    )
    const servers = yield* McpConfig.parse(text, path, { env: process.env })
    const json = yield* Effect.fromResult(Result.try({
      try: () => JSON.parse(text) as unknown,
      catch: (cause) => McpError.config(path, `not valid JSON: ${McpError.messageOf(cause)}`)
    }))
    const upstreams = yield* McpConfig.decodeFilters(json, path)
    return { servers, upstreams }
  },
  // the file system is loaded when a file is read, not with this module
  (effect) =>
    Effect.flatMap(
      Effect.promise(() => import("@effect/platform-node/NodeFileSystem")),
      (NodeFileSystem) => Effect.provide(effect, NodeFileSystem.layer)
    )
)

/**
 * How a gateway on Node runs: its servers, the gateway's own options, and
 * the group's (`nameHook` defaults to `McpGroup.prefixed()` when there is more
 * than one server, so two servers' names never collide; a server that cannot
 * connect at start is down and retried, the others served; `client` defaults
 * to `McpGateway.clientOptions`).
 *
 * @category models
 * @since 0.3.0
 */
export interface Options extends McpGateway.Options {
  readonly servers: Readonly<Record<string, McpGroup.ServerConfig>>
  readonly group?: Omit<McpGroup.Options, "servers"> | undefined
  readonly connector?: NodeMcpGroup.ConnectorOptions | undefined
}

/**
 * The gateway's `McpServer` over a group of `servers` with the Node
 * connector: serve it with `NodeMcpHttpServer.layer`, `NodeMcpStdio.runServer`, ...
 *
 * @category layers
 * @since 0.3.0
 */
export const layer = (options: Options): Layer.Layer<McpServer.McpServer, McpError.McpError> => {
  const { connector, group, servers, ...gateway } = options
  const many = Object.keys(servers).length > 1
  const groupLayer = NodeMcpGroup.layer({
    servers,
    startupFailure: "down",
    client: McpGateway.clientOptions,
    ...(many ? { nameHook: McpGroup.prefixed() } : {}),
    ...group,
    ...(connector === undefined ? {} : { connector })
  })
  // The gateway (its own sessions of legacy servers among them) and its group close at once: each
  // closes stdio servers that may take `closeTimeout` + `termTimeout` to end, and one after the
  // other would be twice that.
  return Layer.effect(
    McpServer.McpServer,
    Effect.gen(function*() {
      const both = yield* Scope.fork(yield* Effect.scope, "parallel")
      const groupContext = yield* Layer.buildWithScope(groupLayer, yield* Scope.fork(both, "sequential"))
      return yield* McpGateway.make(gateway).pipe(
        Effect.provideContext(groupContext),
        Scope.provide(yield* Scope.fork(both, "sequential"))
      )
    })
  )
}

/**
 * {@link layer} over the servers of an `mcp.json` file, their filters laid
 * under the `upstreams` given.
 *
 * @category layers
 * @since 0.3.0
 */
export const layerConfig = (
  path: string,
  options?: Omit<Options, "servers">
): Layer.Layer<McpServer.McpServer, McpError.McpError> =>
  Layer.unwrap(Effect.map(loadConfig(path), (config) => {
    const upstreams: Record<string, McpGateway.UpstreamOptions> = { ...config.upstreams }
    for (const [name, own] of Object.entries(options?.upstreams ?? {})) upstreams[name] = { ...upstreams[name], ...own }
    return layer({ ...options, servers: config.servers, upstreams })
  }))
