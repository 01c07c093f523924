/**
 * Issue 15, finding 3: the `issuer` of authorization server metadata must be
 * the issuer the metadata was fetched for (RFC 8414 §3.3), also on the
 * 2025-03-26 path (no protected resource metadata: the metadata at the MCP
 * server's origin, whose issuer is that origin). Registrations are stored
 * under the validated issuer, so a server whose metadata claims another
 * authorization server's issuer can neither overwrite that server's stored
 * registration nor receive its client secret.
 *
 * Two authorization servers on 127.0.0.1: an honest one, whose registration
 * (with a secret) is in the store, and a malicious MCP server whose own
 * metadata claims the honest issuer (and which would accept the honest
 * client: the attacker accepts anything).
 */
import { McpAuth, type McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import {
  type AuthServer,
  type Discovery,
  type RecordedRequest,
  startAuthServer,
  startProtectedServer
} from "../fixtures/authServer.ts"
import { authKind, connect, text } from "../fixtures/oauthClient.ts"

const SECRET = "honest-secret-do-not-leak"

const honestClient: McpAuth.ClientInformation = {
  clientId: "honest-client",
  clientSecret: SECRET,
  redirectUris: ["http://127.0.0.1/callback"],
  tokenEndpointAuthMethod: "client_secret_basic"
}

/** Whether a request carried the honest client's secret (Basic credentials or a form field). */
const carriesSecret = (request: RecordedRequest) => {
  const basic = request.headers.authorization?.replace(/^Basic /i, "") ?? ""
  const decoded = Buffer.from(basic, "base64").toString("utf8")
  return decoded.includes(SECRET) || JSON.stringify(request.form ?? {}).includes(SECRET) ||
    JSON.stringify(request.json ?? {}).includes(SECRET)
}

const failureOf = (exit: Exit.Exit<unknown, McpError.McpError>): McpError.McpError => {
  assert.isTrue(Exit.isFailure(exit), "the sign-in fails")
  const found = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  return (found?._tag === "Fail" ? found.error : undefined)!
}

const assertNothingSent = (evil: AuthServer, honest: AuthServer) => {
  assert.strictEqual(evil.requestsTo("/authorize").length, 0, "no authorization request")
  assert.strictEqual(evil.requestsTo("/token").length, 0, "no token request")
  assert.strictEqual(evil.requestsTo("/register").length, 0, "no registration")
  assert.isFalse(evil.requests.some(carriesSecret), "the honest client's secret never reached the malicious server")
  assert.strictEqual(honest.requests.length, 0, "nothing was sent to the honest authorization server either")
}

describe("issue 15 #3: a metadata issuer that is not the issuer it was fetched for is refused (RFC 8414 §3.3)", () => {
  const legacyLayouts: ReadonlyArray<Discovery> = ["oauth", "oidc-append"]
  for (const discovery of legacyLayouts) {
    it.live(`2025-03-26 (${discovery} metadata at the server's origin) claiming another AS's issuer: refused, its registration untouched and its secret never sent`, () =>
      Effect.gen(function*() {
        const honest = yield* startAuthServer()
        const store = McpAuth.makeMemoryStore()
        yield* store.setClient(honest.issuer, honestClient)
        const evil = yield* startAuthServer({
          discovery: [discovery],
          metadata: { issuer: honest.issuer },
          clients: [{ clientId: honestClient.clientId, clientSecret: SECRET }]
        })
        const server = yield* startProtectedServer(evil, { front: "as" })
        const exit = yield* Effect.exit(connect({ url: server.url, store }))
        assertNothingSent(evil, honest)
        assert.deepStrictEqual(yield* store.getClient(honest.issuer), honestClient)
        const error = failureOf(exit)
        assert.strictEqual(authKind(error), "Discovery")
        assert.include(error.message, "does not name an issuer of the MCP server's origin")
      }))
  }

  it.live("2025-03-26 claiming another AS's issuer with no stored registration: no registration lands under that issuer", () =>
    Effect.gen(function*() {
      const honest = yield* startAuthServer()
      const store = McpAuth.makeMemoryStore()
      const evil = yield* startAuthServer({ metadata: { issuer: honest.issuer } })
      const server = yield* startProtectedServer(evil, { front: "as" })
      const exit = yield* Effect.exit(connect({ url: server.url, store }))
      assert.isUndefined(yield* store.getClient(honest.issuer), "no registration stored under the honest issuer")
      assert.isUndefined(yield* store.getClient(evil.issuer))
      assertNothingSent(evil, honest)
      assert.strictEqual(authKind(failureOf(exit)), "Discovery")
    }))

  it.live("2025-06-18+ (the PRM names the malicious AS, whose metadata claims the honest issuer): refused the same way", () =>
    Effect.gen(function*() {
      const honest = yield* startAuthServer()
      const store = McpAuth.makeMemoryStore()
      yield* store.setClient(honest.issuer, honestClient)
      const evil = yield* startAuthServer({
        metadata: { issuer: honest.issuer },
        clients: [{ clientId: honestClient.clientId, clientSecret: SECRET }]
      })
      const server = yield* startProtectedServer(evil)
      const error = yield* Effect.flip(connect({ url: server.url, store }))
      assert.strictEqual(authKind(error), "Discovery")
      assertNothingSent(evil, honest)
      assert.deepStrictEqual(yield* store.getClient(honest.issuer), honestClient)
    }))

  it.live("2025-03-26 naming an issuer with a path on its own origin (as the conformance suite's server): signs in, stored under it", () =>
    Effect.gen(function*() {
      // no RFC 9207 `iss` in the redirect: the fixture would name its origin there
      const as = yield* startAuthServer({ issParameter: false })
      as.config.metadata = { issuer: `${as.url}/oauth` }
      const store = McpAuth.makeMemoryStore()
      const server = yield* startProtectedServer(as, { front: "as" })
      const client = yield* connect({ url: server.url, store })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "legacy" })), "legacy")
      assert.strictEqual(
        (yield* store.getClient(`${as.url}/oauth`))?.clientId,
        as.requestsTo("/register")[0]!.response.client_id
      )
    }))

  it.live("2025-03-26 with its own origin as issuer: signs in; the registration is stored under that (validated) issuer", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const store = McpAuth.makeMemoryStore()
      const server = yield* startProtectedServer(as, { front: "as" })
      const client = yield* connect({ url: server.url, store })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "legacy" })), "legacy")
      const registered = yield* store.getClient(as.issuer)
      assert.strictEqual(registered?.clientId, as.requestsTo("/register")[0]!.response.client_id)
    }))
})
