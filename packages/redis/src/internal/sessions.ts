/**
 * The Redis session registry: records and liveness (`sessionsStore.ts`)
 * plus the request relay: on pub/sub (`relay.ts`) and, with `direct`,
 * straight to the owner over HTTP (`directServer.ts`, `directClient.ts`),
 * pub/sub being then the fallback.
 *
 * @internal
 */
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import type { Options } from "../McpRedisSessions.ts"
import * as DirectProtocol from "./directProtocol.ts"
import * as Relay from "./relay.ts"
import * as Store from "./sessionsStore.ts"

const millis = (input: Duration.Input | undefined, fallback: Duration.Input): number =>
  Math.max(1, Math.round(Duration.toMillis(Duration.fromInputUnsafe(input ?? fallback))))

// loaded only when the hop is used: the HTTP server and client come with it
const loadServer = Effect.promise(() => import("./directServer.ts"))
const loadClient = Effect.promise(() => import("./directClient.ts"))

/** @internal */
export const make = (
  options: Options = {}
): Effect.Effect<McpSessionRegistry.Service, never, Redis.Redis | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const prefix = options.prefix ?? "mcp:"
    const replicaId = options.replicaId ?? globalThis.crypto.randomUUID()
    const heartbeatIntervalMillis = millis(options.heartbeatInterval, Duration.seconds(1))
    const heartbeatTtlMillis = millis(options.heartbeatTtl, Duration.seconds(3))
    const forwardTimeoutMillis = millis(options.forwardTimeout, Duration.infinity)
    const isLive = Store.liveness(redis, prefix, replicaId)
    const handlers = Relay.makeHandlers()
    const direct = options.direct

    // the hop listens before the heartbeat advertises it
    const hop = direct === undefined ? undefined : yield* Effect.gen(function*() {
      const host = direct.host ?? "127.0.0.1"
      if (DirectProtocol.isWildcard(host) && direct.advertise === undefined) {
        return yield* Effect.die(
          new Error(`McpRedisSessions: direct.host ${host} binds every interface: set direct.advertise`)
        )
      }
      const secret = yield* DirectProtocol.secret(redis, prefix, direct.secret)
      // the shared secret is read at once when it can be; else when first needed
      yield* Effect.ignore(secret)
      const DirectServer = yield* loadServer
      const port = yield* DirectServer.listen({
        host,
        port: direct.port ?? 0,
        replicaId,
        secret,
        handlers,
        heartbeatIntervalMillis,
        isLive
      })
      return { secret, address: DirectProtocol.address(host, port, direct.advertise) }
    })

    const store = yield* Store.make(redis, {
      prefix,
      replicaId,
      heartbeatIntervalMillis,
      heartbeatTtlMillis,
      sessionTtlMillis: millis(options.sessionTtl, Duration.minutes(35)),
      heartbeatValue: hop?.address
    })
    const relay = yield* Relay.make(redis, {
      prefix,
      replicaId,
      heartbeatIntervalMillis,
      forwardTimeoutMillis,
      isLive,
      handlers
    })
    const forward = hop === undefined ?
      relay.forward :
      yield* Effect.flatMap(loadClient, (DirectClient) =>
        DirectClient.make(redis, {
          prefix,
          replicaId,
          heartbeatIntervalMillis,
          heartbeatTtlMillis,
          forwardTimeoutMillis,
          secret: hop.secret,
          isLive,
          relay: relay.forward
        }))
    return {
      replicaId,
      isLive,
      register: store.register,
      lookup: store.lookup,
      claim: store.claim,
      touch: store.touch,
      release: store.release,
      remove: store.remove,
      forward,
      serve: relay.serve
    }
  })
