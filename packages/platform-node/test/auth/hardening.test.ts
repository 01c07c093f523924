/**
 * Hardening of protected servers (issue 15), each attack on real sockets
 * (127.0.0.1, ephemeral ports):
 *
 * - a verifier that cannot check a token (introspection endpoint down or
 *   answering garbage, a key set that cannot be fetched) answers a bare
 *   `500` (JSON-RPC `-32603`, no URL, no detail); the detail is in the log;
 * - every token the verifier rejects is a `401 invalid_token`, among them the
 *   alg-confusion forgery (HS256 signed with the public key's bytes);
 * - a token naming neither `sub` nor `client_id` is refused, so two such
 *   tokens never share a session;
 * - with `cors`, the CORS headers are on every answer: 401, 403, 404 of a
 *   session, 500 of a verifier fault and 500 of a defect.
 */
import type { McpHttpServer } from "@effect-mcp/core"
import { McpAuth, McpError, McpResourceServer, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Logger, Schema } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Jose from "jose"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as NodeMcpHttpServer from "../../src/NodeMcpHttpServer.ts"
import * as NodeMcpJwtVerifier from "../../src/NodeMcpJwtVerifier.ts"
import * as NodeMcpSseServer from "../../src/NodeMcpSseServer.ts"
import { head, initialize, mcpHeaders, openSession, type Reply, send } from "../fixtures/rawHttp.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

const ISSUER = "http://127.0.0.1/as"
const APP = "http://app.example:5173"

const Whoami = McpTool.make("whoami", {
  input: Schema.Struct({}),
  handler: () => Effect.map(McpAuth.CurrentAuth, (auth) => String(auth?.subject))
})

const Admin = McpTool.make("admin", {
  input: Schema.Struct({}),
  handler: () => Effect.succeed("admin done")
})

