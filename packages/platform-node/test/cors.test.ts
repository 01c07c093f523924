/**
 * CORS for browser clients (`cors` option) on real sockets (127.0.0.1,
 * ephemeral ports): preflight answers, the CORS headers on 200 / 401 / 404 /
 * SSE answers, origins the option does not allow (no CORS headers, and the
 * Host/Origin guard's 403 where it applies), the interplay with the guard,
 * the legacy SSE server, and nothing changed without the option.
 */
import type { McpAuth } from "@effect-mcp/core"
import { McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Http from "node:http"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import * as NodeMcpSseServer from "../src/NodeMcpSseServer.ts"
import { head, initialize, mcpHeaders, type Reply, send } from "./fixtures/rawHttp.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

const Echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const makeMcp = Effect.gen(function*() {
  const server = yield* McpServer.make({ name: "cors", version: "1.0.0" })
  yield* server.register(Echo)
  return server
})

const serveHttp = (options: NodeMcpHttpServer.Options) =>
  Effect.gen(function*() {
    const mcp = yield* makeMcp
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)))
    )
    return yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  })

const preflight = (url: string, origin: string, extra?: Http.OutgoingHttpHeaders) =>
  send(url, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, mcp-protocol-version, mcp-session-id, authorization",
      ...extra
    }
  })

const EXPOSE = "mcp-session-id, mcp-protocol-version, www-authenticate"
const ALLOW_HEADERS = "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id"

const CORS_HEADERS = [
  "access-control-allow-origin",
  "access-control-expose-headers",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-allow-credentials",
  "access-control-max-age"
] as const

const assertNoCors = (reply: Reply, label: string) => {
  for (const name of CORS_HEADERS) assert.strictEqual(reply.headers[name], undefined, `${label}: ${name}`)
}

const assertCors = (reply: Reply, origin: string, label: string) => {
  assert.strictEqual(reply.headers["access-control-allow-origin"], origin, label)
  assert.strictEqual(reply.headers["access-control-expose-headers"], EXPOSE, label)
  assert.strictEqual(reply.headers["vary"], "Origin", label)
}

const APP = "http://app.example:5173"
const EVIL = "http://evil.example"

// -----------------------------------------------------------------------------
// Streamable HTTP
// -----------------------------------------------------------------------------

