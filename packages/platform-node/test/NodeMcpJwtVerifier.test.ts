/**
 * NodeMcpJwtVerifier's cache of accepted tokens. Every `jose` verification is
 * counted: the key set is "remote" with `cacheMaxAge: 0` and a counting
 * `customFetch` (no network), so jose fetches the JWKS once per signature
 * check and the fetch count is the number of checks. Time is the TestClock
 * (the verifier hands the `Clock` to jose as `currentDate`).
 */
import { McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import * as Jose from "jose"
import * as NodeMcpJwtVerifier from "../src/NodeMcpJwtVerifier.ts"

const ISSUER = "http://127.0.0.1/as"
const AUDIENCE = "http://127.0.0.1/mcp"

const keys = Effect.promise(async () => {
  const { privateKey, publicKey } = await Jose.generateKeyPair("ES256", { extractable: true })
  const jwk = { ...(await Jose.exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" }
  return { privateKey, jwks: { keys: [jwk] } }
})

/** A verifier whose every signature check fetches the key set once; `fetches()` counts them. */
const counting = (jwks: Jose.JSONWebKeySet, cache?: NodeMcpJwtVerifier.CacheOptions | false) => {
  let fetches = 0
  const verify = NodeMcpJwtVerifier.make({
    jwksUrl: "http://127.0.0.1:9/jwks",
    issuer: ISSUER,
    ...(cache === undefined ? {} : { cache }),
    remote: {
      cacheMaxAge: 0,
      cooldownDuration: 0,
      [Jose.customFetch]: () => {
        fetches++
        return Promise.resolve(
          new Response(JSON.stringify(jwks), { status: 200, headers: { "content-type": "application/json" } })
        )
      }
    }
  })
  return { verify, fetches: () => fetches }
}

/** A token signed at the TestClock's now (seconds). */
const sign = (
  privateKey: Jose.CryptoKey,
  claims: { readonly sub?: string; readonly exp?: number; readonly nbf?: number; readonly iss?: string }
) =>
  Effect.promise(() => {
    let jwt = new Jose.SignJWT({ scope: "mcp" })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(claims.iss ?? ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(claims.sub ?? "alice")
      .setIssuedAt(0)
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp)
    if (claims.nbf !== undefined) jwt = jwt.setNotBefore(claims.nbf)
    return jwt.sign(privateKey)
  })

const isAuthError = (exit: Exit.Exit<unknown, McpError.McpError>) =>
  Exit.isFailure(exit) &&
  exit.cause.reasons.some((reason) => reason._tag === "Fail" && reason.error.reason._tag === "AuthError")

describe("NodeMcpJwtVerifier cache", () => {
  it.effect("a token verified twice is checked by jose once", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, { exp: 3600 })
      const { fetches, verify } = counting(jwks)
      const first = yield* verify(token)
      const second = yield* verify(token)
      assert.strictEqual(fetches(), 1)
      assert.strictEqual(second, first)
      assert.strictEqual(first.subject, "alice")
      assert.deepStrictEqual(first.scopes, ["mcp"])
      assert.strictEqual(first.expiresAt, 3600)
    }))

  it.effect("cache: false checks every time", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, { exp: 3600 })
      const { fetches, verify } = counting(jwks, false)
      yield* verify(token)
      yield* verify(token)
      yield* verify(token)
      assert.strictEqual(fetches(), 3)
    }))

  it.effect("a cached token is refused once it has expired (TestClock)", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, { exp: 60 })
      const { fetches, verify } = counting(jwks)
      yield* verify(token)
      yield* TestClock.adjust("59 seconds")
      yield* verify(token)
      assert.strictEqual(fetches(), 1)
      yield* TestClock.adjust("1 second")
      const exit = yield* Effect.exit(verify(token))
      assert.isTrue(isAuthError(exit))
      // the cache let it through to jose, which refused it
      assert.strictEqual(fetches(), 2)
      const again = yield* Effect.exit(verify(token))
      assert.isTrue(isAuthError(again))
      assert.strictEqual(fetches(), 3)
    }))

  it.effect("an entry lasts at most maxAge, then jose checks the token again", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, {})
      const { fetches, verify } = counting(jwks, { maxAge: "1 minute" })
      yield* verify(token)
      yield* TestClock.adjust("59 seconds")
      yield* verify(token)
      assert.strictEqual(fetches(), 1)
      yield* TestClock.adjust("1 second")
      yield* verify(token)
      assert.strictEqual(fetches(), 2)
      yield* verify(token)
      assert.strictEqual(fetches(), 2)
    }))

  it.effect("a token not yet valid (nbf) is refused and not cached; valid once nbf has passed", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, { nbf: 30, exp: 3600 })
      const { fetches, verify } = counting(jwks)
      assert.isTrue(isAuthError(yield* Effect.exit(verify(token))))
      assert.isTrue(isAuthError(yield* Effect.exit(verify(token))))
      assert.strictEqual(fetches(), 2)
      yield* TestClock.adjust("30 seconds")
      yield* verify(token)
      yield* verify(token)
      assert.strictEqual(fetches(), 3)
    }))

  it.effect("a token accepted only thanks to clockTolerance is not cached past exp", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, { exp: 60 })
      let fetches = 0
      const verify = NodeMcpJwtVerifier.make({
        jwksUrl: "http://127.0.0.1:9/jwks",
        issuer: ISSUER,
        clockTolerance: 30,
        remote: {
          cacheMaxAge: 0,
          [Jose.customFetch]: () => {
            fetches++
            return Promise.resolve(Response.json(jwks))
          }
        }
      })
      yield* TestClock.adjust("70 seconds")
      yield* verify(token) // within the tolerance: jose accepts it
      yield* verify(token)
      assert.strictEqual(fetches, 2)
    }))

  it.effect("a bad token is not cached", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const wrongIssuer = yield* sign(privateKey, { exp: 3600, iss: "http://127.0.0.1/other" })
      const good = yield* sign(privateKey, { exp: 3600 })
      const forged = good.slice(0, good.lastIndexOf(".") + 1) + "A".repeat(86)
      const { fetches, verify } = counting(jwks)
      for (const token of [wrongIssuer, wrongIssuer, forged, forged]) {
        assert.isTrue(isAuthError(yield* Effect.exit(verify(token))))
      }
      assert.strictEqual(fetches(), 4)
    }))

  it.effect("a key set that cannot be fetched is a TransportError, and nothing is cached", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const token = yield* sign(privateKey, { exp: 3600 })
      let calls = 0
      let up = false
      const verify = NodeMcpJwtVerifier.make({
        jwksUrl: "http://127.0.0.1:9/jwks",
        issuer: ISSUER,
        remote: {
          cacheMaxAge: 0,
          cooldownDuration: 0,
          [Jose.customFetch]: () => {
            calls++
            return Promise.resolve(up ? Response.json(jwks) : new Response("down", { status: 503 }))
          }
        }
      })
      const exit = yield* Effect.exit(verify(token))
      assert.isTrue(
        Exit.isFailure(exit) &&
          exit.cause.reasons.some((reason) => reason._tag === "Fail" && reason.error.reason._tag === "TransportError")
      )
      up = true
      yield* verify(token)
      yield* verify(token)
      assert.strictEqual(calls, 2)
    }))

  it.effect("the least recently used token is evicted at maxEntries", () =>
    Effect.gen(function*() {
      const { jwks, privateKey } = yield* keys
      const [a, b, c] = yield* Effect.forEach(["a", "b", "c"], (sub) => sign(privateKey, { sub, exp: 3600 }))
      const { fetches, verify } = counting(jwks, { maxEntries: 2 })
      yield* verify(a!)
      yield* verify(b!)
      yield* verify(a!) // hit: a becomes the most recent, b the least
      assert.strictEqual(fetches(), 2)
      yield* verify(c!) // evicts b
      assert.strictEqual(fetches(), 3)
      yield* verify(a!)
      yield* verify(c!)
      assert.strictEqual(fetches(), 3)
      yield* verify(b!) // evicted: checked again (and evicts a)
      assert.strictEqual(fetches(), 4)
      yield* verify(c!)
      assert.strictEqual(fetches(), 4)
      yield* verify(a!)
      assert.strictEqual(fetches(), 5)
    }))
})