/** A small node:http server on 127.0.0.1 for the duration of the scope. */
const listen = (handler: (request: Http.IncomingMessage, response: Http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<Http.Server>((resume) => {
      const server = Http.createServer((request, response) => {
        request.resume()
        request.on("end", () => handler(request, response))
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

/** The log lines of a server: level, message and the pretty cause. */
interface Line {
  readonly level: string
  readonly text: string
}

const capture = (lines: Array<Line>) =>
  Logger.make(({ cause, logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push({
      level: logLevel,
      text: `${parts.map(String).join(" ")} ${cause.reasons.length > 0 ? String(cause) : ""}`
    })
  })

/** A protected Streamable HTTP server; its log goes to `lines`. */
const serve = (
  auth: Omit<McpResourceServer.Options, "authorizationServers">,
  lines: Array<Line> = [],
  extra: Partial<NodeMcpHttpServer.Options> = {}
) =>
  Effect.gen(function*() {
    const mcp = yield* McpServer.make({ name: "hardened", version: "1.0.0" })
    yield* mcp.register(Whoami)
    yield* mcp.register(Admin)
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer({ ...extra, auth: { authorizationServers: [ISSUER], ...auth } }).pipe(
        Layer.provide(Layer.succeed(McpServer.McpServer, mcp)),
        Layer.provide(Logger.layer([capture(lines)]))
      )
    )
    return yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  })

/** A protected legacy HTTP+SSE server with CORS for `APP`; its log goes to `lines`; its origin. */
const serveSse = (
  auth: Omit<McpResourceServer.Options, "authorizationServers" | "requireAudience">,
  lines: Array<Line> = []
) =>
  Effect.gen(function*() {
    const mcp = yield* McpServer.make({ name: "hardened-sse", version: "1.0.0" })
    const context = yield* Layer.build(
      NodeMcpSseServer.layer({
        cors: { origins: [APP] },
        auth: { authorizationServers: [ISSUER], requireAudience: false, ...auth }
      }).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)), Layer.provide(Logger.layer([capture(lines)])))
    )
    return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  })

const challengeOf = (reply: Reply) =>
  McpAuth.bearerChallenge(reply.headers["www-authenticate"] as string | undefined)?.params

/** A bare 500: JSON-RPC `-32603`, nothing about the verifier. */
const assertBare500 = (reply: Reply, secrets: ReadonlyArray<string>) => {
  for (const secret of secrets) assert.notInclude(reply.body, secret)
  assert.strictEqual(reply.status, 500, reply.body)
  const body = JSON.parse(reply.body) as {
    readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
  }
  assert.strictEqual(body.error.code, -32603)
  assert.strictEqual(body.error.message, "Internal Server Error")
  assert.strictEqual(body.error.data, undefined)
  assert.strictEqual(reply.headers["www-authenticate"], undefined)
}

const signRs256 = (key: Jose.CryptoKey, claims: Record<string, unknown>, alg = "RS256") =>
  Effect.gen(function*() {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    return yield* Effect.promise(() =>
      new Jose.SignJWT(claims).setProtectedHeader({ alg }).setIssuer(ISSUER).setIssuedAt(now).setExpirationTime(
        now + 300
      ).sign(key)
    )
  })

/** The alg-confusion forgery: HS256 with `secret` (the public key's bytes) as the HMAC key. */
const forgeHs256 = (secret: Uint8Array, claims: Record<string, unknown>) =>
  Effect.gen(function*() {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    return yield* Effect.promise(() =>
      new Jose.SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuer(ISSUER).setIssuedAt(now)
        .setExpirationTime(now + 300).sign(secret)
    )
  })

const callTool = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})

// -----------------------------------------------------------------------------
// 1. verifier internals never reach the client
// -----------------------------------------------------------------------------

describe("a verifier that cannot check the token", () => {
  it.live("introspection endpoint answering garbage, erroring, or down: a bare 500, the detail in the log", () =>
    Effect.gen(function*() {
      const garbage = yield* listen((_request, response) => response.writeHead(200).end("<html>not json"))
      const failing = yield* listen((_request, response) => response.writeHead(503).end("down"))
      for (const origin of [garbage, failing]) {
        const endpoint = `${origin}/secret-introspect-path`
        const lines: Array<Line> = []
        const url = yield* serve({
          verify: McpResourceServer.introspection({ endpoint, clientId: "rs", clientSecret: "s3cret", cache: false })
        }, lines)
        const reply = yield* send(url, { headers: mcpHeaders({ token: "opaque-token" }), body: initialize })
        assertBare500(reply, [origin, "secret-introspect-path", "introspection", "HTTP 503", "JSON"])
        // the operator still learns what went wrong
        assert.isTrue(
          lines.some((line) => line.level === "Error" && line.text.includes("secret-introspect-path")),
          JSON.stringify(lines)
        )
      }
      // nothing listens on port 1: the request itself fails
      const unbound = "http://127.0.0.1:1/secret-introspect-path"
      const url = yield* serve({ verify: McpResourceServer.introspection({ endpoint: unbound, cache: false }) })
      const reply = yield* send(url, { headers: mcpHeaders({ token: "opaque-token" }), body: initialize })
      assertBare500(reply, ["127.0.0.1:1", "secret-introspect-path", "introspection"])
    }))

  it.live("a key set that cannot be fetched: a bare 500 (a server fault, not the token's)", () =>
    Effect.gen(function*() {
      const pair = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const origin = yield* listen((_request, response) => response.writeHead(500).end("no keys today"))
      const url = yield* serve({
        requireAudience: false,
        verify: NodeMcpJwtVerifier.make({ jwksUrl: `${origin}/hidden-jwks`, issuer: ISSUER })
      })
      const token = yield* signRs256(pair.privateKey, { sub: "alice" })
      const reply = yield* send(url, { headers: mcpHeaders({ token }), body: initialize })
      assertBare500(reply, [origin, "hidden-jwks", "key set"])
    }))

  it.live("a verifier that dies: a bare 500", () =>
    Effect.gen(function*() {
      const url = yield* serve({ verify: () => Effect.die(new Error("db password is hunter2")) })
      const reply = yield* send(url, { headers: mcpHeaders({ token: "t" }), body: initialize })
      assertBare500(reply, ["hunter2", "verifier"])
    }))

  it.live("legacy HTTP+SSE server: a verifier fault is a bare 500 with the CORS headers, a token naming nobody a 401", () =>
    Effect.gen(function*() {
      const pair = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const verifier = NodeMcpJwtVerifier.make({ key: pair.publicKey, issuer: ISSUER })
      const origin = yield* serveSse({
        verify: (token) =>
          token === "explode"
            ? Effect.fail(McpError.transport("introspection at http://10.0.0.7/secret failed"))
            : verifier(token)
      })
      const fault = yield* send(`${origin}/messages?sessionId=x`, {
        headers: { origin: APP, authorization: "Bearer explode", "content-type": "application/json" },
        body: initialize
      })
      assert.notInclude(fault.body, "10.0.0.7")
      assert.strictEqual(fault.status, 500)
      assert.strictEqual(fault.body, "Internal Server Error")
      assert.strictEqual(fault.headers["access-control-allow-origin"], APP)
      const nobody = yield* signRs256(pair.privateKey, { scope: "x" })
      const refused = yield* head(`${origin}/sse`, {
        accept: "text/event-stream",
        origin: APP,
        authorization: `Bearer ${nobody}`
      })
      assert.strictEqual(refused.status, 401)
      assert.strictEqual(refused.headers["access-control-allow-origin"], APP)
    }))

  it.live("legacy HTTP+SSE server: a defect (a verifier answering a malformed AuthInfo) is a bare 500 with the CORS headers, the cause in the log", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const origin = yield* serveSse({
        requiredScopes: ["mcp"],
        // a hand-written verifier's bug: no `scopes` array, so the scope check throws
        verify: () => Effect.succeed({ token: "t", subject: "u" } as unknown as McpAuth.AuthInfo)
      }, lines)
      for (
        const [name, reply] of [
          [
            "GET",
            yield* head(`${origin}/sse`, { accept: "text/event-stream", origin: APP, authorization: "Bearer t" })
          ],
          [
            "POST",
            yield* send(`${origin}/messages?sessionId=x`, {
              headers: { origin: APP, authorization: "Bearer t", "content-type": "application/json" },
              body: initialize
            })
          ]
        ] as const
      ) {
        assert.strictEqual(reply.status, 500, name)
        assert.strictEqual(reply.headers["access-control-allow-origin"], APP, name)
        if (name === "POST") assert.strictEqual(reply.body, "Internal Server Error")
      }
      assert.isTrue(
        lines.some((line) => line.level === "Error" && line.text.includes("McpSseServer: the request failed")),
        JSON.stringify(lines)
      )
    }))
})