describe("Streamable HTTP server with cors", () => {
  it.live("preflight; CORS headers on 200, 202, SSE, 404, 405 and DELETE; a listed origin passes the loopback guard", () =>
    Effect.gen(function*() {
      const url = yield* serveHttp({ cors: { origins: [APP] } })

      const answer = yield* preflight(url, APP)
      assert.strictEqual(answer.status, 204)
      assert.strictEqual(answer.body, "")
      assert.strictEqual(answer.headers["access-control-allow-origin"], APP)
      assert.strictEqual(answer.headers["access-control-allow-methods"], "GET, POST, DELETE, OPTIONS")
      assert.strictEqual(answer.headers["access-control-allow-headers"], ALLOW_HEADERS)
      assert.strictEqual(answer.headers["access-control-max-age"], "7200")
      assert.strictEqual(answer.headers["access-control-allow-credentials"], undefined)
      assert.strictEqual(answer.headers["access-control-allow-private-network"], undefined)
      assert.strictEqual(answer.headers["vary"], "Origin, Access-Control-Request-Headers")
      // Private Network Access, when asked for
      const pna = yield* preflight(url, APP, { "access-control-request-private-network": "true" })
      assert.strictEqual(pna.headers["access-control-allow-private-network"], "true")

      // initialize: the session id is exposed
      const init = yield* send(url, { headers: mcpHeaders({ origin: APP }), body: initialize })
      assert.strictEqual(init.status, 200, init.body)
      assertCors(init, APP, "initialize")
      const session = init.headers["mcp-session-id"] as string
      assert.ok(session.length > 0)
      const initialized = yield* send(url, {
        headers: mcpHeaders({ origin: APP }, { "mcp-session-id": session }),
        body: { jsonrpc: "2.0", method: "notifications/initialized" }
      })
      assert.strictEqual(initialized.status, 202)
      assertCors(initialized, APP, "202")

      const call = yield* send(url, {
        headers: mcpHeaders({ origin: APP }, { "mcp-session-id": session }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }
      })
      assert.strictEqual(call.status, 200)
      assert.include(call.body, `"hi"`)
      assertCors(call, APP, "tools/call")

      // the GET stream
      const stream = yield* head(url, {
        ...mcpHeaders({ origin: APP }, { "mcp-session-id": session }),
        accept: "text/event-stream"
      })
      assert.strictEqual(stream.status, 200)
      assert.match(String(stream.headers["content-type"]), /^text\/event-stream/)
      assertCors(stream, APP, "GET stream")

      // errors
      const unknown = yield* send(url, {
        headers: mcpHeaders({ origin: APP }, { "mcp-session-id": "nope" }),
        body: { jsonrpc: "2.0", id: 2, method: "tools/list" }
      })
      assert.strictEqual(unknown.status, 404)
      assertCors(unknown, APP, "404")
      const put = yield* send(url, { method: "PUT", headers: mcpHeaders({ origin: APP }) })
      assert.strictEqual(put.status, 405)
      assertCors(put, APP, "405")

      const deleted = yield* send(url, {
        method: "DELETE",
        headers: mcpHeaders({ origin: APP }, { "mcp-session-id": session })
      })
      assert.strictEqual(deleted.status, 204)
      assertCors(deleted, APP, "DELETE")
    }))

  it.live("origins not allowed: the guard's 403 without CORS headers; allowed by the guard but not by cors: served, no CORS headers", () =>
    Effect.gen(function*() {
      const url = yield* serveHttp({ cors: { origins: [APP] } })
      // a foreign origin on a loopback bind: the guard refuses it, preflight included
      for (
        const reply of [
          yield* preflight(url, EVIL),
          yield* send(url, { headers: mcpHeaders({ origin: EVIL }), body: initialize })
        ]
      ) {
        assert.strictEqual(reply.status, 403)
        assert.include(reply.body, "Invalid Origin header")
        assertNoCors(reply, "evil")
        assert.strictEqual(reply.headers["vary"], "Origin")
      }
      // a loopback origin passes the guard (its default) but is not a cors origin
      const local = "http://localhost:3000"
      const answer = yield* preflight(url, local)
      assert.strictEqual(answer.status, 204)
      assertNoCors(answer, "preflight from localhost")
      const init = yield* send(url, { headers: mcpHeaders({ origin: local }), body: initialize })
      assert.strictEqual(init.status, 200)
      assertNoCors(init, "initialize from localhost")
      // the Host check is unchanged
      const rebound = yield* send(url, {
        headers: { ...mcpHeaders({ origin: APP }), host: "app.example:5173" },
        body: initialize
      })
      assert.strictEqual(rebound.status, 403)
      assert.include(rebound.body, "Invalid Host header")
      assertNoCors(rebound, "bad host")
      // a request without Origin (not a browser): no CORS headers
      const plain = yield* send(url, { headers: mcpHeaders({ origin: undefined }), body: initialize })
      assert.strictEqual(plain.status, 200)
      assertNoCors(plain, "no origin")

      // allowedOrigins "any": the guard lets everything through, cors decides
      const open = yield* serveHttp({ allowedOrigins: "any", cors: { origins: ["app.example"] } })
      const evil = yield* send(open, { headers: mcpHeaders({ origin: EVIL }), body: initialize })
      assert.strictEqual(evil.status, 200)
      assertNoCors(evil, "evil with allowedOrigins any")
      // a hostname entry allows any scheme and port
      const other = "https://app.example:8443"
      const ok = yield* send(open, { headers: mcpHeaders({ origin: other }), body: initialize })
      assertCors(ok, other, "hostname entry")
    }))

  it.live("with auth: the preflight needs no token; 401 and 403 readable (WWW-Authenticate exposed); origins \"*\", credentials, maxAge, allowHeaders", () =>
    Effect.gen(function*() {
      const verify = (token: string) =>
        Effect.succeed<McpAuth.AuthInfo>({
          token,
          subject: "web",
          scopes: token === "reader" ? ["mcp:read"] : [],
          claims: {}
        })
      const url = yield* serveHttp({
        auth: {
          authorizationServers: ["http://127.0.0.1/as"],
          verify,
          requireAudience: false,
          requiredScopes: ["mcp:read"]
        },
        cors: { origins: "*", credentials: true, maxAge: "10 minutes", allowHeaders: ["X-Api-Key"] }
      })
      // "*": every origin the guard accepts (loopback hostnames, any port, by default)
      const inspector = "http://localhost:6274"
      const answer = yield* preflight(url, inspector)
      assert.strictEqual(answer.status, 204)
      assert.strictEqual(answer.headers["access-control-allow-origin"], inspector)
      assert.strictEqual(answer.headers["access-control-allow-credentials"], "true")
      assert.strictEqual(answer.headers["access-control-max-age"], "600")
      assert.strictEqual(answer.headers["access-control-allow-headers"], `${ALLOW_HEADERS}, x-api-key`)
      assert.strictEqual(answer.headers["www-authenticate"], undefined)

      const anonymous = yield* send(url, { headers: mcpHeaders({ origin: inspector }), body: initialize })
      assert.strictEqual(anonymous.status, 401)
      assertCors(anonymous, inspector, "401")
      assert.strictEqual(anonymous.headers["access-control-allow-credentials"], "true")
      assert.match(String(anonymous.headers["www-authenticate"]), /^Bearer resource_metadata=/)

      const noScope = yield* send(url, {
        headers: mcpHeaders({ origin: inspector }, { authorization: "Bearer nobody" }),
        body: initialize
      })
      assert.strictEqual(noScope.status, 403)
      assertCors(noScope, inspector, "403 insufficient_scope")
      assert.include(String(noScope.headers["www-authenticate"]), `error="insufficient_scope"`)

      const ok = yield* send(url, {
        headers: mcpHeaders({ origin: inspector }, { authorization: "Bearer reader" }),
        body: initialize
      })
      assert.strictEqual(ok.status, 200)
      assertCors(ok, inspector, "200 with a token")

      // "*" does not widen the guard
      const evil = yield* preflight(url, EVIL)
      assert.strictEqual(evil.status, 403)
      assertNoCors(evil, "evil preflight")
      const evilPost = yield* send(url, {
        headers: mcpHeaders({ origin: EVIL }, { authorization: "Bearer reader" }),
        body: initialize
      })
      assert.strictEqual(evilPost.status, 403)
      assertNoCors(evilPost, "evil post")
    }))

  it.live("stateless: the allowed methods are POST and OPTIONS", () =>
    Effect.gen(function*() {
      const url = yield* serveHttp({ stateless: true, cors: { origins: [APP] } })
      const answer = yield* preflight(url, APP)
      assert.strictEqual(answer.headers["access-control-allow-methods"], "POST, OPTIONS")
      const reply = yield* send(url, {
        headers: mcpHeaders({ origin: APP }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "s" } } }
      })
      assert.strictEqual(reply.status, 200)
      assertCors(reply, APP, "stateless POST")
    }))

  it.live("without the option nothing changes: OPTIONS is 405, no CORS headers, a foreign origin is refused", () =>
    Effect.gen(function*() {
      const url = yield* serveHttp({})
      const options = yield* preflight(url, "http://localhost:5173")
      assert.strictEqual(options.status, 405)
      assertNoCors(options, "OPTIONS")
      assert.strictEqual(options.headers["vary"], undefined)
      const init = yield* send(url, { headers: mcpHeaders({ origin: "http://localhost:5173" }), body: initialize })
      assert.strictEqual(init.status, 200)
      assertNoCors(init, "initialize")
      assert.strictEqual(init.headers["vary"], undefined)
      const evil = yield* send(url, { headers: mcpHeaders({ origin: APP }), body: initialize })
      assert.strictEqual(evil.status, 403)
      assert.strictEqual(evil.headers["vary"], undefined)
    }))
})

