/**
 * The resource server's check of a DPoP proof (RFC 9449 §4.3, §7.1): one
 * `DPoP` header holding a JWT whose `typ` is `dpop+jwt`, signed with an
 * asymmetric algorithm by the public `jwk` it embeds, for this request's
 * method and URL (`htm`, `htu`), recent (`iat`), for this token (`ath`),
 * with the server's nonce where it asks for one. The `jti` replay check and
 * the binding to the token (`cnf.jkt`) are the guard's (`bearer.ts`).
 * WebCrypto only, so that core stays platform-free.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import { DPOP_ALGORITHMS } from "./resourceMetadata.ts"

/** The algorithms a proof may be signed with. @internal */
export const ALGORITHMS = DPOP_ALGORITHMS

/** WebCrypto algorithm parameters (core has no DOM types). */
interface Params {
  readonly name: string
  readonly [parameter: string]: unknown
}

interface Algorithm {
  readonly kty: string
  readonly crv?: string
  readonly importParams: Params
  readonly verifyParams: Params
}

const sha = (bits: number) => `SHA-${bits}`
const algorithm = (alg: string): Algorithm | undefined => {
  const bits = Number(alg.slice(2))
  switch (alg) {
    case "ES256":
    case "ES384":
    case "ES512": {
      const crv = `P-${bits === 512 ? 521 : bits}`
      return {
        kty: "EC",
        crv,
        importParams: { name: "ECDSA", namedCurve: crv },
        verifyParams: { name: "ECDSA", hash: sha(bits) }
      }
    }
    case "RS256":
    case "RS384":
    case "RS512":
      return {
        kty: "RSA",
        importParams: { name: "RSASSA-PKCS1-v1_5", hash: sha(bits) },
        verifyParams: { name: "RSASSA-PKCS1-v1_5" }
      }
    case "PS256":
    case "PS384":
    case "PS512":
      return {
        kty: "RSA",
        importParams: { name: "RSA-PSS", hash: sha(bits) },
        verifyParams: { name: "RSA-PSS", saltLength: bits / 8 }
      }
    case "EdDSA":
      return { kty: "OKP", crv: "Ed25519", importParams: { name: "Ed25519" }, verifyParams: { name: "Ed25519" } }
    default:
      return undefined
  }
}

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k"]

/** The RFC 7638 members of a public key, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<string, ReadonlyArray<string>> = {
  EC: ["crv", "kty", "x", "y"],
  RSA: ["e", "kty", "n"],
  OKP: ["crv", "kty", "x"]
}

const subtle = () => globalThis.crypto.subtle
const encoder = new TextEncoder()

const sha256 = (text: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => subtle().digest("SHA-256", encoder.encode(text))),
    (digest) => Base64Url.encode(new Uint8Array(digest))
  )

/** The RFC 7638 SHA-256 thumbprint of a public JWK (`undefined`: not one). @internal */
export const thumbprint = (jwk: Readonly<Record<string, unknown>>): Effect.Effect<string | undefined> => {
  const members = typeof jwk.kty === "string" ? THUMBPRINT_MEMBERS[jwk.kty] : undefined
  if (members === undefined || members.some((name) => typeof jwk[name] !== "string")) return Effect.succeed(undefined)
  const canonical: Record<string, unknown> = {}
  for (const name of members) canonical[name] = jwk[name]
  return sha256(JSON.stringify(canonical))
}

/** `base64url(SHA-256(token))`: the `ath` of a proof presenting `token`. @internal */
export const accessTokenHash = (token: string): Effect.Effect<string> => sha256(token)

/** `htu` as compared: origin and path, no query or fragment, no trailing slash. @internal */
export const comparableUrl = (url: string): string | undefined => {
  const parsed = Result.try(() => new URL(url))
  if (Result.isFailure(parsed)) return undefined
  return `${parsed.success.origin}${parsed.success.pathname}`.replace(/\/$/, "")
}

/** A checked proof. @internal */
export interface Verified {
  readonly jkt: string
  readonly jti: string
  readonly iat: number
}

/** Why a proof is refused: a bad proof, or a missing / stale nonce. @internal */
export interface Invalid {
  readonly error: "invalid_dpop_proof" | "use_dpop_nonce"
  readonly description: string
}

/** `true` for a refused proof. @internal */
export const isInvalid = (value: Verified | Invalid): value is Invalid => "error" in value

