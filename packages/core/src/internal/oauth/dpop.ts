/**
 * DPoP (RFC 9449) in the OAuth client: one ES256 key pair per client (the
 * session), used where the authorization server's metadata lists `ES256` in
 * `dpop_signing_alg_values_supported`.
 *
 * - Token requests carry `oauth4webapi`'s proofs: its `DPoP` handle signs
 *   them and keeps the authorization server's nonce (from `DPoP-Nonce`);
 *   {@link retryOnNonce} sends a request once more after `use_dpop_nonce`.
 * - Requests to the MCP server carry a proof made here with `jose` (the
 *   handle only signs requests `oauth4webapi` sends itself): the same key,
 *   `ath`, and the resource server's nonce once a `401 use_dpop_nonce`
 *   taught it. Hashing and the `jti` use WebCrypto (`crypto.subtle`,
 *   `crypto.randomUUID`), on every platform.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as jose from "jose"
import * as oauth from "oauth4webapi"
import * as McpError from "../../McpError.ts"
import * as Tokens from "./tokens.ts"

/** The DPoP side of one OAuth client. */
export interface Dpop {
  /** The DPoP options of a token request at `server`: `{ DPoP }` where it takes ES256 proofs, else none. */
  readonly options: (
    server: oauth.AuthorizationServer
  ) => Effect.Effect<{ readonly DPoP?: oauth.DPoPHandle }, McpError.McpError>
  /** The `DPoP` header of a request (`method`, `url`) presenting `accessToken`. */
  readonly proof: (method: string, url: string, accessToken: string) => Effect.Effect<string, McpError.McpError>
  /** Remembers a resource server's nonce (a `DPoP-Nonce` header) for the origin of `url`. */
  readonly learnNonce: (url: string, nonce: string) => Effect.Effect<void>
}

/** `true` when an authorization server takes ES256 DPoP proofs. */
export const supported = (server: oauth.AuthorizationServer): boolean =>
  Array.isArray(server.dpop_signing_alg_values_supported) && server.dpop_signing_alg_values_supported.includes("ES256")

/**
 * A promise-returning token request, sent once more when the authorization
 * server asks for a nonce (RFC 9449 §8: the handle has kept it, and the
 * retry signs a new proof with it).
 */
export const retryOnNonce = <A>(run: () => Promise<A>): Promise<A> =>
  run().catch((error: unknown) => oauth.isDPoPNonceError(error) ? run() : Promise.reject(error))

/** `htu`: the URL without query and fragment (RFC 9449 §4.2). */
const htu = (url: string): string => {
  const parsed = new URL(url)
  return `${parsed.origin}${parsed.pathname}`
}

const failed = (what: string) => (cause: unknown) => McpError.auth("Token", `DPoP: ${what}`, { cause })

/** @internal */
export const make: Effect.Effect<Dpop> = Effect.gen(function*() {
  const keys = yield* Effect.cached(Effect.gen(function*() {
    const pair = yield* Effect.tryPromise({
      try: () => oauth.generateKeyPair("ES256"),
      catch: failed("the key pair could not be generated")
    })
    const { crv, kty, x, y } = yield* Effect.tryPromise({
      try: () => jose.exportJWK(pair.publicKey),
      catch: failed("the public key could not be exported")
    })
    return { pair, handle: oauth.DPoP({}, pair), jwk: { crv, kty, x, y } as jose.JWK }
  }))
  const nonces = yield* Ref.make(new Map<string, string>())

  const options: Dpop["options"] = (server) =>
    supported(server) ? Effect.map(keys, ({ handle }) => ({ DPoP: handle })) : Effect.succeed({})

  const proof: Dpop["proof"] = (method, url, accessToken) =>
    Effect.gen(function*() {
      const { jwk, pair } = yield* keys
      const nonce = (yield* Ref.get(nonces)).get(new URL(url).origin)
      const iat = yield* Tokens.nowSeconds
      const ath = yield* Effect.tryPromise({
        try: () => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken)),
        catch: failed("the access token could not be hashed")
      })
      const claims: jose.JWTPayload = {
        htm: method.toUpperCase(),
        htu: htu(url),
        ath: jose.base64url.encode(new Uint8Array(ath)),
        ...(nonce === undefined ? {} : { nonce })
      }
      return yield* Effect.tryPromise({
        try: () =>
          new jose.SignJWT(claims)
            .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk })
            .setIssuedAt(iat)
            .setJti(globalThis.crypto.randomUUID())
            .sign(pair.privateKey),
        catch: failed("the proof could not be signed")
      })
    })

  const learnNonce: Dpop["learnNonce"] = (url, nonce) =>
    Ref.update(nonces, (known) => new Map(known).set(new URL(url).origin, nonce))

  return { options, proof, learnNonce }
})
