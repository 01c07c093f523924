/**
 * `McpChangeBus` on Redis pub/sub: list-changed and resource-updated news
 * shared by the replicas of a server, on one channel, `${prefix}changes`.
 *
 * ```ts
 * const Bus = McpRedisChangeBus.layer().pipe(Layer.provide(McpRedis.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * The layer holds one subscription for its life, shared by every consumer
 * of `changes`. A replica never hears its own changes; anything on the
 * channel that is not a change from another replica is ignored. Pub/sub
 * delivers at most once: a change published while a replica's subscription
 * reconnects is lost to that replica.
 *
 * @since 0.1.0
 */
import * as McpChangeBus from "@effect-mcp/core/McpChangeBus"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import * as internal from "./internal/changeBus.ts"

/**
 * The options of the Redis change bus.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** Prefix of the channel. Default `"mcp:"`. */
  readonly prefix?: string | undefined
}

/**
 * The change bus of one replica.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<McpChangeBus.McpChangeBus, never, Redis.Redis> =>
  Layer.effect(McpChangeBus.McpChangeBus, internal.make(options))
