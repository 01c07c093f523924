/**
 * Interop: our dual-era McpClient (default `era: "auto"`: `server/discover`,
 * falling back to `initialize`) against real peers, on loopback only:
 *
 * 1. the official SDK v2 server (`@modelcontextprotocol/server` 2.4.0,
 *    `fixtures/officialV2Server.ts`), modern-only and dual-era, over stdio (a
 *    child process) and Streamable HTTP (`createMcpHandler` on `node:http`):
 *    its input-required tools answered by our client's handlers, and a
 *    `subscriptions/listen`-driven tools list refresh;
 * 2. effect's own `effect/ai` McpServer with 2026-07-28 enabled
 *    (`fixtures/effectAiServer.ts`), over Streamable HTTP and stdio;
 * 3. our own dual-era server (`fixtures/modernServer.ts`) to our client
 *    pinned legacy and pinned modern;
 * 4. one McpGroup over a modern-only, a legacy-only
 *    (`@modelcontextprotocol/server-everything`) and a dual-era server.
 */
import { McpClient, McpGroup } from "@effect-mcp/core"
import type { McpError } from "@effect-mcp/core"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { McpServer as EffectMcpServer } from "effect/ai"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { realpathSync } from "node:fs"
import * as http from "node:http"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpGroup from "../src/NodeMcpGroup.ts"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { effectInfo, protocols, registrations } from "./fixtures/effectAiServer.ts"
import { ModernServer, serverInfo as ourServerInfo } from "./fixtures/modernServer.ts"
import { listenHttp, officialInfo } from "./fixtures/officialV2Server.ts"
import type { Eras } from "./fixtures/officialV2Server.ts"
import { connectOver, connectStdio, textOf } from "./utils/client.ts"

const MODERN = "2026-07-28"
const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const everything = realpathSync(`${root}node_modules/.bin/mcp-server-everything`)

// -----------------------------------------------------------------------------
// our client: its input handlers, and what they were asked
// -----------------------------------------------------------------------------

/** What the client's handlers were asked. */
interface Asked {
  readonly elicitations: Array<string>
  readonly samples: Array<string>
}

/** Client options whose elicitation answers `{ name }` and whose sampling answers "42", recording what they were asked. */
const answering = (name = "Ada"): { readonly asked: Asked; readonly options: Partial<McpClient.Options> } => {
  const asked: Asked = { elicitations: [], samples: [] }
  return {
    asked,
    options: {
      elicitation: {
        form: (params) =>
          Effect.sync(() => {
            asked.elicitations.push(params.message)
            return { action: "accept", content: { name } }
          })
      },
      sampling: {
        handler: (params) =>
          Effect.sync(() => {
            const content = params.messages[0]?.content
            const block = Array.isArray(content) ? content[0] : content
            asked.samples.push(block?.type === "text" ? block.text : "?")
            return {
              role: "assistant",
              model: "effect-model",
              stopReason: "endTurn",
              content: { type: "text", text: "42" }
            }
          })
      },
      roots: [{ uri: "file:///work", name: "work" }]
    }
  }
}

/** Our client over Streamable HTTP to `url`, in the test's scope. */
const connectHttp = (url: string, options: Partial<McpClient.Options> = {}) =>
  connectOver(NodeMcpHttpClient.layer({ url }), options)

/** The names of a cached list. */
const names = (items: ReadonlyArray<{ readonly name: string }>) => items.map((item) => item.name)

/** Runs until the client's cached tools include `name`: forked before the action that adds it. */
const toolAppears = (client: McpClient.Client, name: string) =>
  client.tools.changes.pipe(
    Stream.filter((tools) => tools.some((tool) => tool.name === name)),
    Stream.runHead,
    Effect.forkChild({ startImmediately: true })
  )

// -----------------------------------------------------------------------------
// 1. the official SDK v2 server
// -----------------------------------------------------------------------------

/** The v2 server on `node:http` in this process, for the scope. */
const officialHttp = (eras: Eras) =>
  Effect.acquireRelease(Effect.promise(() => listenHttp(eras)), (server) => Effect.promise(() => server.close()))

/** The v2 server as a child process over stdio (`ERAS=modern` rejects a 2025-era opening). */
const officialStdio = (eras: Eras) => ({
  command: process.execPath,
  args: [fixture("official-v2-server.mjs")],
  env: { ERAS: eras },
  stderr: "capture" as const
})

type Connect = (options?: Partial<McpClient.Options>) => Effect.Effect<McpClient.Client, McpError.McpError, Scope.Scope>

