/**
 * `McpGroup` on Node: the connector that turns server parameters into the
 * Node client transports, the group layer with it and the JSON Schema
 * validator, and the reading of an `mcp.json` file.
 *
 * | params | transport |
 * | --- | --- |
 * | `Stdio` | `NodeMcpStdio.layerClient` (the child's process tree ends with its connection) |
 * | `StreamableHttp` | `NodeMcpHttpClient.layer` (falls back to HTTP+SSE) |
 * | `Sse` | `NodeMcpHttpClient.layerSse` |
 * | `WebSocket` | `NodeMcpWebSocket.layerClient` |
 * | `InMemory` | `McpGroup.transportInMemory` |
 *
 * ```ts
 * const main = Effect.gen(function*() {
 *   const servers = yield* NodeMcpGroup.loadConfig("mcp.json")
 *   const group = yield* McpGroup.make({ servers, nameHook: McpGroup.prefixed() })
 *   yield* Console.log((yield* group.tools).map((entry) => entry.name).join("\n"))
 * }).pipe(Effect.scoped, Effect.provide([NodeMcpGroup.layerConnector, NodeJsonSchemaValidator.layer]))
 * ```
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as McpConfig from "@effect-mcp/core/McpConfig"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpGroup from "@effect-mcp/core/McpGroup"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as NodeJsonSchemaValidator from "./NodeJsonSchemaValidator.ts"
import * as NodeMcpHttpClient from "./NodeMcpHttpClient.ts"
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
  /** The delays of the children's shutdown. */
  readonly shutdown?: NodeMcpStdio.ShutdownOptions | undefined
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
  options?: ConnectorOptions
): Layer.Layer<McpTransport.McpTransport, McpError.McpError> => {
  switch (params._tag) {
    case "Stdio": {
      const onStderr = options?.onStderr
      return NodeMcpStdio.layerClient({
        command: params.command,
        args: params.args,
        env: params.env,
        cwd: params.cwd,
        stderr: options?.stderr,
        shutdown: options?.shutdown,
        onStderr: onStderr === undefined ? undefined : (text) => onStderr(server, text)
      })
    }
    case "StreamableHttp":
      return NodeMcpHttpClient.layer({ url: params.url, headers: params.headers })
    case "Sse":
      return NodeMcpHttpClient.layerSse({ url: params.url, headers: params.headers })
    case "WebSocket":
      return NodeMcpWebSocket.layerClient({ url: params.url, headers: params.headers })
    case "InMemory":
      return McpGroup.transportInMemory(params.server)
  }
}

/**
 * The Node connector, with options.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerConnectorWith = (options: ConnectorOptions): Layer.Layer<McpGroup.Connector> =>
  Layer.succeed(McpGroup.Connector, { transport: (params, server) => transport(params, server, options) })

/**
 * The Node connector: stdio, Streamable HTTP, HTTP+SSE, WebSocket and
 * in-memory servers.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerConnector: Layer.Layer<McpGroup.Connector> = layerConnectorWith({})

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
    Layer.provide([layerConnectorWith(options?.connector ?? {}), NodeJsonSchemaValidator.layer])
  )

/**
 * Reads and decodes an `mcp.json` file (see `McpConfig`). A file that cannot
 * be read, is not JSON or is not a valid configuration fails with a
 * `ConfigError` naming the file (and the server and field).
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
    return yield* McpConfig.parse(text, path)
  },
  Effect.provide(NodeFileSystem.layer)
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
