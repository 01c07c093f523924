/**
 * The `requestState` of multi round-trip requests, sealed: a JSON payload
 * with an HMAC-SHA256 tag (WebCrypto, so any platform), bounded in size.
 * The payload names the request it belongs to (method and a digest of its
 * params), whom it was issued to, when it expires, and the input answers
 * gathered so far; nothing is kept in server memory, so any replica holding
 * the key can take the retry.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Result from "effect/Result"

/** What a sealed state carries. @internal */
export interface Payload {
  /** The method and a digest of the params it was issued for. */
  readonly request: string
  /** Whom it was issued to (the authenticated principal), if anyone. */
  readonly principal: string | undefined
  /** Expiry, epoch milliseconds. */
  readonly expires: number
  /** The input answers gathered in earlier rounds, by input key. */
  readonly answers: Readonly<Record<string, unknown>>
  /** The held call the request resumes (see `held.ts`), if it is held. */
  readonly held?: string | undefined
  /** The replica holding that call, in a cluster. */
  readonly holder?: string | undefined
  /** Whether the held request may be run again (its holder gone). */
  readonly idempotent?: boolean | undefined
}

/** A WebCrypto HMAC key. @internal */
export type HmacKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>

/** A key for sealing. @internal */
export interface Key {
  readonly hmac: HmacKey
  readonly maxBytes: number
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Imports `secret`, or makes a random one (good for one process). @internal */
export const makeKey = (secret: string | Uint8Array | undefined, maxBytes: number): Effect.Effect<Key> =>
  Effect.promise(() => {
    const material = secret === undefined
      ? globalThis.crypto.getRandomValues(new Uint8Array(32))
      : typeof secret === "string"
      ? encoder.encode(secret)
      : secret
    return globalThis.crypto.subtle.importKey(
      "raw",
      material as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"]
    )
  }).pipe(Effect.map((hmac) => ({ hmac, maxBytes })))

/** Why a state was refused. @internal */
export type Refusal = "malformed" | "too large" | "forged" | "expired" | "foreign request" | "foreign principal"

/** Seals a payload; fails when the sealed state would exceed the bound. @internal */
export const seal = (key: Key, payload: Payload): Effect.Effect<string, "too large"> => {
  const body = Base64Url.encode(JSON.stringify(payload))
  if (body.length + 44 > key.maxBytes) return Effect.fail("too large" as const)
  return Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.sign("HMAC", key.hmac, encoder.encode(body))),
    (tag) => `${body}.${Base64Url.encode(new Uint8Array(tag))}`
  )
}

/**
 * Opens a sealed state: its tag must verify, it must not have expired, and
 * it must belong to this request and principal.
 *
 * @internal
 */
export const open = (
  key: Key,
  token: string,
  expected: { readonly request: string; readonly principal: string | undefined; readonly now: number }
): Effect.Effect<Payload, Refusal> => {
  if (token.length > key.maxBytes) return Effect.fail("too large" as const)
  const dot = token.indexOf(".")
  const tag = dot < 0 ? undefined : Base64Url.decode(token.slice(dot + 1))
  if (tag === undefined || Result.isFailure(tag)) return Effect.fail("malformed" as const)
  const body = token.slice(0, dot)
  return Effect.promise(() =>
    globalThis.crypto.subtle.verify("HMAC", key.hmac, tag.success as Uint8Array<ArrayBuffer>, encoder.encode(body))
  ).pipe(
    Effect.flatMap((valid): Effect.Effect<Payload, Refusal> => {
      if (!valid) return Effect.fail("forged")
      const decoded = Base64Url.decode(body)
      const payload = Result.isSuccess(decoded)
        ? Result.try(() => JSON.parse(decoder.decode(decoded.success)) as Payload)
        : undefined
      if (payload === undefined || Result.isFailure(payload) || !isPayload(payload.success)) {
        return Effect.fail("malformed")
      }
      const value = payload.success
      if (value.expires <= expected.now) return Effect.fail("expired")
      if (value.request !== expected.request) return Effect.fail("foreign request")
      if (value.principal !== expected.principal) return Effect.fail("foreign principal")
      return Effect.succeed(value)
    })
  )
}

const isPayload = (value: unknown): value is Payload => {
  if (typeof value !== "object" || value === null) return false
  const payload = value as Record<string, unknown>
  return typeof payload.request === "string" && typeof payload.expires === "number" &&
    typeof payload.answers === "object" && payload.answers !== null &&
    (payload.held === undefined || typeof payload.held === "string") &&
    (payload.holder === undefined || typeof payload.holder === "string")
}

/**
 * The replica named as the holder of a sealed state's call, read without
 * verifying the tag: only to choose where the state is opened (and verified).
 *
 * @internal
 */
export const peekHolder = (token: string): string | undefined => {
  const dot = token.indexOf(".")
  const decoded = dot < 0 ? undefined : Base64Url.decode(token.slice(0, dot))
  if (decoded === undefined || Result.isFailure(decoded)) return undefined
  const payload = Result.try(() => JSON.parse(decoder.decode(decoded.success)) as unknown)
  if (Result.isFailure(payload) || typeof payload.success !== "object" || payload.success === null) return undefined
  const holder = (payload.success as { readonly holder?: unknown }).holder
  return typeof holder === "string" ? holder : undefined
}

/**
 * A digest of the params that identify a request (everything but `_meta`,
 * `inputResponses` and `requestState`): a retry must carry the same ones.
 *
 * @internal
 */
export const requestDigest = (method: string, params: unknown): string => {
  const rest: Record<string, unknown> = {}
  if (typeof params === "object" && params !== null) {
    for (const [key, value] of Object.entries(params)) {
      if (key !== "_meta" && key !== "inputResponses" && key !== "requestState") rest[key] = value
    }
  }
  return `${method}:${fnv1a(canonical(rest))}`
}

/** JSON with object keys sorted, so that equal values give equal text. @internal */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort()
    return `{${
      keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(",")
    }}`
  }
  return JSON.stringify(value) ?? "null"
}

/** Two 32-bit FNV-1a hashes, hex: a short stable digest (not a security measure; the tag is). @internal */
export const fnv1a = (text: string): string => {
  let a = 0x811c9dc5
  let b = 0x050c5d1f
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    a = Math.imul(a ^ code, 0x01000193)
    b = Math.imul(b ^ code, 0x01000193) ^ (a >>> 15)
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0")
}
