/**
 * Interop: our gateway (`NodeMcpGateway.layer` served by
 * `NodeMcpHttpServer.layer` on 127.0.0.1) between official peers of both
 * eras, with no mock on either side:
 *
 * 1. the official v2 client (`@modelcontextprotocol/client` 2.4.0, pinned to
 *    2026-07-28) → the gateway → `@modelcontextprotocol/server-everything`
 *    over stdio (legacy only), behind `fixtures/counting-relay.mjs`, which
 *    counts the `tools/call` requests the server receives: the server's
 *    sampling and elicitation requests become input-required rounds the v2
 *    client's own handlers answer, while the gateway holds the one call
 *    behind; roots, progress and cancellation; then the gateway's own
 *    sessions with that server at their limit (`sessions: 1`);
 * 2. the official v1 client (`@modelcontextprotocol/sdk` 1.32.2, 2025-11-25)
 *    → the gateway → the official v2 server, modern only, over Streamable
 *    HTTP (`fixtures/officialV2Server.ts`): the server's input-required round
 *    becomes a real `elicitation/create` request the v1 client answers;
 * 3. closing the gateway leaves no process of the stdio server behind.
 */
import { McpGroup } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from "@modelcontextprotocol/client"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeMcpGateway from "../src/NodeMcpGateway.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { listenHttp } from "./fixtures/officialV2Server.ts"
import { textOf } from "./utils/client.ts"
import { everything } from "./utils/everything.ts"
import { isRunning } from "./utils/process.ts"
import { waitFor } from "./utils/wait.ts"

const MODERN = "2026-07-28"
const relay = fileURLToPath(new URL("./fixtures/counting-relay.mjs", import.meta.url))

// -----------------------------------------------------------------------------
// the relay's log
// -----------------------------------------------------------------------------

/** What the relays in front of the server's processes wrote: the processes, and the `tools/call` requests by tool. */
interface Relayed {
  readonly path: string
  /** Every process started: the relay's pid and the server's. */
  readonly pids: () => ReadonlyArray<number>
  /** How many `tools/call` requests of `tool` the server processes received, all together. */
  readonly calls: (tool: string) => number
  /** How many `notifications/cancelled` they received. */
  readonly cancellations: () => number
}

/** A fresh log file for the relays, removed with the scope. */
const relayLog = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "gateway-relay-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir): Relayed => {
  const path = join(dir, "relay.log")
  const lines = () => {
    try {
      return readFileSync(path, "utf8").split("\n").filter((line) => line !== "")
    } catch {
      return []
    }
  }
  return {
    path,
    pids: () => lines().flatMap((line) => line.startsWith("spawn ") ? line.split(" ").slice(1).map(Number) : []),
    calls: (tool) => lines().filter((line) => line === `call ${tool}`).length,
    cancellations: () => lines().filter((line) => line.startsWith("cancelled ")).length
  }
}))

// -----------------------------------------------------------------------------
// the gateway
// -----------------------------------------------------------------------------

/**
 * The gateway (`options`; the servers' stderr captured, not forwarded), served
 * over Streamable HTTP on 127.0.0.1 in `scope` (default the test's): its URL.
 */
const serveGateway = (options: NodeMcpGateway.Options, scope?: Scope.Scope) =>
  Effect.gen(function*() {
    const gateway = NodeMcpGateway.layer({ connector: { stderr: "capture" }, ...options })
    const layer = NodeMcpHttpServer.layer().pipe(Layer.provide(gateway))
    const context = yield* (scope === undefined ? Layer.build(layer) : Layer.buildWithScope(layer, scope))
    return yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  })

/** server-everything over stdio behind the counting relay. */
const everythingBehindRelay = (log: Relayed) =>
  McpGroup.stdio(process.execPath, [relay, everything, "stdio"], {
    env: { GZIP_ALLOWED_DOMAINS: "127.0.0.1", RELAY_LOG: log.path }
  })

// -----------------------------------------------------------------------------
// the official v2 client, 2026-07-28
// -----------------------------------------------------------------------------

/** What the v2 client's handlers were asked, and the JSON-RPC methods it POSTed. */
interface Asked {
  readonly elicitations: Array<{ readonly message: string; readonly requestedSchema: unknown }>
  readonly samples: Array<Record<string, unknown>>
  rootLists: number
  readonly posted: Array<{ readonly method: string; readonly name: string | undefined; readonly rounds: boolean }>
  readonly errors: Array<string>
}

