/**
 * The official TypeScript SDK v2 client (`@modelcontextprotocol/client`)
 * pinned to revision 2026-07-28 (`versionNegotiation: { mode: { pin } }`:
 * `server/discover`, no `initialize`, per-request `_meta`) against our server
 * (`fixtures/modernServer.ts`), one suite over stdio (a child process) and over
 * Streamable HTTP (in this process, 127.0.0.1, an ephemeral port). Elicitation,
 * sampling and roots are input-required rounds the client answers with its
 * ordinary handlers. Then one HTTP server serving a legacy and a modern client
 * side by side.
 */
import { McpServer } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import type { Transport } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Context, Effect, Layer } from "effect"
import type * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { instructions, ModernServer, serverInfo } from "./fixtures/modernServer.ts"
import { textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"
import { waitFor } from "./utils/wait.ts"

const MODERN = "2026-07-28"
const root = fileURLToPath(new URL("../../..", import.meta.url))

// -----------------------------------------------------------------------------
// the client
// -----------------------------------------------------------------------------

type Era = "modern" | "legacy"

/** What the client's handlers were asked (each answers as configured), and the errors it reported. */
interface Asked {
  readonly elicitations: Array<string>
  readonly samples: Array<unknown>
  rootLists: number
  /** `onerror`: e.g. a server→client request on a modern stdio connection, which the client drops. */
  readonly errors: Array<string>
}

/** The v2 client in `era`, answering elicitations with `name`, connected over `transport` for the scope. */
const connect = (transport: Transport, options: { readonly era?: Era; readonly name?: string } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-v2", version: "2.4.0" }, {
        capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
        versionNegotiation: { mode: options.era === "legacy" ? "legacy" : { pin: MODERN } }
      })
      const asked: Asked = { elicitations: [], samples: [], rootLists: 0, errors: [] }
      client.onerror = (error) => asked.errors.push(String(error))
      client.setRequestHandler("elicitation/create", async (request) => {
        asked.elicitations.push(request.params.message)
        return { action: "accept", content: { name: options.name ?? "Ada" } }
      })
      client.setRequestHandler("sampling/createMessage", async (request) => {
        asked.samples.push(request.params.messages[0]?.content)
        return { model: "fake-model", role: "assistant", content: { type: "text", text: "42" } }
      })
      client.setRequestHandler("roots/list", async () => {
        asked.rootLists++
        return { roots: [{ uri: "file:///work", name: "work" }, { uri: "file:///tmp" }] }
      })
      await client.connect(transport)
      return { client, asked }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

// -----------------------------------------------------------------------------
// the transports
// -----------------------------------------------------------------------------

/** A POST the HTTP client sent: the 2026-07-28 headers and the JSON-RPC body. */
interface Posted {
  readonly headers: Headers
  readonly body: { readonly method?: string; readonly params?: Record<string, any> }
}

/** Our server as a Streamable HTTP server in this process, for the scope; `posted` records every POST. */
const serveHttp = Effect.gen(function*() {
  const context = yield* Layer.build(NodeMcpHttpServer.layer().pipe(Layer.provideMerge(ModernServer)))
  const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  const posted: Array<Posted> = []
  const fetch = (input: string | URL, init?: RequestInit) => {
    if (init?.method === "POST" && typeof init.body === "string") {
      posted.push({ headers: new Headers(init.headers), body: JSON.parse(init.body) })
    }
    return globalThis.fetch(input, init)
  }
  return {
    server: Context.get(context, McpServer.McpServer),
    posted,
    transport: () => new StreamableHTTPClientTransport(new URL(url), { fetch })
  }
})

/**
 * Our server as a child process over stdio, spawned by the SDK's own transport
 * (which runs its `server/discover` probe on a short-lived sibling process).
 */
const stdioTransport = () =>
  new StdioClientTransport({
    command: process.execPath,
    args: ["--conditions=development", "packages/platform-node/test/fixtures/modern-server.mjs"],
    cwd: root,
    stderr: "pipe"
  })

