/**
 * What the conformance client does in each client scenario of
 * `@modelcontextprotocol/conformance` (0.1.16), written against `McpClient`
 * and independent of the transport (client.ts plugs in Streamable HTTP).
 *
 * The runner starts a mock server per scenario and runs our client with the
 * server's URL and `MCP_CONFORMANCE_SCENARIO`; the mock records checks as the
 * client talks to it.
 */
import { McpClient, type McpError, type McpTransport } from "@effect-mcp/core"
import { NodeJsonSchemaValidator } from "@effect-mcp/platform-node"
import { Effect, Layer } from "effect"

/**
 * The client's options: a sampling handler and a form-elicitation handler
 * (which declare the `sampling` and `elicitation.form` capabilities). The
 * elicitation handler accepts with empty content: `McpClient` fills in the
 * requested schema's defaults (SEP-1034), as `elicitation-sep1034-client-defaults`
 * checks.
 */
export const clientOptions: McpClient.Options = {
  clientInfo: { name: "effect-mcp-conformance-client", version: "0.1.0" },
  sampling: {
    handler: () =>
      Effect.succeed({
        role: "assistant",
        model: "conformance-model",
        stopReason: "endTurn",
        content: { type: "text", text: "A canned answer from the conformance client" }
      })
  },
  elicitation: {
    form: () => Effect.succeed({ action: "accept", content: {} })
  }
}

const callTool = (name: string, args?: Readonly<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    const result = yield* client.callTool(name, args)
    yield* Effect.logInfo(`called ${name}: ${JSON.stringify(result)}`)
    return result
  })

/** The scenarios this client knows, by the runner's names. */
export const scenarios: Readonly<Record<string, Effect.Effect<void, McpError.McpError, McpClient.McpClient>>> = {
  // the handshake is the whole check: protocol version, clientInfo
  initialize: Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    yield* Effect.logInfo(`initialized: ${client.protocolVersion}, server ${client.serverInfo.name}`)
  }),
  tools_call: Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    const tools = yield* client.tools.get
    yield* Effect.logInfo(`tools: ${tools.map((tool) => tool.name).join(", ")}`)
    yield* callTool("add_numbers", { a: 5, b: 3 })
  }),
  "elicitation-sep1034-client-defaults": Effect.asVoid(callTool("test_client_elicitation_defaults", {})),
  // the server closes the call's SSE stream with `retry: 500`; the transport
  // reconnects with GET and Last-Event-ID and the result arrives there
  "sse-retry": Effect.asVoid(callTool("test_reconnection", {}))
}

/** A dummy argument for each property of a tool's input schema. */
const dummyArguments = (schema: { readonly properties?: Readonly<Record<string, unknown>> } | undefined) =>
  Object.fromEntries(
    Object.entries(schema?.properties ?? {}).map(([name, property]) => {
      const declared = (property as { readonly type?: unknown }).type
      const type = Array.isArray(declared) ? declared[0] : declared
      return [
        name,
        type === "number" || type === "integer"
          ? 1
          : type === "boolean"
          ? true
          : type === "array"
          ? []
          : type === "object"
          ? {}
          : "x"
      ]
    })
  )

/**
 * What every `auth/*` scenario asks: use the protected server (list its
 * tools, call each). The mock lets `initialize` through and challenges the
 * rest; the OAuth client (client.ts) answers the challenges.
 */
export const useProtectedServer: Effect.Effect<void, McpError.McpError, McpClient.McpClient> = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const tools = yield* client.tools.get
  yield* Effect.logInfo(`tools: ${tools.map((tool) => tool.name).join(", ") || "(none)"}`)
  for (const tool of tools) {
    yield* callTool(tool.name, dummyArguments(tool.inputSchema as never))
  }
})

/** The scenario names this client runs in `npm run conformance`. */
export const scenarioNames: ReadonlyArray<string> = Object.keys(scenarios)

/**
 * Runs one scenario with a client connected over `transport`.
 */
export const run = <E>(
  name: string,
  transport: Layer.Layer<McpTransport.McpTransport, E>
): Effect.Effect<void, McpError.McpError | E | Error> => {
  const scenario = name.startsWith("auth/") ? useProtectedServer : scenarios[name]
  if (scenario === undefined) {
    return Effect.fail(new Error(`unknown scenario ${JSON.stringify(name)}; this client runs: ${scenarioNames.join(", ")}`))
  }
  return scenario.pipe(
    Effect.provide(
      McpClient.layer(clientOptions).pipe(Layer.provide([transport, NodeJsonSchemaValidator.layer]))
    )
  )
}
