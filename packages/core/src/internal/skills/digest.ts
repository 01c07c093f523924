/**
 * The digest of a skill file: `sha256:` and the 64 lowercase hex digits of
 * the SHA-256 of its bytes, computed with Web Crypto (every runtime has it).
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/** The form of a digest. @internal */
export const DIGEST = /^sha256:[0-9a-f]{64}$/

const hex = (bytes: Uint8Array): string => {
  let out = ""
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0")
  return out
}

/** `sha256:<hex>` of `bytes`. @internal */
export const sha256 = (bytes: Uint8Array): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)),
    (digest) => `sha256:${hex(new Uint8Array(digest))}`
  )

const encoder = new TextEncoder()

/** The UTF-8 bytes of a text, or the bytes as they are. @internal */
export const bytesOf = (content: string | Uint8Array): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content
