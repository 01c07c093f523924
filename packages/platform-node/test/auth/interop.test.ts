/**
 * OAuth interop with the official TypeScript SDK (@modelcontextprotocol/sdk),
 * everything on 127.0.0.1:
 *
 * 1. The SDK's client (`Client` + `StreamableHTTPClientTransport` with an
 *    `OAuthClientProvider` of this file) against our protected server
 *    (`startProtectedServer`: NodeMcpHttpServer with `auth`,
 *    NodeMcpJwtVerifier) and the test authorization server.
 * 2. Our client (`NodeMcpOAuth` + `McpClient`) against the SDK's protected
 *    server: its `McpServer` + `StreamableHTTPServerTransport` behind
 *    `requireBearerAuth`, with the protected resource metadata of
 *    `mcpAuthMetadataRouter`, on express (the SDK's own dependency, through
 *    `createMcpExpressApp`).
 *
 * Each test checks what the servers and the authorization server saw, and
 * that no connection is left open once the clients are closed.
 */
import * as Undici from "@effect/platform-node/Undici"
import { assert, describe, it } from "@effect/vitest"
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js"
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter
} from "@modelcontextprotocol/sdk/server/auth/router.js"
import type { AuthInfo as SdkAuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js"
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import type * as Scope from "effect/Scope"
import * as Jose from "jose"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import * as Http from "node:http"
import type { Socket } from "node:net"
import { type AuthServer, startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { connect, text } from "../fixtures/oauthClient.ts"

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

const PRM = "/.well-known/oauth-protected-resource"
const ASM = "/.well-known/oauth-authorization-server"

/** Waits (at most 1 s) until every listed socket is closed; the resource server's own JWKS fetches (jose) are not a client's. */
const noOpenSockets = (sources: ReadonlyArray<readonly [string, Effect.Effect<ReadonlyArray<string>>]>) =>
  Effect.gen(function*() {
    const all = Effect.map(
      Effect.forEach(
        sources,
        ([name, open]) =>
          Effect.map(
            open,
            (sockets) => sockets.filter((s) => !s.includes("user-agent: jose/")).map((s) => `${name}: ${s}`)
          )
      ),
      (lists) => lists.flat()
    )
    let open: ReadonlyArray<string> = []
    for (let i = 0; i < 20; i++) {
      open = yield* all
      if (open.length === 0) break
      yield* Effect.sleep("50 millis")
    }
    assert.deepStrictEqual(open, [], open.join("; "))
  })

/** A promise's rejection as a value (the test asserts what the SDK threw). */
const rejection = <A>(promise: () => Promise<A>) =>
  Effect.promise(() => promise().then(() => undefined as unknown, (error: unknown) => error))

// -----------------------------------------------------------------------------
// 1. the official SDK client
// -----------------------------------------------------------------------------

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>

/** The SDK's fetch: undici with an agent of the test's own, destroyed with the scope (so the test can tell the SDK's sockets are gone). */
const scopedFetch: Effect.Effect<Fetch, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => new Undici.Agent()),
    (agent) => Effect.promise(() => agent.destroy())
  ),
  (agent): Fetch => (url, init) =>
    Undici.fetch(url, { ...(init as unknown as Undici.RequestInit), dispatcher: agent }) as unknown as Promise<Response>
)

/**
 * An in-memory `OAuthClientProvider`: the "user agent" follows the
 * authorization URL without redirects and keeps the code from the Location
 * (the test then calls `transport.finishAuth(code)`, as an app would on its
 * redirect URI).
 */
