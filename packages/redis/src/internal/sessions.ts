/**
 * The Redis session registry: records and liveness (`sessionsStore.ts`)
 * plus the request relay (`relay.ts`).
 *
 * @internal
 */
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import type { Options } from "../McpRedisSessions.ts"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import * as Relay from "./relay.ts"
import * as Store from "./sessionsStore.ts"


const millis = (input: Duration.Input | undefined, fallback: Duration.Input): number =>
  Math.max(1, Math.round(Duration.toMillis(Duration.fromInputUnsafe(input ?? fallback))))

/** @internal */
export const make = (
  options: Options = {}
): Effect.Effect<McpSessionRegistry.Service, never, Redis.Redis | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const prefix = options.prefix ?? "mcp:"
    const replicaId = options.replicaId ?? globalThis.crypto.randomUUID()
    const heartbeatIntervalMillis = millis(options.heartbeatInterval, Duration.seconds(1))
    const store = yield* Store.make(redis, {
      prefix,
      replicaId,
      heartbeatIntervalMillis,
      heartbeatTtlMillis: millis(options.heartbeatTtl, Duration.seconds(3)),
      sessionTtlMillis: millis(options.sessionTtl, Duration.minutes(35))
    })
    const relay = yield* Relay.make(redis, {
      prefix,
      replicaId,
      heartbeatIntervalMillis,
      forwardTimeoutMillis: millis(options.forwardTimeout, Duration.infinity),
      isLive: store.isLive
    })
    return {
      replicaId,
      register: store.register,
      lookup: store.lookup,
      claim: store.claim,
      touch: store.touch,
      release: store.release,
      remove: store.remove,
      forward: relay.forward,
      serve: relay.serve
    }
  })
