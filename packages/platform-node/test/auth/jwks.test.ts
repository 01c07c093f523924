/**
 * NodeMcpJwtVerifier's key set requests leave no socket open: a JWKS served
 * on 127.0.0.1 counts the connections open to it, and once a verification
 * has fetched the keys the verifier's connection closes at once (the global
 * `fetch` would keep it alive for seconds, past the scope of the server
 * that used the verifier).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Jose from "jose"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as NodeMcpJwtVerifier from "../../src/NodeMcpJwtVerifier.ts"

const ISSUER = "http://127.0.0.1/as"

/** A JWKS on 127.0.0.1 for the duration of the scope: its fetches, the headers they carried, its open sockets. */
const jwksServer = (jwks: Jose.JSONWebKeySet) =>
  Effect.gen(function*() {
    const open = new Set<Net.Socket>()
    const requests: Array<Http.IncomingHttpHeaders> = []
    const server = yield* Effect.acquireRelease(
      Effect.callback<Http.Server>((resume) => {
        const server = Http.createServer((request, response) => {
          requests.push(request.headers)
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks))
        })
        server.on("connection", (socket) => {
          open.add(socket)
          socket.on("close", () => open.delete(socket))
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const address = server.address() as Net.AddressInfo
    return { url: `http://127.0.0.1:${address.port}/jwks`, open, requests }
  })

const keys = Effect.promise(async () => {
  const { privateKey, publicKey } = await Jose.generateKeyPair("ES256", { extractable: true })
  const jwk = { ...(await Jose.exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" }
  const token = await new Jose.SignJWT({ scope: "mcp" })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuer(ISSUER)
    .setSubject("alice")
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(privateKey)
  return { token, jwks: { keys: [jwk] } }
})

/** Waits (at most 50 × 10 ms) until no socket is open; the number still open. */
const settled = (open: Set<Net.Socket>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 50 && open.size > 0; i++) yield* Effect.sleep("10 millis")
    return open.size
  })

describe("NodeMcpJwtVerifier key set sockets", () => {
  it.live("no socket to the key set stays open after a verification", () =>
    Effect.gen(function*() {
      const { jwks, token } = yield* keys
      const server = yield* jwksServer(jwks)
      const verify = NodeMcpJwtVerifier.make({ jwksUrl: server.url, issuer: ISSUER })
      const auth = yield* verify(token)
      assert.strictEqual(auth.subject, "alice")
      assert.strictEqual(server.requests.length, 1)
      assert.strictEqual(yield* settled(server.open), 0)
    }))

  it.live("each refetch opens and closes its own connection; remote headers and timings still apply", () =>
    Effect.gen(function*() {
      const { jwks, token } = yield* keys
      const server = yield* jwksServer(jwks)
      const verify = NodeMcpJwtVerifier.make({
        jwksUrl: server.url,
        issuer: ISSUER,
        cache: false,
        remote: { cacheMaxAge: 0, headers: { "x-resource-server": "rs1" } }
      })
      for (let i = 0; i < 3; i++) {
        yield* verify(token)
        assert.strictEqual(yield* settled(server.open), 0)
      }
      assert.strictEqual(server.requests.length, 3)
      assert.deepStrictEqual(server.requests.map((headers) => headers["x-resource-server"]), ["rs1", "rs1", "rs1"])
      assert.deepStrictEqual(server.requests.map((headers) => headers.connection), ["close", "close", "close"])
    }))

  it.live("a customFetch of remote still replaces the default one", () =>
    Effect.gen(function*() {
      const { jwks, token } = yield* keys
      const server = yield* jwksServer(jwks)
      let calls = 0
      const verify = NodeMcpJwtVerifier.make({
        jwksUrl: server.url,
        issuer: ISSUER,
        remote: {
          [Jose.customFetch]: () => {
            calls++
            return Promise.resolve(Response.json(jwks))
          }
        }
      })
      yield* verify(token)
      assert.strictEqual(calls, 1)
      assert.strictEqual(server.requests.length, 0)
    }))
})