/**
 * How the v2 client answers: elicitations with `name` (`null`: declines;
 * `never`: never answers them), and, when given, roots/list with `roots`.
 */
interface Answers {
  readonly name?: string | null | undefined
  readonly never?: boolean | undefined
  readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name: string }> | undefined
}

/**
 * The v2 client pinned to 2026-07-28 at `url`, answering as `answers` say
 * (elicitations with "Ada Lovelace" by default) and sampling with "42", for
 * the scope.
 */
const connectV2 = (url: string, answers: Answers = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const asked: Asked = { elicitations: [], samples: [], rootLists: 0, posted: [], errors: [] }
      const fetch = (input: string | URL | Request, init?: RequestInit) => {
        if (init?.method === "POST" && typeof init.body === "string") {
          const body = JSON.parse(init.body) as { method?: string; params?: Record<string, any> }
          if (body.method !== undefined) {
            asked.posted.push({
              method: body.method,
              name: body.params?.name,
              rounds: body.params?.inputResponses !== undefined
            })
          }
        }
        return globalThis.fetch(input, init)
      }
      const roots = answers.roots
      const client = new V2Client({ name: "official-v2", version: "2.4.0" }, {
        capabilities: { elicitation: { form: {} }, sampling: {}, ...(roots === undefined ? {} : { roots: {} }) },
        versionNegotiation: { mode: { pin: MODERN } }
      })
      client.onerror = (error) => asked.errors.push(String(error))
      const name = answers.name === undefined ? "Ada Lovelace" : answers.name
      client.setRequestHandler("elicitation/create", async (request) => {
        const { message, requestedSchema } = request.params as { message: string; requestedSchema?: unknown }
        asked.elicitations.push({ message, requestedSchema })
        if (answers.never === true) return new Promise<never>(() => {})
        return name === null ? { action: "decline" } : { action: "accept", content: { name, check: true } }
      })
      client.setRequestHandler("sampling/createMessage", async (request) => {
        asked.samples.push(request.params as Record<string, unknown>)
        return { model: "fake-model", role: "assistant", content: { type: "text", text: "42" } }
      })
      if (roots !== undefined) {
        client.setRequestHandler("roots/list", async () => {
          asked.rootLists++
          return { roots: [...roots] }
        })
      }
      await client.connect(new V2HttpTransport(new URL(url), { fetch }))
      return { client, asked }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

/** The texts of a result's text blocks. */
const texts = (result: { readonly content?: unknown }): ReadonlyArray<string> =>
  (Array.isArray(result.content) ? result.content : []).flatMap((block: { type?: string; text?: string }) =>
    block.type === "text" && block.text !== undefined ? [block.text] : []
  )

/** Every page of a listing, following `nextCursor`. */
const allPages = async <A>(
  list: (
    cursor: string | undefined
  ) => Promise<{ readonly items: ReadonlyArray<A>; readonly nextCursor?: string | undefined }>
): Promise<ReadonlyArray<A>> => {
  const all: Array<A> = []
  let cursor: string | undefined
  for (let page = 0; page < 50; page++) {
    const { items, nextCursor } = await list(cursor)
    all.push(...items)
    if (nextCursor === undefined) return all
    cursor = nextCursor
  }
  throw new Error("more than 50 pages")
}

// -----------------------------------------------------------------------------
// 1. v2 client (modern) → gateway → server-everything (legacy, stdio)
// -----------------------------------------------------------------------------

describe("gateway interop: official v2 client (2026-07-28) → gateway (HTTP) → server-everything (stdio, legacy)", () => {
  it.live("discovery: the modern era, the gateway's capabilities", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url)
      assert.strictEqual(client.getProtocolEra(), "modern")
      assert.strictEqual(client.getNegotiatedProtocolVersion(), MODERN)
      const capabilities = client.getServerCapabilities()
      assert.isDefined(capabilities?.tools)
      assert.isDefined(capabilities?.resources)
      assert.isDefined(capabilities?.prompts)
      assert.isDefined(capabilities?.completions)
      assert.notInclude(asked.posted.map((post) => post.method), "initialize")
      assert.deepStrictEqual(asked.errors, [])
    }))

  it.live("tools: the list (the sampling and elicitation tools included), echo and get-sum", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url)
      const tools = yield* Effect.promise(() =>
        allPages((cursor) =>
          client.listTools(cursor === undefined ? {} : { cursor }).then((r) => ({
            items: r.tools,
            nextCursor: r.nextCursor
          }))
        )
      )
      const names = tools.map((tool) => tool.name)
      for (
        const name of [
          "echo",
          "get-sum",
          "get-structured-content",
          "trigger-sampling-request",
          "trigger-elicitation-request"
        ]
      ) {
        assert.include(names, name)
      }
      // listings pass through: the server's own schema and annotations
      const sum = tools.find((tool) => tool.name === "get-sum")!
      assert.includeMembers(Object.keys(sum.inputSchema.properties ?? {}), ["a", "b"])
      assert.strictEqual(
        tools.find((tool) => tool.name === "trigger-sampling-request")?.annotations?.openWorldHint,
        true
      )

      const echo = yield* Effect.promise(() =>
        client.callTool({ name: "echo", arguments: { message: "through the gateway" } })
      )
      assert.deepStrictEqual(texts(echo), ["Echo: through the gateway"])
      const sumResult = yield* Effect.promise(() => client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }))
      assert.include(texts(sumResult)[0], "42")
      assert.strictEqual(log.calls("echo"), 1)
      assert.strictEqual(log.calls("get-sum"), 1)
      assert.deepStrictEqual(asked.errors, [])
    }))

  it.live("resources: every page of the list, a document and a templated resource read", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { client } = yield* connectV2(url)
      const resources = yield* Effect.promise(() =>
        allPages((cursor) =>
          client.listResources(cursor === undefined ? {} : { cursor }).then((r) => ({
            items: r.resources,
            nextCursor: r.nextCursor
          }))
        )
      )
      const uris = resources.map((resource) => resource.uri)
      assert.include(uris, "demo://resource/static/document/features.md")
      assert.isAtLeast(uris.length, 7)
      const features = yield* Effect.promise(() =>
        client.readResource({ uri: "demo://resource/static/document/features.md" })
      )
      const first = features.contents[0]
      assert.isTrue(first !== undefined && "text" in first && first.text.length > 0)
      assert.strictEqual(first?.uri, "demo://resource/static/document/features.md")

      const { resourceTemplates } = yield* Effect.promise(() => client.listResourceTemplates())
      assert.include(
        resourceTemplates.map((template) => template.uriTemplate),
        "demo://resource/dynamic/text/{resourceId}"
      )
      const dynamic = (yield* Effect.promise(() =>
        client.readResource({ uri: "demo://resource/dynamic/text/3" })
      )).contents[0]
      assert.isTrue(dynamic !== undefined && "text" in dynamic && dynamic.text.startsWith("Resource 3:"))
    }))

  it.live("prompts: the list, a get with arguments; completion of a prompt argument", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { client } = yield* connectV2(url)
      const { prompts } = yield* Effect.promise(() => client.listPrompts())
      assert.deepStrictEqual(
        prompts.map((prompt) => prompt.name).sort(),
        ["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"]
      )
      const args = yield* Effect.promise(() =>
        client.getPrompt({ name: "args-prompt", arguments: { city: "Oslo", state: "Viken" } })
      )
      const content = args.messages[0]?.content
      assert.isTrue(content?.type === "text" && content.text.includes("Oslo, Viken"), JSON.stringify(content))
      const departments = yield* Effect.promise(() =>
        client.complete({
          ref: { type: "ref/prompt", name: "completable-prompt" },
          argument: { name: "department", value: "S" }
        })
      )
      assert.deepStrictEqual(departments.completion.values, ["Sales", "Support"])
    }))

  it.live("sampling: the server's createMessage is an input-required round answered by the v2 client; the call behind runs once", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url)
      const result = yield* Effect.promise(() =>
        client.callTool({
          name: "trigger-sampling-request",
          arguments: { prompt: "the meaning of life", maxTokens: 5 }
        })
      )
      assert.notStrictEqual(result.isError, true, JSON.stringify(result))
      const text = texts(result).join("\n")
      assert.include(text, "LLM sampling result")
      assert.include(text, "fake-model")
      assert.include(text, "42")
      // the server's request, as it asked it
      assert.strictEqual(asked.samples.length, 1)
      const { _meta: _, ...sampling } = asked.samples[0]!
      assert.deepStrictEqual(sampling, {
        messages: [{
          role: "user",
          content: { type: "text", text: "Resource trigger-sampling-request context: the meaning of life" }
        }],
        systemPrompt: "You are a helpful test server.",
        maxTokens: 5,
        temperature: 0.7
      })
      // the front: a first call and its retry with the answer (an input-required round) ...
      const calls = asked.posted.filter((post) =>
        post.method === "tools/call" && post.name === "trigger-sampling-request"
      )
      assert.deepStrictEqual(calls.map((call) => call.rounds), [false, true])
      // ... the server behind: one call, held across the round
      assert.strictEqual(log.calls("trigger-sampling-request"), 1)
      assert.deepStrictEqual(asked.errors, [])
    }))

  it.live("elicitation: the server's elicitation/create is an input-required round answered by the v2 client; the call behind runs once", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url, { name: "Ada Lovelace" })
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "trigger-elicitation-request", arguments: {} })
      )
      assert.notStrictEqual(result.isError, true, JSON.stringify(result))
      const text = texts(result).join("\n")
      assert.include(text, "User provided the requested information")
      assert.include(text, "- Name: Ada Lovelace")
      assert.include(text, "- Agreed to terms: true")
      assert.deepStrictEqual(asked.elicitations.map((asked) => asked.message), [
        "Please provide inputs for the following fields:"
      ])
      // the server's form, as it asked it
      const schema = asked.elicitations[0]!.requestedSchema as {
        type: string
        required: Array<string>
        properties: Record<string, any>
      }
      assert.strictEqual(schema.type, "object")
      assert.deepStrictEqual(schema.required, ["name"])
      assert.includeMembers(Object.keys(schema.properties), ["name", "check", "email", "integer", "legacyTitledEnum"])
      assert.deepStrictEqual(schema.properties.integer, {
        title: "Integer",
        type: "integer",
        description: "Your favorite integer (do not give us your phone number, pin, or other sensitive info)",
        minimum: 1,
        maximum: 100,
        default: 42
      })
      const calls = asked.posted.filter((post) =>
        post.method === "tools/call" && post.name === "trigger-elicitation-request"
      )
      assert.deepStrictEqual(calls.map((call) => call.rounds), [false, true])
      assert.strictEqual(log.calls("trigger-elicitation-request"), 1)
      assert.deepStrictEqual(asked.errors, [])
    }))

  it.live("elicitation declined by the v2 client: the server behind hears the decline", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url, { name: null })
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "trigger-elicitation-request", arguments: {} })
      )
      assert.include(texts(result).join("\n"), "User declined to provide the requested information")
      assert.strictEqual(asked.elicitations.length, 1)
      assert.strictEqual(log.calls("trigger-elicitation-request"), 1)
    }))

  it.live("progress of a long-running call reaches the v2 client, in order, before the result", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { client } = yield* connectV2(url)
      const progress: Array<string> = []
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } }, {
          onprogress: (p) => void progress.push(`${p.progress}/${p.total}`)
        })
      )
      assert.include(texts(result)[0], "Long running operation completed")
      assert.deepStrictEqual(progress, ["1/3", "2/3", "3/3"])
      assert.strictEqual(log.calls("trigger-long-running-operation"), 1)
    }))

  it.live("a call the v2 client aborts is cancelled behind", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { client } = yield* connectV2(url)
      const controller = new AbortController()
      const call = client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 20, steps: 200 } },
        {
          signal: controller.signal,
          // running behind: abort it
          onprogress: () => controller.abort()
        }
      )
      const outcome = yield* Effect.promise(() =>
        call.then(() => "completed", (error: unknown) => `rejected: ${error}`)
      )
      assert.match(outcome, /^rejected: /)
      assert.strictEqual(log.calls("trigger-long-running-operation"), 1)
      yield* waitFor(() => log.cancellations() === 1)
    }))

  it.live("roots: the server's roots/list is an input-required round answered by the v2 client", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url, { roots: [{ uri: "file:///alice", name: "alice" }] })
      const result = yield* Effect.promise(() => client.callTool({ name: "get-roots-list", arguments: {} }))
      const text = texts(result).join("\n")
      assert.include(text, "URI: file:///alice")
      assert.strictEqual(asked.rootLists, 1)
      assert.strictEqual(log.calls("get-roots-list"), 1)
    }))

  it.live("roots: clients one after another are each told their own roots, never another client's", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      // the gateway's sessions with the server are reused by later clients (the third takes the first's)
      for (const who of ["alice", "bob", "carol", "dave"]) {
        const { asked, client } = yield* connectV2(url, { roots: [{ uri: `file:///${who}`, name: who }] })
        const result = yield* Effect.promise(() => client.callTool({ name: "get-roots-list", arguments: {} }))
        const text = texts(result).join("\n")
        assert.include(text, `URI: file:///${who}`, `${who} was told: ${text}`)
        assert.strictEqual(asked.rootLists, 1, `${who}'s roots were asked ${asked.rootLists} time(s)`)
      }
    }))

  it.live("sampling and elicitation calls side by side: each answered, each run once behind", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } })
      const { asked, client } = yield* connectV2(url, { name: "Grace Hopper" })
      const [sampled, elicited] = yield* Effect.promise(() =>
        Promise.all([
          client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "together", maxTokens: 5 } }),
          client.callTool({ name: "trigger-elicitation-request", arguments: {} })
        ])
      )
      assert.include(texts(sampled).join("\n"), "fake-model")
      assert.include(texts(elicited).join("\n"), "- Name: Grace Hopper")
      assert.strictEqual(asked.samples.length, 1)
      assert.strictEqual(asked.elicitations.length, 1)
      assert.strictEqual(log.calls("trigger-sampling-request"), 1)
      assert.strictEqual(log.calls("trigger-elicitation-request"), 1)
      assert.deepStrictEqual(asked.errors, [])
    }))
})

