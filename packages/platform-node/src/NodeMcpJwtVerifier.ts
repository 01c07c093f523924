/**
 * A token verifier for protected MCP servers (`McpResourceServer`) that
 * checks JWT access tokens with `jose`: the signature against a key or a
 * JSON Web Key Set, the issuer, optionally the audience, and the time claims
 * against the `Clock` of the request. Claims map to `McpAuth.AuthInfo` as
 * `McpResourceServer.authInfoFromClaims` says.
 *
 * ```ts
 * const verify = NodeMcpJwtVerifier.make({
 *   jwksUrl: "https://auth.example.com/.well-known/jwks.json",
 *   issuer: "https://auth.example.com"
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpResourceServer from "@effect-mcp/core/McpResourceServer"
import type * as Undici from "@effect/platform-node/Undici"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Jose from "jose"

/**
 * Where the keys come from (exactly one of `jwksUrl`, `jwks`, `key`) and
 * what the claims must say.
 *
 * @category models
 * @since 0.1.0
 */
export type Options = Keys & {
  /** The `iss` the token must carry (the authorization server's issuer). */
  readonly issuer: string | ReadonlyArray<string>
  /**
   * An `aud` the token must carry; default: not checked here (the resource
   * server checks the audience against its resource itself, so this is only
   * for tokens whose audience is something else).
   */
  readonly audience?: string | ReadonlyArray<string> | undefined
  /** Accepted `alg` values. Default: those of the key (jose's default), never `none`. */
  readonly algorithms?: ReadonlyArray<string> | undefined
  /** Leeway for `exp` / `nbf`, in seconds or as a jose duration (`"30s"`). Default `0`. */
  readonly clockTolerance?: number | string | undefined
  /** The `typ` header the token must carry (`"at+jwt"` for RFC 9068 access tokens). Default: not checked. */
  readonly typ?: string | undefined
  /** Claims that must be present, beyond those checked above. */
  readonly requiredClaims?: ReadonlyArray<string> | undefined
  /**
   * For `jwksUrl`: headers and timings of the key set requests (jose's
   * `RemoteJWKSetOptions`; jose keeps a key set 10 minutes, `cacheMaxAge`,
   * and refetches at most every 30 seconds for an unknown `kid`,
   * `cooldownDuration`). The default fetch is undici's with an agent that
   * keeps no connection alive, so none outlives the server that used the
   * verifier; a `[jose.customFetch]` here replaces it.
   */
  readonly remote?: Jose.RemoteJWKSetOptions | undefined
  /**
   * The cache of accepted tokens: verifying a JWT is deterministic for a
   * token and key set, so an accepted token is answered without `jose` while
   * the `Clock` is between its `nbf` and `exp`, for at most `maxAge` (so a
   * key removed from a remote key set stops being honoured within that
   * time). Rejected tokens and failures to fetch the keys are never cached.
   * `false` verifies every token every time.
   */
  readonly cache?: CacheOptions | false | undefined
}

/**
 * The bounds of the cache of accepted tokens.
 *
 * @category models
 * @since 0.1.0
 */
export interface CacheOptions {
  /** The most tokens remembered (at least 1); the least recently used goes first. Default `1000`. */
  readonly maxEntries?: number | undefined
  /** How long after its verification a token is answered from the cache (never past its `exp`). Default 5 minutes. */
  readonly maxAge?: Duration.Input | undefined
}

/**
 * The keys a token may be signed with.
 *
 * @category models
 * @since 0.1.0
 */
export type Keys =
  | { readonly jwksUrl: string | URL; readonly jwks?: undefined; readonly key?: undefined }
  | { readonly jwks: Jose.JSONWebKeySet; readonly jwksUrl?: undefined; readonly key?: undefined }
  | {
    readonly key: Jose.CryptoKey | Jose.KeyObject | Jose.JWK | Uint8Array
    readonly jwksUrl?: undefined
    readonly jwks?: undefined
  }

// jose errors whose message may be told to the client (`error_description`)
const DESCRIBED = new Set([
  "ERR_JWT_EXPIRED",
  "ERR_JWT_CLAIM_VALIDATION_FAILED",
  "ERR_JWT_INVALID",
  "ERR_JWS_INVALID",
  "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
  "ERR_JOSE_ALG_NOT_ALLOWED",
  "ERR_JOSE_NOT_SUPPORTED",
  "ERR_JWKS_NO_MATCHING_KEY",
  "ERR_JWKS_MULTIPLE_MATCHING_KEYS"
])

const codeOf = (error: unknown): unknown => (error as { readonly code?: unknown } | null)?.code

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** A remote key set that could not be fetched: the one failure that is the server's, not the token's. */
class KeySetUnavailable {
  readonly cause: unknown
  constructor(cause: unknown) {
    this.cause = cause
  }
}

/**
 * The remote key set, its failures marked: any other error of `jwtVerify`
 * is about the token (a forged `alg` such as HS256 against an RSA key makes
 * jose throw a plain `TypeError`), so it is a `401`, never a `500`.
 */
const marking = (keys: Jose.JWTVerifyGetKey): Jose.JWTVerifyGetKey => (header, token) =>
  Promise.resolve().then(() => keys(header, token)).catch((error: unknown) => {
    const code = codeOf(error)
    throw code === "ERR_JWKS_NO_MATCHING_KEY" || code === "ERR_JWKS_MULTIPLE_MATCHING_KEYS"
      ? error
      : new KeySetUnavailable(error)
  })