const invalid = (description: string): Invalid => ({ error: "invalid_dpop_proof", description })

const decodeJson = (part: string): Record<string, unknown> | undefined => {
  const text = Base64Url.decodeString(part)
  if (Result.isFailure(text)) return undefined
  const json = Result.try(() => JSON.parse(text.success) as unknown)
  return Result.isSuccess(json) && Predicate.isObject(json.success) && !Array.isArray(json.success)
    ? json.success as Record<string, unknown>
    : undefined
}

/** What the proof of one request must match. @internal */
export interface Expected {
  /** The `DPoP` header value (several headers arrive joined with commas: refused). */
  readonly proof: string | undefined
  readonly method: string
  /** The absolute URL of the request. */
  readonly url: string
  /** The access token it presents. */
  readonly token: string
  /** Now, in seconds. */
  readonly now: number
  /** How far `iat` may be from now, in seconds. */
  readonly maxAge: number
  /** The nonce the proof must carry, if the server asks for one. */
  readonly nonce: string | undefined
}

/** Checks a proof against a request. @internal */
export const verify = (expected: Expected): Effect.Effect<Verified | Invalid> =>
  Effect.gen(function*() {
    const proof = expected.proof?.trim()
    if (proof === undefined || proof === "") return invalid("a DPoP proof is required")
    const parts = proof.split(".")
    if (parts.length !== 3 || proof.includes(",")) return invalid("the DPoP header must hold exactly one JWT")
    const header = decodeJson(parts[0]!)
    const claims = decodeJson(parts[1]!)
    const signature = Base64Url.decode(parts[2]!)
    if (header === undefined || claims === undefined || Result.isFailure(signature)) {
      return invalid("the DPoP proof is not a JWT")
    }
    if (header.typ !== "dpop+jwt") return invalid("the DPoP proof's typ is not dpop+jwt")
    const alg = typeof header.alg === "string" ? algorithm(header.alg) : undefined
    if (alg === undefined) return invalid(`the DPoP proof's alg is not one of ${ALGORITHMS.join(" ")}`)
    const jwk = header.jwk
    if (!Predicate.isObject(jwk) || Array.isArray(jwk)) return invalid("the DPoP proof has no jwk")
    const key = jwk as Record<string, unknown>
    if (PRIVATE_MEMBERS.some((name) => name in key)) return invalid("the DPoP proof's jwk is a private key")
    if (key.kty !== alg.kty || (alg.crv !== undefined && key.crv !== alg.crv)) {
      return invalid("the DPoP proof's jwk does not fit its alg")
    }
    const imported = yield* Effect.tryPromise(() =>
      subtle().importKey("jwk", key as never, alg.importParams as never, false, ["verify"])
    ).pipe(Effect.option)
    if (imported._tag === "None") return invalid("the DPoP proof's jwk is not a usable public key")
    const valid = yield* Effect.tryPromise(() =>
      subtle().verify(
        alg.verifyParams as never,
        imported.value,
        signature.success as Uint8Array<ArrayBuffer>,
        encoder.encode(`${parts[0]}.${parts[1]}`)
      )
    ).pipe(Effect.orElseSucceed(() => false))
    if (!valid) return invalid("the DPoP proof's signature does not verify with its jwk")
    if (typeof claims.jti !== "string" || claims.jti === "") return invalid("the DPoP proof has no jti")
    if (claims.htm !== expected.method.toUpperCase()) return invalid("the DPoP proof's htm is not the request method")
    if (typeof claims.htu !== "string" || comparableUrl(claims.htu) !== comparableUrl(expected.url)) {
      return invalid("the DPoP proof's htu is not the request URL")
    }
    if (typeof claims.iat !== "number" || Math.abs(expected.now - claims.iat) > expected.maxAge) {
      return invalid("the DPoP proof's iat is not recent")
    }
    if (claims.ath !== (yield* accessTokenHash(expected.token))) {
      return invalid("the DPoP proof's ath is not the hash of the access token")
    }
    if (expected.nonce !== undefined && claims.nonce !== expected.nonce) {
      return { error: "use_dpop_nonce", description: "the DPoP proof must carry the server's nonce" } satisfies Invalid
    }
    const jkt = yield* thumbprint(key)
    if (jkt === undefined) return invalid("the DPoP proof's jwk has no thumbprint")
    return { jkt, jti: claims.jti, iat: claims.iat } satisfies Verified
  })
