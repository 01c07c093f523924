/**
 * The in-memory event store: per stream, the messages in order; an event id
 * is `<stream id>:<sequence>`. Bounded per stream in events and in bytes
 * (oldest dropped), in number of streams (oldest stream dropped first), and
 * in bytes in all (the oldest events of the oldest streams dropped first).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpHttpServer from "../../../McpHttpServer.ts"
import * as SseStream from "./sseStream.ts"

interface Log {
  /** The sequence number of `events[0]`. */
  base: number
  readonly events: Array<JsonRpc.Message | undefined>
  /** The size of each of `events`. */
  readonly sizes: Array<number>
  bytes: number
}

// the size of an event: the length of its JSON text (a priming event counts 1)
const sizeOf = (message: JsonRpc.Message | undefined): number => {
  if (message === undefined) return 1
  const known = SseStream.textOf(message)
  if (known !== undefined) return known.length
  const text = Result.try(() => JSON.stringify(message))
  return Result.isSuccess(text) && typeof text.success === "string" ? text.success.length : 1
}

const SEPARATOR = ":"

/** @internal */
export const makeMemory = (options?: McpHttpServer.EventStoreMemoryOptions): McpHttpServer.EventStoreShape => {
  const maxEvents = Math.max(1, options?.maxEventsPerStream ?? 1000)
  const maxStreams = Math.max(1, options?.maxStreams ?? 10_000)
  const maxStreamBytes = Math.max(1, options?.maxBytesPerStream ?? 16 * 1024 * 1024)
  const maxBytes = Math.max(1, options?.maxBytes ?? 128 * 1024 * 1024)
  // insertion-ordered: the first key is the oldest stream
  const streams = new Map<string, Log>()
  let total = 0

  const dropOldest = (log: Log): void => {
    log.events.shift()
    const size = log.sizes.shift() ?? 0
    log.bytes -= size
    total -= size
    log.base++
  }

  const removeStream = (streamId: string): void => {
    const log = streams.get(streamId)
    if (log === undefined) return
    total -= log.bytes
    streams.delete(streamId)
  }

  // the oldest events of the oldest streams go first; a stream left empty
  // keeps its place in the sequence (its old ids stay unknown) and moves last
  const evict = (): void => {
    for (let moves = streams.size; total > maxBytes && moves >= 0;) {
      const first = streams.entries().next().value
      if (first === undefined) return
      const [streamId, log] = first
      if (log.events.length > 0) {
        dropOldest(log)
        continue
      }
      streams.delete(streamId)
      streams.set(streamId, log)
      moves--
    }
  }

  const append = (streamId: string, message: JsonRpc.Message | undefined): string => {
    let log = streams.get(streamId)
    if (log === undefined) {
      log = { base: 0, events: [], sizes: [], bytes: 0 }
      streams.set(streamId, log)
      if (streams.size > maxStreams) {
        const oldest = streams.keys().next().value
        if (oldest !== undefined) removeStream(oldest)
      }
    }
    const sequence = log.base + log.events.length
    const size = sizeOf(message)
    log.events.push(message)
    log.sizes.push(size)
    log.bytes += size
    total += size
    // an event bigger than the stream's bound goes too: it was delivered, but cannot be replayed
    while (log.events.length > 0 && (log.events.length > maxEvents || log.bytes > maxStreamBytes)) dropOldest(log)
    if (total > maxBytes) evict()
    return streamId + SEPARATOR + sequence
  }

  const replayAfter = (lastEventId: string) => {
    const at = lastEventId.lastIndexOf(SEPARATOR)
    if (at <= 0) return Option.none()
    const streamId = lastEventId.slice(0, at)
    const digits = lastEventId.slice(at + 1)
    const sequence = /^\d+$/.test(digits) ? Number(digits) : NaN
    const log = streams.get(streamId)
    // unknown, from the future, or older than the oldest kept event but one
    if (log === undefined || !Number.isSafeInteger(sequence)) return Option.none()
    const end = log.base + log.events.length
    if (sequence >= end || sequence < log.base - 1) return Option.none()
    const events: Array<McpHttpServer.StoredEvent> = []
    for (let n = sequence + 1; n < end; n++) {
      const message = log.events[n - log.base]
      if (message !== undefined) events.push({ id: streamId + SEPARATOR + n, message })
    }
    return Option.some({ streamId, events })
  }

  return {
    append: (streamId, message) => Effect.sync(() => append(streamId, message)),
    replayAfter: (lastEventId) => Effect.sync(() => replayAfter(lastEventId)),
    remove: (streamId) => Effect.sync(() => removeStream(streamId))
  }
}
