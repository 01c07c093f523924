/**
 * The JWT bearer grants end to end: our McpClient over NodeMcpHttpClient
 * with NodeMcpOAuth, against the test authorization servers
 * (fixtures/authServer.ts) in front of a protected MCP server.
 * - `jwt_bearer` (workload identity federation, SEP-1933): a workload
 *   issuer (`idp: true`, its `mintIdToken` signs the workload JWTs) and an
 *   authorization server trusting it (`workloadIdps`) with no registration.
 * - `cross_app_access` as the conformance suite's enterprise-managed
 *   authorization runs it: an IdP found by its issuer, an authorization
 *   server with the JWT bearer grant and `client_secret_basic` only.
 */
import { McpAuth, McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, type Scope } from "effect"
import type * as NodeMcpOAuth from "../../src/NodeMcpOAuth.ts"
import {
  type AuthServer,
  type AuthServerOptions,
  ID_JAG_TYPE,
  ID_TOKEN_TYPE,
  JWT_BEARER,
  startAuthServer,
  startProtectedServer,
  TOKEN_EXCHANGE
} from "../fixtures/authServer.ts"
import { authKind, connect, makeAuth, text } from "../fixtures/oauthClient.ts"

/** A workload issuer, an authorization server trusting its JWTs (no registration), a server needing `mcp:read`. */
const setupWorkload = (as: AuthServerOptions = {}) =>
  Effect.gen(function*() {
    const platform = yield* startAuthServer({ idp: true })
    const authServer = yield* startAuthServer({
      workloadIdps: [platform],
      registration: false,
      grantTypes: [JWT_BEARER],
      tokenEndpointAuthMethods: ["none"],
      ...as
    })
    const server = yield* startProtectedServer(authServer, { requiredScopes: ["mcp:read"] })
    /** A workload JWT for the authorization server (claims as given). */
    const mint = (claims: { aud?: string; sub?: string; ttl?: number; n?: number } = {}) =>
      Effect.promise(() => platform.mintIdToken({ aud: authServer.issuer, sub: "build-agent", ...claims }))
    return { platform, as: authServer, server, mint }
  })

const workload = (
  assertion: NodeMcpOAuth.JwtBearerGrant["assertion"],
  extra: Partial<NodeMcpOAuth.JwtBearerGrant> = {}
): NodeMcpOAuth.JwtBearerGrant => ({ type: "jwt_bearer", assertion, ...extra })

/** The client's requests to the authorization server, metadata aside (`/jwks` is the resource server's). */
const clientRequests = (as: AuthServer) =>
  as.requests
    .filter((r) => !r.path.startsWith("/.well-known/") && r.path !== "/jwks")
    .map((r) => `${r.method} ${r.path}`)

