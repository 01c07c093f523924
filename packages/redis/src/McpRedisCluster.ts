/**
 * Everything a replica of a clustered server shares on Redis, in one layer:
 * the legacy session registry (`McpRedisSessions`), the resumable streams'
 * event store (`McpRedisEventStore`), the task store (`McpRedisTaskStore`)
 * and the change bus (`McpRedisChangeBus`); plus the secret that seals
 * 2026-07-28 `requestState`, the same on every replica.
 *
 * ```ts
 * const Stores = McpRedisCluster.layer().pipe(Layer.provideMerge(McpRedis.layer({ url: process.env.REDIS_URL! })))
 * const Server = Layer.unwrap(Effect.map(McpRedisCluster.requestStateSecret(), (secret) =>
 *   McpServer.layer({ name: "app", version: "1.0.0", requestState: { secret } }, ...tools)))
 * NodeMcpHttpServer.layer({ port: 3000 }).pipe(Layer.provide(Server), Layer.provide(Stores))
 * ```
 *
 * `McpServer` picks up the task store and the change bus from its context,
 * `McpHttpServer.layerRoute` (and `NodeMcpHttpServer.layer`) the registry
 * and the event store: provide this layer to both.
 *
 * @since 0.1.0
 */
import type * as McpChangeBus from "@effect-mcp/core/McpChangeBus"
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpHttpServer from "@effect-mcp/core/McpHttpServer"
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import type * as McpTaskStore from "@effect-mcp/core/McpTaskStore"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redis from "effect/persistence/Redis"
import * as Errors from "./internal/errors.ts"
import * as McpRedisChangeBus from "./McpRedisChangeBus.ts"
import * as McpRedisEventStore from "./McpRedisEventStore.ts"
import * as McpRedisSessions from "./McpRedisSessions.ts"
import * as McpRedisTaskStore from "./McpRedisTaskStore.ts"

/**
 * The options of each store; `prefix` applies to all unless a store sets its own.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** Prefix of every key and channel. Default `"mcp:"`. */
  readonly prefix?: string | undefined
  readonly sessions?: McpRedisSessions.Options | undefined
  readonly events?: McpRedisEventStore.Options | undefined
  readonly tasks?: McpRedisTaskStore.Options | undefined
}

/**
 * The services a replica shares.
 *
 * @category models
 * @since 0.1.0
 */
export type Services =
  | McpSessionRegistry.McpSessionRegistry
  | McpHttpServer.EventStore
  | McpTaskStore.McpTaskStore
  | McpChangeBus.McpChangeBus

/**
 * The four stores on the `Redis` in context.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<Services, never, Redis.Redis> => {
  const prefix = options?.prefix === undefined ? {} : { prefix: options.prefix }
  return Layer.mergeAll(
    McpRedisSessions.layer({ ...prefix, ...options?.sessions }),
    McpRedisEventStore.layer({ ...prefix, ...options?.events }),
    McpRedisTaskStore.layer({ ...prefix, ...options?.tasks }),
    McpRedisChangeBus.layer(prefix)
  )
}

/**
 * The secret that seals `requestState` (`McpServer.Options.requestState`),
 * the same for every replica: `MCP_REQUEST_STATE_SECRET` when configured
 * (give every replica the same), else one made by the first replica and kept
 * in Redis (`${prefix}secret:request-state`, 32 random bytes). Whoever reads
 * Redis can then forge `requestState`; as they can read every session and
 * task anyway, configure the secret when Redis is less trusted than that.
 *
 * @category accessors
 * @since 0.1.0
 */
export const requestStateSecret = (
  options?: { readonly prefix?: string | undefined }
): Effect.Effect<string, McpError.McpError, Redis.Redis> =>
  Effect.gen(function*() {
    const configured = yield* Config.option(Config.String("MCP_REQUEST_STATE_SECRET")).pipe(
      Effect.orElseSucceed(Option.none)
    )
    if (Option.isSome(configured) && configured.value !== "") return configured.value
    const redis = yield* Redis.Redis
    const key = `${options?.prefix ?? "mcp:"}secret:request-state`
    const candidate = Base64Url.encode(globalThis.crypto.getRandomValues(new Uint8Array(32)))
    // the first replica's secret wins; the others read it
    const secret = yield* redis.send("SET", key, candidate, "NX").pipe(
      Effect.andThen(redis.send<string | null>("GET", key)),
      Errors.mapRedis("read of the request-state secret")
    )
    return secret ?? candidate
  })