class MemoryProvider implements OAuthClientProvider {
  readonly redirect = "http://127.0.0.1:49152/callback"
  storedTokens: OAuthTokens | undefined = undefined
  storedClient: OAuthClientInformationMixed | undefined = undefined
  verifier = ""
  readonly states: Array<string> = []
  readonly codes: Array<string> = []
  readonly authorizationUrls: Array<URL> = []
  readonly savedTokens: Array<OAuthTokens> = []
  readonly fetchFn: Fetch
  constructor(fetchFn: Fetch) {
    this.fetchFn = fetchFn
  }
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "official sdk client",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"]
    }
  }
  state() {
    const state = randomBytes(16).toString("base64url")
    this.states.push(state)
    return state
  }
  clientInformation() {
    return this.storedClient
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.storedClient = information
  }
  tokens() {
    return this.storedTokens
  }
  saveTokens(tokens: OAuthTokens) {
    this.storedTokens = tokens
    this.savedTokens.push(tokens)
  }
  async redirectToAuthorization(authorizationUrl: URL) {
    this.authorizationUrls.push(authorizationUrl)
    const response = await this.fetchFn(authorizationUrl, { redirect: "manual" })
    await response.body?.cancel()
    const location = response.headers.get("location")
    if (response.status !== 302 || location === null) throw new Error(`authorization: HTTP ${response.status}`)
    const back = new URL(location)
    if (back.searchParams.get("state") !== this.states.at(-1)) {
      throw new Error(`authorization: wrong state in ${location}`)
    }
    const code = back.searchParams.get("code")
    if (code === null) throw new Error(`authorization refused: ${location}`)
    this.codes.push(code)
  }
  saveCodeVerifier(codeVerifier: string) {
    this.verifier = codeVerifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** An SDK client and transport with the provider, closed with the scope. */
const sdkClient = (url: string, provider: MemoryProvider, fetchFn: Fetch) =>
  Effect.acquireRelease(
    Effect.sync(() => ({
      client: new Client({ name: "official-sdk", version: "1.0.0" }),
      transport: new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: fetchFn })
    })),
    ({ client }) => Effect.promise(() => client.close())
  )

/**
 * The SDK's sign-in dance: `connect` meets the 401, runs discovery,
 * registration and the authorization request (our provider keeps the code),
 * then throws `UnauthorizedError`; `finishAuth(code)` exchanges the code, and
 * a new transport connects with the token.
 */
const signIn = (url: string, provider: MemoryProvider, fetchFn: Fetch) =>
  Effect.gen(function*() {
    const first = yield* sdkClient(url, provider, fetchFn)
    const error = yield* rejection(() => first.client.connect(first.transport))
    assert.instanceOf(error, UnauthorizedError)
    assert.strictEqual(provider.codes.length, 1)
    yield* Effect.promise(() => first.transport.finishAuth(provider.codes[0]!))
    const second = yield* sdkClient(url, provider, fetchFn)
    yield* Effect.promise(() => second.client.connect(second.transport))
    return second
  })

const toolText = (result: unknown) =>
  (result as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0]!.text

