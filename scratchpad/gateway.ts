/**
 * A gateway: two servers served as one over Streamable HTTP on 127.0.0.1.
 *
 * - `example`: the example server (scratchpad/example-server.ts) over stdio;
 * - `notes`: a server that asks before it deletes, pinned to the legacy era
 *   (its question is a real request to its client).
 *
 * A 2026-07-28 client lists the tools under their gateway names and calls
 * one of each; the legacy server's question reaches it as an input-required
 * round, answered by its elicitation handler, while the gateway holds the
 * call behind: it runs once.
 *
 *   npm run example:gateway
 */
import { McpClient, McpContent, McpGroup, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpGateway, NodeMcpHttpClient, NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Schema } from "effect"
import { fileURLToPath } from "node:url"

let deletions = 0

const deleteNote = McpTool.make("delete_note", {
  description: "Deletes a note, once the user confirms",
  input: Schema.Struct({ title: Schema.String }),
  handler: ({ title }, context) =>
    Effect.gen(function*() {
      const answer = yield* context.elicit({
        message: `Delete ${title}?`,
        schema: Schema.Struct({ confirm: Schema.Boolean })
      })
      if (answer.action !== "accept" || !answer.content.confirm) return `kept ${title}`
      deletions++
      return `deleted ${title}`
    })
})

const exampleServer = fileURLToPath(new URL("./example-server.ts", import.meta.url))

// the group's servers, served as one (with two servers, names are <server>__<name>)
const Gateway = NodeMcpGateway.layer({
  name: "gateway",
  version: "1.0.0",
  servers: {
    example: McpGroup.stdio(process.execPath, ["--conditions=development", exampleServer]),
    notes: McpGroup.inMemory(McpServer.layer({ name: "notes", version: "1.0.0" }, deleteNote), { era: "legacy" })
  }
})

const Http = NodeMcpHttpServer.layer({ port: 0 }).pipe(Layer.provide(Gateway))

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  yield* Console.log(`connected (${client.protocolVersion})`)
  yield* Console.log(`tools: ${(yield* client.tools.get).map((tool) => tool.name).join(", ")}`)
  const forecast = yield* client.callTool("example__weather", { city: "Lisbon" })
  yield* Console.log(`example__weather -> ${JSON.stringify(forecast.structuredContent)}`)
  const deleted = yield* client.callTool("notes__delete_note", { title: "groceries" })
  yield* Console.log(`notes__delete_note -> ${McpContent.textOf(deleted)} (the call behind ran ${deletions} time)`)
})

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    yield* Console.log(`gateway on ${url}`)
    const Client = McpClient.layer({
      clientInfo: { name: "gateway-example", version: "1.0.0" },
      elicitation: {
        form: (params) =>
          Console.log(`asked: ${params.message}`).pipe(Effect.as({ action: "accept", content: { confirm: true } }))
      }
    }).pipe(Layer.provide(NodeMcpHttpClient.layer({ url })))
    yield* program.pipe(Effect.provide(Client))
  }).pipe(Effect.provide(Http))
)
