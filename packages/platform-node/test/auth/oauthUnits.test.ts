/**
 * NodeMcpOAuth's decisions in isolation (internal/oauth/policy.ts: the
 * discovery URL order, the protected resource check, scope selection, the
 * token endpoint authentication method), and the challenge handling of the
 * client against a small node:http authorization server on 127.0.0.1 (the
 * client credentials grant: no user step): concurrent challenges run one
 * flow, a refused token that is no longer the stored one is just retried, a
 * step-up for scopes already granted fails at once, an expired token is
 * refreshed before a request. The full flows against a real authorization
 * server are in oauthClient.test.ts.
 */
import { McpAuth, McpError } from "@effect-mcp/core"
import * as Policy from "@effect-mcp/core/McpOAuthPolicy"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as NodeMcpOAuth from "../../src/NodeMcpOAuth.ts"

const hrefs = (urls: ReadonlyArray<URL>) => urls.map((url) => url.href)

describe("discovery URLs", () => {
  it("protected resource metadata: the challenge's URL, then path-aware, then root", () => {
    const server = new URL("https://example.com/api/mcp")
    assert.deepStrictEqual(hrefs(Policy.protectedResourceMetadataUrls(server, "https://example.com/custom/prm.json")), [
      "https://example.com/custom/prm.json",
      "https://example.com/.well-known/oauth-protected-resource/api/mcp",
      "https://example.com/.well-known/oauth-protected-resource"
    ])
    assert.deepStrictEqual(hrefs(Policy.protectedResourceMetadataUrls(server, undefined)), [
      "https://example.com/.well-known/oauth-protected-resource/api/mcp",
      "https://example.com/.well-known/oauth-protected-resource"
    ])
  })

  it("the challenge's protected resource metadata URL alone (a pre-configured authorization server)", () => {
    const server = new URL("https://example.com/api/mcp")
    assert.strictEqual(
      Policy.challengeResourceMetadataUrl(server, "/custom/prm.json")?.href,
      "https://example.com/custom/prm.json"
    )
    assert.strictEqual(Policy.challengeResourceMetadataUrl(server, undefined), undefined)
    assert.strictEqual(Policy.challengeResourceMetadataUrl(server, ""), undefined)
  })

  it("protected resource metadata of a server at the root: the root URL once", () => {
    assert.deepStrictEqual(hrefs(Policy.protectedResourceMetadataUrls(new URL("https://example.com/"), undefined)), [
      "https://example.com/.well-known/oauth-protected-resource"
    ])
    // a duplicate of a well-known URL in the challenge is not fetched twice
    assert.deepStrictEqual(
      hrefs(Policy.protectedResourceMetadataUrls(
        new URL("https://example.com/mcp"),
        "https://example.com/.well-known/oauth-protected-resource/mcp"
      )),
      [
        "https://example.com/.well-known/oauth-protected-resource/mcp",
        "https://example.com/.well-known/oauth-protected-resource"
      ]
    )
  })

  it("authorization server metadata of an issuer with a path: RFC 8414 inserted, OIDC inserted, OIDC appended", () => {
    assert.deepStrictEqual(hrefs(Policy.authorizationServerMetadataUrls(new URL("https://auth.example.com/tenant1"))), [
      "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
      "https://auth.example.com/.well-known/openid-configuration/tenant1",
      "https://auth.example.com/tenant1/.well-known/openid-configuration"
    ])
    // a trailing slash is no path segment of its own
    assert.deepStrictEqual(hrefs(Policy.authorizationServerMetadataUrls(new URL("https://auth.example.com/a/b/"))), [
      "https://auth.example.com/.well-known/oauth-authorization-server/a/b",
      "https://auth.example.com/.well-known/openid-configuration/a/b",
      "https://auth.example.com/a/b/.well-known/openid-configuration"
    ])
  })

  it("authorization server metadata of an issuer without a path: RFC 8414, then OIDC", () => {
    assert.deepStrictEqual(hrefs(Policy.authorizationServerMetadataUrls(new URL("https://auth.example.com"))), [
      "https://auth.example.com/.well-known/oauth-authorization-server",
      "https://auth.example.com/.well-known/openid-configuration"
    ])
  })

  it("2025-03-26: metadata and default endpoints at the server's origin, its path dropped", () => {
    const server = new URL("http://127.0.0.1:8080/v1/mcp")
    assert.strictEqual(
      Policy.legacyMetadataUrl(server).href,
      "http://127.0.0.1:8080/.well-known/oauth-authorization-server"
    )
    assert.deepStrictEqual(Policy.legacyEndpoints(server), {
      issuer: "http://127.0.0.1:8080",
      authorization_endpoint: "http://127.0.0.1:8080/authorize",
      token_endpoint: "http://127.0.0.1:8080/token",
      registration_endpoint: "http://127.0.0.1:8080/register"
    })
  })
})