describe("interop: the official SDK client (its OAuth flow) → our protected server", () => {
  it.live("discovers our PRM, registers, authorizes with PKCE S256 and resource; the handler sees the token's subject and scopes", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ scopesSupported: ["mcp:read", "mcp:admin"] })
      const server = yield* startProtectedServer(as, {
        requiredScopes: ["mcp:read"],
        scopesSupported: ["mcp:read", "mcp:admin"]
      })
      yield* Effect.gen(function*() {
        const fetchFn = yield* scopedFetch
        const provider = new MemoryProvider(fetchFn)
        const { client } = yield* signIn(server.url, provider, fetchFn)

        // the first request went out without a token; the SDK then read OUR
        // protected resource metadata (the path-aware URL of the challenge).
        // Twice: `auth()` runs discovery again in `finishAuth` (this provider
        // does not implement `discoveryState`), the AS metadata too
        const mcp = server.requests.filter((r) => r.path === "/mcp")
        assert.isUndefined(mcp[0]!.headers.authorization)
        const prm = server.requests.filter((r) => r.path.startsWith(PRM))
        assert.deepStrictEqual(prm.map((r) => `${r.method} ${r.path}`), [`GET ${PRM}/mcp`, `GET ${PRM}/mcp`])
        assert.strictEqual(prm[0]!.headers["mcp-protocol-version"], "2025-11-25")
        assert.strictEqual(as.requestsTo(ASM).length, 2)

        // what the AS saw: one registration, an authorization request with
        // PKCE S256, our resource and the challenge's scope, a code exchange
        assert.strictEqual(as.requestsTo("/register").length, 1)
        const registration = as.requestsTo("/register")[0]!
        assert.deepStrictEqual((registration.json as Record<string, unknown>).redirect_uris, [provider.redirect])
        const authorize = as.requestsTo("/authorize")
        assert.strictEqual(authorize.length, 1)
        const query = authorize[0]!.query
        assert.strictEqual(query.response_type, "code")
        assert.strictEqual(query.code_challenge_method, "S256")
        assert.match(query.code_challenge!, /^[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(query.resource, server.resource)
        assert.strictEqual(query.scope, "mcp:read")
        assert.strictEqual(query.state, provider.states[0])
        assert.strictEqual(query.client_id, registration.response.client_id)
        const tokenRequests = as.requestsTo("/token")
        assert.deepStrictEqual(tokenRequests.map((r) => r.form?.grant_type), ["authorization_code"])
        const exchange = tokenRequests[0]!
        assert.strictEqual(exchange.status, 200)
        assert.strictEqual(exchange.form!.resource, server.resource)
        assert.strictEqual(s256(exchange.form!.code_verifier!), query.code_challenge)
        assert.strictEqual(exchange.form!.redirect_uri, provider.redirect)
        assert.strictEqual(exchange.clientAuth, "client_secret_basic")
        // the SDK stamps what it stores with the authorization server it came from
        assert.strictEqual((provider.storedTokens as { issuer?: string }).issuer, as.issuer)

        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(tools.map((t) => t.name), ["admin_op", "echo", "whoami"])
        const seen = JSON.parse(
          toolText(yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} })))
        )
        assert.strictEqual(seen.subject, "user-1")
        assert.strictEqual(seen.clientId, registration.response.client_id)
        assert.deepStrictEqual(seen.scopes, ["mcp:read"])
        assert.deepStrictEqual(seen.audience, [server.resource])
        assert.strictEqual(seen.token, provider.storedTokens!.access_token.slice(0, 12))
        // every later MCP request carried the token and was accepted
        assert.isTrue(server.verified.every((v) => v.ok))
        assert.strictEqual(as.issued.length, 1)
        // the SDK's connections are open until the scope closes (then checked below)
        assert.isAbove((yield* server.openSockets).length, 0)
      }).pipe(Effect.scoped)
      yield* noOpenSockets([["front", server.openSockets], ["AS", as.openSockets]])
    }))

  it.live("scope selection: with no scope in the challenge the SDK asks for all of the PRM's scopes_supported", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, { scopesSupported: ["mcp:read", "mcp:admin"] })
      yield* Effect.gen(function*() {
        const fetchFn = yield* scopedFetch
        const provider = new MemoryProvider(fetchFn)
        const { client } = yield* signIn(server.url, provider, fetchFn)
        const authorize = as.requestsTo("/authorize")
        assert.strictEqual(authorize[0]!.query.scope, "mcp:read mcp:admin")
        // the same scope went into the registration
        assert.strictEqual((as.requestsTo("/register")[0]!.json as Record<string, unknown>).scope, "mcp:read mcp:admin")
        assert.strictEqual(
          toolText(yield* Effect.promise(() => client.callTool({ name: "admin_op", arguments: {} }))),
          "admin done"
        )
      }).pipe(Effect.scoped)
      yield* noOpenSockets([["front", server.openSockets], ["AS", as.openSockets]])
    }))

  it.live("a revoked access token: our 401 invalid_token makes the SDK refresh (with resource) and resend, no new authorization", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as)
      yield* Effect.gen(function*() {
        const fetchFn = yield* scopedFetch
        const provider = new MemoryProvider(fetchFn)
        const { client } = yield* signIn(server.url, provider, fetchFn)
        // the SDK opens its GET stream after `initialized`, unawaited: revoking
        // before it is up makes it meet a 401 too, and the SDK runs two
        // refreshes at once (no single flight), the second with the refresh
        // token the first one rotated away. Wait for the stream first
        for (let i = 0; i < 100 && !server.requests.some((r) => r.method === "GET" && r.path === "/mcp"); i++) {
          yield* Effect.sleep("10 millis")
        }
        yield* Effect.sleep("100 millis")
        as.revoke(as.issued[0]!.token)
        const result = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "again" } }))
        assert.strictEqual(toolText(result), "again")
        const tokenRequests = as.requestsTo("/token")
        assert.deepStrictEqual(tokenRequests.map((r) => r.form?.grant_type), ["authorization_code", "refresh_token"])
        assert.strictEqual(tokenRequests[1]!.form!.resource, server.resource)
        assert.strictEqual(as.requestsTo("/authorize").length, 1)
        assert.strictEqual(server.verified.at(-1)!.token, as.issued[1]!.token)
        assert.isTrue(server.verified.at(-1)!.ok)
      }).pipe(Effect.scoped)
      yield* noOpenSockets([["front", server.openSockets], ["AS", as.openSockets]])
    }))

  it.live("step-up without a refresh token: 403 insufficient_scope → the SDK authorizes again with the challenge's scope (finishAuth, then the call succeeds)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ refreshTokens: false })
      const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"] })
      yield* Effect.gen(function*() {
        const fetchFn = yield* scopedFetch
        const provider = new MemoryProvider(fetchFn)
        const { client, transport } = yield* signIn(server.url, provider, fetchFn)
        assert.strictEqual(as.requestsTo("/authorize")[0]!.query.scope, "mcp:read")

        const refused = yield* rejection(() => client.callTool({ name: "admin_op", arguments: {} }))
        // the 403 made the SDK start a new authorization (our server's
        // challenge names the union of the scopes: mcp:read mcp:admin),
        // which needs the user: the call fails with UnauthorizedError
        assert.instanceOf(refused, UnauthorizedError)
        const authorize = as.requestsTo("/authorize")
        assert.strictEqual(authorize.length, 2)
        assert.strictEqual(authorize[1]!.query.scope, "mcp:read mcp:admin")
        assert.strictEqual(authorize[1]!.query.resource, server.resource)
        assert.strictEqual(provider.codes.length, 2)
        yield* Effect.promise(() => transport.finishAuth(provider.codes[1]!))

        // the same session goes on with the new token
        assert.strictEqual(
          toolText(yield* Effect.promise(() => client.callTool({ name: "admin_op", arguments: {} }))),
          "admin done"
        )
        const seen = JSON.parse(
          toolText(yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} })))
        )
        assert.deepStrictEqual(seen.scopes, ["mcp:read", "mcp:admin"])
        assert.strictEqual(as.requestsTo("/register").length, 1)
        assert.deepStrictEqual(as.requestsTo("/token").map((r) => r.form?.grant_type), [
          "authorization_code",
          "authorization_code"
        ])
      }).pipe(Effect.scoped)
      yield* noOpenSockets([["front", server.openSockets], ["AS", as.openSockets]])
    }))

  it.live("step-up with a refresh token: the SDK refreshes (without scope) instead of authorizing, gets the same 403 and gives up", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"] })
      yield* Effect.gen(function*() {
        const fetchFn = yield* scopedFetch
        const provider = new MemoryProvider(fetchFn)
        const { client } = yield* signIn(server.url, provider, fetchFn)

        const refused = yield* rejection(() => client.callTool({ name: "admin_op", arguments: {} }))
        assert.instanceOf(refused, StreamableHTTPError)
        assert.strictEqual((refused as StreamableHTTPError).code, 403)
        assert.include((refused as Error).message, "after trying upscoping")
        // no second authorization: a refresh_token grant, with no scope, so
        // the new token has the old scopes and the retry gets the same 403
        assert.strictEqual(as.requestsTo("/authorize").length, 1)
        const tokenRequests = as.requestsTo("/token")
        assert.deepStrictEqual(tokenRequests.map((r) => r.form?.grant_type), ["authorization_code", "refresh_token"])
        assert.isUndefined(tokenRequests[1]!.form!.scope)
        assert.strictEqual(tokenRequests[1]!.form!.resource, server.resource)
        assert.strictEqual(as.issued[1]!.claims.scope, "mcp:read")
        // the session still works for what the token allows
        assert.strictEqual(
          toolText(yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "still here" } }))),
          "still here"
        )
      }).pipe(Effect.scoped)
      yield* noOpenSockets([["front", server.openSockets], ["AS", as.openSockets]])
    }))
})