const officialRunners: ReadonlyArray<{ readonly name: string; readonly eras: Eras; readonly connect: Connect }> = (
  ["modern", "dual"] as const
).flatMap((eras) => [
  {
    name: `${eras === "modern" ? "modern-only" : "dual-era"} over stdio (child process)`,
    eras,
    connect: (options) => Effect.map(connectStdio(officialStdio(eras), options), ({ client }) => client)
  },
  {
    name: `${eras === "modern" ? "modern-only" : "dual-era"} over Streamable HTTP (127.0.0.1)`,
    eras,
    connect: (options) => Effect.flatMap(officialHttp(eras), ({ url }) => connectHttp(url, options))
  }
])

for (const { connect, eras, name } of officialRunners) {
  describe(`interop: our McpClient (era auto) → official SDK v2 server, ${name}`, () => {
    it.live("settles on the modern era: 2026-07-28, the server's info and capabilities", () =>
      Effect.gen(function*() {
        const client = yield* connect()
        assert.strictEqual(client.era, "modern")
        assert.strictEqual(client.protocolVersion, MODERN)
        assert.deepStrictEqual(client.serverInfo, officialInfo)
        assert.isDefined(client.serverCapabilities.tools)
        assert.isDefined(client.serverCapabilities.resources)
        assert.isDefined(client.serverCapabilities.prompts)
        assert.isDefined(client.serverCapabilities.completions)
        yield* client.ping()
      }))

    it.live("tools: a plain call, and input-required rounds answered by our elicitation and sampling handlers", () =>
      Effect.gen(function*() {
        const { asked, options } = answering("Ada")
        const client = yield* connect(options)
        assert.includeMembers(names(yield* client.tools.get), ["echo", "ask_name", "ask_model", "add_tool"])
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "hi" })), "echo: hi")
        assert.strictEqual(textOf(yield* client.callTool("ask_name")), "Hello, Ada!")
        assert.deepStrictEqual(asked.elicitations, ["What is your name?"])
        assert.strictEqual(textOf(yield* client.callTool("ask_model", { question: "6 x 7?" })), "effect-model says 42")
        assert.deepStrictEqual(asked.samples, ["6 x 7?"])
      }))

    it.live("an input-required round the user declines reaches the server as a decline", () =>
      Effect.gen(function*() {
        const client = yield* connect({
          elicitation: { form: () => Effect.succeed({ action: "decline" }) }
        })
        assert.strictEqual(textOf(yield* client.callTool("ask_name")), "Hello, stranger!")
      }))

    it.live("resources: list, templates, reads, and completion of a template variable", () =>
      Effect.gen(function*() {
        const client = yield* connect()
        assert.deepStrictEqual((yield* client.resources.get).map((resource) => resource.uri), ["docs://readme"])
        assert.deepStrictEqual(
          (yield* client.resourceTemplates.get).map((template) => template.uriTemplate),
          ["docs://pages/{page}"]
        )
        assert.deepStrictEqual((yield* client.readResource("docs://readme")).contents, [
          { uri: "docs://readme", mimeType: "text/plain", text: "Read me first." }
        ])
        assert.deepStrictEqual((yield* client.readResource("docs://pages/usage")).contents, [
          { uri: "docs://pages/usage", mimeType: "text/plain", text: "Page usage" }
        ])
        const pages = yield* client.complete({
          ref: { type: "ref/resource", uri: "docs://pages/{page}" },
          argument: { name: "page", value: "in" }
        })
        assert.deepStrictEqual(pages.completion.values, ["intro", "install"])
      }))

    it.live("prompts: list, get, and completion of an argument", () =>
      Effect.gen(function*() {
        const client = yield* connect()
        assert.deepStrictEqual(names(yield* client.prompts.get), ["review"])
        const prompt = yield* client.getPrompt("review", { language: "rust" })
        assert.deepStrictEqual(prompt.messages, [
          { role: "user", content: { type: "text", text: "Review this rust code." } }
        ])
        const languages = yield* client.complete({
          ref: { type: "ref/prompt", name: "review" },
          argument: { name: "language", value: "j" }
        })
        assert.deepStrictEqual(languages.completion.values, ["javascript"])
      }))

    it.live("a tool added on the server reaches the cached list through subscriptions/listen", () =>
      Effect.gen(function*() {
        const client = yield* connect()
        assert.notInclude(names(yield* client.tools.get), "fresh")
        const appeared = yield* toolAppears(client, "fresh")
        assert.strictEqual(textOf(yield* client.callTool("add_tool", { name: "fresh" })), "added fresh")
        yield* Fiber.join(appeared)
        assert.include(names(yield* client.tools.get), "fresh")
        assert.strictEqual(textOf(yield* client.callTool("fresh")), "fresh:ok")
      }))

    it.live("watchResource: an update of the resource arrives through subscriptions/listen", () =>
      Effect.gen(function*() {
        const client = yield* connect()
        const updated = yield* client.watchResource("docs://readme").pipe(
          Stream.runHead,
          Effect.forkChild({ startImmediately: true })
        )
        // the watch is acknowledged once its listen stream is open: touch until the update arrives (bounded)
        const first = yield* client.callTool("touch", { uri: "docs://readme" }).pipe(
          Effect.andThen(Fiber.join(updated).pipe(Effect.timeoutOption("100 millis"))),
          Effect.repeat({ until: Option.isSome, times: 50 })
        )
        assert.deepStrictEqual(Option.map(Option.flatten(first), (update) => update.uri), Option.some("docs://readme"))
      }))

    if (eras === "modern") {
      it.live("a client pinned to the legacy era is refused", () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(connect({ era: "legacy" }))
          assert.include(error.message, "Unsupported protocol version")
        }))
    } else {
      it.live("a client pinned to the legacy era is served 2025-11-25", () =>
        Effect.gen(function*() {
          const client = yield* connect({ era: "legacy" })
          assert.strictEqual(client.era, "legacy")
          assert.strictEqual(client.protocolVersion, "2025-11-25")
          assert.strictEqual(textOf(yield* client.callTool("echo", { text: "old" })), "echo: old")
        }))
    }
  })
}

