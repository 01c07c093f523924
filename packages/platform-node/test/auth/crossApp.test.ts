/**
 * Cross-app access (SEP-990, enterprise-managed authorization) end to end:
 * our McpClient over NodeMcpHttpClient with NodeMcpOAuth's
 * `cross_app_access` grant, against two test authorization servers
 * (fixtures/authServer.ts): the enterprise IdP (`idp: true`: RFC 8693 token
 * exchange of an ID token for an identity assertion grant, ID-JAG) and the
 * MCP server's authorization server (`trustedIdps`: the RFC 7523 JWT bearer
 * grant of the ID-JAG), in front of a protected MCP server. Each test
 * asserts what the IdP and the authorization server recorded.
 */
import { McpAuth, McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Ref, Scope } from "effect"
import * as Jose from "jose"
import type * as NodeMcpOAuth from "../../src/NodeMcpOAuth.ts"
import {
  type AuthServerOptions,
  ID_JAG_TYP,
  ID_JAG_TYPE,
  ID_TOKEN_TYPE,
  JWT_BEARER,
  startAuthServer,
  startProtectedServer,
  TOKEN_EXCHANGE
} from "../fixtures/authServer.ts"
import { authKind, connect, makeAuth, text } from "../fixtures/oauthClient.ts"

/** The client's registration at the IdP and at the MCP server's authorization server. */
const IDP_CLIENT = { clientId: "wiki-at-idp", clientSecret: "idp-secret" }
const AS_CLIENT = { clientId: "wiki", clientSecret: "as-secret" }

/** An IdP, an authorization server trusting it, a protected MCP server needing `mcp:read`, and the user's ID token. */
const setup = (
  options: { readonly idp?: AuthServerOptions; readonly as?: AuthServerOptions; readonly anyResource?: boolean } = {}
) =>
  Effect.gen(function*() {
    const idp = yield* startAuthServer({
      idp: true,
      clients: [IDP_CLIENT],
      // the IdP knows the client's id at the MCP server's authorization server
      idJagClientId: (id) => (id === IDP_CLIENT.clientId ? AS_CLIENT.clientId : id),
      ...options.idp
    })
    const as = yield* startAuthServer({ trustedIdps: [idp], clients: [AS_CLIENT], ...options.as })
    const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"] })
    // the AS issues tokens for this MCP server only (checks the ID-JAG's resource)
    if (options.anyResource !== true) as.config.resources = [server.resource]
    const idToken = yield* Effect.promise(() =>
      idp.mintIdToken({ aud: IDP_CLIENT.clientId, sub: "alice", email: "alice@example.com" })
    )
    return { idp, as, server, idToken }
  })

const crossApp = (
  idp: { readonly endpoints: { readonly token: string } },
  idToken: NodeMcpOAuth.CrossAppAccessGrant["idp"]["idToken"],
  overrides: Partial<NodeMcpOAuth.CrossAppAccessGrant["idp"]> = {}
): NodeMcpOAuth.CrossAppAccessGrant => ({
  type: "cross_app_access",
  clientId: AS_CLIENT.clientId,
  clientSecret: AS_CLIENT.clientSecret,
  idp: { tokenEndpoint: idp.endpoints.token, ...IDP_CLIENT, idToken, ...overrides }
})

