/**
 * The in-memory event store: per stream, the messages in order; an event id
 * is `<stream id>:<sequence>`. Bounded per stream (oldest dropped) and in
 * number of streams (oldest stream dropped first).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpHttpServer from "../../../McpHttpServer.ts"

interface Log {
  /** The sequence number of `events[0]`. */
  base: number
  readonly events: Array<JsonRpc.Message | undefined>
}

const SEPARATOR = ":"

/** @internal */
export const makeMemory = (options?: McpHttpServer.EventStoreMemoryOptions): McpHttpServer.EventStoreShape => {
  const maxEvents = Math.max(1, options?.maxEventsPerStream ?? 1000)
  const maxStreams = Math.max(1, options?.maxStreams ?? 10_000)
  // insertion-ordered: the first key is the oldest stream
  const streams = new Map<string, Log>()

  const append = (streamId: string, message: JsonRpc.Message | undefined): string => {
    let log = streams.get(streamId)
    if (log === undefined) {
      log = { base: 0, events: [] }
      streams.set(streamId, log)
      if (streams.size > maxStreams) {
        const oldest = streams.keys().next().value
        if (oldest !== undefined) streams.delete(oldest)
      }
    }
    const sequence = log.base + log.events.length
    log.events.push(message)
    if (log.events.length > maxEvents) {
      log.events.shift()
      log.base++
    }
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
    remove: (streamId) => Effect.sync(() => void streams.delete(streamId))
  }
}
