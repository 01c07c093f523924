/**
 * McpOAuthRedirect's pieces that need no authorization server: the Web
 * Storage store (tokens, registrations and pending authorizations as JSON
 * entries; a storage that refuses a write is a `Storage` error), a pending
 * authorization used once, the redirect authorizer (remembers, navigates,
 * never returns), and what counts as an authorization response. The whole
 * flow against the test authorization server: platform-node's
 * test/auth/redirect.test.ts and runtimes.browser-oauth.test.ts.
 */
import { McpAuth, McpOAuthRedirect } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"

const memoryStorage = () => {
  const entries = new Map<string, string>()
  const storage: McpOAuthRedirect.Storage = {
    getItem: (key) => entries.get(key) ?? null,
    setItem: (key, value) => void entries.set(key, value),
    removeItem: (key) => void entries.delete(key)
  }
  return { entries, storage }
}

const pending: McpAuth.PendingAuthorization = {
  state: "state-1",
  codeVerifier: "verifier",
  redirectUri: "https://app.example.com/callback",
  serverUrl: "https://mcp.example.com/mcp",
  resource: "https://mcp.example.com/mcp",
  clientId: "client-1",
  scope: "mcp:read",
  server: { issuer: "https://auth.example.com", token_endpoint: "https://auth.example.com/token" },
  createdAt: 1_700_000_000
}

describe("McpOAuthRedirect", () => {
  it.effect("the Web Storage store keeps tokens, registrations and pending authorizations as JSON under its prefix", () =>
    Effect.gen(function*() {
      const { entries, storage } = memoryStorage()
      const { pending: pendings, store } = McpOAuthRedirect.makeWebStorage(storage, { prefix: "app:" })
      const tokens: McpAuth.Tokens = { accessToken: "at", tokenType: "Bearer", refreshToken: "rt", expiresAt: 10 }
      yield* store.setTokens("https://mcp.example.com/mcp", tokens)
      yield* store.setClient("https://auth.example.com", { clientId: "client-1" })
      yield* pendings.save(pending)
      assert.deepStrictEqual([...entries.keys()].sort(), [
        "app:client:https://auth.example.com",
        "app:pending:state-1",
        "app:tokens:https://mcp.example.com/mcp"
      ])
      assert.deepStrictEqual(yield* store.getTokens("https://mcp.example.com/mcp"), tokens)
      assert.deepStrictEqual(yield* store.getClient("https://auth.example.com"), { clientId: "client-1" })
      // a state is used once
      assert.deepStrictEqual(yield* pendings.take("state-1"), pending)
      assert.isUndefined(yield* pendings.take("state-1"))
      yield* store.clearTokens("https://mcp.example.com/mcp")
      assert.isUndefined(yield* store.getTokens("https://mcp.example.com/mcp"))
    }))

  it.effect("a storage that refuses a write, or an entry that is no JSON: an AuthError of kind Storage", () =>
    Effect.gen(function*() {
      const { entries, storage } = memoryStorage()
      const full: McpOAuthRedirect.Storage = {
        ...storage,
        setItem: () => {
          throw new Error("QuotaExceededError")
        }
      }
      const refused = yield* McpOAuthRedirect.makeWebStorage(full).store.setTokens("x", {
        accessToken: "a",
        tokenType: "Bearer"
      })
        .pipe(Effect.flip)
      assert.strictEqual(refused.reason._tag === "AuthError" ? refused.reason.kind : refused.reason._tag, "Storage")
      entries.set("effect-mcp:tokens:x", "{not json")
      const corrupt = yield* McpOAuthRedirect.makeWebStorage(storage).store.getTokens("x").pipe(Effect.flip)
      assert.strictEqual(corrupt.reason._tag === "AuthError" ? corrupt.reason.kind : corrupt.reason._tag, "Storage")
    }))

  it.effect("the authorizer remembers through PendingAuthorizations, navigates, and never returns", () =>
    Effect.gen(function*() {
      const pendings = McpOAuthRedirect.makeMemoryPending()
      const navigated = yield* Deferred.make<URL>()
      const authorizer = yield* McpOAuthRedirect.makeAuthorizer({
        redirectUri: new URL("https://app.example.com/callback"),
        navigate: (url) => Deferred.succeed(navigated, url)
      }).pipe(Effect.provideService(McpOAuthRedirect.PendingAuthorizations, pendings))
      assert.strictEqual(authorizer.redirectUri, "https://app.example.com/callback")
      yield* authorizer.remember!(pending)
      assert.deepStrictEqual(yield* pendings.take("state-1"), pending)
      const fiber = yield* Effect.forkChild(
        authorizer.authorize(new URL("https://auth.example.com/authorize?state=s")),
        {
          startImmediately: true
        }
      )
      assert.strictEqual((yield* Deferred.await(navigated)).href, "https://auth.example.com/authorize?state=s")
      assert.isUndefined(fiber.pollUnsafe())
      yield* Fiber.interrupt(fiber)
      // http on a non-loopback host is not opened
      const error = yield* authorizer.authorize(new URL("http://auth.example.com/authorize")).pipe(Effect.flip)
      assert.strictEqual(error.reason._tag === "AuthError" ? error.reason.kind : error.reason._tag, "Refused")
    }))

  it("an authorization response has a state and a code or an error", () => {
    assert.isTrue(McpOAuthRedirect.isAuthorizationResponse("https://app.example.com/callback?code=c&state=s"))
    assert.isTrue(
      McpOAuthRedirect.isAuthorizationResponse("https://app.example.com/callback?error=access_denied&state=s")
    )
    assert.isFalse(McpOAuthRedirect.isAuthorizationResponse("https://app.example.com/callback?code=c"))
    assert.isFalse(McpOAuthRedirect.isAuthorizationResponse("https://app.example.com/"))
    assert.isFalse(McpOAuthRedirect.isAuthorizationResponse("not a url"))
  })
})
