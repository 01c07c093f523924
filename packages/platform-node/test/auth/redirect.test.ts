/**
 * The redirect flow of a web page (core's McpOAuthRedirect), in Node: the
 * client is core's `McpOAuth.make` on the global `fetch` (what a browser
 * has), the page's `location.assign` and its `sessionStorage` are fakes, and
 * the authorization server is the test one (fixtures/authServer.ts, which
 * authorizes without a user: its redirect is followed as a browser would).
 */
import { McpAuth, McpClient, McpError, McpOAuth, McpOAuthRedirect } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import * as NodeJsonSchemaValidator from "../../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpAuthorizer from "../../src/NodeMcpAuthorizer.ts"
import * as NodeMcpHttpClient from "../../src/NodeMcpHttpClient.ts"
import { type AuthServerOptions, startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { authKind, text } from "../fixtures/oauthClient.ts"

const REDIRECT = "http://127.0.0.1:9/app/callback"

/** A `Storage` in memory, its entries visible to the test. */
const fakeStorage = () => {
  const entries = new Map<string, string>()
  const storage: McpOAuthRedirect.Storage = {
    getItem: (key) => entries.get(key) ?? null,
    setItem: (key, value) => void entries.set(key, value),
    removeItem: (key) => void entries.delete(key)
  }
  return { storage, entries }
}

/** A client of `serverUrl` over `McpOAuth.make` (global fetch) with `layers` providing store and authorizer. */
const connect = (
  serverUrl: string,
  layers: Layer.Layer<McpAuth.McpAuthStore | McpAuth.McpAuthorizer>
): Effect.Effect<McpClient.Client, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const auth = yield* McpOAuth.make({ serverUrl, clientMetadata: { clientName: "redirect test" } }).pipe(
      Effect.provide(layers)
    )
    const context = yield* Layer.build(
      McpClient.layer({ clientInfo: { name: "redirect-test", version: "1.0.0" } }).pipe(
        Layer.provide(NodeMcpHttpClient.layer({ url: serverUrl, auth })),
        Layer.provide(NodeJsonSchemaValidator.layer)
      )
    )
    return Context.get(context, McpClient.McpClient)
  })

/**
 * The app page: an MCP call that meets a 401, and the page navigated to the
 * authorization server (the call never returns: it is interrupted, as the
 * page would unload). The authorization URL.
 */
const beginOnPage = (serverUrl: string, storage: McpOAuthRedirect.Storage) =>
  Effect.gen(function*() {
    const navigated = yield* Deferred.make<URL>()
    const Storage = McpOAuthRedirect.layerWebStorage(storage)
    const Authorizer = McpOAuthRedirect.layerAuthorizer({
      redirectUri: REDIRECT,
      navigate: (url) => Deferred.succeed(navigated, url)
    })
    const page = yield* Effect.forkChild(
      Effect.scoped(Effect.gen(function*() {
        const client = yield* connect(serverUrl, Authorizer.pipe(Layer.provideMerge(Storage)))
        return yield* client.callTool("echo", { text: "never" })
      })),
      { startImmediately: true }
    )
    const url = yield* Deferred.await(navigated).pipe(Effect.timeout("10 seconds"))
    yield* Fiber.interrupt(page)
    return url
  })

/** What the browser gets back from the test authorization server: the redirect to the app. */
const visitAuthorizationServer = (authorizationUrl: URL) =>
  NodeMcpAuthorizer.makeHeadless({ redirectUri: REDIRECT }).authorize(authorizationUrl)

const setup = (options?: AuthServerOptions) =>
  Effect.gen(function*() {
    const as = yield* startAuthServer(options)
    const server = yield* startProtectedServer(as, { requiredScopes: ["mcp:read"], scopesSupported: ["mcp:read"] })
    const { entries, storage } = fakeStorage()
    return { as, server, entries, storage, Storage: McpOAuthRedirect.layerWebStorage(storage) }
  })

const pendingKeys = (entries: Map<string, string>) => [...entries.keys()].filter((key) => key.includes(":pending:"))

