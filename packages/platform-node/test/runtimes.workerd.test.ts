/**
 * The Streamable HTTP server as a Cloudflare Worker on workerd, locally:
 * `scratchpad/runtimes/worker.ts` (the notes server through
 * `McpHttpServer.toWebHandler`, the legacy era stateless) bundled as a user
 * would bundle it, every Node built-in an error (`utils/workerd.ts`), and
 * served by miniflare on 127.0.0.1 with no `nodejs_compat` flag. Driven from
 * this process (Node) by our client and the official v2 client at
 * 2026-07-28 (tools listed and called, an input-required elicitation round),
 * by raw legacy requests without a session (no server→client request then),
 * by standard headers with spaces around their values, and by the bad-input
 * probes, answered as our Node server answers them. The bundle check fails
 * when it should: for an entry importing `node:fs`, or `@effect-mcp/platform-node`.
 *
 * workerd failing to start fails these tests; they are never skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Effect, Layer } from "effect"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { ModernServer } from "./fixtures/modernServer.ts"
import { initialize, mcpHeaders, send } from "./fixtures/rawHttp.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { type Answer, EXPECTED, modernRequest, probe, PROBE_OPTIONS, PROBES } from "./utils/probes.ts"
import { root } from "./utils/runtimes.ts"
import { bundleForWorkers, serveWorker, type WorkerBundle } from "./utils/workerd.ts"

const WORKER = "scratchpad/runtimes/worker.ts"
const MODERN = "2026-07-28"
const TOOLS = ["add_note", "ask_title", "list_notes"]

/** The Worker's env: the requestState key every isolate shares. */
const ENV = { MCP_REQUEST_STATE_SECRET: "a secret of the tests" }

// one bundle for the file (each test serves it on a workerd of its own)
let bundled: Promise<WorkerBundle> | undefined
const workerBundle = Effect.promise(() => bundled ??= bundleForWorkers(WORKER))

/** The notes Worker on workerd for the scope: the URL of its endpoint. */
const serveNotes = Effect.gen(function*() {
  const served = yield* serveWorker(yield* workerBundle, { bindings: ENV })
  return new URL("/mcp", served.url).href
})

/** Our client over Streamable HTTP in `era`, answering elicitations with `title`. */
const ours = (url: string, era: "modern" | "legacy", title: string) =>
  connectOver(NodeMcpHttpClient.layer({ url }), {
    era,
    elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { title } }) }
  })

/** The official v2 client at 2026-07-28, answering elicitations with `title`, for the scope. */
const official = (url: string, title: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-v2", version: "2.4.0" }, {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: MODERN } }
      })
      client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { title } }))
      const transport = new StreamableHTTPClientTransport(new URL(url))
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

// -----------------------------------------------------------------------------
// the bundle
// -----------------------------------------------------------------------------

