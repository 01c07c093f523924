/**
 * The test authorization server (fixtures/authServer.ts) checked on its own,
 * with oauth4webapi as a reference client: discovery locations, the code
 * flow with PKCE and `resource`, refresh rotation, client_credentials with
 * private_key_jwt, CIMD, introspection, and its refusals. The client tests
 * (auth/oauthClient.test.ts and its neighbours) rely on all of this.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Jose from "jose"
import * as oauth from "oauth4webapi"
import * as NodeMcpAuthorizer from "../../src/NodeMcpAuthorizer.ts"
import { type AuthServerOptions, makeClientKey, startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"

const insecure = { [oauth.allowInsecureRequests]: true } as const
const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

const discover = (issuer: string, algorithm: "oauth2" | "oidc" = "oauth2") =>
  promise(async () =>
    oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { algorithm, ...insecure })
    )
  )

const status = (url: string) => promise(async () => (await fetch(url)).status)

const codeFlow = (
  options: AuthServerOptions,
  params: { readonly resource?: string; readonly scope?: string } = {}
) =>
  Effect.gen(function*() {
    const as = yield* startAuthServer(options)
    const metadata = yield* discover(as.issuer)
    const authorizer = NodeMcpAuthorizer.makeHeadless()
    const registered = yield* promise(async () =>
      oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(metadata, {
          redirect_uris: [authorizer.redirectUri],
          token_endpoint_auth_method: "client_secret_basic"
        }, insecure)
      )
    )
    const client: oauth.Client = { client_id: registered.client_id }
    const auth = oauth.ClientSecretBasic(registered.client_secret as string)
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(metadata.authorization_endpoint!)
    url.searchParams.set("response_type", "code")
    url.searchParams.set("client_id", client.client_id)
    url.searchParams.set("redirect_uri", authorizer.redirectUri)
    url.searchParams.set("code_challenge", yield* promise(() => oauth.calculatePKCECodeChallenge(verifier)))
    url.searchParams.set("code_challenge_method", "S256")
    url.searchParams.set("state", state)
    if (params.resource !== undefined) url.searchParams.set("resource", params.resource)
    if (params.scope !== undefined) url.searchParams.set("scope", params.scope)
    const redirect = yield* authorizer.authorize(url)
    return { as, metadata, client, auth, verifier, state, redirect, authorizer }
  })

describe("fixtures/authServer", () => {
  it.live("discovery documents are served where the switches say, and nowhere else", () =>
    Effect.gen(function*() {
      const a = yield* startAuthServer({ issuerPath: "/tenant1", discovery: ["oauth"] })
      assert.strictEqual(yield* status(`${a.url}/.well-known/oauth-authorization-server/tenant1`), 200)
      assert.strictEqual(yield* status(`${a.url}/.well-known/openid-configuration/tenant1`), 404)
      assert.strictEqual(yield* status(`${a.url}/tenant1/.well-known/openid-configuration`), 404)
      assert.strictEqual((yield* discover(a.issuer)).issuer, `${a.url}/tenant1`)

      const b = yield* startAuthServer({ issuerPath: "/tenant1", discovery: ["oidc-append"] })
      assert.strictEqual(yield* status(`${b.url}/.well-known/oauth-authorization-server/tenant1`), 404)
      assert.strictEqual(yield* status(`${b.url}/tenant1/.well-known/openid-configuration`), 200)
      assert.strictEqual((yield* discover(b.issuer, "oidc")).token_endpoint, `${b.url}/tenant1/token`)

      const c = yield* startAuthServer({ issuerPath: "/tenant1", discovery: ["oidc-insert"] })
      assert.strictEqual(yield* status(`${c.url}/.well-known/openid-configuration/tenant1`), 200)
      assert.strictEqual(yield* status(`${c.url}/tenant1/.well-known/openid-configuration`), 404)

      const d = yield* startAuthServer({ discovery: [] })
      assert.strictEqual(yield* status(`${d.url}/.well-known/oauth-authorization-server`), 404)
      assert.strictEqual(yield* status(`${d.url}/.well-known/openid-configuration`), 404)
      assert.strictEqual(d.endpoints.token, `${d.url}/token`)

      const e = yield* startAuthServer({ codeChallengeMethods: [], metadata: { scopes_supported: ["x"] } })
      const doc = yield* discover(e.issuer)
      assert.isUndefined(doc.code_challenge_methods_supported)
      assert.deepStrictEqual(doc.scopes_supported, ["x"])
    }))

  it.live("the code flow: PKCE S256 checked, resource becomes aud, state and iss echoed, refresh rotates", () =>
    Effect.gen(function*() {
      const resource = "http://127.0.0.1:1/mcp"
      const flow = yield* codeFlow({}, { resource, scope: "mcp:read" })
      const { as, metadata, client, auth } = flow
      assert.strictEqual(flow.redirect.searchParams.get("state"), flow.state)
      assert.strictEqual(flow.redirect.searchParams.get("iss"), as.issuer)
      const params = oauth.validateAuthResponse(metadata, client, flow.redirect, flow.state)

      // a wrong verifier is refused (the code is then spent)
      const wrong = yield* promise(async () =>
        (await oauth.authorizationCodeGrantRequest(
          metadata,
          client,
          auth,
          params,
          flow.authorizer.redirectUri,
          "x".repeat(43),
          {
            ...insecure,
            additionalParameters: { resource }
          }
        )).status
      )
      assert.strictEqual(wrong, 400)
      assert.strictEqual(as.requests.at(-1)!.status, 400)

      const again = yield* codeFlow({}, { resource, scope: "mcp:read" })
      const p2 = oauth.validateAuthResponse(again.metadata, again.client, again.redirect, again.state)
      const tokens = yield* promise(async () =>
        oauth.processAuthorizationCodeResponse(
          again.metadata,
          again.client,
          await oauth.authorizationCodeGrantRequest(
            again.metadata,
            again.client,
            again.auth,
            p2,
            again.authorizer.redirectUri,
            again.verifier,
            { ...insecure, additionalParameters: { resource } }
          )
        )
      )
      const claims = Jose.decodeJwt(tokens.access_token)
      assert.strictEqual(claims.aud, resource)
      assert.strictEqual(claims.scope, "mcp:read")
      assert.strictEqual(claims.client_id, again.client.client_id)
      assert.strictEqual(claims.iss, again.as.issuer)
      const verified = yield* promise(() =>
        Jose.jwtVerify(tokens.access_token, Jose.createRemoteJWKSet(new URL(again.as.endpoints.jwks)), {
          audience: resource
        })
      )
      assert.strictEqual(verified.payload.sub, "user-1")
      const tokenRequest = again.as.requestsTo("/token").at(-1)!
      assert.strictEqual(tokenRequest.clientAuth, "client_secret_basic")
      assert.strictEqual(tokenRequest.form?.resource, resource)
      assert.strictEqual(again.as.requestsTo("/authorize").at(-1)!.query.code_challenge_method, "S256")

      // refresh rotates: the old refresh token is refused afterwards
      const refreshed = yield* promise(async () =>
        oauth.processRefreshTokenResponse(
          again.metadata,
          again.client,
          await oauth.refreshTokenGrantRequest(
            again.metadata,
            again.client,
            again.auth,
            tokens.refresh_token!,
            insecure
          )
        )
      )
      assert.notStrictEqual(refreshed.refresh_token, tokens.refresh_token)
      assert.strictEqual(Jose.decodeJwt(refreshed.access_token).aud, resource)
      const reused = yield* promise(async () =>
        (await oauth.refreshTokenGrantRequest(
          again.metadata,
          again.client,
          again.auth,
          tokens.refresh_token!,
          insecure
        )).status
      )
      assert.strictEqual(reused, 400)

      // introspection
      const introspect = (token: string) =>
        promise(async () =>
          oauth.processIntrospectionResponse(
            again.metadata,
            again.client,
            await oauth.introspectionRequest(again.metadata, again.client, again.auth, token, insecure)
          )
        )
      assert.strictEqual((yield* introspect(refreshed.access_token)).active, true)
      again.as.revoke(refreshed.access_token)
      assert.strictEqual((yield* introspect(refreshed.access_token)).active, false)
    }))

  it.live("deny, wrong state and wrong iss switches", () =>
    Effect.gen(function*() {
      const denied = yield* codeFlow({ deny: true })
      assert.strictEqual(denied.redirect.searchParams.get("error"), "access_denied")
      const wrongState = yield* codeFlow({ wrongState: true })
      assert.notStrictEqual(wrongState.redirect.searchParams.get("state"), wrongState.state)
      const wrongIss = yield* codeFlow({ wrongIss: true })
      assert.notStrictEqual(wrongIss.redirect.searchParams.get("iss"), wrongIss.as.issuer)
      const noIss = yield* codeFlow({ issParameter: false })
      assert.isNull(noIss.redirect.searchParams.get("iss"))
      assert.isUndefined(noIss.metadata.authorization_response_iss_parameter_supported)
    }))

  it.live("an unregistered redirect URI or client is not redirected to", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ clients: [{ clientId: "pre", redirectUris: ["http://127.0.0.1:9/cb"] }] })
      const url = new URL(as.endpoints.authorization)
      url.searchParams.set("client_id", "pre")
      url.searchParams.set("redirect_uri", "http://127.0.0.1/elsewhere")
      url.searchParams.set("response_type", "code")
      url.searchParams.set("code_challenge", "abc")
      url.searchParams.set("code_challenge_method", "S256")
      const error = yield* Effect.flip(NodeMcpAuthorizer.makeHeadless().authorize(url))
      assert.match(error.message, /400/)
      url.searchParams.set("client_id", "nobody")
      assert.match((yield* Effect.flip(NodeMcpAuthorizer.makeHeadless().authorize(url))).message, /400/)
    }))

  it.live("client_credentials with private_key_jwt and with client_secret_post; a wrong key is refused", () =>
    Effect.gen(function*() {
      const key = yield* makeClientKey()
      const other = yield* makeClientKey()
      const as = yield* startAuthServer({
        clients: [
          { clientId: "robot", jwks: key.jwks, tokenEndpointAuthMethod: "private_key_jwt" },
          { clientId: "poster", clientSecret: "s3cret", tokenEndpointAuthMethod: "client_secret_post" }
        ]
      })
      const metadata = yield* discover(as.issuer)
      const grant = (clientId: string, auth: oauth.ClientAuth) =>
        promise(async () =>
          oauth.clientCredentialsGrantRequest(metadata, { client_id: clientId }, auth, {
            scope: "mcp:read",
            resource: "http://x/mcp"
          }, insecure)
        )
      const ok = yield* grant(
        "robot",
        oauth.PrivateKeyJwt({ key: yield* promise(() => Jose.importPKCS8(key.pem, "ES256")), kid: key.publicJwk.kid })
      )
      assert.strictEqual(ok.status, 200)
      const body: any = yield* promise(() => ok.json())
      assert.strictEqual(Jose.decodeJwt(body.access_token).sub, "robot")
      assert.strictEqual(as.requestsTo("/token").at(-1)!.clientAuth, "private_key_jwt")
      const bad = yield* grant(
        "robot",
        oauth.PrivateKeyJwt({ key: yield* promise(() => Jose.importPKCS8(other.pem, "ES256")) })
      )
      assert.strictEqual(bad.status, 401)
      const post = yield* grant("poster", oauth.ClientSecretPost("s3cret"))
      assert.strictEqual(post.status, 200)
      assert.strictEqual(as.requestsTo("/token").at(-1)!.clientAuth, "client_secret_post")
      const wrongMethod = yield* grant("poster", oauth.ClientSecretBasic("s3cret"))
      assert.strictEqual(wrongMethod.status, 401)
    }))

  it.live("CIMD: a URL client_id is fetched from the fixture itself; its redirect_uris bind the flow", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ cimd: true })
      const clientId = `${as.url}/clients/app.json`
      as.serveJson("/clients/app.json", {
        client_id: clientId,
        client_name: "app",
        redirect_uris: ["http://127.0.0.1/callback"],
        token_endpoint_auth_method: "none"
      })
      const metadata = yield* discover(as.issuer)
      assert.strictEqual(metadata.client_id_metadata_document_supported, true)
      const url = new URL(as.endpoints.authorization)
      url.searchParams.set("client_id", clientId)
      url.searchParams.set("redirect_uri", "http://127.0.0.1/callback")
      url.searchParams.set("response_type", "code")
      url.searchParams.set("code_challenge", "x".repeat(43))
      url.searchParams.set("code_challenge_method", "S256")
      const redirect = yield* NodeMcpAuthorizer.makeHeadless().authorize(url)
      assert.isString(redirect.searchParams.get("code"))
      assert.strictEqual(as.requestsTo("/clients/app.json").length, 1)
    }))

  it.live("the protected server: 401 with resource_metadata on the front, PRM through the front, a token from the AS accepted, whoami", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        requiredScopes: ["mcp:read"],
        scopesSupported: ["mcp:read", "mcp:admin"]
      })
      const post = (body: unknown, token?: string) =>
        promise(() =>
          fetch(server.url, {
            method: "POST",
            headers: {
              accept: "application/json, text/event-stream",
              "content-type": "application/json",
              ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
            },
            body: JSON.stringify(body)
          })
        )
      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
      }
      const refused = yield* post(initialize)
      assert.strictEqual(refused.status, 401)
      const challenge = refused.headers.get("www-authenticate")!
      assert.include(
        challenge,
        `resource_metadata="${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp"`
      )
      assert.include(challenge, `scope="mcp:read"`)
      const prm: any = yield* promise(async () =>
        (await fetch(`${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`)).json()
      )
      assert.strictEqual(prm.resource, server.resource)
      assert.deepStrictEqual(prm.authorization_servers, [as.issuer])

      const token = yield* promise(() => as.issueToken({ aud: server.resource, scope: "mcp:read", client_id: "c1" }))
      const ok = yield* post(initialize, token)
      assert.strictEqual(ok.status, 200)
      const session = ok.headers.get("mcp-session-id")!
      yield* promise(() => ok.text())
      const wrongAudience = yield* promise(() => as.issueToken({ aud: "http://127.0.0.1:1/mcp", scope: "mcp:read" }))
      assert.strictEqual((yield* post(initialize, wrongAudience)).status, 401)

      server.front.prm = { path: false, root: true }
      server.front.resourceMetadataInChallenge = false
      assert.notInclude((yield* post(initialize)).headers.get("www-authenticate")!, "resource_metadata")
      assert.strictEqual(
        (yield* promise(() => fetch(`${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`))).status,
        404
      )
      assert.strictEqual(
        (yield* promise(() => fetch(`${new URL(server.url).origin}/.well-known/oauth-protected-resource`))).status,
        200
      )
      server.front.prmOverride = { resource: "http://127.0.0.1:1/elsewhere" }
      const overridden: any = yield* promise(async () =>
        (await fetch(`${new URL(server.url).origin}/.well-known/oauth-protected-resource`)).json()
      )
      assert.strictEqual(overridden.resource, "http://127.0.0.1:1/elsewhere")
      void session
    }))
})