/** How a test gets fresh client transports to its server (started for the test's scope). */
type Transports = Effect.Effect<() => Transport, unknown, Scope.Scope>

const runners: ReadonlyArray<{ readonly name: string; readonly transport: Transports }> = [
  { name: "stdio (child process)", transport: Effect.succeed(stdioTransport) },
  { name: "Streamable HTTP (127.0.0.1)", transport: Effect.map(serveHttp, ({ transport }) => transport) }
]

// -----------------------------------------------------------------------------
// the suite, once per transport
// -----------------------------------------------------------------------------

const modernClient = (transport: Transports, name?: string) =>
  Effect.flatMap(transport, (open) => connect(open(), name === undefined ? {} : { name }))

for (const { name, transport } of runners) {
  describe(`interop 2026-07-28: official v2 client (modern) → our server over ${name}`, () => {
    it.live("server/discover: the era, version, server info, instructions and capabilities the client learned", () =>
      Effect.gen(function*() {
        const { client } = yield* modernClient(transport)
        assert.strictEqual(client.getProtocolEra(), "modern")
        assert.strictEqual(client.getNegotiatedProtocolVersion(), MODERN)
        assert.deepStrictEqual(client.getServerVersion(), serverInfo)
        assert.strictEqual(client.getInstructions(), instructions)
        const discovered = client.getDiscoverResult()
        assert.include(discovered?.supportedVersions ?? [], MODERN)
        assert.include(discovered?.supportedVersions ?? [], "2025-11-25")
        assert.deepStrictEqual(client.getServerCapabilities(), {
          logging: {},
          completions: {},
          tools: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          prompts: { listChanged: true }
        })
        // an explicit discover round trip answers the same
        assert.deepStrictEqual(
          (yield* Effect.promise(() => client.discover())).capabilities,
          client.getServerCapabilities()
        )
      }).pipe(Effect.scoped))

    it.live("tools/list and a plain tool call, served in the modern era", () =>
      Effect.gen(function*() {
        const { client } = yield* modernClient(transport)
        const { tools } = yield* Effect.promise(() => client.listTools())
        // listed by name (the same order on every call and replica)
        assert.deepStrictEqual(tools.map((t) => t.name), ["add_extra", "ask_model", "ask_name", "greet", "list_roots"])
        assert.deepStrictEqual(tools.find((t) => t.name === "greet")?.inputSchema.required, ["name"])
        const result = yield* Effect.promise(() => client.callTool({ name: "greet", arguments: { name: "Oslo" } }))
        assert.strictEqual(textOf(result), "Hello, Oslo! [modern]")
        assert.isNotTrue(result.isError)
        const invalid = yield* Effect.promise(() => client.callTool({ name: "greet", arguments: {} }))
        assert.isTrue(invalid.isError)
      }).pipe(Effect.scoped))

    it.live("elicitation: an input-required round answered by the client's elicitation handler", () =>
      Effect.gen(function*() {
        const { asked, client } = yield* modernClient(transport, "Grace")
        const result = yield* Effect.promise(() => client.callTool({ name: "ask_name", arguments: {} }))
        assert.strictEqual(textOf(result), "Hello, Grace! [modern]")
        assert.deepStrictEqual(asked.elicitations, ["What is your name?"])
        assert.deepStrictEqual(asked.errors, [])
      }).pipe(Effect.scoped))

    it.live("sampling: an input-required round answered by the client's sampling handler", () =>
      Effect.gen(function*() {
        const { asked, client } = yield* modernClient(transport)
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "ask_model", arguments: { question: "meaning of life?" } })
        )
        assert.strictEqual(textOf(result), "fake-model says 42")
        assert.deepStrictEqual(asked.samples, [{ type: "text", text: "meaning of life?" }])
        assert.deepStrictEqual(asked.errors, [])
      }).pipe(Effect.scoped))

    it.live("roots: an input-required round answered by the client's roots handler", () =>
      Effect.gen(function*() {
        const { asked, client } = yield* modernClient(transport)
        const result = yield* Effect.promise(() => client.callTool({ name: "list_roots", arguments: {} }))
        assert.strictEqual(textOf(result), "2 root(s): file:///work,file:///tmp")
        assert.strictEqual(asked.rootLists, 1)
        assert.deepStrictEqual(asked.errors, [])
      }).pipe(Effect.scoped))

    it.live("resources: list, templates, read (static and templated)", () =>
      Effect.gen(function*() {
        const { client } = yield* modernClient(transport)
        const { resources } = yield* Effect.promise(() => client.listResources())
        assert.deepStrictEqual(resources.map((r) => r.uri), ["notes://readme"])
        const { resourceTemplates } = yield* Effect.promise(() => client.listResourceTemplates())
        assert.deepStrictEqual(resourceTemplates.map((t) => t.uriTemplate), ["notes://{topic}"])
        const readme = yield* Effect.promise(() => client.readResource({ uri: "notes://readme" }))
        assert.deepStrictEqual(readme.contents, [{
          uri: "notes://readme",
          mimeType: "text/plain",
          text: "Read me first."
        }])
        const launch = yield* Effect.promise(() => client.readResource({ uri: "notes://launch" }))
        assert.deepStrictEqual(launch.contents, [{
          uri: "notes://launch",
          mimeType: "text/plain",
          text: "Notes on launch"
        }])
      }).pipe(Effect.scoped))

    it.live("prompts: list, get with arguments; completion/complete for a prompt and a template", () =>
      Effect.gen(function*() {
        const { client } = yield* modernClient(transport)
        const { prompts } = yield* Effect.promise(() => client.listPrompts())
        assert.deepStrictEqual(prompts.map((p) => [p.name, p.arguments?.map((a) => [a.name, a.required])]), [
          ["explain", [["topic", true], ["level", false]]]
        ])
        const prompt = yield* Effect.promise(() =>
          client.getPrompt({ name: "explain", arguments: { topic: "orbits", level: "expert" } })
        )
        assert.deepStrictEqual(prompt.messages, [{
          role: "user",
          content: { type: "text", text: "Explain orbits to an expert." }
        }])
        const level = yield* Effect.promise(() =>
          client.complete({ ref: { type: "ref/prompt", name: "explain" }, argument: { name: "level", value: "ex" } })
        )
        assert.deepStrictEqual(level.completion.values, ["expert"])
        const topic = yield* Effect.promise(() =>
          client.complete({
            ref: { type: "ref/resource", uri: "notes://{topic}" },
            argument: { name: "topic", value: "la" }
          })
        )
        assert.deepStrictEqual(topic.completion.values, ["launch", "landing"])
      }).pipe(Effect.scoped))

    it.live("subscriptions/listen: a tools list change reaches the open listen stream", () =>
      Effect.gen(function*() {
        const { client } = yield* modernClient(transport)
        // change notifications of a listen stream carry its subscription id
        const changed: Array<unknown> = []
        client.setNotificationHandler("notifications/tools/list_changed", (notification) => {
          changed.push(notification.params?._meta?.["io.modelcontextprotocol/subscriptionId"])
        })
        const subscription = yield* Effect.acquireRelease(
          Effect.promise(() => client.listen({ toolsListChanged: true })),
          (subscription) => Effect.promise(() => subscription.close())
        )
        assert.deepStrictEqual(subscription.honoredFilter, { toolsListChanged: true })
        assert.strictEqual(
          textOf(yield* Effect.promise(() => client.callTool({ name: "add_extra", arguments: {} }))),
          "added"
        )
        yield* waitFor(() => changed.length > 0)
        assert.strictEqual(changed.length, 1)
        assert.match(String(changed[0]), /^listen:/)
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.include(tools.map((t) => t.name), "extra")
        // (over HTTP this aborts the listen POST; Node's fetch then holds a spare
        // keep-alive connection that delays closing the server by ~3 s)
        yield* Effect.promise(() => subscription.close())
        assert.strictEqual(yield* Effect.promise(() => subscription.closed), "local")
      }).pipe(Effect.scoped))
  })
}