interface Entry {
  readonly auth: McpAuth.AuthInfo
  /** ms: `nbf`, or `-Infinity` */
  readonly notBefore: number
  /** ms: the earlier of `exp` and the verification time + `maxAge` */
  readonly until: number
}

/** A least-recently-used map of accepted tokens (a `Map` keeps insertion order: the first key is the oldest). */
const makeCache = (options: CacheOptions) => {
  const maxEntries = Math.max(1, Math.floor(options.maxEntries ?? 1000))
  const maxAge = Duration.toMillis(options.maxAge ?? Duration.minutes(5))
  const entries = new Map<string, Entry>()
  return {
    get: (token: string, now: number): McpAuth.AuthInfo | undefined => {
      const entry = entries.get(token)
      if (entry === undefined) return undefined
      entries.delete(token)
      if (now >= entry.until || now < entry.notBefore) return undefined
      entries.set(token, entry)
      return entry.auth
    },
    set: (token: string, auth: McpAuth.AuthInfo, now: number): void => {
      const claims = auth.claims
      const notBefore = typeof claims.nbf === "number" ? claims.nbf * 1000 : -Infinity
      const until = Math.min(auth.expiresAt === undefined ? Infinity : auth.expiresAt * 1000, now + maxAge)
      if (now >= until || now < notBefore) return
      entries.delete(token)
      entries.set(token, { auth, notBefore, until })
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
    }
  }
}

/**
 * The key set requests' `fetch`: undici's, with an agent that does not keep
 * connections alive (`pipelining: 0`: `connection: close`, the socket is
 * destroyed with the answer). The global `fetch` would leave a keep-alive
 * socket to the authorization server open for seconds after the server that
 * used the verifier has closed; key sets are fetched rarely (`jose` caches
 * them), so a connection per fetch costs nothing. Shared by every verifier:
 * it holds no socket between fetches.
 */
let closingAgent: Undici.Dispatcher | undefined
const closingFetch = (url: string, init: RequestInit): Promise<Response> =>
  import("@effect/platform-node/Undici").then((undici) => {
    closingAgent ??= new undici.Agent({ pipelining: 0 })
    return undici.fetch(url, { ...init, dispatcher: closingAgent } as never) as unknown as Promise<Response>
  })

/**
 * The verify function of `McpResourceServer.Options`: a token that fails
 * a check (bad signature, an `alg` or key type that does not fit the keys,
 * malformed, wrong issuer or audience, expired) is an `AuthError`
 * (`401 invalid_token`); only a remote key set that cannot be fetched is a
 * `TransportError` (`500`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options): McpResourceServer.Verify => {
  const jwksUrl = options.jwksUrl === undefined ? undefined : new URL(options.jwksUrl)
  const base: Jose.JWTVerifyOptions = {
    issuer: typeof options.issuer === "string" ? options.issuer : [...options.issuer],
    ...(options.audience === undefined
      ? {}
      : { audience: typeof options.audience === "string" ? options.audience : [...options.audience] }),
    ...(options.algorithms === undefined ? {} : { algorithms: [...options.algorithms] }),
    ...(options.clockTolerance === undefined ? {} : { clockTolerance: options.clockTolerance }),
    ...(options.typ === undefined ? {} : { typ: options.typ }),
    ...(options.requiredClaims === undefined ? {} : { requiredClaims: [...options.requiredClaims] })
  }
  const cache = options.cache === false ? undefined : makeCache(options.cache ?? {})
  // `jose` is loaded at the first verification that needs it, not with this
  // module; the key set is made then, once (`??=`: even if two race)
  let verifier: { readonly jose: typeof Jose; readonly keys: Jose.JWTVerifyGetKey | Jose.KeyInput } | undefined
  const getVerifier = Effect.suspend(() =>
    verifier !== undefined ?
      Effect.succeed(verifier) :
      Effect.map(Effect.promise(() => import("jose")), (jose) =>
        verifier ??= {
          jose,
          keys: jwksUrl !== undefined
            ? marking(jose.createRemoteJWKSet(jwksUrl, { [jose.customFetch]: closingFetch, ...options.remote }))
            : options.jwks !== undefined
            ? jose.createLocalJWKSet(options.jwks)
            : options.key!
        })
  )
  return Effect.fn("NodeMcpJwtVerifier.verify")(function*(token: string) {
    const now = yield* Clock.currentTimeMillis
    const cached = cache?.get(token, now)
    if (cached !== undefined) return cached
    const { jose, keys } = yield* getVerifier
    const verified = yield* Effect.tryPromise({
      try: () => jose.jwtVerify(token, keys as Jose.KeyInput, { ...base, currentDate: new Date(now) }),
      catch: (error) => {
        if (error instanceof KeySetUnavailable) {
          return McpError.transport(`the key set could not be fetched: ${describe(error.cause)}`, {
            cause: error.cause
          })
        }
        const code = codeOf(error)
        return McpError.auth(
          "Unauthorized",
          typeof code === "string" && DESCRIBED.has(code)
            ? `invalid token: ${describe(error)}`
            : "invalid token: it cannot be verified with the configured keys",
          { cause: error }
        )
      }
    })
    const auth = McpResourceServer.authInfoFromClaims(token, verified.payload as Record<string, unknown>)
    cache?.set(token, auth, now)
    return auth
  })
}