describe("protected resource check", () => {
  const server = new URL("https://example.com/mcp")
  it("accepts the server URL and its parents", () => {
    assert.isTrue(Policy.resourceMatches(server, "https://example.com/mcp"))
    assert.isTrue(Policy.resourceMatches(server, "https://example.com/mcp/"))
    assert.isTrue(Policy.resourceMatches(server, "https://example.com"))
    assert.isTrue(Policy.resourceMatches(server, "https://EXAMPLE.com/"))
  })
  it("refuses another origin, a sibling path that only shares a prefix, a child, a fragment", () => {
    assert.isFalse(Policy.resourceMatches(server, "https://evil.example.com/mcp"))
    assert.isFalse(Policy.resourceMatches(server, "http://example.com/mcp"))
    assert.isFalse(Policy.resourceMatches(server, "https://example.com:8443/mcp"))
    assert.isFalse(Policy.resourceMatches(new URL("https://example.com/mcpx"), "https://example.com/mcp"))
    assert.isFalse(Policy.resourceMatches(server, "https://example.com/mcp/deeper"))
    assert.isFalse(Policy.resourceMatches(server, "https://example.com/mcp#x"))
    assert.isFalse(Policy.resourceMatches(server, "not a url"))
  })
  it("http only on loopback hosts unless allowed", () => {
    assert.isTrue(Policy.allowedUrl(new URL("http://127.0.0.1:1/x"), false))
    assert.isTrue(Policy.allowedUrl(new URL("http://localhost:1/x"), false))
    assert.isTrue(Policy.allowedUrl(new URL("http://[::1]:1/x"), false))
    assert.isFalse(Policy.allowedUrl(new URL("http://example.com/x"), false))
    assert.isTrue(Policy.allowedUrl(new URL("http://example.com/x"), true))
    assert.isFalse(Policy.allowedUrl(new URL("ftp://127.0.0.1/x"), true))
  })
})

describe("redirect URIs", () => {
  it("a registered loopback redirect covers any port on the same host and path, nothing else", () => {
    assert.isTrue(Policy.redirectCovers("http://127.0.0.1:4000/callback", "http://127.0.0.1:4000/callback"))
    assert.isTrue(Policy.redirectCovers("http://127.0.0.1:4000/callback", "http://127.0.0.1:51234/callback"))
    assert.isTrue(Policy.redirectCovers("http://localhost:1/cb", "http://localhost:2/cb"))
    assert.isFalse(Policy.redirectCovers("http://127.0.0.1:4000/callback", "http://127.0.0.1:4000/other"))
    assert.isFalse(Policy.redirectCovers("http://127.0.0.1:4000/callback", "http://localhost:4000/callback"))
    assert.isFalse(Policy.redirectCovers("https://app.example.com:1/cb", "https://app.example.com:2/cb"))
    assert.isFalse(Policy.redirectCovers("http://app.example.com:1/cb", "http://app.example.com:2/cb"))
  })
})

