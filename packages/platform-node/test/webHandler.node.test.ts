/**
 * `McpHttpServer.toWebHandler` under Node: the web-standard handler served
 * on `node:http` (`fixtures/webHandlerHttp.ts`, 127.0.0.1, an ephemeral
 * port), driven by our client in both eras (a modern elicitation round, a
 * legacy session with server→client requests) and by the official v2
 * client; bad input answered as our Node server answers it; auth and its
 * metadata routes, CORS, limits and health routes; the legacy stateless
 * mode; `dispose` ending the legacy sessions.
 */
import { McpAuth, McpError, McpHttpServer, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Deferred, Effect, Exit, Fiber, Layer, Schema } from "effect"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { ModernServer } from "./fixtures/modernServer.ts"
import { initialize, mcpHeaders, openSse, send } from "./fixtures/rawHttp.ts"
import { listenWebHandler } from "./fixtures/webHandlerHttp.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { type Answer, EXPECTED, modernRequest, probe, PROBE_OPTIONS, PROBES } from "./utils/probes.ts"

const MODERN = "2026-07-28"

/** The handler on node:http for the test's scope (disposed, then the server closed, when it ends). */
const serveWeb = (
  serverLayer: Layer.Layer<McpServer.McpServer> = ModernServer,
  options: McpHttpServer.WebHandlerOptions = {}
) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const web = McpHttpServer.toWebHandler(serverLayer, options)
      return listenWebHandler({ fetch: web.handler, close: web.dispose }, "webHandler").then((http) => ({
        ...web,
        ...http
      }))
    }),
    (served) => Effect.promise(() => served.close())
  )

/** Our client over Streamable HTTP, in `era`, answering elicitations with `name`. */
const ours = (url: string, era: "modern" | "legacy", name = "Ada") =>
  connectOver(NodeMcpHttpClient.layer({ url }), {
    era,
    elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name } }) },
    roots: [{ uri: "file:///work", name: "work" }]
  })

/** The official v2 client in `era`, answering elicitations with `name`, for the scope. */
const official = (url: string, era: "modern" | "legacy", name = "Grace") =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-v2", version: "2.4.0" }, {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: era === "legacy" ? "legacy" : { pin: MODERN } }
      })
      client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name } }))
      const transport = new StreamableHTTPClientTransport(new URL(url))
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

describe("toWebHandler under Node: our client", () => {
  it.live("2026-07-28: lists tools, calls one, answers an elicitation round", () =>
    Effect.gen(function*() {
      const { url } = yield* serveWeb()
      const client = yield* ours(url, "modern", "Io")
      assert.strictEqual(client.era, "modern")
      const { tools } = yield* client.listTools()
      assert.deepStrictEqual(tools.map((tool) => tool.name), [
        "add_extra",
        "ask_model",
        "ask_name",
        "greet",
        "list_roots"
      ])
      assert.strictEqual(textOf(yield* client.callTool("greet", { name: "Oslo" })), "Hello, Oslo! [modern]")
      assert.strictEqual(textOf(yield* client.callTool("ask_name", {})), "Hello, Io! [modern]")
    }).pipe(Effect.scoped))

  it.live("legacy: a session, with server→client requests (elicitation, roots) on it", () =>
    Effect.gen(function*() {
      const { url } = yield* serveWeb()
      const client = yield* ours(url, "legacy", "Lu")
      assert.strictEqual(client.era, "legacy")
      assert.strictEqual(textOf(yield* client.callTool("greet", { name: "Oslo" })), "Hello, Oslo! [legacy]")
      assert.strictEqual(textOf(yield* client.callTool("ask_name", {})), "Hello, Lu! [legacy]")
      assert.strictEqual(textOf(yield* client.callTool("list_roots", {})), "1 root(s): file:///work")
    }).pipe(Effect.scoped))
})