describe("a Worker's bundle: no Node built-in", () => {
  it.live("the Worker bundles with every Node built-in an error: it imports none", () =>
    Effect.gen(function*() {
      const { code } = yield* workerBundle
      assert.notMatch(code, /\bfrom\s*["']node:/)
      assert.include(code, "export {")
    }), 60_000)

  it.live(
    "the check can fail: an entry importing node:fs is refused, its importer named",
    () =>
      Effect.gen(function*() {
        const error = yield* Effect.tryPromise(() =>
          bundleForWorkers({
            name: "reads-a-file",
            source: "import { readFileSync } from \"node:fs\"\n" +
              "export default { fetch: () => new Response(readFileSync(\"/etc/hostname\", \"utf8\")) }"
          })
        ).pipe(Effect.flip)
        assert.include(String(error.cause), "Node built-in \"node:fs\"")
        assert.include(String(error.cause), "reads-a-file")
      }),
    60_000
  )

  it.live(
    "so can a bare built-in, reached through a package: @effect-mcp/platform-node is Node's",
    () =>
      Effect.gen(function*() {
        const error = yield* Effect.tryPromise(() =>
          bundleForWorkers({
            name: "uses-platform-node",
            source: "import { NodeMcpHttpServer } from \"@effect-mcp/platform-node\"\n" +
              "export default { fetch: () => new Response(String(NodeMcpHttpServer)) }"
          })
        ).pipe(Effect.flip)
        assert.match(
          String(error.cause),
          /Node built-in "(node:)?\w+" is imported by .*(platform-node|@effect\/platform-node)/
        )
      }),
    60_000
  )
})

// -----------------------------------------------------------------------------
// the Worker on workerd
// -----------------------------------------------------------------------------

describe("the Streamable HTTP server as a Worker on workerd (toWebHandler, stateless)", () => {
  it.live(
    `our client (${MODERN}): lists the tools, calls one, answers an elicitation round`,
    () =>
      Effect.gen(function*() {
        const url = yield* serveNotes
        const client = yield* ours(url, "modern", "groceries")
        assert.strictEqual(client.era, "modern")
        assert.strictEqual(client.protocolVersion, MODERN)
        assert.strictEqual(client.serverInfo.name, "notes")
        const { tools } = yield* client.listTools()
        assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), TOOLS)
        assert.strictEqual(textOf(yield* client.callTool("add_note", { title: "todo", body: "eggs" })), "saved todo")
        // input-required round: the server asks, the client answers, the call is retried with the answer
        assert.strictEqual(textOf(yield* client.callTool("ask_title", {})), "saved groceries [modern]")
        assert.strictEqual(textOf(yield* client.callTool("list_notes", {})), "todo\ngroceries")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    `the official v2 client (${MODERN}): lists the tools, calls one, answers an elicitation round`,
    () =>
      Effect.gen(function*() {
        const url = yield* serveNotes
        const { client, transport } = yield* official(url, "letters")
        assert.strictEqual(client.getProtocolEra(), "modern")
        assert.strictEqual(client.getNegotiatedProtocolVersion(), MODERN)
        assert.isUndefined(transport.sessionId)
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), TOOLS)
        const saved = yield* Effect.promise(() =>
          client.callTool({ name: "add_note", arguments: { title: "todo", body: "eggs" } })
        )
        assert.strictEqual(textOf(saved), "saved todo")
        const asked = yield* Effect.promise(() => client.callTool({ name: "ask_title", arguments: {} }))
        assert.strictEqual(textOf(asked), "saved letters [modern]")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "legacy, stateless: initialize answered without a session, tools/call without one served, no elicitation",
    () =>
      Effect.gen(function*() {
        const url = yield* serveNotes
        const opened = yield* send(url, { headers: mcpHeaders(), body: initialize })
        assert.strictEqual(opened.status, 200, opened.body)
        assert.isUndefined(opened.headers["mcp-session-id"])
        assert.include(opened.body, "\"name\":\"notes\"")
        const called = yield* send(url, {
          headers: mcpHeaders(),
          body: {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "add_note", arguments: { title: "a", body: "b" } }
          }
        })
        assert.strictEqual(called.status, 200, called.body)
        assert.include(called.body, "saved a")
        // our client in the legacy era too: requests without a session
        const legacy = yield* ours(url, "legacy", "unused")
        assert.strictEqual(legacy.era, "legacy")
        assert.strictEqual(textOf(yield* legacy.callTool("list_notes", {})), "a")
        // no session, so no server→client request: the client's capabilities are not known, the elicitation is refused
        const asked = yield* legacy.callTool("ask_title", {})
        assert.isTrue(asked.isError)
        assert.include(textOf(asked), "elicitation capability")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "standard headers with spaces around their values are read as on Node (workerd keeps them)",
    () =>
      Effect.gen(function*() {
        const url = yield* serveNotes
        const called = yield* send(url, {
          headers: {
            ...mcpHeaders({ version: MODERN }),
            "mcp-method": "tools/call",
            "mcp-name": "list_notes  ",
            "mcp-protocol-version": `${MODERN} `
          },
          body: modernRequest("tools/call", { name: "list_notes", arguments: {} })
        })
        assert.strictEqual(called.status, 200, called.body)
        assert.include(called.body, "\"result\"")
      }).pipe(Effect.scoped),
    60_000
  )
})

// -----------------------------------------------------------------------------
// bad input, as our Node server answers it
// -----------------------------------------------------------------------------

/** A Worker serving the interop server (`fixtures/modernServer.ts`) with `options`, through `McpWorker.make`. */
const probeWorker = (options: object) =>
  bundleForWorkers({
    name: "probe-worker",
    source: [
      `import { McpWorker } from "@effect-mcp/core"`,
      `import { ModernServer } from ${JSON.stringify(`${root}packages/platform-node/test/fixtures/modernServer.ts`)}`,
      `export default McpWorker.make(ModernServer, ${JSON.stringify(options)})`
    ].join("\n")
  })

/** Each probe's answer from the Worker, and from our Node server, both given `options`. */
const probeBoth = (options: typeof PROBE_OPTIONS & { readonly stateless?: boolean }) =>
  Effect.gen(function*() {
    const worker = yield* serveWorker(yield* Effect.promise(() => probeWorker(options)))
    const workerUrl = new URL("/mcp", worker.url).href
    const node = yield* Layer.build(NodeMcpHttpServer.layer(options).pipe(Layer.provide(ModernServer))).pipe(
      Effect.flatMap((context) => NodeMcpHttpServer.url().pipe(Effect.provideContext(context)))
    )
    const answers = new Map<string, Answer>()
    for (const [name, init] of PROBES) {
      const [fromWorker, fromNode] = [yield* probe(workerUrl, init), yield* probe(node, init)]
      assert.deepStrictEqual(fromWorker, fromNode, name)
      answers.set(name, fromWorker)
    }
    for (const [name, expected] of EXPECTED) {
      assert.isTrue(expected(answers.get(name)!), `${name}: ${answers.get(name)}`)
    }
  }).pipe(Effect.scoped)

describe("the Worker on workerd: bad input", () => {
  it.live(
    "with sessions: each probe gets the answer our Node server gives (-32700, 415, -32601, 413, 403, ...)",
    () => probeBoth({ ...PROBE_OPTIONS, stateless: false }),
    60_000
  )

  it.live(
    "stateless, as the Worker serves: the same answers as our Node server, stateless",
    () => probeBoth({ ...PROBE_OPTIONS, stateless: true }),
    60_000
  )
})