describe("NodeMcpOAuth jwt_bearer (workload identity federation)", () => {
  it.live("signs in with the workload's JWT: one JWT bearer grant, no registration, no client authentication", () =>
    Effect.gen(function*() {
      const { as, mint, server } = yield* setupWorkload()
      const jwt = yield* mint()
      const client = yield* connect({ url: server.url, oauth: { grant: workload(jwt) } })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "wif" })), "wif")

      assert.deepStrictEqual(clientRequests(as), ["POST /token"])
      const grant = as.requestsTo("/token")[0]!
      assert.strictEqual(grant.status, 200, JSON.stringify(grant.response))
      assert.deepStrictEqual(grant.form, {
        grant_type: JWT_BEARER,
        assertion: jwt,
        resource: server.resource,
        scope: "mcp:read"
      })
      assert.isUndefined(grant.headers.authorization)

      const seen = JSON.parse(text(yield* client.callTool("whoami", {})))
      assert.strictEqual(seen.subject, "build-agent")
      assert.deepStrictEqual(seen.scopes, ["mcp:read"])
      assert.deepStrictEqual(seen.audience, [server.resource])
      assert.strictEqual(as.requestsTo("/token").length, 1)
    }))

  it.live("clientId: sent as the client_id of a public client, still no client authentication", () =>
    Effect.gen(function*() {
      const { as, mint, server } = yield* setupWorkload()
      const client = yield* connect({
        url: server.url,
        oauth: { grant: workload(yield* mint(), { clientId: "ci-runner" }) }
      })
      const seen = JSON.parse(text(yield* client.callTool("whoami", {})))
      assert.strictEqual(seen.clientId, "ci-runner")
      const grant = as.requestsTo("/token")[0]!
      assert.strictEqual(grant.form!.client_id, "ci-runner")
      assert.isUndefined(grant.form!.client_secret)
      assert.isUndefined(grant.form!.client_assertion)
      assert.isUndefined(grant.headers.authorization)
    }))

  describe("a refused grant is a typed Token error: one request, no retry, no other grant", () => {
    const cases: ReadonlyArray<{
      readonly name: string
      readonly jwt: (s: Effect.Success<ReturnType<typeof setupWorkload>>) => Effect.Effect<string, never, Scope.Scope>
      readonly scope?: string
      readonly error: string
    }> = [
      { name: "for another audience", jwt: (s) => s.mint({ aud: "https://other-as.example" }), error: "invalid_grant" },
      { name: "expired", jwt: (s) => s.mint({ ttl: -60 }), error: "invalid_grant" },
      {
        name: "from an untrusted issuer",
        jwt: (s) =>
          Effect.flatMap(
            startAuthServer({ idp: true }),
            (other) => Effect.promise(() => other.mintIdToken({ aud: s.as.issuer, sub: "build-agent" }))
          ),
        error: "invalid_grant"
      },
      { name: "a scope the server refuses", jwt: (s) => s.mint(), scope: "mcp:write", error: "invalid_scope" }
    ]
    for (const testCase of cases) {
      it.live(testCase.name, () =>
        Effect.gen(function*() {
          const setup = yield* setupWorkload({ scopesSupported: ["mcp:read"] })
          const { as, server } = setup
          const jwt = yield* testCase.jwt(setup)
          const store = McpAuth.makeMemoryStore()
          const error = yield* Effect.flip(
            connect({ url: server.url, store, oauth: { grant: workload(jwt, { scope: testCase.scope }) } })
          )
          assert.strictEqual(authKind(error), "Token", error.message)
          assert.include(error.message, "JWT bearer grant", error.message)
          assert.include(error.message, testCase.error, error.message)
          assert.strictEqual((error.reason as McpError.AuthError).status, 400)
          // exactly the one grant: not retried, no registration, no authorization code grant
          assert.deepStrictEqual(clientRequests(as), ["POST /token"])
          const grant = as.requestsTo("/token")[0]!
          assert.strictEqual(grant.form!.grant_type, JWT_BEARER)
          assert.strictEqual(grant.form!.assertion, jwt)
          assert.strictEqual(grant.status, 400)
          assert.strictEqual(as.issued.length, 0)
          assert.isUndefined(yield* store.getTokens(server.resource))
        }))
    }
  })

  it.live("a refused assertion is not presented again: later challenges get the same error without a request", () =>
    Effect.gen(function*() {
      const { as, mint, server } = yield* setupWorkload()
      const jwt = yield* mint({ aud: "https://other-as.example" })
      const auth = yield* makeAuth({ url: server.url, oauth: { grant: workload(jwt) } })
      const challenge: McpAuth.Challenge = { status: 401, url: server.url, authorization: undefined, bearer: undefined }
      const first = yield* Effect.flip(auth.challenge(challenge))
      const second = yield* Effect.flip(auth.challenge(challenge))
      assert.strictEqual(authKind(first), "Token")
      assert.strictEqual(second, first)
      assert.strictEqual(as.requestsTo("/token").length, 1)
    }))

  it.live("assertion as an Effect: run at each grant, so a refused token is replaced by a fresh JWT", () =>
    Effect.gen(function*() {
      const { as, mint, server } = yield* setupWorkload()
      const runs = yield* Ref.make(0)
      const minted: Array<string> = []
      const assertion = Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(runs, (k) => k + 1)
        const jwt = yield* mint({ n })
        minted.push(jwt)
        return jwt
      })
      const client = yield* connect({ url: server.url, oauth: { grant: workload(assertion) } })
      yield* client.callTool("echo", { text: "1" })
      assert.strictEqual(yield* Ref.get(runs), 1)
      // the access token is refused (no refresh token with this grant): a new grant with a new JWT
      as.revoke(as.issued[0]!.token)
      assert.strictEqual(text(yield* client.callTool("echo", { text: "2" })), "2")
      assert.strictEqual(yield* Ref.get(runs), 2)
      assert.deepStrictEqual(as.requestsTo("/token").map((r) => r.form!.assertion), minted)
      assert.notStrictEqual(minted[0], minted[1])
    }))

  it.live("assertion as a failing Effect: its error, as is, and no token request", () =>
    Effect.gen(function*() {
      const { as, server } = yield* setupWorkload()
      const unavailable = McpError.auth("Token", "the workload's token file is missing")
      const error = yield* Effect.flip(
        connect({ url: server.url, oauth: { grant: workload(Effect.fail(unavailable)) } })
      )
      assert.include(error.message, "token file is missing")
      assert.strictEqual(as.requestsTo("/token").length, 0)
    }))
})

