/**
 * The clients the cluster tests put in front of a cluster: the official v1
 * SDK client (a 2025-11-25 session) and ours in the 2026-07-28 era, each
 * answering form elicitations with `<prefix> <n>` (the n-th question it was
 * asked) and recording the questions' messages in `asked`.
 */
import { McpClient } from "@effect-mcp/core"
import * as McpHttpClient from "@effect-mcp/core/McpHttpClient"
import * as NodeJsonSchemaValidator from "@effect-mcp/platform-node/NodeJsonSchemaValidator"
import * as NodeMcpHttpClient from "@effect-mcp/platform-node/NodeMcpHttpClient"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Effect, Layer } from "effect"
import type { HttpClient } from "effect/http"

/** The official v1 SDK client connected to `url` for the scope (closed with it). */
export const official = (url: string, asked: Array<string> = [], prefix = "legacy") =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-v1", version: "1.32.2" }, {
        capabilities: { elicitation: { form: {} } }
      })
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message)
        return { action: "accept", content: { answer: `${prefix} ${asked.length}` } }
      })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/**
 * Our client in the 2026-07-28 era on `url` for the scope, over `httpClient`
 * (default NodeMcpHttpClient's).
 */
export const modern = (
  url: string,
  asked: Array<string> = [],
  options: {
    readonly prefix?: string
    readonly name?: string
    readonly httpClient?: Layer.Layer<HttpClient.HttpClient>
  } = {}
) =>
  Layer.build(
    McpClient.layer({
      clientInfo: { name: options.name ?? "modern-front", version: "1" },
      era: "modern",
      elicitation: {
        form: (params) =>
          Effect.sync(() => {
            asked.push(params.message)
            return { action: "accept" as const, content: { answer: `${options.prefix ?? "answer"} ${asked.length}` } }
          })
      }
    }).pipe(Layer.provide([
      McpHttpClient.layer({ url }).pipe(Layer.provide(options.httpClient ?? NodeMcpHttpClient.layerHttpClient)),
      NodeJsonSchemaValidator.layer
    ]))
  ).pipe(Effect.map(Context.get(McpClient.McpClient)))