// -----------------------------------------------------------------------------
// 1b. the gateway's own sessions with the legacy server, at their limit
// -----------------------------------------------------------------------------

describe("gateway interop: the gateway's own sessions with server-everything, at their limit (sessions: 1)", () => {
  it.live("the first call, made while the gateway is still opening its session with the server, gets that session", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const url = yield* serveGateway({
        servers: { everything: everythingBehindRelay(log) },
        upstreams: { everything: { sessions: 1 } },
        callTimeout: "3 seconds"
      })
      // at once: the session opened ahead (a process to start, a handshake) is not ready yet
      const { client } = yield* connectV2(url)
      const outcome = yield* Effect.promise(() =>
        client.callTool({ name: "echo", arguments: { message: "first" } }).then(
          (result) => texts(result).join(),
          String
        )
      )
      assert.strictEqual(outcome, "Echo: first")
      assert.strictEqual(log.calls("echo"), 1)
    }))

  it.live("calls that need the session at the same time take it in turn: each answered, each run once behind", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      // a call that waits for the session longer than this fails: a bound for the test
      const url = yield* serveGateway({
        servers: { everything: everythingBehindRelay(log) },
        upstreams: { everything: { sessions: 1 } },
        callTimeout: "3 seconds"
      })
      const { asked, client } = yield* connectV2(url)
      const settled = yield* Effect.promise(() =>
        Promise.allSettled(
          [1, 2, 3].map((i) =>
            client.callTool({ name: "trigger-sampling-request", arguments: { prompt: `question ${i}`, maxTokens: 5 } })
          )
        )
      )
      assert.deepStrictEqual(
        settled.map((outcome) => outcome.status === "fulfilled" ? "answered" : String(outcome.reason)),
        ["answered", "answered", "answered"]
      )
      assert.strictEqual(asked.samples.length, 3)
      assert.strictEqual(log.calls("trigger-sampling-request"), 3)
    }))

  it.live("closing the gateway while a call waits for the session does not wait for the call's time limit", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const arrived: Array<string> = []
      const scope = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
      const url = yield* serveGateway({
        servers: { everything: everythingBehindRelay(log) },
        upstreams: { everything: { sessions: 1 } },
        callTimeout: "15 seconds",
        // the tool calls the gateway received
        middleware: [(context, method, params, next) => {
          if (context.kind === "request" && method === "tools/call") arrived.push((params as { name: string }).name)
          return next
        }]
      }, scope)
      // one call holds the session (its client never answers the server's question), the other waits for it
      const { client } = yield* connectV2(url, { never: true })
      const calls = [
        client.callTool({ name: "trigger-elicitation-request", arguments: {} }).catch(String),
        client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "later", maxTokens: 5 } }).catch(
          String
        )
      ]
      yield* waitFor(() =>
        arrived.includes("trigger-elicitation-request") && arrived.includes("trigger-sampling-request")
      )
      const start = yield* Clock.currentTimeMillis
      yield* Scope.close(scope, Exit.void)
      const took = (yield* Clock.currentTimeMillis) - start
      assert.isBelow(took, 8_000, `closing took ${took} ms`)
      // the sampling call never ran behind
      assert.strictEqual(log.calls("trigger-sampling-request"), 0)
      void calls
    }))
})

