/**
 * What the conformance client does in each client scenario of
 * `@modelcontextprotocol/conformance` (0.1.16), written against `McpClient`
 * and independent of the transport (client.ts plugs in Streamable HTTP).
 *
 * The runner starts a mock server per scenario and runs our client with the
 * server's URL and `MCP_CONFORMANCE_SCENARIO`; the mock records checks as the
 * client talks to it.
 *
 * The 2026-07-28 scenarios of the next suite (0.2.0-alpha.12, `client
 * --requirements 2026-07-28`) are here too: against their modern-only mocks
 * the client settles on the stateless era by itself (`era: "auto"`), so they
 * need a driver only where they ask for particular calls.
 */
import { McpClient, type McpError, McpSkillsClient, type McpTransport } from "@effect-mcp/core"
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

/** What `MCP_CONFORMANCE_CONTEXT` carries (JSON), where a scenario hands something out. */
export type ScenarioContext = Readonly<Record<string, unknown>>

type Scenario = Effect.Effect<void, McpError.McpError, McpClient.McpClient>

/** Lists the tools and logs their names. */
const listTools = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const tools = yield* client.tools.get
  yield* Effect.logInfo(`tools: ${tools.map((tool) => tool.name).join(", ") || "(none)"}`)
  return tools
})

/** Lists the server's skills (every entry checked) and logs their URIs. */
const listSkills = Effect.gen(function*() {
  const skills = McpSkillsClient.make(yield* McpClient.McpClient)
  const listed = yield* skills.list()
  yield* Effect.logInfo(`skills: ${listed.map((skill) => skill.uri).join(", ") || "(none)"}`)
  return { skills, listed }
})

/**
 * The host loading each listed skill: its SKILL.md read and verified (size,
 * digest, frontmatter against the entry); only a skill that loaded has its
 * other files read. A skill that fails verification is not loaded (logged,
 * not an error: the host goes on without it).
 */
const loadSkills = Effect.gen(function*() {
  const { listed, skills } = yield* listSkills
  for (const skill of listed) {
    const loaded = yield* Effect.result(skills.read(skill))
    if (loaded._tag === "Failure") {
      yield* Effect.logWarning(`not loading ${skill.uri}: ${loaded.failure.message}`)
      continue
    }
    yield* Effect.logInfo(`loaded ${skill.uri}`)
    const supporting = skill.resources === "dynamic" ? [] : skill.resources.filter((file) => file.uri !== skill.uri)
    for (const file of supporting) {
      const read = yield* Effect.result(skills.read(skill, file.uri))
      yield* read._tag === "Success"
        ? Effect.logInfo(`read ${file.uri} (${read.success.bytes.byteLength} bytes, verified)`)
        : Effect.logWarning(`not using ${file.uri}: ${read.failure.message}`)
    }
  }
})

/** The scenarios this client knows, by the runner's names. */
export const scenarios: Readonly<Record<string, Scenario | ((context: ScenarioContext) => Scenario)>> = {
  // skills (SEP-2640): listing reads nothing; loading verifies SKILL.md
  // before anything else of the skill is read
  "sep-2640-client-no-prefetch": Effect.asVoid(listSkills),
  "sep-2640-client-verify-digest": loadSkills,
  "sep-2640-client-verify-size": loadSkills,
  "sep-2640-client-verify-frontmatter": loadSkills,
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
  "sse-retry": Effect.asVoid(callTool("test_reconnection", {})),
  // 2026-07-28: the first request is refused with -32022 (naming the version
  // sent); the client retries it with that version, then lists
  "request-metadata": Effect.asVoid(listTools),
  // input-required results: the elicitation is answered and the call retried
  // (with the server's requestState where it gave one); a result without
  // resultType is complete
  "sep-2322-client-request-state": Effect.gen(function*() {
    yield* listTools
    for (
      const name of ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"]
    ) {
      yield* callTool(name, {})
    }
  }),
  // Mcp-Method and Mcp-Name on every kind of request
  "http-standard-headers": Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    const tools = yield* listTools
    if (tools[0] !== undefined) yield* callTool(tools[0].name, dummyArguments(tools[0].inputSchema as never))
    const resources = yield* client.resources.get
    for (const resource of resources) {
      const read = yield* client.readResource(resource.uri)
      yield* Effect.logInfo(`read ${resource.uri}: ${JSON.stringify(read)}`)
    }
    const prompts = yield* client.prompts.get
    if (prompts[0] !== undefined) {
      const prompt = yield* client.getPrompt(prompts[0].name)
      yield* Effect.logInfo(`got ${prompts[0].name}: ${JSON.stringify(prompt)}`)
    }
  }),
  // x-mcp-header arguments mirrored into Mcp-Param-* headers: the calls come from the context
  "http-custom-headers": (context) =>
    Effect.gen(function*() {
      yield* listTools
      const calls = (context.toolCalls ?? []) as ReadonlyArray<{
        readonly name: string
        readonly arguments?: Readonly<Record<string, unknown>>
      }>
      for (const call of calls) yield* callTool(call.name, call.arguments)
    }),
  // the list leaves out the tools with invalid x-mcp-header declarations; call the rest
  "http-invalid-tool-headers": Effect.gen(function*() {
    for (const tool of yield* listTools) yield* callTool(tool.name, dummyArguments(tool.inputSchema as never))
  }),
  // a network $ref in a tool schema is never fetched
  "json-schema-ref-no-deref": Effect.asVoid(listTools),
  // the client keeps a 2020-12 input schema as it came: echoed back verbatim
  "json-schema-2020-12-preservation": Effect.gen(function*() {
    const tools = yield* listTools
    const focal = tools.find((tool) => tool.name === "json_schema_2020_12_tool")
    yield* callTool("json_schema_echo", { schema: focal?.inputSchema ?? {} })
  })
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
export const useProtectedServer: Scenario = Effect.gen(function*() {
  for (const tool of yield* listTools) {
    yield* callTool(tool.name, dummyArguments(tool.inputSchema as never))
  }
})

/** The scenario names this client runs in `npm run conformance`. */
export const scenarioNames: ReadonlyArray<string> = Object.keys(scenarios)

/**
 * Runs one scenario with a client connected over `transport`; `context` is
 * the scenario's `MCP_CONFORMANCE_CONTEXT`, for the drivers that read it.
 */
export const run = <E>(
  name: string,
  transport: Layer.Layer<McpTransport.McpTransport, E>,
  context: ScenarioContext = {}
): Effect.Effect<void, McpError.McpError | E | Error> => {
  const found = name.startsWith("auth/") ? useProtectedServer : scenarios[name]
  if (found === undefined) {
    return Effect.fail(
      new Error(`unknown scenario ${JSON.stringify(name)}; this client runs: ${scenarioNames.join(", ")}`)
    )
  }
  const scenario = Effect.isEffect(found) ? found : found(context)
  return scenario.pipe(
    Effect.provide(
      McpClient.layer(clientOptions).pipe(Layer.provide(transport))
    )
  )
}
