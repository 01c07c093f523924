/**
 * The OAuth client end to end (see oauthClient.test.ts): each discovery
 * fallback, client identity (DCR, CIMD, pre-registered), scope selection,
 * and the refusals (resource mismatch, no S256, state / iss mismatch,
 * denial, a metadata issuer mismatch), each checked against what the test
 * authorization server and the server's front recorded.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type AuthServerOptions,
  type Discovery,
  startAuthServer,
  startProtectedServer
} from "../fixtures/authServer.ts"
import { authKind, connect, text } from "../fixtures/oauthClient.ts"

const PRM = "/.well-known/oauth-protected-resource"

const prmRequests = (
  server: { readonly requests: ReadonlyArray<{ readonly path: string; readonly method: string }> }
) => server.requests.filter((r) => r.method === "GET" && r.path !== "/mcp").map((r) => r.path)

const wellKnown = (as: { readonly requests: ReadonlyArray<{ readonly path: string }> }) =>
  as.requests.map((r) => r.path).filter((path) => path.includes("/.well-known/"))

/** Nothing past discovery reached the authorization server. */
const assertNoFlow = (as: { readonly requestsTo: (path: string) => ReadonlyArray<unknown> }) => {
  assert.strictEqual(as.requestsTo("/authorize").length, 0, "no authorization request")
  assert.strictEqual(as.requestsTo("/token").length, 0, "no token request")
}

describe("NodeMcpOAuth discovery", () => {
  it.live("the challenge's resource_metadata is followed (no well-known location serves the PRM)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        front_: { resourceMetadataPath: "/custom/prm", prm: { path: false, root: false } }
      })
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
      assert.deepStrictEqual(prmRequests(server), ["/custom/prm"])
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.resource, server.resource)
    }))

  it.live("without resource_metadata: the path-aware PRM location, first", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        front_: { resourceMetadataInChallenge: false, prm: { path: true, root: false } }
      })
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
      assert.deepStrictEqual(prmRequests(server), [`${PRM}/mcp`])
    }))

  it.live("without resource_metadata nor a path-aware PRM: the root PRM, after the path-aware one", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        front_: { resourceMetadataInChallenge: false, prm: { path: false, root: true } }
      })
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
      assert.deepStrictEqual(prmRequests(server), [`${PRM}/mcp`, PRM])
    }))

  const orders: ReadonlyArray<
    {
      readonly name: string
      readonly issuerPath: string
      readonly discovery: Discovery
      readonly expected: ReadonlyArray<string>
    }
  > = [
    {
      name: "RFC 8414, path inserted",
      issuerPath: "/tenant1",
      discovery: "oauth",
      expected: ["/.well-known/oauth-authorization-server/tenant1"]
    },
    {
      name: "OIDC, path inserted (after RFC 8414)",
      issuerPath: "/tenant1",
      discovery: "oidc-insert",
      expected: ["/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"]
    },
    {
      name: "OIDC, path appended (after both inserted forms)",
      issuerPath: "/tenant1",
      discovery: "oidc-append",
      expected: [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration"
      ]
    },
    {
      name: "OIDC at the root of an issuer without a path (after RFC 8414)",
      issuerPath: "",
      discovery: "oidc-insert",
      expected: ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
    }
  ]
  for (const order of orders) {
    it.live(`authorization server metadata: ${order.name}`, () =>
      Effect.gen(function*() {
        const as = yield* startAuthServer({ issuerPath: order.issuerPath, discovery: [order.discovery] })
        const server = yield* startProtectedServer(as)
        const client = yield* connect({ url: server.url })
        assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
        assert.deepStrictEqual(wellKnown(as), [...order.expected])
        assert.strictEqual(as.requestsTo("/authorize").length, 1)
        assert.strictEqual(as.requestsTo("/authorize")[0]!.path, `${order.issuerPath}/authorize`)
        assert.strictEqual(as.requestsTo("/token")[0]!.status, 200)
      }))
  }

  it.live("2025-03-26: no PRM, no metadata: the default /authorize, /token, /register at the server's origin", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ discovery: [] })
      const server = yield* startProtectedServer(as, { front: "as" })
      assert.strictEqual(new URL(server.url).origin, as.url)
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "legacy" })), "legacy")
      assert.strictEqual(as.requestsTo("/register").length, 1)
      assert.strictEqual(as.requestsTo("/register")[0]!.status, 201)
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
      assert.strictEqual(as.requestsTo("/token")[0]!.status, 200)
      // it looked for the PRM and the metadata first, and found none
      assert.isTrue(as.requests.some((r) => r.path.startsWith(PRM)))
      assert.isTrue(as.requests.some((r) => r.path === "/.well-known/oauth-authorization-server" && r.status === 404))
    }))

  it.live("2025-03-26: no PRM, RFC 8414 metadata at the server's origin", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ discovery: ["oauth"] })
      const server = yield* startProtectedServer(as, { front: "as" })
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "legacy" })), "legacy")
      assert.isTrue(as.requests.some((r) => r.path === "/.well-known/oauth-authorization-server" && r.status === 200))
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
    }))

  it.live("2025-03-26: no PRM, only OpenID Connect metadata at the server's origin (after RFC 8414's 404)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ discovery: ["oidc-append"] })
      const server = yield* startProtectedServer(as, { front: "as" })
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "oidc" })), "oidc")
      const wellKnown = as.requests.filter((r) => r.path.startsWith("/.well-known/o")).map((r) => [r.path, r.status])
      assert.deepStrictEqual(wellKnown.slice(-2), [
        ["/.well-known/oauth-authorization-server", 404],
        ["/.well-known/openid-configuration", 200]
      ])
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
    }))
})