describe("NodeMcpOAuth cross-app access (SEP-990)", () => {
  it.live("the call works: token exchange at the IdP, JWT bearer grant at the AS, no authorization, no registration", () =>
    Effect.gen(function*() {
      const { as, idToken, idp, server } = yield* setup()
      const client = yield* connect({ url: server.url, oauth: { grant: crossApp(idp, idToken) } })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "xaa" })), "xaa")

      // 1. the IdP: one RFC 8693 exchange, the client authenticated with its IdP secret
      assert.deepStrictEqual(idp.requests.map((r) => `${r.method} ${r.path}`), ["POST /token"])
      const exchange = idp.requestsTo("/token")[0]!
      assert.strictEqual(exchange.status, 200, JSON.stringify(exchange.response))
      assert.strictEqual(exchange.clientAuth, "client_secret_basic")
      assert.deepStrictEqual(
        Buffer.from(String(exchange.headers.authorization).slice(6), "base64").toString(),
        `${IDP_CLIENT.clientId}:${IDP_CLIENT.clientSecret}`
      )
      const form = exchange.form!
      assert.strictEqual(form.grant_type, TOKEN_EXCHANGE)
      assert.strictEqual(form.subject_token, idToken)
      assert.strictEqual(form.subject_token_type, ID_TOKEN_TYPE)
      assert.strictEqual(form.requested_token_type, ID_JAG_TYPE)
      assert.strictEqual(form.audience, as.issuer)
      assert.strictEqual(form.resource, server.resource)
      assert.strictEqual(form.scope, "mcp:read")
      assert.strictEqual(exchange.response.issued_token_type, ID_JAG_TYPE)
      assert.strictEqual(exchange.response.token_type, "N_A")

      // the ID-JAG the IdP issued
      assert.strictEqual(idp.idJags.length, 1)
      const jag = idp.idJags[0]!
      assert.strictEqual(Jose.decodeProtectedHeader(jag.token).typ, ID_JAG_TYP)
      assert.strictEqual(jag.claims.iss, idp.issuer)
      assert.strictEqual(jag.claims.sub, "alice")
      assert.strictEqual(jag.claims.aud, as.issuer)
      assert.strictEqual(jag.claims.client_id, AS_CLIENT.clientId)
      assert.strictEqual((jag.claims as Record<string, unknown>).resource, server.resource)

      // 2. the AS: one RFC 7523 grant with that ID-JAG, the client authenticated with its AS secret
      assert.strictEqual(as.requestsTo("/authorize").length, 0)
      assert.strictEqual(as.requestsTo("/register").length, 0)
      const tokens = as.requestsTo("/token")
      assert.strictEqual(tokens.length, 1)
      const bearer = tokens[0]!
      assert.strictEqual(bearer.status, 200, JSON.stringify(bearer.response))
      assert.strictEqual(bearer.form!.grant_type, JWT_BEARER)
      assert.strictEqual(bearer.form!.assertion, jag.token)
      assert.strictEqual(bearer.form!.scope, "mcp:read")
      // RFC 8707: the token request names the MCP server too, as MCP asks of every token request
      assert.strictEqual(bearer.form!.resource, server.resource)
      assert.strictEqual(bearer.clientAuth, "client_secret_basic")
      assert.deepStrictEqual(
        Buffer.from(String(bearer.headers.authorization).slice(6), "base64").toString(),
        `${AS_CLIENT.clientId}:${AS_CLIENT.clientSecret}`
      )
      assert.isUndefined(bearer.response.refresh_token)

      // 3. the MCP server: the user of the ID token, through the client registered at the AS
      assert.strictEqual(as.issued.length, 1)
      assert.strictEqual(as.issued[0]!.grantType, JWT_BEARER)
      const seen = JSON.parse(text(yield* client.callTool("whoami", {})))
      assert.strictEqual(seen.subject, "alice")
      assert.strictEqual(seen.clientId, AS_CLIENT.clientId)
      assert.deepStrictEqual(seen.scopes, ["mcp:read"])
      assert.deepStrictEqual(seen.audience, [server.resource])
      // no second flow for the second call
      assert.strictEqual(idp.requestsTo("/token").length, 1)
      assert.strictEqual(as.requestsTo("/token").length, 1)
    }))

  it.live("the IdP by its issuer (OpenID Connect discovery), a public client at the IdP, client_secret_post at the AS", () =>
    Effect.gen(function*() {
      const { as, idToken, idp, server } = yield* setup({
        idp: { discovery: ["oidc-insert"], clients: [{ clientId: IDP_CLIENT.clientId }] },
        as: {
          tokenEndpointAuthMethods: ["client_secret_post"],
          clients: [{ ...AS_CLIENT, tokenEndpointAuthMethod: "client_secret_post" }]
        }
      })
      const client = yield* connect({
        url: server.url,
        oauth: {
          grant: crossApp(idp, idToken, { tokenEndpoint: undefined, issuer: idp.issuer, clientSecret: undefined })
        }
      })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "discovered" })), "discovered")
      // RFC 8414 first (404), then OpenID Connect, then the exchange at the discovered token endpoint
      assert.deepStrictEqual(idp.requests.map((r) => `${r.method} ${r.path} ${r.status}`), [
        "GET /.well-known/oauth-authorization-server 404",
        "GET /.well-known/openid-configuration 200",
        "POST /token 200"
      ])
      const exchange = idp.requestsTo("/token")[0]!
      assert.strictEqual(exchange.clientAuth, "none")
      assert.strictEqual(exchange.form!.client_id, IDP_CLIENT.clientId)
      assert.isUndefined(exchange.headers.authorization)
      const bearer = as.requestsTo("/token")[0]!
      assert.strictEqual(bearer.status, 200, JSON.stringify(bearer.response))
      assert.strictEqual(bearer.clientAuth, "client_secret_post")
      assert.strictEqual(bearer.form!.client_id, AS_CLIENT.clientId)
      assert.strictEqual(bearer.form!.client_secret, AS_CLIENT.clientSecret)
      assert.strictEqual(bearer.form!.assertion, idp.idJags[0]!.token)
    }))

  describe("the IdP refuses the ID token: a typed Token error, nothing reaches the AS", () => {
    const cases = [
      {
        name: "signed by another IdP",
        idToken: (_idp: { mintIdToken: (c: { aud: string }) => Promise<string> }, other: typeof _idp) =>
          other.mintIdToken({ aud: IDP_CLIENT.clientId })
      },
      {
        name: "issued to another client",
        idToken: (idp: { mintIdToken: (c: { aud: string }) => Promise<string> }) =>
          idp.mintIdToken({ aud: "another-app" })
      },
      {
        name: "expired",
        idToken: (idp: { mintIdToken: (c: { aud: string; ttl: number }) => Promise<string> }) =>
          idp.mintIdToken({ aud: IDP_CLIENT.clientId, ttl: -60 })
      }
    ]
    for (const testCase of cases) {
      it.live(testCase.name, () =>
        Effect.gen(function*() {
          const { as, idp, server } = yield* setup()
          const other = yield* startAuthServer({ idp: true })
          const idToken = yield* Effect.promise(() => testCase.idToken(idp as never, other as never))
          const store = McpAuth.makeMemoryStore()
          const error = yield* Effect.flip(
            connect({ url: server.url, store, oauth: { grant: crossApp(idp, idToken) } })
          )
          assert.strictEqual(authKind(error), "Token", error.message)
          assert.include(error.message, "token exchange", error.message)
          assert.include(error.message, "invalid_grant", error.message)
          assert.strictEqual((error.reason as McpError.AuthError).status, 400)
          const exchanges = idp.requestsTo("/token")
          assert.strictEqual(exchanges.length, 1)
          assert.strictEqual(exchanges[0]!.status, 400)
          assert.strictEqual(exchanges[0]!.form!.subject_token, idToken)
          assert.strictEqual(idp.idJags.length, 0)
          assert.strictEqual(as.requestsTo("/token").length, 0)
          assert.isUndefined(yield* store.getTokens(server.resource))
        }))
    }
  })

  describe("the AS refuses the ID-JAG: a typed Token error, no access token", () => {
    const cases: ReadonlyArray<{ readonly name: string; readonly idp: AuthServerOptions; readonly error: string }> = [
      {
        name: "issued for another audience",
        idp: { idJagClaims: { aud: "https://other-as.example" } },
        error: "invalid_grant"
      },
      {
        name: "issued for another client",
        idp: { idJagClientId: () => "someone-else" },
        error: "invalid_grant"
      },
      {
        name: "issued for another resource",
        idp: { idJagClaims: { resource: "https://other-server.example/mcp" } },
        error: "invalid_grant"
      }
    ]
    for (const testCase of cases) {
      it.live(testCase.name, () =>
        Effect.gen(function*() {
          const { as, idToken, idp, server } = yield* setup({ idp: testCase.idp })
          const error = yield* Effect.flip(connect({ url: server.url, oauth: { grant: crossApp(idp, idToken) } }))
          assert.strictEqual(authKind(error), "Token", error.message)
          assert.include(error.message, "JWT bearer grant", error.message)
          assert.include(error.message, testCase.error, error.message)
          // the IdP issued the ID-JAG, the AS saw it and refused it
          assert.strictEqual(idp.requestsTo("/token")[0]!.status, 200)
          const bearer = as.requestsTo("/token")
          assert.strictEqual(bearer.length, 1)
          assert.strictEqual(bearer[0]!.form!.assertion, idp.idJags[0]!.token)
          assert.strictEqual(bearer[0]!.status, 400)
          assert.strictEqual(as.issued.length, 0)
        }))
    }
  })

  it.live("an ID-JAG for another resource, at an AS that serves any: the grant's own resource parameter gets it refused", () =>
    Effect.gen(function*() {
      const { as, idToken, idp, server } = yield* setup({
        anyResource: true,
        idp: { idJagClaims: { resource: "https://other-server.example/mcp" } }
      })
      const error = yield* Effect.flip(connect({ url: server.url, oauth: { grant: crossApp(idp, idToken) } }))
      assert.strictEqual(authKind(error), "Token", error.message)
      assert.include(error.message, "invalid_target")
      // the client named this server in the JWT bearer grant; the AS compared it with the ID-JAG and issued nothing
      const grants = as.requestsTo("/token")
      assert.strictEqual(grants.length, 1)
      assert.strictEqual(grants[0]!.form!.resource, server.resource)
      assert.strictEqual(grants[0]!.status, 400)
      assert.strictEqual(as.issued.length, 0)
      assert.strictEqual(idp.requestsTo("/token").length, 1)
    }))

  it.live("idToken as an Effect: evaluated at each exchange (not at make, not per request), a fresh token each time", () =>
    Effect.gen(function*() {
      const { as, idp, server } = yield* setup()
      const evaluations = yield* Ref.make(0)
      const minted: Array<string> = []
      const idToken = Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(evaluations, (k) => k + 1)
        const token = yield* Effect.promise(() => idp.mintIdToken({ aud: IDP_CLIENT.clientId, sub: "alice", n }))
        minted.push(token)
        return token
      })
      const grant = crossApp(idp, idToken)

      // make alone, and a request without a challenge, do not ask for the ID token
      const auth = yield* makeAuth({ url: server.url, oauth: { grant } })
      assert.isUndefined(yield* auth.authorization(server.url))
      assert.strictEqual(yield* Ref.get(evaluations), 0)

      const client = yield* connect({ url: server.url, oauth: { grant } })
      assert.strictEqual(yield* Ref.get(evaluations), 1)
      yield* client.callTool("echo", { text: "1" })
      yield* client.callTool("echo", { text: "2" })
      assert.strictEqual(yield* Ref.get(evaluations), 1)
      assert.strictEqual(idp.requestsTo("/token")[0]!.form!.subject_token, minted[0])

      // the access token is refused (no refresh token with this grant): a new exchange, a new ID token
      as.revoke(as.issued[0]!.token)
      assert.strictEqual(text(yield* client.callTool("echo", { text: "3" })), "3")
      assert.strictEqual(yield* Ref.get(evaluations), 2)
      const exchanges = idp.requestsTo("/token")
      assert.strictEqual(exchanges.length, 2)
      assert.strictEqual(exchanges[1]!.form!.subject_token, minted[1])
      assert.notStrictEqual(minted[0], minted[1])
      const bearer = as.requestsTo("/token")
      assert.deepStrictEqual(bearer.map((r) => r.status), [200, 200])
      assert.strictEqual(bearer[1]!.form!.assertion, idp.idJags[1]!.token)
      assert.notStrictEqual(as.issued[1]!.token, as.issued[0]!.token)
    }))

  it.live("idToken as a failing Effect: its error, as is, and no request to the IdP", () =>
    Effect.gen(function*() {
      const { as, idp, server } = yield* setup()
      const signedOut = McpError.auth("Authorization", "the user is signed out of the IdP")
      const error = yield* Effect.flip(
        connect({ url: server.url, oauth: { grant: crossApp(idp, Effect.fail(signedOut)) } })
      )
      assert.strictEqual(authKind(error), "Authorization")
      assert.include(error.message, "signed out")
      assert.strictEqual(idp.requests.length, 0)
      assert.strictEqual(as.requestsTo("/token").length, 0)
    }))

  it.live(
    "cleanup: after the client's scope closes, no connection is left open to the IdP, the AS or the server",
    () =>
      Effect.gen(function*() {
        const outer = yield* Scope.make()
        const { as, idToken, idp, server } = yield* setup().pipe(Scope.provide(outer))
        const inner = yield* Scope.make()
        const fiber = yield* Effect.gen(function*() {
          const client = yield* connect({ url: server.url, oauth: { grant: crossApp(idp, idToken) } })
          yield* client.callTool("echo", { text: "x" })
        }).pipe(Scope.provide(inner), Effect.forkChild({ startImmediately: true }))
        yield* Fiber.join(fiber)
        assert.strictEqual(idp.requestsTo("/token").length, 1)
        yield* Scope.close(inner, Exit.void)
        // the resource server's own JWKS fetches (jose) are not the client's: left out
        const clientSockets = Effect.map(
          Effect.all([idp.openSockets, as.openSockets, server.openSockets]),
          ([i, a, s]) => [
            ...i.map((x) => `IdP: ${x}`),
            ...a.filter((x) => !x.includes("user-agent: jose/")).map((x) => `AS: ${x}`),
            ...s.map((x) => `front: ${x}`)
          ]
        )
        let open: ReadonlyArray<string> = []
        for (let i = 0; i < 20; i++) {
          open = yield* clientSockets
          if (open.length === 0) break
          yield* Effect.sleep("50 millis")
        }
        assert.deepStrictEqual(open, [], open.join("; "))
        yield* Scope.close(outer, Exit.void)
      }),
    20_000
  )
})
