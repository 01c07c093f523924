/**
 * NodeMcpOAuth with a pre-configured authorization server
 * (`Options.authorizationServer`), end to end against the test
 * authorization server (fixtures/authServer.ts): an issuer is used whatever
 * the protected resource metadata lists, only its own metadata fetched;
 * full metadata means no discovery request at all; a protected resource
 * metadata document the challenge names is still read and its `resource`
 * checked.
 */
import { McpAuth } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeMcpOAuth from "../../src/NodeMcpOAuth.ts"
import { type AuthServer, startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { authKind, connect, text } from "../fixtures/oauthClient.ts"

const PRM = "/.well-known/oauth-protected-resource"

/** The GETs that reached the MCP server's front other than the MCP endpoint: protected resource metadata. */
const prmRequests = (
  server: { readonly requests: ReadonlyArray<{ readonly path: string; readonly method: string }> }
) => server.requests.filter((r) => r.method === "GET" && r.path !== "/mcp").map((r) => r.path)

const wellKnown = (as: AuthServer) => as.requests.map((r) => r.path).filter((path) => path.includes("/.well-known/"))

/** The metadata of a test authorization server, written by hand (as a user would configure it). */
const metadataOf = (as: AuthServer): NodeMcpOAuth.AuthorizationServerMetadata => ({
  issuer: as.issuer,
  authorization_endpoint: as.endpoints.authorization,
  token_endpoint: as.endpoints.token,
  registration_endpoint: as.endpoints.registration,
  code_challenge_methods_supported: ["S256"]
})

describe("NodeMcpOAuth pre-configured authorization server", () => {
  it.live("an issuer: that server, whatever the PRM lists; only its metadata is fetched, in the MCP order", () =>
    Effect.gen(function*() {
      const listed = yield* startAuthServer()
      const chosen = yield* startAuthServer({ issuerPath: "/tenant1", discovery: ["oidc-insert"] })
      const server = yield* startProtectedServer([listed, chosen], {
        verifier: "fixture",
        front_: { resourceMetadataInChallenge: false }
      })
      const client = yield* connect({ url: server.url, oauth: { authorizationServer: chosen.issuer } })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
      // no protected resource metadata probing, nothing asked of the server the PRM lists first
      assert.deepStrictEqual(prmRequests(server), [])
      assert.deepStrictEqual(listed.requests, [])
      // RFC 8414 with the path inserted (404), then OpenID Connect with the path inserted
      assert.deepStrictEqual(wellKnown(chosen), [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1"
      ])
      assert.strictEqual(chosen.requestsTo("/authorize").length, 1)
      assert.strictEqual(chosen.requestsTo("/authorize")[0]!.query.resource, server.resource)
      assert.strictEqual(chosen.issued.length, 1)
      assert.strictEqual(chosen.issued[0]!.claims.aud, server.resource)
    }))

  it.live("an issuer whose metadata names another issuer: refused at discovery", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ metadata: { issuer: "http://127.0.0.1:1" } })
      const server = yield* startProtectedServer(as, { front_: { resourceMetadataInChallenge: false } })
      const error = yield* Effect.flip(connect({ url: server.url, oauth: { authorizationServer: as.issuer } }))
      assert.strictEqual(authKind(error), "Discovery")
      assert.strictEqual(as.requestsTo("/authorize").length, 0)
    }))

  it.live("full metadata: no discovery request at all, neither to the MCP server nor to the authorization server", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, { front_: { resourceMetadataInChallenge: false } })
      const client = yield* connect({ url: server.url, oauth: { authorizationServer: { metadata: metadataOf(as) } } })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
      assert.deepStrictEqual(prmRequests(server), [])
      assert.deepStrictEqual(wellKnown(as), [])
      // the flow itself: registration, authorization, token, at the configured endpoints (the MCP
      // server's token verifier fetches /jwks)
      assert.deepStrictEqual(as.requests.map((r) => r.path).filter((path) => path !== "/jwks"), [
        "/register",
        "/authorize",
        "/token"
      ])
      assert.strictEqual(as.requestsTo("/authorize")[0]!.query.resource, server.resource)
    }))

  it.live("full metadata without S256 in code_challenge_methods_supported: refused, before any authorization", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, { front_: { resourceMetadataInChallenge: false } })
      const metadata = { ...metadataOf(as), code_challenge_methods_supported: ["plain"] }
      const error = yield* Effect.flip(connect({ url: server.url, oauth: { authorizationServer: { metadata } } }))
      assert.strictEqual(authKind(error), "Refused")
      assert.deepStrictEqual(as.requests, [])
    }))

  it.live("a PRM the challenge names is read (only that one): its resource is checked and asked for", () =>
    Effect.gen(function*() {
      const listed = yield* startAuthServer()
      const chosen = yield* startAuthServer()
      const server = yield* startProtectedServer([listed, chosen], {
        verifier: "fixture",
        front_: { resourceMetadataPath: "/custom/prm" }
      })
      const client = yield* connect({
        url: server.url,
        oauth: { authorizationServer: { metadata: metadataOf(chosen) } }
      })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "ok" })), "ok")
      assert.deepStrictEqual(prmRequests(server), ["/custom/prm"])
      assert.deepStrictEqual(listed.requests, [])
      assert.deepStrictEqual(wellKnown(chosen), [])
      assert.strictEqual(chosen.requestsTo("/authorize")[0]!.query.resource, server.resource)
    }))

  it.live("a PRM the challenge names, for another resource: refused, with an issuer or with metadata", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        front_: { prmOverride: { resource: "http://127.0.0.1:1/mcp" } }
      })
      for (const authorizationServer of [as.issuer, { metadata: metadataOf(as) }]) {
        const error = yield* Effect.flip(connect({ url: server.url, oauth: { authorizationServer } }))
        assert.strictEqual(authKind(error), "Refused")
        // what the document says is not echoed (issue 15): the error says what was expected
        assert.notInclude(error.message, "http://127.0.0.1:1/mcp")
      }
      assert.deepStrictEqual(prmRequests(server), [`${PRM}/mcp`, `${PRM}/mcp`])
      // refused before the authorization server's metadata was asked for
      assert.deepStrictEqual(as.requests, [])
    }))

  it.effect("an issuer that is no URL fails at make, with a Discovery error", () =>
    Effect.gen(function*() {
      for (
        const authorizationServer of [
          "not a url",
          { metadata: { issuer: "also not a url" } },
          { metadata: {} as NodeMcpOAuth.AuthorizationServerMetadata }
        ]
      ) {
        const error = yield* Effect.flip(
          NodeMcpOAuth.make({ serverUrl: "http://127.0.0.1:1/mcp", authorizationServer }).pipe(
            Effect.provideService(McpAuth.McpAuthStore, McpAuth.makeMemoryStore()),
            Effect.scoped
          )
        )
        assert.strictEqual(authKind(error), "Discovery")
      }
    }))
})