describe("NodeMcpOAuth client identity", () => {
  it.live("DCR: the registration describes the client (redirect URI, name, grants, native app), its client_id is used", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as)
      const client = yield* connect({ url: server.url })
      yield* client.callTool("echo", { text: "ok" })
      const registration = as.requestsTo("/register")
      assert.strictEqual(registration.length, 1)
      const body = registration[0]!.json as Record<string, any>
      assert.deepStrictEqual(body.redirect_uris, ["http://127.0.0.1/callback"])
      assert.strictEqual(body.client_name, "effect-mcp oauth test")
      assert.includeMembers(body.grant_types, ["authorization_code", "refresh_token"])
      assert.strictEqual(body.application_type, "native")
      const clientId = registration[0]!.response.client_id
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.client_id, clientId)
      const token = as.requestsTo("/token")[0]!
      assert.strictEqual(token.clientAuth, body.token_endpoint_auth_method ?? "client_secret_basic")
    }))

  it.live("CIMD: the metadata document URL is the client_id; no registration; the AS fetched the document", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ cimd: true })
      const clientId = `${as.url}/clients/app.json`
      as.serveJson("/clients/app.json", {
        client_id: clientId,
        client_name: "cimd app",
        redirect_uris: ["http://127.0.0.1/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: "none"
      })
      const server = yield* startProtectedServer(as)
      const client = yield* connect({ url: server.url, oauth: { clientMetadataUrl: clientId } })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "cimd" })), "cimd")
      assert.strictEqual(as.requestsTo("/register").length, 0)
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.client_id, clientId)
      assert.isAtLeast(as.requestsTo("/clients/app.json").length, 1)
      const token = as.requestsTo("/token")[0]!
      assert.strictEqual(token.form!.client_id, clientId)
      assert.strictEqual(token.clientAuth, "none")
      assert.strictEqual(JSON.parse(text(yield* client.callTool("whoami", {}))).clientId, clientId)
    }))

  it.live("CIMD URL given, AS without CIMD support: DCR instead", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ cimd: false })
      const clientId = `${as.url}/clients/app.json`
      const server = yield* startProtectedServer(as)
      const client = yield* connect({ url: server.url, oauth: { clientMetadataUrl: clientId } })
      yield* client.callTool("echo", { text: "ok" })
      assert.strictEqual(as.requestsTo("/register").length, 1)
      assert.notStrictEqual(as.requestsTo("/authorize")[0]!.query.client_id, clientId)
      assert.strictEqual(as.requestsTo("/clients/app.json").length, 0)
    }))

  it.live("pre-registered confidential client: no registration, the auth method the AS lists (client_secret_post)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({
        cimd: true,
        tokenEndpointAuthMethods: ["client_secret_post"],
        clients: [{ clientId: "pre", clientSecret: "pre-secret", tokenEndpointAuthMethod: "client_secret_post" }]
      })
      const server = yield* startProtectedServer(as)
      const client = yield* connect({
        url: server.url,
        oauth: {
          client: { clientId: "pre", clientSecret: "pre-secret" },
          clientMetadataUrl: `${as.url}/clients/unused.json`
        }
      })
      yield* client.callTool("echo", { text: "ok" })
      assert.strictEqual(as.requestsTo("/register").length, 0)
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.client_id, "pre")
      const token = as.requestsTo("/token")[0]!
      assert.strictEqual(token.status, 200)
      assert.strictEqual(token.clientAuth, "client_secret_post")
      assert.strictEqual(token.form!.client_secret, "pre-secret")
      assert.isUndefined(token.headers.authorization)
    }))

  it.live("pre-registered confidential client, AS listing basic first: client_secret_basic", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ clients: [{ clientId: "pre", clientSecret: "pre-secret" }] })
      const server = yield* startProtectedServer(as)
      const client = yield* connect({
        url: server.url,
        oauth: { client: { clientId: "pre", clientSecret: "pre-secret" } }
      })
      yield* client.callTool("echo", { text: "ok" })
      const token = as.requestsTo("/token")[0]!
      assert.strictEqual(token.clientAuth, "client_secret_basic")
      assert.isUndefined(token.form!.client_secret)
    }))

  it.live("pre-registered public client: token_endpoint_auth_method none (client_id in the form, no secret)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ clients: [{ clientId: "public-app" }] })
      const server = yield* startProtectedServer(as)
      const client = yield* connect({ url: server.url, oauth: { client: { clientId: "public-app" } } })
      yield* client.callTool("echo", { text: "ok" })
      const token = as.requestsTo("/token")[0]!
      assert.strictEqual(token.status, 200)
      assert.strictEqual(token.clientAuth, "none")
      assert.strictEqual(token.form!.client_id, "public-app")
    }))
})

