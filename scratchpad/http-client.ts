/**
 * A client over Streamable HTTP (falls back to the legacy HTTP+SSE transport
 * when the server is a 2024-11-05 one).
 *
 *   node --conditions=development scratchpad/http-client.ts http://127.0.0.1:3000/mcp
 */
import { McpClient } from "@effect-mcp/core"
import { NodeMcpHttpClient, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Schema } from "effect"

const url = process.argv[2] ?? "http://127.0.0.1:3000/mcp"

const Client = McpClient.layer({ clientInfo: { name: "http-client", version: "1.0.0" } }).pipe(
  Layer.provide(NodeMcpHttpClient.layer({ url }))
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    yield* Console.log(`connected to ${client.serverInfo.name} (${client.protocolVersion})`)
    const { sum } = yield* client.callToolTyped("add", { a: 20, b: 22 }, Schema.Struct({ sum: Schema.Finite }))
    yield* Console.log(`sum: ${sum}`)
  }).pipe(Effect.provide(Client))
)
