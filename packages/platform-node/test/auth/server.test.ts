/**
 * Protected MCP servers (`auth` option, McpResourceServer) on real sockets
 * (127.0.0.1, ephemeral ports): the 401 / 403 challenges, the Protected
 * Resource Metadata document, JWTs checked against a JWKS served on
 * 127.0.0.1, RFC 7662 introspection against a real endpoint, the auth info
 * in tool handlers, session binding, the legacy SSE server, and the official
 * SDK client against our protected server.
 */
import { McpAuth, McpError, McpResourceServer, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import { TestClock } from "effect/testing"
import * as Jose from "jose"
import * as Http from "node:http"
import * as NodeMcpHttpServer from "../../src/NodeMcpHttpServer.ts"
import * as NodeMcpJwtVerifier from "../../src/NodeMcpJwtVerifier.ts"
import * as NodeMcpSseServer from "../../src/NodeMcpSseServer.ts"
import { head, initialize, mcpHeaders, openSession, type Reply, send } from "../fixtures/rawHttp.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

const ISSUER = "http://127.0.0.1/as"

/** Reports the auth info the handler saw, both ways. */
const Whoami = McpTool.make("whoami", {
  input: Schema.Struct({}),
  handler: (_input, context) =>
    Effect.gen(function*() {
      const auth = yield* McpAuth.CurrentAuth
      return JSON.stringify({
        subject: auth?.subject,
        clientId: auth?.clientId,
        scopes: auth?.scopes,
        same: context.auth === auth
      })
    })
})

const Admin = McpTool.make("admin", {
  input: Schema.Struct({}),
  handler: () => Effect.succeed("admin done")
})

const makeMcp = Effect.gen(function*() {
  const server = yield* McpServer.make({ name: "protected", version: "1.0.0" })
  yield* server.register(Whoami)
  yield* server.register(Admin)
  return server
})

/** A small node:http server on 127.0.0.1 for the duration of the scope. */
const listen = (handler: (request: Http.IncomingMessage, body: string, response: Http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<Http.Server>((resume) => {
      const server = Http.createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8")
        request.on("data", (chunk: string) => (body += chunk))
        request.on("end", () => handler(request, body, response))
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => {
    const address = server.address()
    return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  }))

const keys = Effect.promise(async () => {
  const pair = await Jose.generateKeyPair("RS256", { extractable: true })
  const other = await Jose.generateKeyPair("RS256", { extractable: true })
  const jwk = { ...(await Jose.exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" }
  return { pair, other, jwks: { keys: [jwk] } }
})

/** A JWKS served on 127.0.0.1, counting its fetches. */
const jwksServer = (jwks: unknown) =>
  Effect.gen(function*() {
    const fetches = { count: 0 }
    const origin = yield* listen((_request, _body, response) => {
      fetches.count++
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks))
    })
    return { url: `${origin}/jwks`, fetches }
  })

const sign = (
  key: Jose.CryptoKey,
  claims: {
    readonly sub?: string
    readonly aud?: string | ReadonlyArray<string>
    readonly scope?: string
    readonly client_id?: string
    readonly expiresIn?: number
    readonly iss?: string
  }
) =>
  Effect.gen(function*() {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const { aud, expiresIn, iss, ...rest } = claims
    return yield* Effect.promise(() =>
      new Jose.SignJWT({ ...rest })
        .setProtectedHeader({ alg: "RS256", kid: "k1", typ: "at+jwt" })
        .setIssuer(iss ?? ISSUER)
        .setIssuedAt(now)
        .setExpirationTime(now + (expiresIn ?? 300))
        .setAudience(aud === undefined ? [] : typeof aud === "string" ? aud : [...aud])
        .sign(key)
    )
  })

const callTool = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})

const toolText = (body: string): string => {
  const parsed = JSON.parse(body) as {
    readonly result?: { readonly content: ReadonlyArray<{ readonly text: string }> }
  }
  return parsed.result!.content[0]!.text
}

const AUTH = {
  authorizationServers: [ISSUER],
  scopesSupported: ["mcp:read", "mcp:admin", "tools:list"],
  requiredScopes: ["mcp:read"],
  toolScopes: { admin: ["mcp:admin"] },
  methodScopes: { "tools/list": ["tools:list"] },
  resourceName: "Test MCP server",
  resourceDocumentation: "https://example.com/docs"
} as const

/** The protected Streamable HTTP server with `auth` (resource: its own URL). */
const serveHttp = (
  auth: Omit<McpResourceServer.Options, "authorizationServers"> & Partial<McpResourceServer.Options>
) =>
  Effect.gen(function*() {
    const mcp = yield* makeMcp
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer({ auth: { ...AUTH, ...auth } }).pipe(
        Layer.provide(Layer.succeed(McpServer.McpServer, mcp))
      )
    )
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    return { url, origin: new URL(url).origin, mcp }
  })