describe("interop: our McpClient (era legacy) → official SDK v2 dual-era server over stdio: the SDK's legacy shim", () => {
  it.live("input-required returns become server→client requests our handlers answer", () =>
    Effect.gen(function*() {
      const { asked, options } = answering("Grace")
      const { client } = yield* connectStdio(officialStdio("dual"), { ...options, era: "legacy" })
      assert.strictEqual(client.era, "legacy")
      assert.strictEqual(textOf(yield* client.callTool("ask_name")), "Hello, Grace!")
      assert.strictEqual(textOf(yield* client.callTool("ask_model", { question: "why?" })), "effect-model says 42")
      assert.deepStrictEqual(asked, { elicitations: ["What is your name?"], samples: ["why?"] })
    }))
})

describe("interop: the official v2 server's child process", () => {
  it.live("closing the client's scope ends stdin, and the server exits 0", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connectStdio(officialStdio("modern"))
      assert.strictEqual(client.era, "modern")
      yield* client.ping()
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
    }))
})

// -----------------------------------------------------------------------------
// 2. effect's own effect/ai McpServer, 2026-07-28 enabled
// -----------------------------------------------------------------------------

/** effect's server over Streamable HTTP in this process (127.0.0.1, an ephemeral port), for the scope: its URL. */
const effectHttp = Effect.gen(function*() {
  const context = yield* Layer.build(
    HttpRouter.serve(EffectMcpServer.layerHttp({ ...effectInfo, path: "/mcp", protocols, registrations })).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" })),
      Layer.orDie
    )
  )
  return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address) + "/mcp"
})

const effectRunners: ReadonlyArray<{ readonly name: string; readonly connect: Connect }> = [
  {
    name: "Streamable HTTP (127.0.0.1)",
    connect: (options) => Effect.flatMap(effectHttp, (url) => connectHttp(url, options))
  },
  {
    name: "stdio (child process)",
    connect: (options) =>
      Effect.map(
        connectStdio(
          { command: process.execPath, args: [fixture("effect-ai-server.mjs")], stderr: "capture" },
          options
        ),
        ({ client }) => client
      )
  }
]

