/**
 * The bearer check of a protected MCP endpoint, shared by the Streamable
 * HTTP and HTTP+SSE server transports: the `Authorization` header, the
 * verifier, expiry, audience, scopes, and the `WWW-Authenticate` challenges
 * (RFC 6750 §3, RFC 9728 §5.1). Transports render a {@link Refusal} in their
 * own error body.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpAuth from "../../McpAuth.ts"
import type * as McpResourceServer from "../../McpResourceServer.ts"
import * as McpSchema from "../../McpSchema.ts"
import * as Dpop from "./dpop.ts"
import { metadataUrl } from "./resourceMetadata.ts"

/** Why a request is refused. @internal */
export interface Refusal {
  readonly status: 401 | 403 | 500
  /** The `WWW-Authenticate` value (none for `500`). */
  readonly challenge: string | undefined
  readonly message: string
  /** More response headers (`DPoP-Nonce`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** The `500` of a verifier that could not check a token: no detail for the client. @internal */
export const SERVER_ERROR: Refusal = { status: 500, challenge: undefined, message: "Internal Server Error" }

/** What the DPoP check needs of a request (RFC 9449 §4.3). @internal */
export interface RequestInfo {
  readonly method: string
  /** The request URL as received (a path, resolved against the resource's origin). */
  readonly url: string
  /** The `DPoP` header. */
  readonly proof: string | undefined
}

/** The bearer check of one protected endpoint. @internal */
export interface Guard {
  /** The canonical resource URL. */
  readonly resource: string
  /** The path-aware protected resource metadata URL. */
  readonly metadataUrl: string
  /** Header → verify → expiry → audience → `requiredScopes`. */
  readonly authenticate: (
    authorization: string | undefined,
    request?: RequestInfo
  ) => Effect.Effect<McpAuth.AuthInfo | Refusal>
  /** The `403` for requests among `messages` the token lacks a scope for, if any. */
  readonly authorize: (auth: McpAuth.AuthInfo, messages: ReadonlyArray<unknown>) => Refusal | undefined
}

/** `true` for a refusal (as opposed to an `AuthInfo`). @internal */
export const isRefusal = (value: McpAuth.AuthInfo | Refusal): value is Refusal => "status" in value

/** Whom a session belongs to (`principal.ts`). @internal */
export { principal } from "./principal.ts"

/** The protected resource metadata (`resourceMetadata.ts`). @internal */
export { metadataDocument, metadataPath, metadataUrl } from "./resourceMetadata.ts"

// RFC 6750 §3: quoted values, error_description limited to visible ASCII
// without `"` and `\`
const quote = (value: string) => `"${value.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, " ")}"`

const challenge = (params: ReadonlyArray<readonly [string, string | undefined]>, scheme = "Bearer") =>
  `${scheme} ` +
  params.filter(([, value]) => value !== undefined).map(([name, value]) => `${name}=${quote(value!)}`).join(", ")

const union = (...lists: ReadonlyArray<ReadonlyArray<string> | undefined>): Array<string> => {
  const out = new Set<string>()
  for (const list of lists) for (const scope of list ?? []) out.add(scope)
  return [...out]
}

const comparable = (value: string): string | undefined => {
  const url = URL.canParse(value) ? McpAuth.canonicalResource(value) : value
  return url.replace(/\/$/, "")
}

/** The key a token is bound to: its `cnf.jkt` (RFC 9449 §6), if any. @internal */
export const boundKey = (auth: McpAuth.AuthInfo): string | undefined => {
  const cnf = auth.claims.cnf
  return typeof cnf === "object" && cnf !== null && typeof (cnf as { jkt?: unknown }).jkt === "string"
    ? (cnf as { jkt: string }).jkt
    : undefined
}

/** The guard of a protected endpoint. @internal */
export const make = (
  options: McpResourceServer.Options,
  resource: string,
  clock: Clock.Clock
): Guard => {
  const metadata = metadataUrl(resource)
  const required = union(options.requiredScopes)
  const requiredText = required.length === 0 ? undefined : required.join(" ")
  const audiences = new Set([resource, ...(options.audiences ?? [])].map(comparable))
  const methodScopes = options.methodScopes ?? {}
  const toolScopes = options.toolScopes ?? {}
  const scoped = Object.keys(methodScopes).length > 0 || Object.keys(toolScopes).length > 0

  const dpop = options.dpop
  const dpopRequired = dpop?.required === true
  const maxAge = dpop?.maxAgeSeconds ?? 300
  // one nonce for the guard's lifetime (RFC 9449 §9 leaves its lifetime to the server)
  const nonce = dpop?.nonce === true ? globalThis.crypto.randomUUID() : undefined
  const algs = Dpop.ALGORITHMS.join(" ")
  /** `jkt:jti` → until when (seconds) the proof is remembered: a replay within its lifetime is refused. */
  const seen = new Map<string, number>()

  const unauthorized = (error: string | undefined, description: string, scheme = "Bearer"): Refusal => {
    if (scheme === "DPoP") return dpopRefusal(error, description)
    const params: Array<readonly [string, string | undefined]> = error === undefined
      ? [["resource_metadata", metadata], ["scope", requiredText]]
      : [["error", error], ["error_description", description], ["resource_metadata", metadata], ["scope", requiredText]]
    return {
      // a server that takes DPoP says so beside the Bearer challenge (RFC 9449 §7.1)
      challenge: dpop === undefined || error !== undefined
        ? challenge(params)
        : `${challenge(params)}, ${challenge([["algs", algs], ["resource_metadata", metadata]], "DPoP")}`,
      status: 401,
      message: `Unauthorized: ${description}`
    }
  }

  const dpopRefusal = (error: string | undefined, description: string): Refusal => ({
    status: 401,
    challenge: challenge(
      [
        ["error", error],
        ["error_description", error === undefined ? undefined : description],
        ["algs", algs],
        ["resource_metadata", metadata],
        ["scope", requiredText]
      ],
      "DPoP"
    ),
    message: `Unauthorized: ${description}`,
    headers: nonce === undefined ? undefined : { "dpop-nonce": nonce }
  })

  const insufficient = (scopes: ReadonlyArray<string>, description: string, scheme = "Bearer"): Refusal => ({
    status: 403,
    challenge: challenge(
      [
        ["error", "insufficient_scope"],
        ["error_description", description],
        ["scope", scopes.join(" ")],
        ["resource_metadata", metadata]
      ],
      scheme
    ),
    message: `Forbidden: ${description}`
  })

  const check = (auth: McpAuth.AuthInfo, scheme: string): McpAuth.AuthInfo | Refusal => {
    if (auth.expiresAt !== undefined && auth.expiresAt * 1000 <= clock.currentTimeMillisUnsafe()) {
      return unauthorized("invalid_token", "the token has expired", scheme)
    }
    const audience = auth.audience ?? []
    if (
      audience.length === 0
        ? options.requireAudience !== false
        : !audience.some((aud) => audiences.has(comparable(aud)))
    ) {
      return unauthorized("invalid_token", "the token was not issued for this resource", scheme)
    }
    // a token naming nobody would share one principal (sessions, requestState)
    // with every other such token: refused rather than bound to no one
    if (auth.subject === undefined && auth.clientId === undefined) {
      return unauthorized("invalid_token", "the token names neither a subject (sub) nor a client (client_id)", scheme)
    }
    const missing = required.filter((scope) => !auth.scopes.includes(scope))
    if (missing.length > 0) return insufficient(required, `the token lacks the scope ${missing.join(" ")}`, scheme)
    return auth
  }

  // A verifier that could not check the token (its endpoint down, a defect):
  // the detail goes to the server log only, the client gets a bare 500.
  const verifyToken = (
    token: string,
    scheme: string,
    request: RequestInfo | undefined
  ): Effect.Effect<McpAuth.AuthInfo | Refusal> =>
    Effect.flatMap(Effect.exit(Effect.suspend(() => options.verify(token))), (exit) => {
      if (Exit.isSuccess(exit)) return Effect.succeed(check(exit.value, scheme))
      if (Cause.hasInterruptsOnly(exit.cause)) return Effect.interrupt
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error) && error.value.reason._tag === "AuthError") {
        return Effect.succeed(unauthorized("invalid_token", error.value.reason.description, scheme))
      }
      return Effect.as(
        Effect.logError("McpResourceServer: the token could not be verified", exit.cause).pipe(
          Effect.annotateLogs(
            request === undefined ? { resource } : { resource, method: request.method, url: request.url }
          )
        ),
        SERVER_ERROR
      )
    })

  /** Remembers a proof; `false` when it was seen before (a replay). */
  const remember = (proof: Dpop.Verified, now: number): boolean => {
    const key = `${proof.jkt}:${proof.jti}`
    const until = seen.get(key)
    if (until !== undefined && until >= now) return false
    if (seen.size >= 10_000) {
      for (const [old, expiry] of seen) if (expiry < now) seen.delete(old)
      if (seen.size >= 10_000) seen.delete(seen.keys().next().value!)
    }
    seen.set(key, proof.iat + maxAge)
    return true
  }

  /** `Authorization: DPoP <token>` with its proof (RFC 9449 §7.1). */
  const authenticateDpop = (token: string, request: RequestInfo | undefined) =>
    Effect.gen(function*() {
      if (request === undefined) return dpopRefusal("invalid_dpop_proof", "this endpoint cannot check DPoP proofs")
      const now = Math.floor(clock.currentTimeMillisUnsafe() / 1000)
      const proof = yield* Dpop.verify({
        proof: request.proof,
        method: request.method,
        url: new URL(request.url, resource).href,
        token,
        now,
        maxAge,
        nonce
      })
      if (Dpop.isInvalid(proof)) return dpopRefusal(proof.error, proof.description)
      if (!remember(proof, now)) return dpopRefusal("invalid_dpop_proof", "the DPoP proof was used before")
      const auth = yield* verifyToken(token, "DPoP", request)
      if (isRefusal(auth)) return auth
      if (boundKey(auth) !== proof.jkt) {
        return dpopRefusal("invalid_token", "the token is not bound to the DPoP proof's key (cnf.jkt)")
      }
      return auth
    })

  const authenticate = (
    authorization: string | undefined,
    request?: RequestInfo
  ): Effect.Effect<McpAuth.AuthInfo | Refusal> => {
    if (authorization === undefined || authorization.trim() === "") {
      return Effect.succeed(
        dpopRequired
          ? dpopRefusal(undefined, "a DPoP-bound token is required")
          : unauthorized(undefined, "a bearer token is required")
      )
    }
    const match = /^\s*(bearer|dpop)\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization)
    if (match === null) return Effect.succeed(unauthorized("invalid_token", "expected Authorization: Bearer <token>"))
    const token = match[2]!
    if (match[1]!.toLowerCase() === "dpop") return authenticateDpop(token, request)
    if (dpopRequired) return Effect.succeed(dpopRefusal("invalid_token", "a DPoP-bound token is required"))
    return Effect.map(verifyToken(token, "Bearer", request), (auth) =>
      // RFC 9449 §7.2: a DPoP-bound token is no bearer token
      !isRefusal(auth) && boundKey(auth) !== undefined
        ? dpopRefusal("invalid_token", "the token is DPoP-bound: present it as Authorization: DPoP with a proof")
        : auth)
  }

  const neededFor = (value: unknown): ReadonlyArray<string> | undefined => {
    const classified = JsonRpc.classify(value)
    if (classified._tag !== "Request") return undefined
    const { method, params } = classified.message
    const forMethod = Object.hasOwn(methodScopes, method) ? methodScopes[method] : undefined
    if (method !== McpSchema.CallTool.name) return forMethod
    const name = (params as { readonly name?: unknown } | undefined)?.name
    const forTool = typeof name === "string" && Object.hasOwn(toolScopes, name) ? toolScopes[name] : undefined
    return forTool === undefined ? forMethod : union(forMethod, forTool)
  }

  const authorize = (auth: McpAuth.AuthInfo, messages: ReadonlyArray<unknown>): Refusal | undefined => {
    if (!scoped) return undefined
    const needed: Array<ReadonlyArray<string> | undefined> = []
    for (const message of messages) needed.push(neededFor(message))
    const all = union(...needed)
    const missing = all.filter((scope) => !auth.scopes.includes(scope))
    if (missing.length === 0) return undefined
    return insufficient(
      union(required, all),
      `the token lacks the scope ${missing.join(" ")}`,
      boundKey(auth) === undefined ? "Bearer" : "DPoP"
    )
  }

  return { resource, metadataUrl: metadata, authenticate, authorize }
}
