/**
 * The Streamable HTTP event store (resumability) on Redis Streams, shared by
 * every replica: a client whose SSE connection dropped resumes with
 * `Last-Event-ID` from what Redis kept, on whichever replica serves it.
 *
 * ```ts
 * const Http = NodeMcpHttpServer.layer().pipe(
 *   Layer.provide(McpRedisEventStore.layer({ maxEventsPerStream: 500 })),
 *   Layer.provide(McpRedis.layer({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * Each SSE stream is one Redis stream, `${prefix}events:${stream id}`, bounded
 * in events (`maxEventsPerStream`, trimmed exactly on each append) and in
 * time (`ttl` after its last append). Event ids are `${stream id}:${Redis
 * entry id}` (the stream id percent-encoded): printable ASCII, ordered within
 * a stream whichever replica appends. An id that was trimmed away, expired
 * or removed, or that this store could not have made, is unknown: the client
 * gets a `400` and starts over rather than a replay with gaps. Redis
 * failures are `McpError`s naming the command (`remove` logs them).
 *
 * @since 0.1.0
 */
import * as McpHttpServer from "@effect-mcp/core/McpHttpServer"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import * as Internal from "./internal/eventStore.ts"

/**
 * Where and how long events are kept.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The prefix of every key. Default `"mcp:"`. */
  readonly prefix?: string | undefined
  /**
   * Events kept per stream (priming events count): the ids of the last this
   * many can be resumed. Default 1000.
   */
  readonly maxEventsPerStream?: number | undefined
  /**
   * A stream is forgotten this long after its last event (Redis' own key
   * expiry). Default 1 hour; `Duration.infinity`: kept until removed.
   */
  readonly ttl?: Duration.Input | undefined
}

/**
 * An event store on the `Redis` service.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  options?: Options
): Effect.Effect<McpHttpServer.EventStoreShape, never, Redis.Redis> =>
  Internal.make({
    prefix: options?.prefix ?? "mcp:",
    maxEvents: Math.max(1, Math.floor(options?.maxEventsPerStream ?? 1000)),
    ttlMillis: ttlMillis(options?.ttl)
  })

// 0: no expiry
const ttlMillis = (ttl: Duration.Input | undefined): number => {
  const millis = Duration.toMillis(Duration.fromInputUnsafe(ttl ?? Duration.hours(1)))
  return Number.isFinite(millis) ? Math.max(1, Math.ceil(millis)) : 0
}

/**
 * {@link make} as the `McpHttpServer.EventStore` service, which the
 * Streamable HTTP route picks up.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<McpHttpServer.EventStore, never, Redis.Redis> =>
  Layer.effect(McpHttpServer.EventStore, make(options))