// -----------------------------------------------------------------------------
// transport specifics
// -----------------------------------------------------------------------------

describe("interop 2026-07-28: what the modern client puts on the wire", () => {
  it.live("HTTP: no session, Mcp-Method / Mcp-Name headers, the retry carries the input responses", () =>
    Effect.gen(function*() {
      const { posted, server, transport } = yield* serveHttp
      const { client } = yield* connect(transport())
      assert.strictEqual(
        textOf(yield* Effect.promise(() => client.callTool({ name: "ask_name", arguments: {} }))),
        "Hello, Ada! [modern]"
      )
      assert.strictEqual(yield* server.sessionCount, 0)
      for (const { body, headers } of posted) {
        assert.isNull(headers.get("mcp-session-id"))
        assert.strictEqual(headers.get("mcp-protocol-version"), MODERN)
        assert.strictEqual(headers.get("mcp-method"), body.method)
        assert.strictEqual(body.params?._meta?.["io.modelcontextprotocol/protocolVersion"], MODERN)
      }
      assert.notInclude(posted.map((p) => p.body.method), "initialize")
      const calls = posted.filter((p) => p.body.method === "tools/call")
      assert.deepStrictEqual(calls.map((p) => p.headers.get("mcp-name")), ["ask_name", "ask_name"])
      assert.isUndefined(calls[0]!.body.params?.inputResponses)
      const retry = calls[1]!.body.params!
      assert.deepStrictEqual(Object.values(retry.inputResponses), [{ action: "accept", content: { name: "Ada" } }])
      assert.isString(retry.requestState)
    }).pipe(Effect.scoped))

  it.live("stdio: closing the client ends the server process", () =>
    Effect.gen(function*() {
      const transport = stdioTransport()
      const pid = yield* Effect.scoped(Effect.map(connect(transport), () => transport.pid))
      assert.isNumber(pid)
      yield* waitFor(() => !isRunning(pid!))
    }))
})