describe("scope selection", () => {
  it("the challenge's scope first, then the resource's scopes_supported, else none", () => {
    assert.strictEqual(
      Policy.selectScope({ challenge: "mcp:basic", resourceScopes: ["mcp:basic", "mcp:write"] }),
      "mcp:basic"
    )
    assert.strictEqual(Policy.selectScope({ resourceScopes: ["a", "b", "c"] }), "a b c")
    assert.strictEqual(Policy.selectScope({ challenge: "  ", resourceScopes: ["a"] }), "a")
    assert.isUndefined(Policy.selectScope({}))
    assert.isUndefined(Policy.selectScope({ serverScopes: ["x", "offline_access"] }))
  })
  it("an override wins and is sent as it is", () => {
    assert.strictEqual(
      Policy.selectScope({ override: "custom", challenge: "a", serverScopes: ["offline_access"] }),
      "custom"
    )
  })
  it("offline_access only when the authorization server lists it", () => {
    assert.strictEqual(
      Policy.selectScope({ resourceScopes: ["mcp:basic"], serverScopes: ["mcp:basic", "offline_access"] }),
      "mcp:basic offline_access"
    )
    assert.strictEqual(Policy.selectScope({ resourceScopes: ["mcp:basic"], serverScopes: ["mcp:basic"] }), "mcp:basic")
    assert.strictEqual(
      Policy.selectScope({ resourceScopes: ["mcp:basic"], serverScopes: ["offline_access"], offlineAccess: false }),
      "mcp:basic"
    )
  })
  it("a step-up keeps the granted scopes and adds the challenge's, without duplicates", () => {
    assert.strictEqual(
      Policy.selectScope({ challenge: "mcp:basic mcp:write", granted: ["mcp:basic", "mcp:read"] }),
      "mcp:basic mcp:read mcp:write"
    )
    assert.isTrue(Policy.coversScopes(["a", "b"], ["b"]))
    assert.isFalse(Policy.coversScopes(["a"], ["a", "b"]))
  })
})

describe("token endpoint authentication", () => {
  it("the registered method, else by the server's list, secret methods only with a secret", () => {
    assert.strictEqual(
      Policy.tokenAuthMethod({ clientSecret: "s", tokenEndpointAuthMethod: "client_secret_post" }, undefined),
      "client_secret_post"
    )
    assert.strictEqual(Policy.tokenAuthMethod({ clientSecret: "s" }, ["client_secret_post"]), "client_secret_post")
    assert.strictEqual(
      Policy.tokenAuthMethod({ clientSecret: "s" }, ["client_secret_post", "client_secret_basic"]),
      "client_secret_basic"
    )
    assert.strictEqual(Policy.tokenAuthMethod({ clientSecret: "s" }, undefined), "client_secret_basic")
    assert.strictEqual(Policy.tokenAuthMethod({}, ["client_secret_basic"]), "none")
    // a secret method registered without a secret cannot be used
    assert.strictEqual(Policy.tokenAuthMethod({ tokenEndpointAuthMethod: "client_secret_basic" }, undefined), "none")
  })
  it("registration asks for a public client when the server allows one", () => {
    assert.strictEqual(Policy.registrationAuthMethod(undefined), "none")
    assert.strictEqual(Policy.registrationAuthMethod(["client_secret_basic", "none"]), "none")
    assert.strictEqual(Policy.registrationAuthMethod(["client_secret_post"]), "client_secret_post")
    assert.strictEqual(Policy.registrationAuthMethod(["private_key_jwt", "client_secret_basic"]), "client_secret_basic")
  })
})

// -----------------------------------------------------------------------------
// Challenges against a small authorization server
// -----------------------------------------------------------------------------

interface Fixture {
  readonly url: string
  readonly tokenRequests: Array<URLSearchParams>
  readonly authorization: Array<string | undefined>
}

/**
 * An MCP server URL with its protected resource metadata, and an
 * authorization server (same origin) with a token endpoint that answers the
 * client credentials and refresh grants with numbered tokens.
 */
