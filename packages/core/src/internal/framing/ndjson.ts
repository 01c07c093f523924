/**
 * The state machine behind `McpTransport.decodeNdjson`: bytes in, parsed JSON
 * values (or `Malformed`) out, one line at a time.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as JsonRpc from "../../JsonRpc.ts"

const NEWLINE = 10
const CARRIAGE_RETURN = 13

/** @internal */
export interface NdjsonDecoder {
  /** Feeds a chunk; returns the values of the lines it completed. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<unknown>
  /** The value of a last line that had no newline, if any. */
  readonly end: () => ReadonlyArray<unknown>
}

const isBlank = (bytes: Uint8Array): boolean => {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (byte !== 32 && byte !== 9 && byte !== CARRIAGE_RETURN) return false
  }
  return true
}

/** @internal */
export const ndjsonDecoder = (maxLineBytes: number): NdjsonDecoder => {
  const utf8 = new TextDecoder("utf-8", { fatal: true })
  // the bytes of the current, incomplete line
  let parts: Array<Uint8Array> = []
  let size = 0
  // the current line went over the limit: drop bytes until the next newline
  let skipping = false

  const parse = (line: Uint8Array, out: Array<unknown>) => {
    if (isBlank(line)) return
    const text = Result.try({ try: () => utf8.decode(line), catch: () => "not valid UTF-8" })
    if (Result.isFailure(text)) return out.push(new JsonRpc.Malformed(text.failure))
    const value = Result.try({ try: () => JSON.parse(text.success) as unknown, catch: (e) => `not valid JSON: ${e}` })
    out.push(Result.isFailure(value) ? new JsonRpc.Malformed(value.failure) : value.success)
  }

  const completeLine = (tail: Uint8Array, out: Array<unknown>) => {
    if (skipping) {
      skipping = false
      return
    }
    if (parts.length === 0) return parse(tail, out)
    parts.push(tail)
    const line = new Uint8Array(size + tail.length)
    let offset = 0
    for (const part of parts) {
      line.set(part, offset)
      offset += part.length
    }
    parts = []
    size = 0
    parse(line, out)
  }

  const overflow = (out: Array<unknown>) => {
    parts = []
    size = 0
    skipping = true
    out.push(new JsonRpc.Malformed(`line longer than ${maxLineBytes} bytes`))
  }

  return {
    push: (chunk) => {
      const out: Array<unknown> = []
      let start = 0
      while (start < chunk.length) {
        const newline = chunk.indexOf(NEWLINE, start)
        if (newline === -1) {
          const rest = chunk.subarray(start)
          if (!skipping) {
            if (size + rest.length > maxLineBytes) overflow(out)
            else {
              parts.push(rest.slice())
              size += rest.length
            }
          }
          break
        }
        const tail = chunk.subarray(start, newline)
        if (!skipping && size + tail.length > maxLineBytes) {
          overflow(out)
          skipping = false
        } else {
          completeLine(tail, out)
        }
        start = newline + 1
      }
      return out
    },
    end: () => {
      const out: Array<unknown> = []
      if (!skipping && parts.length > 0) completeLine(new Uint8Array(0), out)
      return out
    }
  }
}