// -----------------------------------------------------------------------------
// both eras on one server
// -----------------------------------------------------------------------------

describe("interop: one HTTP server, a legacy and a modern client side by side", () => {
  it.live("the same elicitation tool, through a legacy session and a stateless modern request", () =>
    Effect.gen(function*() {
      const { server, transport } = yield* serveHttp
      const legacyTransport = transport() as StreamableHTTPClientTransport
      const legacy = yield* connect(legacyTransport, { era: "legacy", name: "Ada" })
      const modernTransport = transport() as StreamableHTTPClientTransport
      const modern = yield* connect(modernTransport, { name: "Grace" })
      assert.strictEqual(legacy.client.getProtocolEra(), "legacy")
      assert.strictEqual(legacy.client.getNegotiatedProtocolVersion(), "2025-11-25")
      assert.isString(legacyTransport.sessionId)
      assert.strictEqual(modern.client.getProtocolEra(), "modern")
      assert.isUndefined(modernTransport.sessionId)
      // only the legacy client holds a session
      assert.strictEqual(yield* server.sessionCount, 1)
      const [viaLegacy, viaModern] = yield* Effect.promise(() =>
        Promise.all([
          legacy.client.callTool({ name: "ask_name", arguments: {} }),
          modern.client.callTool({ name: "ask_name", arguments: {} })
        ])
      )
      assert.strictEqual(textOf(viaLegacy), "Hello, Ada! [legacy]")
      assert.strictEqual(textOf(viaModern), "Hello, Grace! [modern]")
      assert.deepStrictEqual(legacy.asked.elicitations, ["What is your name?"])
      assert.deepStrictEqual(modern.asked.elicitations, ["What is your name?"])
      assert.strictEqual(yield* server.sessionCount, 1)
    }).pipe(Effect.scoped))
})