describe("NodeMcpOAuth cross_app_access as enterprise-managed authorization (SEP-990)", () => {
  const AS_CLIENT = { clientId: "conformance-like-client", clientSecret: "as-secret" }
  const IDP_CLIENT_ID = "client-at-idp"

  it.live("the IdP by its issuer: token exchange there, then the JWT bearer grant with client_secret_basic", () =>
    Effect.gen(function*() {
      const idp = yield* startAuthServer({
        idp: true,
        discovery: ["oidc-insert"],
        clients: [{ clientId: IDP_CLIENT_ID }],
        idJagClientId: () => AS_CLIENT.clientId
      })
      const as = yield* startAuthServer({
        trustedIdps: [idp],
        clients: [AS_CLIENT],
        grantTypes: [JWT_BEARER],
        tokenEndpointAuthMethods: ["client_secret_basic"]
      })
      const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"] })
      as.config.resources = [server.resource]
      const idToken = yield* Effect.promise(() => idp.mintIdToken({ aud: IDP_CLIENT_ID, sub: "alice" }))
      const grant: NodeMcpOAuth.CrossAppAccessGrant = {
        type: "cross_app_access",
        ...AS_CLIENT,
        idp: { issuer: idp.issuer, clientId: IDP_CLIENT_ID, idToken }
      }
      const client = yield* connect({ url: server.url, oauth: { grant } })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ema" })), "ema")

      // 1. RFC 8693 at the IdP
      const exchange = idp.requestsTo("/token")[0]!
      assert.strictEqual(exchange.status, 200, JSON.stringify(exchange.response))
      assert.strictEqual(exchange.form!.grant_type, TOKEN_EXCHANGE)
      assert.strictEqual(exchange.form!.subject_token, idToken)
      assert.strictEqual(exchange.form!.subject_token_type, ID_TOKEN_TYPE)
      assert.strictEqual(exchange.form!.requested_token_type, ID_JAG_TYPE)
      assert.strictEqual(exchange.form!.audience, as.issuer)
      assert.strictEqual(exchange.form!.resource, server.resource)

      // 2. RFC 7523 at the AS: the ID-JAG verbatim, Basic credentials of the client
      assert.deepStrictEqual(clientRequests(as), ["POST /token"])
      const bearer = as.requestsTo("/token")[0]!
      assert.strictEqual(bearer.status, 200, JSON.stringify(bearer.response))
      assert.strictEqual(bearer.form!.grant_type, JWT_BEARER)
      assert.strictEqual(bearer.form!.assertion, idp.idJags[0]!.token)
      assert.strictEqual(bearer.clientAuth, "client_secret_basic")
      assert.strictEqual(
        Buffer.from(String(bearer.headers.authorization).slice(6), "base64").toString(),
        `${AS_CLIENT.clientId}:${AS_CLIENT.clientSecret}`
      )
      const seen = JSON.parse(text(yield* client.callTool("whoami", {})))
      assert.strictEqual(seen.subject, "alice")
      assert.strictEqual(seen.clientId, AS_CLIENT.clientId)
    }))
})