// -----------------------------------------------------------------------------
// legacy SSE
// -----------------------------------------------------------------------------

describe("HTTP+SSE server with cors", () => {
  it.live("preflights on both paths, CORS headers on the stream and on POST answers, a foreign origin refused", () =>
    Effect.gen(function*() {
      const mcp = yield* makeMcp
      const context = yield* Layer.build(
        NodeMcpSseServer.layer({ cors: { origins: [APP] } }).pipe(
          Layer.provide(Layer.succeed(McpServer.McpServer, mcp))
        )
      )
      const origin = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)

      for (const path of ["/sse", "/messages"]) {
        const answer = yield* preflight(origin + path, APP)
        assert.strictEqual(answer.status, 204, path)
        assert.strictEqual(answer.headers["access-control-allow-origin"], APP, path)
        assert.strictEqual(answer.headers["access-control-allow-methods"], "GET, POST, OPTIONS", path)
        assert.strictEqual(answer.headers["access-control-allow-headers"], ALLOW_HEADERS, path)
        const evil = yield* preflight(origin + path, EVIL)
        assert.strictEqual(evil.status, 403, path)
        assertNoCors(evil, path)
      }
      const stream = yield* head(`${origin}/sse`, { accept: "text/event-stream", origin: APP })
      assert.strictEqual(stream.status, 200)
      assertCors(stream, APP, "SSE stream")
      const unknown = yield* send(`${origin}/messages?sessionId=nope`, {
        headers: { "content-type": "application/json", origin: APP },
        body: initialize
      })
      assert.strictEqual(unknown.status, 404)
      assertCors(unknown, APP, "404")
      const evil = yield* head(`${origin}/sse`, { accept: "text/event-stream", origin: EVIL })
      assert.strictEqual(evil.status, 403)
      assertNoCors(evil, "evil GET")
    }))

  it.live("without the option: OPTIONS is not routed, no CORS headers", () =>
    Effect.gen(function*() {
      const mcp = yield* makeMcp
      const context = yield* Layer.build(
        NodeMcpSseServer.layer().pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)))
      )
      const origin = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
      const answer = yield* preflight(`${origin}/sse`, "http://localhost:5173")
      assert.strictEqual(answer.status, 404)
      assertNoCors(answer, "OPTIONS")
      const stream = yield* head(`${origin}/sse`, { accept: "text/event-stream", origin: "http://localhost:5173" })
      assert.strictEqual(stream.status, 200)
      assertNoCors(stream, "GET")
    }))
})