for (const { connect, name } of effectRunners) {
  describe(`interop: our McpClient (era auto) → effect/ai McpServer (2026-07-28 enabled) over ${name}`, () => {
    it.live("the modern era, tools, resources, prompts and completions", () =>
      Effect.gen(function*() {
        const client = yield* connect()
        assert.strictEqual(client.era, "modern")
        assert.strictEqual(client.protocolVersion, MODERN)
        assert.deepStrictEqual(client.serverInfo, effectInfo)
        assert.deepStrictEqual([...names(yield* client.tools.get)].sort(), ["ask_name", "echo"])
        assert.deepStrictEqual((yield* client.callTool("echo", { text: "hi" })).structuredContent, { text: "hi" })
        assert.deepStrictEqual((yield* client.resources.get).map((resource) => resource.uri), ["effect://readme"])
        const readme = (yield* client.readResource("effect://readme")).contents[0]
        assert.isTrue(readme !== undefined && "text" in readme && readme.text === "Effect read me.")
        assert.deepStrictEqual(
          (yield* client.resourceTemplates.get).map((template) => template.uriTemplate),
          ["effect://notes/{id}"]
        )
        const note = (yield* client.readResource("effect://notes/beta")).contents[0]
        assert.isTrue(note !== undefined && "text" in note && note.text === "Note beta")
        const ids = yield* client.complete({
          ref: { type: "ref/resource", uri: "effect://notes/{id}" },
          argument: { name: "id", value: "al" }
        })
        assert.deepStrictEqual(ids.completion.values, ["alpha", "alpine"])
        assert.deepStrictEqual(names(yield* client.prompts.get), ["summarize"])
        const prompt = yield* client.getPrompt("summarize", { topic: "layers" })
        assert.deepStrictEqual(prompt.messages, [{
          role: "user",
          content: { type: "text", text: "Summarize layers." }
        }])
        const topics = yield* client.complete({
          ref: { type: "ref/prompt", name: "summarize" },
          argument: { name: "topic", value: "e" }
        })
        assert.deepStrictEqual(topics.completion.values, ["effects", "errors"])
      }))

    it.live("elicitation: served to a client pinned legacy; not in the modern era (effect has no input-required rounds)", () =>
      Effect.gen(function*() {
        const legacy = answering("Ada")
        const old = yield* connect({ ...legacy.options, era: "legacy" })
        assert.strictEqual(old.era, "legacy")
        const greeted = yield* old.callTool("ask_name")
        assert.deepStrictEqual(greeted.structuredContent, { greeting: "Hello, Ada!" })
        assert.deepStrictEqual(legacy.asked.elicitations, ["What is your name?"])
        const modern = answering("Ada")
        const client = yield* connect(modern.options)
        assert.deepStrictEqual((yield* client.callTool("ask_name")).structuredContent, { greeting: "no elicitation" })
        assert.deepStrictEqual(modern.asked.elicitations, [])
      }))
  })
}

// -----------------------------------------------------------------------------
// 3. our own dual-era server, to our client pinned to each era
// -----------------------------------------------------------------------------

describe("interop: our McpClient pinned to each era → our dual-era server over Streamable HTTP", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.live(`era ${era}: the elicitation tool, answered by our handler`, () =>
      Effect.gen(function*() {
        const context = yield* Layer.build(NodeMcpHttpServer.layer().pipe(Layer.provide(ModernServer)))
        const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
        const { asked, options } = answering("Ada")
        const client = yield* connectHttp(url, { ...options, era })
        assert.strictEqual(client.era, era)
        assert.strictEqual(client.protocolVersion, era === "modern" ? MODERN : "2025-11-25")
        assert.strictEqual(textOf(yield* client.callTool("ask_name")), `Hello, Ada! [${era}]`)
        assert.deepStrictEqual(asked.elicitations, ["What is your name?"])
      }))
  }
})

// -----------------------------------------------------------------------------
// 4. one group over a modern-only, a legacy-only and a dual-era server
// -----------------------------------------------------------------------------

describe("interop: McpGroup over servers of every era", () => {
  it.live("each server's status shows its era, and calls are routed to each", () =>
    Effect.gen(function*() {
      const ours = yield* Layer.build(NodeMcpHttpServer.layer().pipe(Layer.provide(ModernServer)))
      const oursUrl = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(ours))
      const group = yield* McpGroup.make({
        servers: {
          modern: McpGroup.stdio(process.execPath, [fixture("official-v2-server.mjs")], { env: { ERAS: "modern" } }),
          legacy: McpGroup.stdio(process.execPath, [everything, "stdio"], {
            env: { GZIP_ALLOWED_DOMAINS: "127.0.0.1" }
          }),
          dual: McpGroup.http(oursUrl)
        },
        nameHook: McpGroup.prefixed()
      }).pipe(Effect.provide([NodeMcpGroup.layerConnector(), NodeJsonSchemaValidator.layer]))
      const servers = yield* group.servers
      assert.deepStrictEqual(
        servers.map((
          server
        ) => [server.name, server.status, server.era, server.protocolVersion, server.serverInfo?.name]),
        [
          ["modern", "up", "modern", MODERN, officialInfo.name],
          ["legacy", "up", "legacy", "2025-11-25", "mcp-servers/everything"],
          ["dual", "up", "modern", MODERN, ourServerInfo.name]
        ]
      )
      assert.strictEqual(textOf(yield* group.callTool("modern__echo", { text: "a" })), "echo: a")
      assert.strictEqual(textOf(yield* group.callTool("legacy__echo", { message: "b" })), "Echo: b")
      assert.strictEqual(textOf(yield* group.callTool("dual__greet", { name: "c" })), "Hello, c! [modern]")
    }))
})