describe("McpOAuthRedirect: the redirect flow of a page", () => {
  it.live("navigates with PKCE and state, completes on the redirect page, and an MCP call then succeeds with the stored tokens", () =>
    Effect.gen(function*() {
      const { as, entries, server, storage, Storage } = yield* setup()
      const authorizationUrl = yield* beginOnPage(server.url, storage)
      assert.strictEqual(authorizationUrl.searchParams.get("redirect_uri"), REDIRECT)
      assert.strictEqual(authorizationUrl.searchParams.get("code_challenge_method"), "S256")
      // the pending authorization is in the storage, under its state, with the verifier
      const state = authorizationUrl.searchParams.get("state")!
      const pending = JSON.parse(entries.get(`effect-mcp:pending:${state}`)!) as McpAuth.PendingAuthorization
      assert.strictEqual(pending.redirectUri, REDIRECT)
      assert.strictEqual(pending.resource, server.resource)
      assert.strictEqual(pending.server.issuer, as.issuer)
      assert.strictEqual(
        createHash("sha256").update(pending.codeVerifier).digest("base64url"),
        authorizationUrl.searchParams.get("code_challenge")
      )
      assert.deepStrictEqual(as.requestsTo("/token"), [])

      const redirected = yield* visitAuthorizationServer(authorizationUrl)
      assert.isTrue(McpOAuthRedirect.isAuthorizationResponse(redirected))
      const completed = yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(
        Effect.provide(Storage)
      )
      assert.strictEqual(completed.serverUrl, McpAuth.canonicalResource(server.url))
      assert.strictEqual(completed.scope, "mcp:read")
      // the code exchange used the stored verifier (the AS checks S256) and the resource
      const exchange = as.requestsTo("/token")[0]!
      assert.strictEqual(exchange.status, 200)
      assert.strictEqual(exchange.form!.code_verifier, pending.codeVerifier)
      assert.strictEqual(exchange.form!.redirect_uri, REDIRECT)
      assert.strictEqual(exchange.form!.resource, server.resource)
      // tokens in the chosen storage; the pending authorization forgotten
      const stored = JSON.parse(entries.get(`effect-mcp:tokens:${completed.serverUrl}`)!) as McpAuth.Tokens
      assert.strictEqual(stored.accessToken, as.issued[0]!.token)
      assert.deepStrictEqual(pendingKeys(entries), [])

      // back on the app page: a new client finds the tokens; no new authorization
      const client = yield* connect(
        server.url,
        McpOAuthRedirect.layerAuthorizer({ redirectUri: REDIRECT, navigate: () => Effect.die("navigated again") }).pipe(
          Layer.provideMerge(Storage)
        )
      )
      assert.strictEqual(text(yield* client.callTool("echo", { text: "signed in" })), "signed in")
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
      assert.strictEqual(as.requestsTo("/token").length, 1)
      assert.match(String(server.requests.at(-1)!.headers.authorization), /^Bearer /)
    }))

  it.live("a replayed state is refused (the pending authorization was used), and the code is not exchanged twice", () =>
    Effect.gen(function*() {
      const { as, server, storage, Storage } = yield* setup()
      const redirected = yield* visitAuthorizationServer(yield* beginOnPage(server.url, storage))
      yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(Effect.provide(Storage))
      const replay = yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(replay), "Refused")
      assert.match(replay.message, /state is unknown/)
      assert.strictEqual(as.requestsTo("/token").length, 1)
    }))

  it.live("a state that was never issued is refused; the real pending authorization stays", () =>
    Effect.gen(function*() {
      const { as, entries, server, storage, Storage } = yield* setup()
      const redirected = yield* visitAuthorizationServer(yield* beginOnPage(server.url, storage))
      const forged = new URL(redirected)
      forged.searchParams.set("state", "forged-state")
      const error = yield* McpOAuthRedirect.complete(forged, { serverUrl: server.url }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(error), "Refused")
      assert.deepStrictEqual(as.requestsTo("/token"), [])
      assert.strictEqual(pendingKeys(entries).length, 1)
      // a redirect without state at all
      const bare = new URL(REDIRECT)
      bare.searchParams.set("code", "x")
      assert.strictEqual(
        authKind(
          yield* McpOAuthRedirect.complete(bare, { serverUrl: server.url }).pipe(Effect.provide(Storage), Effect.flip)
        ),
        "Refused"
      )
    }))

  it.live("the authorization server's error is surfaced as an AuthError with its code; the pending record is gone", () =>
    Effect.gen(function*() {
      const { as, entries, server, storage, Storage } = yield* setup({ deny: true })
      const redirected = yield* visitAuthorizationServer(yield* beginOnPage(server.url, storage))
      assert.strictEqual(redirected.searchParams.get("error"), "access_denied")
      const error = yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(error), "Authorization")
      assert.strictEqual(McpOAuthRedirect.denialOf(error)?.error, "access_denied")
      assert.deepStrictEqual(as.requestsTo("/token"), [])
      assert.deepStrictEqual(pendingKeys(entries), [])
    }))

  it.live("an iss that is not the issuer is refused (RFC 9207)", () =>
    Effect.gen(function*() {
      const { as, server, storage, Storage } = yield* setup({ wrongIss: true })
      const redirected = yield* visitAuthorizationServer(yield* beginOnPage(server.url, storage))
      const error = yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(error), "Refused")
      assert.deepStrictEqual(as.requestsTo("/token"), [])
    }))

  it.live("the stored verifier is the one the AS checks: another verifier fails the exchange", () =>
    Effect.gen(function*() {
      const { as, entries, server, storage, Storage } = yield* setup()
      const authorizationUrl = yield* beginOnPage(server.url, storage)
      const key = `effect-mcp:pending:${authorizationUrl.searchParams.get("state")}`
      const pending = JSON.parse(entries.get(key)!) as McpAuth.PendingAuthorization
      entries.set(key, JSON.stringify({ ...pending, codeVerifier: "x".repeat(43) }))
      const redirected = yield* visitAuthorizationServer(authorizationUrl)
      const error = yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(error), "Token")
      assert.strictEqual(as.requestsTo("/token")[0]!.status, 400)
      assert.isUndefined(entries.get(`effect-mcp:tokens:${McpAuth.canonicalResource(server.url)}`))
    }))

  it.live("an expired pending authorization, or one for another server, is refused", () =>
    Effect.gen(function*() {
      const { as, entries, server, storage, Storage } = yield* setup()
      const authorizationUrl = yield* beginOnPage(server.url, storage)
      const key = `effect-mcp:pending:${authorizationUrl.searchParams.get("state")}`
      const pending = JSON.parse(entries.get(key)!) as McpAuth.PendingAuthorization
      const redirected = yield* visitAuthorizationServer(authorizationUrl)
      entries.set(key, JSON.stringify({ ...pending, createdAt: pending.createdAt - 3600 }))
      const expired = yield* McpOAuthRedirect.complete(redirected, { serverUrl: server.url }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(expired), "Refused")
      assert.match(expired.message, /expired/)
      entries.set(key, JSON.stringify(pending))
      const other = yield* McpOAuthRedirect.complete(redirected, { serverUrl: "http://127.0.0.1:1/other" }).pipe(
        Effect.provide(Storage),
        Effect.flip
      )
      assert.strictEqual(authKind(other), "Refused")
      assert.deepStrictEqual(as.requestsTo("/token"), [])
    }))

  it.effect("the authorizer never opens a URL that is not https (or http on a loopback host)", () =>
    Effect.gen(function*() {
      const authorizer = yield* McpOAuthRedirect.makeAuthorizer({
        redirectUri: REDIRECT,
        navigate: () => Effect.die("navigated")
      }).pipe(Effect.provideService(McpOAuthRedirect.PendingAuthorizations, McpOAuthRedirect.makeMemoryPending()))
      const error = yield* authorizer.authorize(new URL("javascript:alert(1)")).pipe(Effect.flip)
      assert.strictEqual(authKind(error), "Refused")
      assert.isTrue(McpError.isMcpError(error))
    }))
})