const params = (reply: Reply) =>
  McpAuth.bearerChallenge(reply.headers["www-authenticate"] as string | undefined)?.params

// -----------------------------------------------------------------------------
// Streamable HTTP
// -----------------------------------------------------------------------------

describe("protected Streamable HTTP server", () => {
  it.live("401 without a token: the exact challenge; the PRM document at both URLs", () =>
    Effect.gen(function*() {
      const { jwks } = yield* keys
      const { url, origin } = yield* serveHttp({ verify: NodeMcpJwtVerifier.make({ jwks, issuer: ISSUER }) })
      const reply = yield* send(url, { headers: mcpHeaders(), body: initialize })
      assert.strictEqual(reply.status, 401)
      assert.strictEqual(
        reply.headers["www-authenticate"],
        `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`
      )
      // GET and DELETE are protected too
      assert.strictEqual((yield* send(url, { method: "GET", headers: { accept: "text/event-stream" } })).status, 401)
      assert.strictEqual((yield* send(url, { method: "DELETE", headers: {} })).status, 401)

      const expected = {
        resource: url,
        authorization_servers: [ISSUER],
        scopes_supported: ["mcp:read", "mcp:admin", "tools:list"],
        bearer_methods_supported: ["header"],
        resource_name: "Test MCP server",
        resource_documentation: "https://example.com/docs"
      }
      for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
        const prm = yield* send(origin + path, { method: "GET", headers: { origin: "https://app.example" } })
        assert.strictEqual(prm.status, 200)
        assert.match(String(prm.headers["content-type"]), /^application\/json/)
        assert.strictEqual(prm.headers["access-control-allow-origin"], "*")
        assert.deepStrictEqual(JSON.parse(prm.body), expected)
      }
      const preflight = yield* send(origin + "/.well-known/oauth-protected-resource/mcp", {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "GET" }
      })
      assert.strictEqual(preflight.status, 204)
      assert.strictEqual(preflight.headers["access-control-allow-origin"], "*")
      assert.deepStrictEqual(McpResourceServer.metadata({ ...AUTH, verify: () => Effect.die("unused") }, url), expected)
      assert.strictEqual(McpResourceServer.metadataUrl(url), `${origin}/.well-known/oauth-protected-resource/mcp`)
    }))

  it.live("a JWT checked against a JWKS on 127.0.0.1: 401 invalid_token for a bad signature, expiry, another audience", () =>
    Effect.gen(function*() {
      const { pair, other, jwks } = yield* keys
      const remote = yield* jwksServer(jwks)
      const { url, origin } = yield* serveHttp({
        verify: NodeMcpJwtVerifier.make({ jwksUrl: remote.url, issuer: ISSUER, typ: "at+jwt" })
      })
      const metadata = `${origin}/.well-known/oauth-protected-resource/mcp`

      const good = yield* sign(pair.privateKey, { sub: "alice", aud: url, scope: "mcp:read", client_id: "app" })
      const session = yield* openSession(url, { token: good })
      assert.ok(session.length > 0)
      assert.strictEqual(remote.fetches.count, 1)

      const cases = {
        "bad signature": yield* sign(other.privateKey, { sub: "alice", aud: url, scope: "mcp:read" }),
        expired: yield* sign(pair.privateKey, { sub: "alice", aud: url, scope: "mcp:read", expiresIn: -60 }),
        "another audience": yield* sign(pair.privateKey, {
          sub: "alice",
          aud: "http://127.0.0.1:1/other",
          scope: "mcp:read"
        }),
        "another issuer": yield* sign(pair.privateKey, {
          sub: "alice",
          aud: url,
          scope: "mcp:read",
          iss: "http://evil"
        }),
        garbage: "not.a.jwt"
      }
      for (const [name, token] of Object.entries(cases)) {
        const reply = yield* send(url, {
          headers: mcpHeaders({ token: token, session: session }),
          body: callTool(1, "whoami")
        })
        assert.strictEqual(reply.status, 401, name)
        const challenge = params(reply)!
        assert.strictEqual(challenge.error, "invalid_token", name)
        assert.strictEqual(challenge.resource_metadata, metadata, name)
        assert.strictEqual(challenge.scope, "mcp:read", name)
        assert.ok(challenge.error_description !== undefined && challenge.error_description.length > 0, name)
      }
      // the audience check is the resource server's: the verifier was given none
      const wrongAudience = yield* send(url, {
        headers: mcpHeaders({ token: cases["another audience"], session: session }),
        body: callTool(1, "whoami")
      })
      assert.strictEqual(params(wrongAudience)!.error_description, "the token was not issued for this resource")
      // a malformed header
      const basic = yield* send(url, { headers: { ...mcpHeaders(), authorization: "Basic abc" }, body: initialize })
      assert.strictEqual(basic.status, 401)
      assert.strictEqual(params(basic)!.error, "invalid_token")
    }))

  it.live("the handler sees the auth info; 403 insufficient_scope per tool and per method; sessions stay with their user", () =>
    Effect.gen(function*() {
      const { pair, jwks } = yield* keys
      const { url, origin } = yield* serveHttp({ verify: NodeMcpJwtVerifier.make({ jwks, issuer: ISSUER }) })
      const metadata = `${origin}/.well-known/oauth-protected-resource/mcp`
      const token = yield* sign(pair.privateKey, { sub: "alice", aud: url, scope: "mcp:read", client_id: "app" })
      const session = yield* openSession(url, { token: token })

      const whoami = yield* send(url, {
        headers: mcpHeaders({ token: token, session: session }),
        body: callTool(1, "whoami")
      })
      assert.strictEqual(whoami.status, 200)
      assert.deepStrictEqual(JSON.parse(toolText(whoami.body)), {
        subject: "alice",
        clientId: "app",
        scopes: ["mcp:read"],
        same: true
      })

      // per tool
      const admin = yield* send(url, {
        headers: mcpHeaders({ token: token, session: session }),
        body: callTool(2, "admin")
      })
      assert.strictEqual(admin.status, 403)
      assert.strictEqual(
        admin.headers["www-authenticate"],
        `Bearer error="insufficient_scope", error_description="the token lacks the scope mcp:admin", scope="mcp:read mcp:admin", resource_metadata="${metadata}"`
      )
      // per method
      const list = yield* send(url, {
        headers: mcpHeaders({ token: token, session: session }),
        body: { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} }
      })
      assert.strictEqual(list.status, 403)
      assert.deepStrictEqual(params(list), {
        error: "insufficient_scope",
        error_description: "the token lacks the scope tools:list",
        scope: "mcp:read tools:list",
        resource_metadata: metadata
      })
      // a token with the scopes (same user and client: the same session)
      const stepped = yield* sign(pair.privateKey, {
        sub: "alice",
        aud: url,
        scope: "mcp:read mcp:admin tools:list",
        client_id: "app"
      })
      const adminOk = yield* send(url, {
        headers: mcpHeaders({ token: stepped, session: session }),
        body: callTool(4, "admin")
      })
      assert.strictEqual(adminOk.status, 200)
      assert.strictEqual(toolText(adminOk.body), "admin done")
      const whoami2 = yield* send(url, {
        headers: mcpHeaders({ token: stepped, session: session }),
        body: callTool(5, "whoami")
      })
      assert.deepStrictEqual(JSON.parse(toolText(whoami2.body)).scopes, ["mcp:read", "mcp:admin", "tools:list"])

      // another subject, or another client, on alice's session: 404, as if it did not exist
      const bob = yield* sign(pair.privateKey, { sub: "bob", aud: url, scope: "mcp:read mcp:admin", client_id: "app" })
      const otherClient = yield* sign(pair.privateKey, { sub: "alice", aud: url, scope: "mcp:read", client_id: "evil" })
      for (const foreign of [bob, otherClient]) {
        const hijack = yield* send(url, {
          headers: mcpHeaders({ token: foreign, session: session }),
          body: callTool(6, "whoami")
        })
        assert.strictEqual(hijack.status, 404)
        assert.strictEqual(JSON.parse(hijack.body).error.message, "Session not found")
        assert.strictEqual(
          (yield* send(url, { method: "DELETE", headers: mcpHeaders({ token: foreign, session: session }) })).status,
          404
        )
      }
      // a token without the required scope at all: 403 with the required scope
      const none = yield* sign(pair.privateKey, { sub: "alice", aud: url, scope: "", client_id: "app" })
      const refused = yield* send(url, {
        headers: mcpHeaders({ token: none, session: session }),
        body: callTool(7, "whoami")
      })
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(params(refused)!.scope, "mcp:read")
      // the session still works for alice, and DELETE ends it
      assert.strictEqual(
        (yield* send(url, { method: "DELETE", headers: mcpHeaders({ token: token, session: session }) })).status,
        204
      )
    }))

  it.live("RFC 7662 introspection against a real endpoint on 127.0.0.1", () =>
    Effect.gen(function*() {
      const seen: Array<{ readonly authorization: string | undefined; readonly body: string }> = []
      const endpoint = (yield* listen((request, body, response) => {
        seen.push({ authorization: request.headers.authorization, body })
        if (request.headers.authorization !== `Basic ${Buffer.from("rs:s3cret").toString("base64")}`) {
          return void response.writeHead(401, { "content-type": "application/json" }).end(`{"error":"invalid_client"}`)
        }
        const token = new URLSearchParams(body).get("token")
        const answer = token === "opaque-good"
          ? {
            active: true,
            sub: "carol",
            client_id: "cli",
            scope: "mcp:read mcp:admin",
            exp: Math.floor(Date.now() / 1000) + 60,
            aud: resource
          }
          : { active: false }
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer))
      })) + "/introspect"
      let resource = ""
      const { url } = yield* serveHttp({
        verify: McpResourceServer.introspection({ endpoint, clientId: "rs", clientSecret: "s3cret" })
      })
      resource = url
      const session = yield* openSession(url, { token: "opaque-good" })
      const whoami = yield* send(url, {
        headers: mcpHeaders({ token: "opaque-good", session: session }),
        body: callTool(1, "whoami")
      })
      assert.deepStrictEqual(JSON.parse(toolText(whoami.body)), {
        subject: "carol",
        clientId: "cli",
        scopes: ["mcp:read", "mcp:admin"],
        same: true
      })
      assert.strictEqual(seen[0]!.body, "token=opaque-good&token_type_hint=access_token")
      const inactive = yield* send(url, {
        headers: mcpHeaders({ token: "opaque-bad", session: session }),
        body: callTool(2, "whoami")
      })
      assert.strictEqual(inactive.status, 401)
      assert.deepStrictEqual(
        [params(inactive)!.error, params(inactive)!.error_description],
        ["invalid_token", "the token is not active"]
      )
      // the resource server's own credentials refused: 500, no challenge
      const wrong = McpResourceServer.introspection({ endpoint, clientId: "rs", clientSecret: "nope" })
      const exit = yield* Effect.exit(wrong("opaque-good"))
      assert.ok(exit._tag === "Failure")
      const broken = yield* serveHttp({ verify: wrong })
      const reply = yield* send(broken.url, { headers: mcpHeaders({ token: "opaque-good" }), body: initialize })
      assert.strictEqual(reply.status, 500)
      assert.strictEqual(reply.headers["www-authenticate"], undefined)
    }))

  it.live("stateless mode: each POST is checked and its handler sees its token", () =>
    Effect.gen(function*() {
      const verify = (token: string) =>
        Effect.succeed<McpAuth.AuthInfo>({ token, subject: token, scopes: ["mcp:read"], claims: {} })
      const mcp = yield* makeMcp
      const context = yield* Layer.build(
        NodeMcpHttpServer.layer({ stateless: true, auth: { ...AUTH, verify, requireAudience: false } }).pipe(
          Layer.provide(Layer.succeed(McpServer.McpServer, mcp))
        )
      )
      const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
      assert.strictEqual((yield* send(url, { headers: mcpHeaders(), body: callTool(1, "whoami") })).status, 401)
      for (const user of ["u1", "u2"]) {
        const reply = yield* send(url, { headers: mcpHeaders({ token: user }), body: callTool(1, "whoami") })
        assert.strictEqual(JSON.parse(toolText(reply.body)).subject, user)
      }
      const admin = yield* send(url, { headers: mcpHeaders({ token: "u1" }), body: callTool(2, "admin") })
      assert.strictEqual(admin.status, 403)
      assert.strictEqual(yield* mcp.sessionCount, 0)
    }))

  it.live("a token that names no audience is refused unless requireAudience is false", () =>
    Effect.gen(function*() {
      const verify = (token: string) =>
        Effect.succeed<McpAuth.AuthInfo>({ token, subject: "erin", scopes: ["mcp:read"], claims: {} })
      const strict = yield* serveHttp({ verify })
      const refused = yield* send(strict.url, { headers: mcpHeaders({ token: "t" }), body: initialize })
      assert.strictEqual(refused.status, 401)
      assert.include(refused.headers["www-authenticate"] ?? "", `error="invalid_token"`)
      const lenient = yield* serveHttp({ verify, requireAudience: false })
      assert.strictEqual(
        (yield* send(lenient.url, { headers: mcpHeaders({ token: "t" }), body: initialize })).status,
        200
      )
    }))

  it.effect("expiry is checked with the Clock (TestClock)", () =>
    Effect.gen(function*() {
      // the verifier says the token expires 60 s after the (test) epoch
      const verify = (token: string) =>
        token === "t"
          ? Effect.succeed<McpAuth.AuthInfo>({
            token,
            subject: "dave",
            scopes: ["mcp:read"],
            expiresAt: 60,
            claims: {}
          })
          : Effect.fail(McpError.auth("Unauthorized", "unknown token"))
      const { url } = yield* serveHttp({ verify, requireAudience: false })
      const session = yield* openSession(url, { token: "t" })
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(
        (yield* send(url, { headers: mcpHeaders({ token: "t", session: session }), body: callTool(1, "whoami") }))
          .status,
        200
      )
      yield* TestClock.adjust("1 second")
      const expired = yield* send(url, {
        headers: mcpHeaders({ token: "t", session: session }),
        body: callTool(2, "whoami")
      })
      assert.strictEqual(expired.status, 401)
      assert.strictEqual(params(expired)!.error_description, "the token has expired")
    }))

  it.live("no auth option: nothing changes (no challenge, no metadata route)", () =>
    Effect.gen(function*() {
      const mcp = yield* makeMcp
      const context = yield* Layer.build(
        NodeMcpHttpServer.layer().pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)))
      )
      const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
      const reply = yield* send(url, { headers: mcpHeaders(), body: initialize })
      assert.strictEqual(reply.status, 200)
      const session = reply.headers["mcp-session-id"] as string
      yield* send(url, {
        headers: mcpHeaders({ token: undefined, session: session }),
        body: { jsonrpc: "2.0", method: "notifications/initialized" }
      })
      const whoami = yield* send(url, {
        headers: mcpHeaders({ token: "ignored", session: session }),
        body: callTool(1, "whoami")
      })
      assert.deepStrictEqual(JSON.parse(toolText(whoami.body)), { same: true })
      const prm = yield* send(new URL(url).origin + "/.well-known/oauth-protected-resource/mcp", { method: "GET" })
      assert.strictEqual(prm.status, 404)
    }))

  it.live("the official SDK client (StreamableHTTPClientTransport) with a bearer token", () =>
    Effect.gen(function*() {
      const { pair, jwks } = yield* keys
      const remote = yield* jwksServer(jwks)
      const { url, mcp } = yield* serveHttp({
        verify: NodeMcpJwtVerifier.make({ jwksUrl: remote.url, issuer: ISSUER })
      })
      const token = yield* sign(pair.privateKey, {
        sub: "erin",
        aud: url,
        scope: "mcp:read tools:list",
        client_id: "sdk"
      })
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "official-sdk", version: "1.0.0" })
          await client.connect(
            new StreamableHTTPClientTransport(new URL(url), {
              requestInit: { headers: { authorization: `Bearer ${token}` } }
            })
          )
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["admin", "whoami"])
      const result = yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} }))
      assert.deepStrictEqual(JSON.parse((result.content as Array<{ text: string }>)[0]!.text), {
        subject: "erin",
        clientId: "sdk",
        scopes: ["mcp:read", "tools:list"],
        same: true
      })
      // the scope it lacks: the SDK surfaces the 403
      const refused = yield* Effect.exit(Effect.tryPromise(() => client.callTool({ name: "admin", arguments: {} })))
      assert.strictEqual(refused._tag, "Failure")
      assert.match(String(refused._tag === "Failure" ? refused.cause : ""), /lacks the scope mcp:admin/)
      assert.strictEqual(yield* mcp.sessionCount, 1)

      // without a token the SDK client fails to connect with a 401
      const anonymous = new Client({ name: "anonymous", version: "1.0.0" })
      const failed = yield* Effect.exit(
        Effect.tryPromise(() => anonymous.connect(new StreamableHTTPClientTransport(new URL(url))))
      )
      assert.strictEqual(failed._tag, "Failure")
      yield* Effect.promise(() => anonymous.close())
    }))
})

