/**
 * The Streamable HTTP event store on Redis Streams.
 *
 * - `${prefix}events:${encoded stream id}`: a Redis stream, one entry per SSE
 *   event with one field `m` (the message as JSON, `""` for a priming
 *   event), trimmed to its last `maxEvents` entries on each append (`XADD
 *   MAXLEN` exact), and expiring `ttl` after its last append.
 * - An event id is `${encoded stream id}:${Redis entry id}`. Redis orders a
 *   stream's entry ids itself, whichever process appends, so ids stay
 *   ordered when another replica takes a stream over.
 *
 * The stream id is encoded like a URI component (`A-Z a-z 0-9 - . _ ~ /`
 * kept, every other UTF-8 byte as `%XX`): an event id is printable ASCII,
 * safe as an SSE id, and the key made from a `Last-Event-ID` is always one
 * of this store's keys. A `Last-Event-ID` that is not exactly an id this
 * store could have made is unknown.
 *
 * @internal
 */
import type * as JsonRpc from "@effect-mcp/core/JsonRpc"
import type * as McpHttpServer from "@effect-mcp/core/McpHttpServer"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redis from "effect/persistence/Redis"
import * as Result from "effect/Result"
import * as Errors from "./errors.ts"

/** @internal */
export interface StoreOptions {
  readonly prefix: string
  readonly maxEvents: number
  /** 0: no expiry. */
  readonly ttlMillis: number
}

const SEPARATOR = ":"

/** The longest `Last-Event-ID` looked up; longer ones are unknown. @internal */
export const MAX_EVENT_ID_LENGTH = 2048

const SAFE = /[A-Za-z0-9\-._~/]/
const HEX = "0123456789ABCDEF"
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8")

/** A stream id as printable ASCII without `:` (lone surrogates become U+FFFD). @internal */
export const encodeStreamId = (streamId: string): string => {
  let out = ""
  for (const byte of encoder.encode(streamId)) {
    const char = String.fromCharCode(byte)
    out += byte < 0x80 && SAFE.test(char) ? char : "%" + HEX[byte >> 4] + HEX[byte & 15]
  }
  return out
}

const ENCODED = /^(?:[A-Za-z0-9\-._~/]|%[0-9A-F]{2})+$/

/** The stream id of an encoded one, when it is exactly what {@link encodeStreamId} makes. @internal */
export const decodeStreamId = (encoded: string): string | undefined => {
  if (!ENCODED.test(encoded)) return undefined
  const bytes: Array<number> = []
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === "%") {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(encoded.charCodeAt(i))
  }
  const streamId = decoder.decode(new Uint8Array(bytes))
  // only the canonical form: no other spelling (or invalid UTF-8) names a stream
  return encodeStreamId(streamId) === encoded ? streamId : undefined
}

// a Redis stream entry id no greater than 2^64 - 1 in either part: never a special id (`-`, `+`, `$`, `*`)
const ENTRY_ID = /^\d{1,19}-\d{1,19}$/

/** The parts of an event id this store could have made. @internal */
export const parseEventId = (
  eventId: string
): { readonly encoded: string; readonly streamId: string; readonly entryId: string } | undefined => {
  if (eventId.length > MAX_EVENT_ID_LENGTH) return undefined
  const at = eventId.lastIndexOf(SEPARATOR)
  if (at <= 0) return undefined
  const encoded = eventId.slice(0, at)
  const entryId = eventId.slice(at + 1)
  if (!ENTRY_ID.test(entryId)) return undefined
  const streamId = decodeStreamId(encoded)
  return streamId === undefined ? undefined : { encoded, streamId, entryId }
}

// appends and refreshes the expiry in one step; returns the entry id
const appendScript = Redis.script(
  (key: string, maxEvents: number, json: string, ttlMillis: number) => [key, maxEvents, json, ttlMillis],
  {
    numberOfKeys: 1,
    lua: `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'm', ARGV[2])
if ARGV[3] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return id`
  }
).withReturnType<string>()

type Entry = readonly [id: string, fields: ReadonlyArray<string>]

const messageOf = (fields: ReadonlyArray<string>): string => {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === "m") return fields[i + 1]!
  return ""
}

const corrupt = (key: string) => Errors.fromRedis("XRANGE", new Error(`an entry of ${key} is not an MCP message`))

/** @internal */
export const make = (options: StoreOptions) =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const keyOf = (encoded: string) => `${options.prefix}events:${encoded}`
    const append = redis.eval(appendScript)

    const shape: McpHttpServer.EventStoreShape = {
      append: (streamId, message) =>
        Effect.suspend(() => {
          const encoded = encodeStreamId(streamId)
          const json = message === undefined ? "" : JSON.stringify(message)
          return append(keyOf(encoded), options.maxEvents, json, options.ttlMillis).pipe(
            Effect.map((entryId) => encoded + SEPARATOR + entryId),
            Errors.mapRedis("XADD")
          )
        }),
      replayAfter: (lastEventId) =>
        Effect.suspend(() => {
          const parsed = parseEventId(lastEventId)
          if (parsed === undefined) return Effect.succeedNone
          const key = keyOf(parsed.encoded)
          // the stream holds at most maxEvents entries, so this reads at most that many
          return redis.send<ReadonlyArray<Entry>>("XRANGE", key, parsed.entryId, "+").pipe(
            Errors.mapRedis("XRANGE"),
            Effect.flatMap((entries) => {
              // the id itself must still be kept: trimmed, expired or removed means events may be missing
              if (entries.length === 0 || entries[0]![0] !== parsed.entryId) return Effect.succeedNone
              const events: Array<McpHttpServer.StoredEvent> = []
              for (let i = 1; i < entries.length; i++) {
                const [entryId, fields] = entries[i]!
                const json = messageOf(fields)
                if (json === "") continue
                const message = Result.try(() => JSON.parse(json) as JsonRpc.Message)
                if (Result.isFailure(message)) return Effect.fail(corrupt(key))
                events.push({ id: parsed.encoded + SEPARATOR + entryId, message: message.success })
              }
              return Effect.succeed(Option.some({ streamId: parsed.streamId, events }))
            })
          )
        }),
      remove: (streamId) =>
        Effect.suspend(() => redis.send("DEL", keyOf(encodeStreamId(streamId)))).pipe(
          Errors.mapRedis("DEL"),
          Effect.catch((error) => Effect.logWarning(error.message)),
          Effect.asVoid
        )
    }
    return shape
  })
