/**
 * The Redis connection the stores of this package share: effect's own
 * `Redis` service (`effect/persistence/Redis`), made here from a URL with
 * [node-redis](https://github.com/redis/node-redis) through
 * `@effect/platform-node`'s `NodeRedis`.
 *
 * ```ts
 * const Stores = McpRedisCluster.layer().pipe(Layer.provide(McpRedis.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * The connection belongs to the layer's scope. Building the layer fails with
 * an `McpError` when Redis cannot be reached within `connectTimeout`. Once
 * connected, a dropped connection is re-established with backoff (50 ms
 * doubling to 2 s, forever); meanwhile every command fails at once with a
 * clear error instead of waiting in a queue. Any other `Redis` service
 * (another client library, another runtime) serves the stores as well.
 *
 * @since 0.1.0
 */
import type * as McpError from "@effect-mcp/core/McpError"
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Errors from "./internal/errors.ts"

/**
 * How to reach Redis.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS. */
  readonly url: string
  /** How long the first connection (and each reconnection attempt) may take. Default 5 seconds. */
  readonly connectTimeout?: Duration.Input | undefined
  /** The most connections reserved for blocking reads (`XREAD BLOCK`) at once. Default 50. */
  readonly maxBlockingConnections?: number | undefined
}

const MAX_BACKOFF_MILLIS = 2000

/**
 * The time before reconnection attempt `retries` (from 0): 50 ms doubling
 * to 2 s, with up to 100 ms of jitter.
 *
 * @category constructors
 * @since 0.1.0
 */
export const backoffMillis = (retries: number): number =>
  Math.min(2 ** Math.min(retries, 16) * 50, MAX_BACKOFF_MILLIS) + Math.floor(Math.random() * 100)

/**
 * A `Redis` service on a node-redis client of `options.url`: connected
 * while the layer is built, closed with its scope.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Redis.Redis, McpError.McpError> =>
  Layer.effect(
    Redis.Redis,
    Effect.suspend(() => {
      const connectTimeout = Duration.toMillis(Duration.fromInputUnsafe(options.connectTimeout ?? Duration.seconds(5)))
      let ready = false
      const node = NodeRedis.layer({
        url: options.url,
        // a command sent while the connection is down fails at once, not after the reconnection
        disableOfflineQueue: true,
        socket: {
          connectTimeout,
          // the first connection fails the layer; after it, reconnect forever
          reconnectStrategy: (retries: number, cause: Error) => (ready ? backoffMillis(retries) : cause)
        },
        maxConnections: options.maxBlockingConnections ?? 50
      })
      return Layer.build(node).pipe(
        Effect.map((context) => {
          ready = true
          return Context.get(context, Redis.Redis)
        }),
        Effect.mapError((error) => Errors.fromRedis(`connection to ${Errors.redactUrl(options.url)}`, error.cause))
      )
    })
  )

/**
 * {@link layer} with the URL read from `Config` (by default the
 * `REDIS_URL` environment variable).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerConfig = (
  url: Config.Config<string> = Config.String("REDIS_URL")
): Layer.Layer<Redis.Redis, McpError.McpError | Config.ConfigError> =>
  Layer.unwrap(Effect.map(url, (value) => layer({ url: value })))

/**
 * Answers when Redis answers `PING`: for readiness checks.
 *
 * @category accessors
 * @since 0.1.0
 */
export const ping: Effect.Effect<void, McpError.McpError, Redis.Redis> = Effect.flatMap(
  Redis.Redis,
  (redis) => redis.send("PING").pipe(Effect.asVoid, Errors.mapRedis("PING"))
)