// -----------------------------------------------------------------------------
// 2. every rejected token is a 401, alg confusion included
// -----------------------------------------------------------------------------

describe("token verification failures are 401 invalid_token", () => {
  it.live("HS256 forged with the RSA / EC public key as secret, against a static public key: 401", () =>
    Effect.gen(function*() {
      for (const alg of ["RS256", "ES256"] as const) {
        const pair = yield* Effect.promise(() => Jose.generateKeyPair(alg, { extractable: true }))
        const pem = yield* Effect.promise(() => Jose.exportSPKI(pair.publicKey))
        const jwk = yield* Effect.promise(() => Jose.exportJWK(pair.publicKey))
        const der = new Uint8Array(Crypto.createPublicKey(pem).export({ type: "spki", format: "der" }))
        const keyObject = Crypto.createPublicKey(pem)
        const keys: ReadonlyArray<NodeMcpJwtVerifier.Keys> = [
          { key: pair.publicKey },
          { key: keyObject },
          { key: { ...jwk, alg } },
          { jwks: { keys: [{ ...jwk, alg }] } }
        ]
        const claims = { sub: "admin", client_id: "c", scope: "mcp:admin" }
        const forgeries = [
          yield* forgeHs256(new TextEncoder().encode(pem), claims),
          yield* forgeHs256(new TextEncoder().encode(pem.trim()), claims),
          yield* forgeHs256(der, claims)
        ]
        for (const key of keys) {
          const url = yield* serve({
            requireAudience: false,
            verify: NodeMcpJwtVerifier.make({ ...key, issuer: ISSUER })
          })
          // the genuine token passes: the verifier is set up right
          const genuine = yield* signRs256(pair.privateKey, claims, alg)
          assert.strictEqual(
            (yield* send(url, { headers: mcpHeaders({ token: genuine }), body: initialize })).status,
            200
          )
          for (const forged of forgeries) {
            const reply = yield* send(url, { headers: mcpHeaders({ token: forged }), body: initialize })
            assert.strictEqual(reply.status, 401, `${alg} ${Object.keys(key)[0]}: ${reply.body}`)
            assert.strictEqual(challengeOf(reply)?.error, "invalid_token")
          }
        }
      }
    }))

  it.live("malformed, bad signature, wrong issuer, wrong audience, expired, alg none: 401 invalid_token", () =>
    Effect.gen(function*() {
      const pair = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const other = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const url = yield* serve({
        verify: NodeMcpJwtVerifier.make({ key: pair.publicKey, issuer: ISSUER, audience: "api://mcp" }),
        audiences: ["api://mcp"]
      })
      const make = (build: (jwt: Jose.SignJWT) => Jose.SignJWT, key: Jose.CryptoKey = pair.privateKey) =>
        Effect.promise(() =>
          build(new Jose.SignJWT({ sub: "alice" }).setProtectedHeader({ alg: "RS256" }).setIssuedAt(now)).sign(key)
        )
      const ok = yield* make((jwt) => jwt.setIssuer(ISSUER).setAudience("api://mcp").setExpirationTime(now + 300))
      assert.strictEqual((yield* send(url, { headers: mcpHeaders({ token: ok }), body: initialize })).status, 200)
      const [header, payload] = ok.split(".")
      const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${payload}.`
      const bad = [
        "not-a-jwt",
        "a.b.c",
        `${header}.${payload}.AAAA`,
        `${header}.!!!.${ok.split(".")[2]}`,
        unsigned,
        yield* make(
          (jwt) => jwt.setIssuer(ISSUER).setAudience("api://mcp").setExpirationTime(now + 300),
          other.privateKey
        ),
        yield* make((jwt) => jwt.setIssuer("http://evil").setAudience("api://mcp").setExpirationTime(now + 300)),
        yield* make((jwt) => jwt.setIssuer(ISSUER).setAudience("api://other").setExpirationTime(now + 300)),
        yield* make((jwt) => jwt.setIssuer(ISSUER).setAudience("api://mcp").setExpirationTime(now - 10))
      ]
      for (const token of bad) {
        const reply = yield* send(url, {
          headers: mcpHeaders({}, { authorization: `Bearer ${token}` }),
          body: initialize
        })
        assert.strictEqual(reply.status, 401, `${token}: ${reply.body}`)
        assert.strictEqual(challengeOf(reply)?.error, "invalid_token", token)
      }
    }))
})

// -----------------------------------------------------------------------------
// 3. a token naming nobody gets no shared principal
// -----------------------------------------------------------------------------

describe("tokens without sub or client_id", () => {
  it.live("are refused (401 with a description), so two of them never share a session", () =>
    Effect.gen(function*() {
      const pair = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const url = yield* serve({ verify: NodeMcpJwtVerifier.make({ key: pair.publicKey, issuer: ISSUER }) })
      const resource = url
      const alice = yield* signRs256(pair.privateKey, { aud: resource, scope: "a", jti: "one" })
      const mallory = yield* signRs256(pair.privateKey, { aud: resource, scope: "b", jti: "two" })
      // the attack: alice opens a session, mallory (another caller, also
      // naming nobody) uses alice's session id
      const opened = yield* send(url, { headers: mcpHeaders({ token: alice }), body: initialize })
      assert.strictEqual(opened.status, 401, opened.body)
      assert.strictEqual(challengeOf(opened)?.error, "invalid_token")
      assert.match(challengeOf(opened)?.error_description ?? "", /sub.*client_id/)
      const session = opened.headers["mcp-session-id"] as string | undefined
      assert.strictEqual(session, undefined)
      const used = yield* send(url, {
        headers: mcpHeaders({ token: mallory, session: "any" }),
        body: callTool(1, "whoami")
      })
      assert.strictEqual(used.status, 401)
      // a token naming its subject, or only its client, still works, and the
      // sessions stay bound: bob cannot use alice's session
      const bob = yield* signRs256(pair.privateKey, { aud: resource, sub: "bob" })
      const client = yield* signRs256(pair.privateKey, { aud: resource, client_id: "svc" })
      const bobs = yield* openSession(url, { token: bob })
      yield* openSession(url, { token: client })
      const foreign = yield* send(url, {
        headers: mcpHeaders({ token: client, session: bobs }),
        body: callTool(2, "whoami")
      })
      assert.strictEqual(foreign.status, 404)
    }))
})

// -----------------------------------------------------------------------------
// 4. CORS headers on every answer
// -----------------------------------------------------------------------------

const EXPOSE = "mcp-session-id, mcp-protocol-version, www-authenticate"

const assertCors = (reply: Reply, label: string) => {
  assert.strictEqual(reply.headers["access-control-allow-origin"], APP, label)
  assert.strictEqual(reply.headers["access-control-expose-headers"], EXPOSE, label)
  assert.strictEqual(reply.headers["vary"], "Origin", label)
}

/** An event store whose replay dies: a GET with `Last-Event-ID` is a defect. */
const dyingStore: McpHttpServer.EventStoreShape = {
  append: () => Effect.succeed(String(Math.random())),
  replayAfter: () => Effect.die(new Error("event store exploded at /var/secret")),
  remove: () => Effect.void
}

describe("CORS on error answers", () => {
  it.live("401, 403, 404 session, 500 verifier fault: all carry the CORS headers", () =>
    Effect.gen(function*() {
      const pair = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const verifier = NodeMcpJwtVerifier.make({ key: pair.publicKey, issuer: ISSUER })
      const url = yield* serve(
        {
          requiredScopes: ["mcp:read"],
          toolScopes: { admin: ["mcp:admin"] },
          verify: (token) => token === "explode" ? Effect.die(new Error("verifier internals")) : verifier(token)
        },
        [],
        { cors: { origins: [APP] } }
      )
      const token = yield* signRs256(pair.privateKey, { aud: url, sub: "alice", scope: "mcp:read" })
      const origin = { origin: APP }

      const noToken = yield* send(url, { headers: mcpHeaders(origin), body: initialize })
      assert.strictEqual(noToken.status, 401)
      assertCors(noToken, "401 without a token")

      const badToken = yield* send(url, { headers: mcpHeaders({ ...origin, token: "a.b.c" }), body: initialize })
      assert.strictEqual(badToken.status, 401)
      assertCors(badToken, "401 invalid_token")

      const session = yield* openSession(url, { ...origin, token })
      const forbidden = yield* send(url, {
        headers: mcpHeaders({ ...origin, token, session }),
        body: callTool(1, "admin")
      })
      assert.strictEqual(forbidden.status, 403)
      assertCors(forbidden, "403 insufficient_scope")

      const missing = yield* send(url, {
        headers: mcpHeaders({ ...origin, token, session: "no-such-session" }),
        body: callTool(2, "whoami")
      })
      assert.strictEqual(missing.status, 404)
      assertCors(missing, "404 session")

      const fault = yield* send(url, { headers: mcpHeaders({ ...origin, token: "explode" }), body: initialize })
      assertCors(fault, "500 verifier fault")
      assertBare500(fault, ["verifier internals"])
    }))

  it.live("a defect (an event store that dies): a bare 500 with the CORS headers, the cause in the log", () =>
    Effect.gen(function*() {
      const pair = yield* Effect.promise(() => Jose.generateKeyPair("RS256"))
      const lines: Array<Line> = []
      const url = yield* serve(
        { verify: NodeMcpJwtVerifier.make({ key: pair.publicKey, issuer: ISSUER }) },
        lines,
        { cors: { origins: [APP] }, eventStore: dyingStore }
      )
      const token = yield* signRs256(pair.privateKey, { aud: url, sub: "alice" })
      const origin = { origin: APP }
      const session = yield* openSession(url, { ...origin, token })
      const defect = yield* send(url, {
        method: "GET",
        headers: {
          ...origin,
          accept: "text/event-stream",
          authorization: `Bearer ${token}`,
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25",
          "last-event-id": "whatever"
        }
      })
      assertCors(defect, "500 defect")
      assertBare500(defect, ["exploded", "/var/secret"])
      assert.isTrue(
        lines.some((line) => line.level === "Error" && line.text.includes("/var/secret")),
        JSON.stringify(lines)
      )
    }))
})