// -----------------------------------------------------------------------------
// 2. v1 client (2025-11-25) → gateway → official v2 server (modern only, HTTP)
// -----------------------------------------------------------------------------

describe("gateway interop: official v1 client (2025-11-25) → gateway (HTTP) → official v2 server (modern only, HTTP)", () => {
  it.live("the server's input-required round becomes an elicitation/create the v1 client answers", () =>
    Effect.gen(function*() {
      const upstream = yield* Effect.acquireRelease(
        Effect.promise(() => listenHttp("modern")),
        (server) => Effect.promise(() => server.close())
      )
      const url = yield* serveGateway({ servers: { official: McpGroup.http(upstream.url) } })
      const elicitations: Array<{ readonly message: string; readonly mode: unknown }> = []
      const transport = new V1HttpTransport(new URL(url))
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new V1Client({ name: "official-v1", version: "1.32.2" }, { capabilities: { elicitation: {} } })
          client.setRequestHandler(ElicitRequestSchema, async (request) => {
            elicitations.push({ message: request.params.message, mode: request.params.mode })
            return { action: "accept", content: { name: "Grace" } }
          })
          await client.connect(transport)
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      assert.strictEqual(transport.protocolVersion, "2025-11-25")
      assert.isString(transport.sessionId)
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.includeMembers(tools.map((tool) => tool.name), ["echo", "ask_name", "ask_model"])
      assert.strictEqual(
        textOf(yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "hi" } }))),
        "echo: hi"
      )
      const greeted = yield* Effect.promise(() => client.callTool({ name: "ask_name", arguments: {} }))
      assert.notStrictEqual(greeted.isError, true, JSON.stringify(greeted))
      assert.strictEqual(textOf(greeted), "Hello, Grace!")
      assert.strictEqual(elicitations.length, 1)
      assert.strictEqual(elicitations[0]!.message, "What is your name?")
    }))

  it.live("a declined elicitation reaches the modern server as a decline", () =>
    Effect.gen(function*() {
      const upstream = yield* Effect.acquireRelease(
        Effect.promise(() => listenHttp("modern")),
        (server) => Effect.promise(() => server.close())
      )
      const url = yield* serveGateway({ servers: { official: McpGroup.http(upstream.url) } })
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new V1Client({ name: "official-v1", version: "1.32.2" }, { capabilities: { elicitation: {} } })
          client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }))
          await client.connect(new V1HttpTransport(new URL(url)))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      const greeted = yield* Effect.promise(() => client.callTool({ name: "ask_name", arguments: {} }))
      assert.strictEqual(textOf(greeted), "Hello, stranger!")
    }))
})

// -----------------------------------------------------------------------------
// 3. closing the gateway: no process of the stdio server left behind
// -----------------------------------------------------------------------------

describe("gateway interop: the stdio server's processes", () => {
  it.live("closing the gateway's scope ends every process it started (the group's connection and its own sessions)", () =>
    Effect.gen(function*() {
      const log = yield* relayLog
      const scope = yield* Scope.make()
      // closed by hand below; at the latest with the test
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
      const url = yield* serveGateway({ servers: { everything: everythingBehindRelay(log) } }, scope)
      // a sampling call takes a session of the gateway's own with the server: one more process
      yield* Effect.scoped(Effect.gen(function*() {
        const { client } = yield* connectV2(url)
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "before closing", maxTokens: 5 } })
        )
        assert.include(texts(result).join("\n"), "fake-model")
      }))
      const started = log.pids()
      // relay and server, for the group's connection and at least one session of the gateway's own
      assert.isAtLeast(started.length, 4)
      assert.isTrue(started.every(isRunning), `not all running: ${started}`)
      yield* Scope.close(scope, Exit.void)
      const all = log.pids()
      yield* waitFor(() => all.every((pid) => !isRunning(pid)))
      assert.deepStrictEqual(all.filter(isRunning), [])
    }))
})