const fixture = (options: { readonly expiresIn?: number; readonly tokenDelayMs?: number } = {}) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly fixture: Fixture; readonly close: () => void }>((resume) => {
      const tokenRequests: Array<URLSearchParams> = []
      const authorization: Array<string | undefined> = []
      let origin = ""
      const json = (res: ServerResponse, status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(body))
      }
      const server = createServer((req: IncomingMessage, res) => {
        let body = ""
        req.on("data", (chunk) => (body += chunk))
        req.on("end", () => {
          authorization.push(req.headers.authorization)
          if (req.url === "/.well-known/oauth-protected-resource/mcp") {
            return json(res, 200, {
              resource: `${origin}/mcp`,
              authorization_servers: [origin],
              scopes_supported: ["a"]
            })
          }
          if (req.url === "/.well-known/oauth-authorization-server") {
            return json(res, 200, {
              issuer: origin,
              token_endpoint: `${origin}/token`,
              grant_types_supported: ["client_credentials", "refresh_token"],
              token_endpoint_auth_methods_supported: ["client_secret_basic"],
              code_challenge_methods_supported: ["S256"]
            })
          }
          if (req.url === "/token" && req.method === "POST") {
            const params = new URLSearchParams(body)
            tokenRequests.push(params)
            const n = tokenRequests.length
            const answer = () =>
              json(res, 200, {
                access_token: `token-${n}`,
                token_type: "Bearer",
                refresh_token: `refresh-${n}`,
                scope: params.get("scope") ?? "a",
                ...(options.expiresIn === undefined ? {} : { expires_in: options.expiresIn })
              })
            return options.tokenDelayMs === undefined ? answer() : void setTimeout(answer, options.tokenDelayMs)
          }
          json(res, 404, { error: "not_found" })
        })
      })
      server.listen(0, "127.0.0.1", () => {
        origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed({
          fixture: { url: `${origin}/mcp`, tokenRequests, authorization },
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ fixture }) => fixture))

const challenge401 = (url: string, authorization: string | undefined): McpAuth.Challenge => ({
  status: 401,
  url,
  authorization,
  bearer: { scheme: "bearer", params: {} }
})

const clientCredentials = (url: string, extra: Partial<NodeMcpOAuth.Options> = {}) =>
  NodeMcpOAuth.make({
    serverUrl: url,
    grant: { type: "client_credentials", clientId: "c", clientSecret: "s" },
    ...extra
  })

describe("NodeMcpOAuth challenges", () => {
  it.live("concurrent challenges for the same refused token run one flow", () =>
    Effect.gen(function*() {
      const server = yield* fixture({ tokenDelayMs: 50 })
      const store = McpAuth.makeMemoryStore()
      const auth = yield* clientCredentials(server.url).pipe(Effect.provideService(McpAuth.McpAuthStore, store))
      assert.isUndefined(yield* auth.authorization(server.url))
      yield* Effect.all(
        Array.from({ length: 8 }, () => auth.challenge(challenge401(server.url, undefined))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(server.tokenRequests.length, 1)
      assert.strictEqual(yield* auth.authorization(server.url), "Bearer token-1")
      const stored = yield* store.getTokens(McpAuth.canonicalResource(server.url))
      assert.strictEqual(stored?.issuer, new URL(server.url).origin)
      // the token request carried the resource and the PRM's scopes, with Basic credentials
      const request = server.tokenRequests[0]!
      assert.strictEqual(request.get("grant_type"), "client_credentials")
      assert.strictEqual(request.get("resource"), server.url)
      assert.strictEqual(request.get("scope"), "a")
      assert.isTrue(server.authorization.includes(`Basic ${Buffer.from("c:s").toString("base64")}`))
    }))

  it.live("a challenge for a token that was already replaced only retries", () =>
    Effect.gen(function*() {
      const server = yield* fixture()
      const auth = yield* clientCredentials(server.url).pipe(Effect.provide(McpAuth.layerMemoryStore))
      yield* auth.challenge(challenge401(server.url, undefined))
      assert.strictEqual(server.tokenRequests.length, 1)
      // a late challenge for the old (absent) credentials: nothing to do
      yield* auth.challenge(challenge401(server.url, undefined))
      assert.strictEqual(server.tokenRequests.length, 1)
      // the current token refused: the refresh token first (no new grant)
      yield* auth.challenge(challenge401(server.url, "Bearer token-1"))
      assert.strictEqual(server.tokenRequests.length, 2)
      assert.strictEqual(server.tokenRequests[1]!.get("grant_type"), "refresh_token")
      assert.strictEqual(server.tokenRequests[1]!.get("resource"), server.url)
      assert.strictEqual(yield* auth.authorization(server.url), "Bearer token-2")
      // the refreshed token refused too: a new grant, not another refresh
      yield* auth.challenge(challenge401(server.url, "Bearer token-2"))
      assert.strictEqual(server.tokenRequests[2]!.get("grant_type"), "client_credentials")
    }))

  it.live("a step-up for scopes already granted fails at once; more step-ups than allowed fail", () =>
    Effect.gen(function*() {
      const server = yield* fixture()
      const auth = yield* clientCredentials(server.url, { maxStepUps: 1 }).pipe(
        Effect.provide(McpAuth.layerMemoryStore)
      )
      yield* auth.challenge(challenge401(server.url, undefined))
      const forbidden = (scope: string, token: string): McpAuth.Challenge => ({
        status: 403,
        url: server.url,
        authorization: token,
        bearer: { scheme: "bearer", params: { error: "insufficient_scope", scope } }
      })
      const same = yield* Effect.exit(auth.challenge(forbidden("a", "Bearer token-1")))
      assert.isTrue(Exit.isFailure(same))
      assert.strictEqual(server.tokenRequests.length, 1)
      // a real step-up keeps "a" and adds "b"
      yield* auth.challenge(forbidden("b", "Bearer token-1"))
      assert.strictEqual(server.tokenRequests[1]!.get("scope"), "a b")
      const again = yield* Effect.exit(auth.challenge(forbidden("c", "Bearer token-2")))
      assert.isTrue(Exit.isFailure(again))
      if (Exit.isFailure(again)) {
        const error = again.cause.reasons.find((reason) => reason._tag === "Fail")
        assert.isTrue(error !== undefined && McpError.isMcpError(error.error))
      }
      assert.strictEqual(server.tokenRequests.length, 2)
    }))

  it.live("an expired access token is refreshed before the request", () =>
    Effect.gen(function*() {
      const server = yield* fixture({ expiresIn: 3600 })
      const store = McpAuth.makeMemoryStore()
      const auth = yield* clientCredentials(server.url).pipe(Effect.provideService(McpAuth.McpAuthStore, store))
      yield* auth.challenge(challenge401(server.url, undefined))
      assert.strictEqual(yield* auth.authorization(server.url), "Bearer token-1")
      const resource = McpAuth.canonicalResource(server.url)
      const tokens = (yield* store.getTokens(resource))!
      // stored tokens that expired (as a later run of the program finds them): a new client on the store
      yield* store.setTokens(resource, { ...tokens, expiresAt: 1 })
      const later = yield* clientCredentials(server.url).pipe(Effect.provideService(McpAuth.McpAuthStore, store))
      assert.strictEqual(yield* later.authorization(server.url), "Bearer token-2")
      assert.strictEqual(server.tokenRequests[1]!.get("grant_type"), "refresh_token")
      assert.strictEqual(server.tokenRequests[1]!.get("refresh_token"), "refresh-1")
    }))

  it.live("requests take the header from memory: the store is read again only on a challenge or an expiry", () =>
    Effect.gen(function*() {
      const server = yield* fixture({ expiresIn: 3600 })
      const inner = McpAuth.makeMemoryStore()
      let reads = 0
      const store = McpAuth.McpAuthStore.of({
        ...inner,
        getTokens: (resource) => Effect.suspend(() => (reads++, inner.getTokens(resource)))
      })
      const auth = yield* clientCredentials(server.url).pipe(Effect.provideService(McpAuth.McpAuthStore, store))
      yield* auth.challenge(challenge401(server.url, undefined))
      const afterSignIn = reads
      for (let i = 0; i < 50; i++) assert.strictEqual(yield* auth.authorization(server.url), "Bearer token-1")
      assert.strictEqual(reads, afterSignIn)
      // another origin gets no token at all
      assert.isUndefined(yield* auth.authorization("http://127.0.0.2:1/mcp"))
    }))

  it.live("a protected resource metadata resource that is not the server is refused", () =>
    Effect.gen(function*() {
      const server = yield* fixture()
      // a client for <origin>/mcp2 pointed (by the challenge) at the document of <origin>/mcp
      const auth = yield* NodeMcpOAuth.make({
        serverUrl: server.url.replace("/mcp", "/mcp2"),
        grant: { type: "client_credentials", clientId: "c", clientSecret: "s" }
      }).pipe(Effect.provide(McpAuth.layerMemoryStore))
      const exit = yield* Effect.exit(auth.challenge({
        ...challenge401(server.url.replace("/mcp", "/mcp2"), undefined),
        bearer: {
          scheme: "bearer",
          params: { resource_metadata: server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp") }
        }
      }))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "not the MCP server")
      assert.strictEqual(server.tokenRequests.length, 0)
    }))
})
