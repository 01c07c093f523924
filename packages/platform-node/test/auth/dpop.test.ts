/**
 * DPoP (RFC 9449) end to end: NodeMcpOAuth against the test authorization
 * server with `dpop` on and our protected server (McpResourceServer), and
 * the resource server's proof checks with hand-made proofs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Jose from "jose"
import { createHash, randomUUID } from "node:crypto"
import { startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { connect, text } from "../fixtures/oauthClient.ts"

const decode = (jwt: string) => ({ header: Jose.decodeProtectedHeader(jwt), claims: Jose.decodeJwt(jwt) })
const ath = (token: string) => createHash("sha256").update(token).digest("base64url")

interface Key {
  readonly pair: { readonly privateKey: Jose.CryptoKey; readonly publicKey: Jose.CryptoKey }
  readonly jwk: Jose.JWK
  readonly jkt: string
}

const makeKey = Effect.promise(async (): Promise<Key> => {
  const pair = await Jose.generateKeyPair("ES256")
  const jwk = await Jose.exportJWK(pair.publicKey)
  return { pair, jwk, jkt: await Jose.calculateJwkThumbprint(jwk) }
})

const proof = (key: Key, claims: Record<string, unknown>) =>
  Effect.promise(() =>
    new Jose.SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: key.jwk })
      .sign(key.pair.privateKey)
  )

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

const post = (url: string, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: INITIALIZE
    })
    await response.body?.cancel()
    return {
      status: response.status,
      challenge: response.headers.get("www-authenticate") ?? "",
      nonce: response.headers.get("dpop-nonce")
    }
  })

describe("DPoP", () => {
  it.live("sign-in: a proof at the token endpoint, a DPoP-bound token, DPoP scheme and a fresh proof per MCP request", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ dpop: true })
      const server = yield* startProtectedServer(as)
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "hi" })), "hi")
      assert.strictEqual(text(yield* client.callTool("echo", { text: "again" })), "again")

      const exchange = as.requestsTo("/token")[0]!
      assert.strictEqual(exchange.status, 200)
      const tokenProof = decode(String(exchange.headers.dpop))
      assert.strictEqual(tokenProof.header.typ, "dpop+jwt")
      assert.strictEqual(tokenProof.header.alg, "ES256")
      assert.isUndefined((tokenProof.header.jwk as Record<string, unknown>).d)
      assert.strictEqual(tokenProof.claims.htm, "POST")
      assert.strictEqual(tokenProof.claims.htu, as.endpoints.token)
      assert.strictEqual((exchange.response as Record<string, unknown>).token_type, "DPoP")
      const jkt = (as.issued[0]!.claims.cnf as { jkt: string }).jkt
      assert.strictEqual(yield* Effect.promise(() => Jose.calculateJwkThumbprint(tokenProof.header.jwk!)), jkt)

      const authorized = server.requests.filter((r) => r.path === "/mcp" && r.headers.authorization !== undefined)
      assert.isAtLeast(authorized.length, 3)
      const jtis = new Set<unknown>()
      for (const request of authorized) {
        assert.match(String(request.headers.authorization), /^DPoP /)
        const token = String(request.headers.authorization).slice(5)
        const { claims, header } = decode(String(request.headers.dpop))
        assert.strictEqual(claims.htm, request.method)
        assert.strictEqual(claims.htu, server.url)
        assert.strictEqual(claims.ath, ath(token))
        assert.strictEqual(yield* Effect.promise(() => Jose.calculateJwkThumbprint(header.jwk!)), jkt)
        jtis.add(claims.jti)
      }
      assert.strictEqual(jtis.size, authorized.length)
      const seen = JSON.parse(text(yield* client.callTool("whoami", {})))
      assert.deepStrictEqual(seen.claims.cnf, { jkt })
    }))

  it.live("nonces: use_dpop_nonce at the AS and at the RS are answered by retrying with the nonce, without a new sign-in", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ dpop: true, dpopNonce: "as-nonce-1" })
      const server = yield* startProtectedServer(as, { dpop: { nonce: true } })
      const client = yield* connect({ url: server.url })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "hi" })), "hi")

      const tokens = as.requestsTo("/token")
      assert.deepStrictEqual(tokens.map((r) => r.status), [400, 200])
      assert.strictEqual((tokens[0]!.response as Record<string, unknown>).error, "use_dpop_nonce")
      const first = decode(String(tokens[0]!.headers.dpop)).claims
      const retried = decode(String(tokens[1]!.headers.dpop)).claims
      assert.isUndefined(first.nonce)
      assert.strictEqual(retried.nonce, "as-nonce-1")
      assert.notStrictEqual(first.jti, retried.jti)
      assert.strictEqual(as.requestsTo("/authorize").length, 1)

      const proofs = server.requests
        .filter((r) => r.path === "/mcp" && r.headers.dpop !== undefined)
        .map((r) => decode(String(r.headers.dpop)).claims)
      assert.isUndefined(proofs[0]!.nonce)
      const nonce = proofs.at(-1)!.nonce
      assert.isString(nonce)
      // once learned, every later proof carries it
      const from = proofs.findIndex((claims) => claims.nonce !== undefined)
      assert.isTrue(proofs.slice(from).every((claims) => claims.nonce === nonce))
      assert.strictEqual(new Set(proofs.map((claims) => claims.jti)).size, proofs.length)
    }))

  it.live("the resource server refuses replayed proofs, proofs for another URL or method, foreign keys, and a bound token as Bearer", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ dpop: true })
      const server = yield* startProtectedServer(as)
      const key = yield* makeKey
      const token = yield* Effect.promise(() => as.issueToken({ aud: server.resource, cnf: { jkt: key.jkt } }))
      const valid = { htm: "POST", htu: server.url, ath: ath(token) }

      const good = yield* proof(key, valid)
      assert.strictEqual((yield* post(server.url, { authorization: `DPoP ${token}`, dpop: good })).status, 200)

      const replay = yield* post(server.url, { authorization: `DPoP ${token}`, dpop: good })
      assert.strictEqual(replay.status, 401)
      assert.match(replay.challenge, /^DPoP error="invalid_dpop_proof"/)
      assert.match(replay.challenge, /resource_metadata="/)

      const otherUrl = yield* post(server.url, {
        authorization: `DPoP ${token}`,
        dpop: yield* proof(key, { ...valid, htu: server.url.replace("/mcp", "/other") })
      })
      assert.strictEqual(otherUrl.status, 401)
      assert.match(otherUrl.challenge, /htu/)

      const otherMethod = yield* post(server.url, {
        authorization: `DPoP ${token}`,
        dpop: yield* proof(key, { ...valid, htm: "GET" })
      })
      assert.strictEqual(otherMethod.status, 401)
      assert.match(otherMethod.challenge, /htm/)

      const wrongAth = yield* post(server.url, {
        authorization: `DPoP ${token}`,
        dpop: yield* proof(key, { ...valid, ath: ath("x") })
      })
      assert.strictEqual(wrongAth.status, 401)

      const stale = yield* post(server.url, {
        authorization: `DPoP ${token}`,
        dpop: yield* proof(key, { ...valid, iat: Math.floor(Date.now() / 1000) - 3600 })
      })
      assert.strictEqual(stale.status, 401)

      const noProof = yield* post(server.url, { authorization: `DPoP ${token}` })
      assert.strictEqual(noProof.status, 401)
      assert.match(noProof.challenge, /^DPoP error="invalid_dpop_proof"/)

      const other = yield* makeKey
      const foreign = yield* post(server.url, { authorization: `DPoP ${token}`, dpop: yield* proof(other, valid) })
      assert.strictEqual(foreign.status, 401)
      assert.match(foreign.challenge, /^DPoP error="invalid_token"/)

      const asBearer = yield* post(server.url, { authorization: `Bearer ${token}` })
      assert.strictEqual(asBearer.status, 401)
      assert.match(asBearer.challenge, /^DPoP error="invalid_token"/)

      // a bearer token stays a bearer token
      const bearer = yield* Effect.promise(() => as.issueToken({ aud: server.resource }))
      assert.strictEqual((yield* post(server.url, { authorization: `Bearer ${bearer}` })).status, 200)
      const unbound = yield* post(server.url, {
        authorization: `DPoP ${bearer}`,
        dpop: yield* proof(key, { ...valid, ath: ath(bearer) })
      })
      assert.strictEqual(unbound.status, 401)
    }))

  it.live("the resource server's nonce: a proof without it gets 401 use_dpop_nonce with DPoP-Nonce", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ dpop: true })
      const server = yield* startProtectedServer(as, { dpop: { nonce: true, required: true } })
      const key = yield* makeKey
      const token = yield* Effect.promise(() => as.issueToken({ aud: server.resource, cnf: { jkt: key.jkt } }))
      const valid = { htm: "POST", htu: server.url, ath: ath(token) }
      const first = yield* post(server.url, { authorization: `DPoP ${token}`, dpop: yield* proof(key, valid) })
      assert.strictEqual(first.status, 401)
      assert.match(first.challenge, /^DPoP error="use_dpop_nonce"/)
      assert.isString(first.nonce)
      const second = yield* post(server.url, {
        authorization: `DPoP ${token}`,
        dpop: yield* proof(key, { ...valid, nonce: first.nonce })
      })
      assert.strictEqual(second.status, 200)

      // required: no bearer tokens, and the unauthenticated challenge is DPoP
      const bearer = yield* Effect.promise(() => as.issueToken({ aud: server.resource }))
      assert.match((yield* post(server.url, { authorization: `Bearer ${bearer}` })).challenge, /^DPoP /)
      const anonymous = yield* post(server.url, {})
      assert.strictEqual(anonymous.status, 401)
      assert.match(anonymous.challenge, /^DPoP algs="ES256/)
    }))
})