describe("NodeMcpOAuth scope selection", () => {
  it.live("no challenge scope: the PRM scopes_supported are asked for", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, { scopesSupported: ["mcp:read", "mcp:write"] })
      const client = yield* connect({ url: server.url })
      yield* client.callTool("echo", { text: "ok" })
      assert.sameMembers(as.requestsTo("/authorize")[0]!.query.scope!.split(" "), ["mcp:read", "mcp:write"])
    }))

  it.live("neither: no scope parameter at all", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as)
      const client = yield* connect({ url: server.url })
      yield* client.callTool("echo", { text: "ok" })
      assert.isUndefined(as.requestsTo("/authorize")[0]!.query.scope)
    }))

  it.live("offline_access is added when the AS lists it", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ scopesSupported: ["mcp:read", "offline_access"] })
      const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"] })
      const client = yield* connect({ url: server.url })
      yield* client.callTool("echo", { text: "ok" })
      assert.sameMembers(as.requestsTo("/authorize")[0]!.query.scope!.split(" "), ["mcp:read", "offline_access"])
    }))

  it.live("the scope option overrides the selection", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"] })
      const client = yield* connect({ url: server.url, oauth: { scope: "mcp:read custom" } })
      yield* client.callTool("echo", { text: "ok" })
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.scope, "mcp:read custom")
    }))
})

describe("NodeMcpOAuth refusals", () => {
  const refused = (
    asOptions: AuthServerOptions,
    front: Parameters<typeof startProtectedServer>[1] = {}
  ) =>
    Effect.gen(function*() {
      const as = yield* startAuthServer(asOptions)
      const server = yield* startProtectedServer(as, front)
      const error = yield* Effect.flip(connect({ url: server.url }))
      return { as, server, error }
    })

  it.live("a PRM whose resource is another server: refused with a typed AuthError, before any authorization", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({}, { front_: { prmOverride: { resource: "http://127.0.0.1:1/mcp" } } })
      assert.strictEqual(error.reason._tag, "AuthError")
      assert.strictEqual(authKind(error), "Refused")
      // what the document says is not echoed (issue 15): the error says what was expected
      assert.notInclude(error.message, "http://127.0.0.1:1/mcp")
      assertNoFlow(as)
      assert.strictEqual(as.requestsTo("/register").length, 0)
    }))

  it.live("an AS whose metadata lists only plain PKCE: refused, no authorization request", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({ codeChallengeMethods: ["plain"] })
      assert.strictEqual(authKind(error), "Refused")
      assert.include(error.message, "S256")
      assertNoFlow(as)
    }))

  it.live("an AS whose metadata has no code_challenge_methods_supported: refused, no authorization request", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({ codeChallengeMethods: [] })
      assert.strictEqual(authKind(error), "Refused")
      assertNoFlow(as)
    }))

  it.live("a redirect with another state: refused, the code is not exchanged", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({ wrongState: true })
      assert.include(["Refused", "Authorization"], authKind(error))
      assert.include(error.message, "state")
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
      assert.strictEqual(as.requestsTo("/token").length, 0)
    }))

  it.live("a redirect with another iss (RFC 9207): refused, the code is not exchanged", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({ wrongIss: true })
      assert.include(["Refused", "Authorization"], authKind(error))
      assert.include(error.message, "iss")
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
      assert.strictEqual(as.requestsTo("/token").length, 0)
    }))

  it.live("the user denies: a typed Authorization error carrying access_denied, bounded attempts", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({ deny: true })
      assert.strictEqual(error.reason._tag, "AuthError")
      assert.strictEqual(authKind(error), "Authorization")
      assert.include(error.message, "access_denied")
      assert.isAtMost(as.requestsTo("/authorize").length, 3)
      assert.strictEqual(as.requestsTo("/token").length, 0)
    }))

  it.live("AS metadata naming another issuer than the one the PRM lists: refused", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({ metadata: { issuer: "http://127.0.0.1:1" } })
      assert.strictEqual(authKind(error), "Discovery")
      assert.include(error.message, "issuer")
      assertNoFlow(as)
    }))

  it.live("a PRM naming no authorization server: refused", () =>
    Effect.gen(function*() {
      const { as, error } = yield* refused({}, { front_: { prmOverride: { authorization_servers: undefined } } })
      assert.strictEqual(authKind(error), "Discovery")
      assertNoFlow(as)
    }))
})