// -----------------------------------------------------------------------------
// 2. the official SDK's protected server
// -----------------------------------------------------------------------------

interface SdkRecorded {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  status?: number
  challenge?: string | undefined
}

interface SdkProtectedServer {
  /** The MCP endpoint (`/mcp`), also the resource. */
  readonly url: string
  /** The PRM's `resource` (`resourceServerUrl`), also `expectedResource`. */
  readonly resource: string
  /** What `getOAuthProtectedResourceMetadataUrl` gives (named in the challenges). */
  readonly metadataUrl: string
  readonly requests: Array<SdkRecorded>
  /** `extra.authInfo` of each tool call. */
  readonly seen: Array<SdkAuthInfo | undefined>
  readonly sessions: Map<string, StreamableHTTPServerTransport>
  readonly openSockets: Effect.Effect<ReadonlyArray<string>>
}

type ExpressRequest = Http.IncomingMessage & { body?: any; auth?: SdkAuthInfo }
type ExpressResponse = Http.ServerResponse & { status: (code: number) => { json: (body: unknown) => void } }
type Next = (error?: unknown) => void

/** The authorization server's RFC 8414 document, fetched over a connection closed right after. */
const fetchAsMetadata = (as: AuthServer) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new Undici.Agent()),
    (agent) =>
      Effect.promise(async () => {
        const response = await Undici.fetch(`${as.url}${ASM}`, { dispatcher: agent })
        return (await response.json()) as OAuthMetadata
      }),
    (agent) => Effect.promise(() => agent.destroy())
  )