// -----------------------------------------------------------------------------
// legacy SSE
// -----------------------------------------------------------------------------

describe("protected HTTP+SSE server", () => {
  it.live("401 on the stream and the messages; the official SDK SSE client with a token; 403 and 404 on POST", () =>
    Effect.gen(function*() {
      const { pair, jwks } = yield* keys
      const mcp = yield* makeMcp
      const context = yield* Layer.build(
        NodeMcpSseServer.layer({
          auth: { ...AUTH, verify: NodeMcpJwtVerifier.make({ jwks, issuer: ISSUER }) }
        }).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)))
      )
      const address = Context.get(context, HttpServer.HttpServer).address
      const origin = HttpServer.formatAddress(address)
      const sseUrl = `${origin}/sse`
      const metadata = `${origin}/.well-known/oauth-protected-resource/sse`

      const anonymous = yield* head(sseUrl, { accept: "text/event-stream" })
      assert.strictEqual(anonymous.status, 401)
      assert.strictEqual(
        anonymous.headers["www-authenticate"],
        `Bearer resource_metadata="${metadata}", scope="mcp:read"`
      )
      const post = yield* send(`${origin}/messages?sessionId=x`, {
        headers: { "content-type": "application/json" },
        body: {}
      })
      assert.strictEqual(post.status, 401)
      const prm = yield* send(metadata, { method: "GET" })
      assert.strictEqual(JSON.parse(prm.body).resource, sseUrl)

      const token = yield* sign(pair.privateKey, { sub: "frank", aud: sseUrl, scope: "mcp:read", client_id: "sdk" })
      let endpoint: string | undefined
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "official-sdk", version: "1.0.0" })
          const transport = new SSEClientTransport(new URL(sseUrl), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
            eventSourceInit: {
              fetch: (input, init) =>
                fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }).then(
                  (response) => {
                    return response
                  }
                )
            }
          })
          await client.connect(transport)
          endpoint = (transport as unknown as { _endpoint?: URL })._endpoint?.href
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      const result = yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} }))
      assert.deepStrictEqual(JSON.parse((result.content as Array<{ text: string }>)[0]!.text), {
        subject: "frank",
        clientId: "sdk",
        scopes: ["mcp:read"],
        same: true
      })
      assert.ok(endpoint !== undefined)
      // raw POSTs on the SDK's session
      const admin = yield* send(endpoint!, {
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: callTool(99, "admin")
      })
      assert.strictEqual(admin.status, 403)
      assert.deepStrictEqual([params(admin)!.error, params(admin)!.scope], ["insufficient_scope", "mcp:read mcp:admin"])
      const other = yield* sign(pair.privateKey, { sub: "mallory", aud: sseUrl, scope: "mcp:read mcp:admin" })
      const hijack = yield* send(endpoint!, {
        headers: { "content-type": "application/json", authorization: `Bearer ${other}` },
        body: callTool(98, "whoami")
      })
      assert.strictEqual(hijack.status, 404)
    }))
})