describe("toWebHandler under Node: the official v2 client", () => {
  it.live("2026-07-28 and legacy side by side: tools, an elicitation each its own way", () =>
    Effect.gen(function*() {
      const { url } = yield* serveWeb()
      const modern = yield* official(url, "modern", "Grace")
      const legacy = yield* official(url, "legacy", "Ada")
      assert.strictEqual(modern.client.getProtocolEra(), "modern")
      assert.isUndefined(modern.transport.sessionId)
      assert.strictEqual(legacy.client.getProtocolEra(), "legacy")
      assert.isString(legacy.transport.sessionId)
      const { tools } = yield* Effect.promise(() => modern.client.listTools())
      assert.include(tools.map((tool) => tool.name), "greet")
      const [viaModern, viaLegacy] = yield* Effect.promise(() =>
        Promise.all([
          modern.client.callTool({ name: "ask_name", arguments: {} }),
          legacy.client.callTool({ name: "ask_name", arguments: {} })
        ])
      )
      assert.strictEqual(textOf(viaModern), "Hello, Grace! [modern]")
      assert.strictEqual(textOf(viaLegacy), "Hello, Ada! [legacy]")
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// bad input, as our Node server answers it
// -----------------------------------------------------------------------------

describe("toWebHandler under Node: bad input", () => {
  it.live("each probe gets the answer our Node server gives (-32700, 415, -32601, 413, ...)", () =>
    Effect.gen(function*() {
      const web = yield* serveWeb(ModernServer, PROBE_OPTIONS)
      const node = yield* Layer.build(NodeMcpHttpServer.layer(PROBE_OPTIONS).pipe(Layer.provide(ModernServer))).pipe(
        Effect.flatMap((context) => NodeMcpHttpServer.url().pipe(Effect.provideContext(context)))
      )
      const answers = new Map<string, Answer>()
      for (const [name, init] of PROBES) {
        const [fromWeb, fromNode] = [yield* probe(web.url, init), yield* probe(node, init)]
        assert.deepStrictEqual(fromWeb, fromNode, name)
        answers.set(name, fromWeb)
      }
      for (const [name, expected] of EXPECTED) {
        assert.isTrue(expected(answers.get(name)!), `${name}: ${answers.get(name)}`)
      }
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// options as on Node: auth, CORS, health, stateless
// -----------------------------------------------------------------------------

const WhoAmI = McpTool.make("whoami", {
  input: Schema.Struct({}),
  handler: () => Effect.succeed("someone")
})

describe("toWebHandler under Node: the options", () => {
  it.live("auth: 401 with a challenge naming the metadata, the metadata routes, a valid token served", () =>
    Effect.gen(function*() {
      const good: McpAuth.AuthInfo = { token: "good", subject: "alice", scopes: ["mcp"], claims: {} }
      const server = McpServer.register(WhoAmI).pipe(
        Layer.provideMerge(McpServer.layer({ name: "auth", version: "1" }))
      )
      const { handler, url } = yield* serveWeb(server, {
        auth: {
          resource: "https://mcp.example.com/mcp",
          authorizationServers: ["https://as.example.com"],
          requireAudience: false,
          verify: (token) =>
            token === "good" ? Effect.succeed(good) : Effect.fail(McpError.auth("Unauthorized", "unknown token"))
        }
      })
      const refused = yield* send(url, { headers: mcpHeaders(), body: initialize })
      assert.strictEqual(refused.status, 401)
      assert.include(
        String(refused.headers["www-authenticate"]),
        "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
      )
      for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
        const metadata = yield* Effect.promise(() =>
          handler(new Request(`http://127.0.0.1${path}`)).then((r) => r.json() as Promise<Record<string, unknown>>)
        )
        assert.deepStrictEqual(
          [metadata.resource, metadata.authorization_servers],
          ["https://mcp.example.com/mcp", ["https://as.example.com"]],
          path
        )
      }
      const client = yield* connectOver(
        NodeMcpHttpClient.layer({ url, auth: McpAuth.bearer("good") }),
        { era: "modern" }
      )
      assert.strictEqual(textOf(yield* client.callTool("whoami", {})), "someone")
    }).pipe(Effect.scoped))

  it.live("CORS: a preflight answered (204), the allowed origin echoed on answers", () =>
    Effect.gen(function*() {
      const { url } = yield* serveWeb(ModernServer, { cors: { origins: ["http://app.example"] } })
      const preflight = yield* send(url, {
        method: "OPTIONS",
        headers: { origin: "http://app.example", "access-control-request-method": "POST" }
      })
      assert.strictEqual(preflight.status, 204)
      assert.strictEqual(preflight.headers["access-control-allow-origin"], "http://app.example")
      assert.include(String(preflight.headers["access-control-allow-methods"]), "POST")
      const answered = yield* send(url, { headers: mcpHeaders({ origin: "http://app.example" }), body: initialize })
      assert.strictEqual(answered.status, 200)
      assert.strictEqual(answered.headers["access-control-allow-origin"], "http://app.example")
      assert.include(String(answered.headers["access-control-expose-headers"]), "mcp-session-id")
    }).pipe(Effect.scoped))

  it.live("health: /healthz and /readyz (readiness checked), /readyz 503 once disposed", () =>
    Effect.gen(function*() {
      let ready = false
      const web = McpHttpServer.toWebHandler(ModernServer, {
        readiness: Effect.suspend(() => ready ? Effect.void : Effect.fail("not yet"))
      })
      const get = (path: string) =>
        Effect.promise(() =>
          web.handler(new Request(`http://127.0.0.1${path}`)).then(async (
            r
          ) => [r.status, await r.text(), r.headers.get("cache-control")])
        )
      assert.deepStrictEqual(yield* get("/healthz"), [200, "ok\n", "no-store"])
      assert.deepStrictEqual(yield* get("/readyz"), [503, "not ready\n", "no-store"])
      ready = true
      assert.deepStrictEqual(yield* get("/readyz"), [200, "ready\n", "no-store"])
      assert.strictEqual((yield* get("/elsewhere"))[0], 404)
      yield* Effect.promise(() => web.dispose())
      assert.deepStrictEqual(yield* get("/readyz"), [503, "shutting down\n", "no-store"])
    }))

  it.live("stateless (for runtimes that keep no process): legacy requests without sessions, 2026-07-28 as always", () =>
    Effect.gen(function*() {
      const { url } = yield* serveWeb(ModernServer, { stateless: true })
      const opened = yield* send(url, { headers: mcpHeaders(), body: initialize })
      assert.strictEqual(opened.status, 200)
      assert.isUndefined(opened.headers["mcp-session-id"])
      const legacy = yield* ours(url, "legacy")
      assert.strictEqual(textOf(yield* legacy.callTool("greet", { name: "Oslo" })), "Hello, Oslo! [legacy]")
      const modern = yield* ours(url, "modern", "Io")
      assert.strictEqual(textOf(yield* modern.callTool("ask_name", {})), "Hello, Io! [modern]")
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// dispose
// -----------------------------------------------------------------------------

/** A server whose `hang` tool reports progress, then waits until interrupted. */
const hangServer = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const server = yield* McpServer.make({ name: "hang", version: "1" })
  yield* server.register(McpTool.make("hang", {
    input: Schema.Struct({}),
    handler: (_, context) =>
      context.reportProgress({ progress: 1, total: 2 }).pipe(
        Effect.andThen(Deferred.succeed(started, undefined)),
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
      )
  }))
  return { server, started, interrupted, layer: Layer.succeed(McpServer.McpServer, server) }
})

describe("toWebHandler under Node: cancellation and dispose", () => {
  it.live("closing a 2026-07-28 request's stream cancels its handler", () =>
    Effect.gen(function*() {
      const { interrupted, layer, started } = yield* hangServer
      const { url } = yield* serveWeb(layer)
      const stream = yield* openSse(url, {
        method: "POST",
        headers: mcpHeaders({ version: MODERN }, { "mcp-method": "tools/call", "mcp-name": "hang" }),
        body: modernRequest("tools/call", { name: "hang", arguments: {} }, { progressToken: "p" })
      })
      assert.strictEqual(stream.headers["content-type"], "text/event-stream")
      assert.strictEqual(JSON.parse((yield* stream.next)!.data).method, "notifications/progress")
      yield* Deferred.await(started)
      yield* stream.drop
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped))

  it.live("dispose ends the legacy sessions (a call in flight answered with an error), then refuses with 503", () =>
    Effect.gen(function*() {
      const { interrupted, layer, server, started } = yield* hangServer
      const web = yield* serveWeb(layer)
      const client = yield* ours(web.url, "legacy")
      assert.strictEqual(yield* server.sessionCount, 1)
      const call = yield* Effect.forkChild(Effect.exit(client.callTool("hang", {})))
      yield* Deferred.await(started)
      const before = performance.now()
      yield* Effect.promise(() => web.dispose())
      assert.isBelow(performance.now() - before, 2000)
      yield* Deferred.await(interrupted).pipe(Effect.timeout("1 second"))
      assert.isTrue(Exit.isFailure(yield* Fiber.join(call).pipe(Effect.timeout("5 seconds"))))
      assert.strictEqual(yield* server.sessionCount, 0)
      const after = yield* send(web.url, { headers: mcpHeaders(), body: initialize })
      assert.strictEqual(after.status, 503)
      // idempotent
      yield* Effect.promise(() => web.dispose())
    }).pipe(Effect.scoped))
})