/**
 * The SDK's protected MCP server on 127.0.0.1: `createMcpExpressApp`, the
 * PRM from `mcpAuthMetadataRouter` (naming `as`), `requireBearerAuth` with a
 * verifier that checks the fixture AS's JWTs (jose, its JWKS; the `aud`
 * reported as `resource`, checked by `expectedResource`) on `/mcp`, and for
 * a `tools/call` of `admin_op` a second `requireBearerAuth` that needs
 * `mcp:admin` too (the SDK's own 403 insufficient_scope challenge). Tools:
 * `whoami` (its `extra.authInfo`, as JSON) and `admin_op`.
 */
const startSdkProtectedServer = (
  as: AuthServer,
  options: { readonly resource?: "endpoint" | "origin" } = {}
): Effect.Effect<SdkProtectedServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const app = createMcpExpressApp({ host: "127.0.0.1" })
    const http = Http.createServer(app)
    const open = new Map<Socket, string>()
    http.on("connection", (socket: Socket) => {
      open.set(socket, "(no request)")
      socket.on("close", () => open.delete(socket))
    })
    http.on("request", (req: Http.IncomingMessage) => {
      open.set(req.socket, `${req.method} ${req.url} (user-agent: ${req.headers["user-agent"] ?? "none"})`)
    })
    const sessions = new Map<string, StreamableHTTPServerTransport>()
    const servers: Array<SdkMcpServer> = []
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        http.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () =>
        Effect.gen(function*() {
          yield* Effect.promise(() => Promise.all(servers.map((server) => server.close())))
          yield* Effect.callback<void>((resume) => {
            http.closeAllConnections()
            http.close(() => resume(Effect.void))
          })
        })
    )
    const address = http.address()
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/mcp`
    const resource = new URL(options.resource === "origin" ? new URL(url).origin : url)
    const metadataUrl = getOAuthProtectedResourceMetadataUrl(resource)
    const oauthMetadata = yield* fetchAsMetadata(as)

    const requests: Array<SdkRecorded> = []
    app.use((req: ExpressRequest, res: ExpressResponse, next: Next) => {
      const record: SdkRecorded = {
        method: req.method ?? "",
        path: new URL(req.url ?? "/", url).pathname,
        authorization: req.headers.authorization
      }
      requests.push(record)
      res.on("finish", () => {
        record.status = res.statusCode
        const challenge = res.getHeader("www-authenticate")
        record.challenge = typeof challenge === "string" ? challenge : undefined
      })
      next()
    })
    app.use(mcpAuthMetadataRouter({
      oauthMetadata,
      resourceServerUrl: resource,
      scopesSupported: ["mcp:read", "mcp:admin"],
      resourceName: "sdk protected server"
    }))

    const keys = Jose.createLocalJWKSet(as.publicJwks as Jose.JSONWebKeySet)
    const verifier = {
      verifyAccessToken: async (token: string): Promise<SdkAuthInfo> => {
        try {
          const { payload } = await Jose.jwtVerify(token, keys, { issuer: as.issuer, typ: "at+jwt" })
          const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud
          return {
            token,
            clientId: String(payload.client_id),
            scopes: typeof payload.scope === "string" && payload.scope !== "" ? payload.scope.split(" ") : [],
            ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
            ...(aud === undefined ? {} : { resource: new URL(aud) }),
            extra: { sub: payload.sub }
          }
        } catch (error) {
          throw new InvalidTokenError(`invalid token: ${String(error)}`)
        }
      }
    }
    const bearer = requireBearerAuth({
      verifier,
      requiredScopes: ["mcp:read"],
      resourceMetadataUrl: metadataUrl,
      expectedResource: resource
    })
    const adminBearer = requireBearerAuth({
      verifier,
      requiredScopes: ["mcp:read", "mcp:admin"],
      resourceMetadataUrl: metadataUrl,
      expectedResource: resource
    })
    const stepUp = (req: ExpressRequest, res: ExpressResponse, next: Next) =>
      req.body?.method === "tools/call" && req.body?.params?.name === "admin_op" ? adminBearer(req, res, next) : next()

    const seen: Array<SdkAuthInfo | undefined> = []
    const makeServer = () => {
      const server = new SdkMcpServer({ name: "sdk-protected", version: "1.0.0" })
      server.registerTool("whoami", { description: "The auth info the tool sees" }, async (extra) => {
        seen.push(extra.authInfo)
        const info = extra.authInfo
        return {
          content: [{
            type: "text" as const,
            text: JSON.stringify(
              info === undefined ? null : {
                clientId: info.clientId,
                scopes: info.scopes,
                resource: info.resource?.href,
                expiresAt: info.expiresAt,
                extra: info.extra,
                token: info.token.slice(0, 12)
              }
            )
          }]
        }
      })
      server.registerTool("admin_op", { description: "Needs mcp:admin" }, async (extra) => {
        seen.push(extra.authInfo)
        return { content: [{ type: "text" as const, text: "admin done" }] }
      })
      servers.push(server)
      return server
    }

    const handle = async (req: ExpressRequest, res: ExpressResponse) => {
      const id = req.headers["mcp-session-id"]
      let transport = typeof id === "string" ? sessions.get(id) : undefined
      if (transport === undefined) {
        if (id !== undefined || req.method !== "POST" || !isInitializeRequest(req.body)) {
          res.status(id === undefined ? 400 : 404).json({
            jsonrpc: "2.0",
            error: { code: -32000, message: "no such session" },
            id: null
          })
          return
        }
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => void sessions.set(sessionId, created)
        })
        created.onclose = () => {
          if (created.sessionId !== undefined) sessions.delete(created.sessionId)
        }
        await makeServer().connect(created)
        transport = created
      }
      await transport.handleRequest(req, res, req.body)
    }
    app.all("/mcp", bearer, stepUp, (req: ExpressRequest, res: ExpressResponse, next: Next) => {
      handle(req, res).catch(next)
    })

    return {
      url,
      resource: resource.href,
      metadataUrl,
      requests,
      seen,
      sessions,
      openSockets: Effect.sync(() => [...open.values()])
    }
  })

describe("interop: our client (NodeMcpOAuth + McpClient) → the official SDK's protected server", () => {
  it.live("reads the SDK's PRM, signs in at the AS it names and calls a tool that sees our token in extra.authInfo; step-up on the SDK's 403", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ scopesSupported: ["mcp:read", "mcp:admin"] })
      const sdk = yield* startSdkProtectedServer(as)
      const before = as.requests.length
      yield* Effect.gen(function*() {
        const client = yield* connect({ url: sdk.url })
        const seen = JSON.parse(text(yield* client.callTool("whoami", {})))

        // the first request was refused by requireBearerAuth, the challenge
        // naming the PRM; our client read it from the SDK server
        const first = sdk.requests[0]!
        assert.deepStrictEqual([first.method, first.path, first.authorization, first.status], [
          "POST",
          "/mcp",
          undefined,
          401
        ])
        assert.include(first.challenge!, `resource_metadata="${sdk.metadataUrl}"`)
        assert.include(first.challenge!, `scope="mcp:read"`)
        const prm = sdk.requests.filter((r) => r.path.startsWith(PRM))
        assert.deepStrictEqual(prm.map((r) => [r.method, r.path, r.status]), [["GET", `${PRM}/mcp`, 200]])
        // the AS metadata came from the AS (not from the copy the SDK's router serves on the resource server)
        assert.strictEqual(sdk.requests.filter((r) => r.path === ASM).length, 0)
        assert.isAbove(as.requests.slice(before).filter((r) => r.path === ASM).length, 0)

        const registration = as.requestsTo("/register")
        assert.strictEqual(registration.length, 1)
        const clientId = registration[0]!.response.client_id as string
        const authorize = as.requestsTo("/authorize")
        assert.strictEqual(authorize.length, 1)
        assert.strictEqual(authorize[0]!.query.resource, sdk.url)
        assert.strictEqual(authorize[0]!.query.scope, "mcp:read")
        assert.strictEqual(authorize[0]!.query.code_challenge_method, "S256")
        assert.strictEqual(as.requestsTo("/token")[0]!.form!.resource, sdk.url)

        // the SDK tool saw our token's client id, scopes and resource
        assert.strictEqual(seen.clientId, clientId)
        assert.deepStrictEqual(seen.scopes, ["mcp:read"])
        assert.strictEqual(seen.resource, sdk.url)
        assert.deepStrictEqual(seen.extra, { sub: "user-1" })
        assert.strictEqual(seen.token, as.issued[0]!.token.slice(0, 12))
        assert.strictEqual(sdk.sessions.size, 1)

        // step-up: the SDK's 403 insufficient_scope (scope="mcp:read mcp:admin")
        assert.strictEqual(text(yield* client.callTool("admin_op", {})), "admin done")
        const refused = sdk.requests.filter((r) => r.status === 403)
        assert.strictEqual(refused.length, 1)
        assert.include(refused[0]!.challenge!, `error="insufficient_scope"`)
        assert.include(refused[0]!.challenge!, `scope="mcp:read mcp:admin"`)
        const again = as.requestsTo("/authorize")
        assert.strictEqual(again.length, 2)
        assert.deepStrictEqual(again[1]!.query.scope!.split(" ").sort(), ["mcp:admin", "mcp:read"])
        assert.strictEqual(again[1]!.query.resource, sdk.url)
        assert.deepStrictEqual([...sdk.seen.at(-1)!.scopes].sort(), ["mcp:admin", "mcp:read"])
        assert.strictEqual(sdk.seen.at(-1)!.clientId, clientId)
        assert.strictEqual(as.requestsTo("/register").length, 1)
        assert.isAbove((yield* sdk.openSockets).length, 0)
      }).pipe(Effect.scoped)
      // our client ended its session (DELETE) and closed its connections
      assert.strictEqual(sdk.sessions.size, 0)
      yield* noOpenSockets([["SDK server", sdk.openSockets], ["AS", as.openSockets]])
    }))

  // an SDK server with `resourceServerUrl: origin` publishes the origin as its
  // resource and checks audiences against it (`requireBearerAuth({ expectedResource })`):
  // the client must ask for tokens for the PRM's resource, not the MCP URL
  it.live("a PRM naming the origin (a parent of the MCP URL): tokens are asked for the PRM's resource, as the SDK client does", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const sdk = yield* startSdkProtectedServer(as, { resource: "origin" })
      assert.strictEqual(sdk.resource, `${new URL(sdk.url).origin}/`)
      yield* Effect.gen(function*() {
        const client = yield* connect({ url: sdk.url })
        const seen = JSON.parse(text(yield* client.callTool("whoami", {})))
        assert.strictEqual(seen.resource, sdk.resource)
      }).pipe(Effect.scoped)
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.resource, sdk.resource)
    }))
})
