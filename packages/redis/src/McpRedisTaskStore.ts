/**
 * The task store (`McpTaskStore`) on Redis, for servers running as replicas:
 * a task's status, result and input can be read and answered through any
 * replica, and a cancel answered by one reaches the replica running the task
 * (which watches its `changes`, carried by Redis pub/sub).
 *
 * ```ts
 * const Server = McpServer.layer(info, tools).pipe(
 *   Layer.provide(McpRedisTaskStore.layer()),
 *   Layer.provide(McpRedis.layer({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * It behaves as `McpTaskStore.layerMemory`, except:
 * - `capacity` bounds the whole store (every replica on the prefix), 100,000
 *   by default; at the limit up to 1,000 expired tasks go, then the oldest
 *   finished ones.
 * - Expiry is decided on the `Clock` of the process looking, as in memory;
 *   Redis also deletes a record a minute after its expiry.
 * - `update` writes only if nobody wrote since it read, else reads again
 *   (32 attempts, then an `McpError`): `f` may run more than once.
 * - `list` cursors are creation numbers: pages do not shift as tasks go.
 * - `changes` sees writes from every replica (one subscription per store);
 *   what a reconnection lost is re-read on resubscription and every
 *   `resyncInterval`.
 * - Its scripts build keys from the prefix: one Redis, not a cluster.
 *
 * @since 0.1.0
 */
import * as McpTaskStore from "@effect-mcp/core/McpTaskStore"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import * as Store from "./internal/taskStore.ts"

/**
 * Options of the Redis task store.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** Prefix of every key and channel. Default `"mcp:"`. */
  readonly prefix?: string | undefined
  /**
   * The most tasks in the store, across every replica sharing the prefix.
   * At the limit expired tasks go first, then the oldest finished ones; when
   * every task is still running, `create` fails. Default 100,000.
   */
  readonly capacity?: number | undefined
  /** How often the tasks watched through `changes` are re-read, against lost messages. Default 5 seconds. */
  readonly resyncInterval?: Duration.Input | undefined
}

/**
 * The store on the `Redis` in context; its subscription lasts as long as
 * the scope.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (options?: Options) => Effect.Effect<McpTaskStore.Service, never, Redis.Redis | Scope.Scope> =
  Store.make

/**
 * The store as the server's `McpTaskStore`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<McpTaskStore.McpTaskStore, never, Redis.Redis> =>
  Layer.effect(McpTaskStore.McpTaskStore, make(options))
