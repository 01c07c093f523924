/**
 * `effect-mcp serve --redis URL`: the gateway as one replica of many behind
 * a load balancer, sharing on Redis (`@effect-mcp/redis`) what its replicas
 * must (legacy sessions, resumable streams, tasks, list changes, the secret
 * sealing `requestState`), so a retry of a held call or a session's request
 * is served wherever it lands. With `--relay-port`, requests between
 * replicas take the direct HTTP hop (pub/sub stays the fallback). The Redis
 * package is loaded only when asked for.
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpServer from "@effect-mcp/core/McpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as EffectRedis from "effect/persistence/Redis"
import * as Result from "effect/Result"
import * as Failures from "./failures.ts"

/** The flags of a replica. */
export interface Flags {
  readonly redis: Option.Option<string>
  readonly redisPrefix: Option.Option<string>
  readonly replicaId: Option.Option<string>
  readonly relayHost: Option.Option<string>
  readonly relayPort: Option.Option<number>
  readonly relayAdvertise: Option.Option<string>
}

/** A replica's settings, checked. */
export interface Cluster {
  readonly url: string
  readonly prefix: string | undefined
  readonly replicaId: string
  readonly direct: { readonly host?: string; readonly port: number; readonly advertise?: string } | undefined
}

const given = <A>(
  option: Option.Option<A>,
  name: string
): ReadonlyArray<string> => (Option.isSome(option) ? [name] : [])

/** What an id or prefix may hold: it names Redis keys and appears in logs and errors. */
const SAFE = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Checks the flags together: the relay flags and the others need `--redis`;
 * a replica is served over HTTP (not `--serve-stdio`); `undefined` without
 * `--redis`.
 */
export const parse = (flags: Flags, http: boolean): Result.Result<Cluster | undefined, Failures.CliFailure> =>
  Result.gen(function*() {
    const others = [
      ...given(flags.redisPrefix, "--redis-prefix"),
      ...given(flags.replicaId, "--replica-id"),
      ...given(flags.relayHost, "--relay-host"),
      ...given(flags.relayPort, "--relay-port"),
      ...given(flags.relayAdvertise, "--relay-advertise")
    ]
    if (Option.isNone(flags.redis)) {
      if (others.length === 0) return undefined
      return yield* Result.fail(
        Failures.usage(`${others.join(", ")} ${others.length === 1 ? "goes" : "go"} with --redis URL`)
      )
    }
    if (!http) {
      return yield* Result.fail(
        Failures.usage("--redis makes a replica behind a load balancer: serve it with --port, not --serve-stdio")
      )
    }
    const url = flags.redis.value
    const parsed = URL.canParse(url) ? new URL(url) : undefined
    if (parsed === undefined || (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")) {
      return yield* Result.fail(Failures.usage("--redis must be a redis:// or rediss:// URL"))
    }
    for (const [flag, value] of [["--redis-prefix", flags.redisPrefix], ["--replica-id", flags.replicaId]] as const) {
      if (Option.isSome(value) && !SAFE.test(value.value)) {
        return yield* Result.fail(Failures.usage(`${flag} may hold 1 to 128 letters, digits and . _ : - only`))
      }
    }
    const relayFlags = [...given(flags.relayHost, "--relay-host"), ...given(flags.relayAdvertise, "--relay-advertise")]
    if (Option.isNone(flags.relayPort) && relayFlags.length > 0) {
      return yield* Result.fail(
        Failures.usage(`${relayFlags.join(", ")} ${relayFlags.length === 1 ? "goes" : "go"} with --relay-port PORT`)
      )
    }
    let direct: Cluster["direct"]
    if (Option.isSome(flags.relayPort)) {
      const port = flags.relayPort.value
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        return yield* Result.fail(Failures.usage(`--relay-port must be a port number from 0 to 65535, got ${port}`))
      }
      const advertise = Option.getOrUndefined(flags.relayAdvertise)
      if (advertise !== undefined && !(/^https?:\/\//.test(advertise) && URL.canParse(advertise))) {
        return yield* Result.fail(Failures.usage("--relay-advertise must be an http:// or https:// URL"))
      }
      const host = Option.getOrUndefined(flags.relayHost)
      if ((host === "0.0.0.0" || host === "::") && advertise === undefined) {
        return yield* Result.fail(Failures.usage(
          `--relay-host ${host} binds every address: give the address the other replicas reach this one at with --relay-advertise URL`
        ))
      }
      direct = { port, ...(host === undefined ? {} : { host }), ...(advertise === undefined ? {} : { advertise }) }
    }
    return {
      url,
      prefix: Option.getOrUndefined(flags.redisPrefix),
      replicaId: Option.getOrElse(flags.replicaId, () => globalThis.crypto.randomUUID()),
      direct
    }
  })

/** What a replica's readiness probe runs (a Redis `PING`); `undefined` for a lone gateway. */
export const Readiness = Context.Reference<Effect.Effect<void, unknown> | undefined>("effect-mcp/cli/Readiness", {
  defaultValue: () => undefined
})

/**
 * The gateway made by `gateway` (given the shared `requestState` secret)
 * with the stores of a replica laid beside it, for the HTTP server to take
 * the session registry and the event store from.
 */
export const layer = (
  cluster: Cluster,
  gateway: (secret: string) => Layer.Layer<McpServer.McpServer, McpError.McpError>
): Layer.Layer<McpServer.McpServer, McpError.McpError> =>
  Layer.unwrap(Effect.map(Effect.promise(() => import("@effect-mcp/redis")), (Redis) => {
    const prefix = cluster.prefix === undefined ? {} : { prefix: cluster.prefix }
    const stores = Redis.McpRedisCluster.layer({
      ...prefix,
      sessions: { replicaId: cluster.replicaId, ...(cluster.direct === undefined ? {} : { direct: cluster.direct }) }
    }).pipe(Layer.provideMerge(Redis.McpRedis.layer({ url: cluster.url })))
    // ready while Redis answers
    const readiness = Layer.effect(
      Readiness,
      Effect.map(Effect.context<EffectRedis.Redis>(), (context) => Effect.provideContext(Redis.McpRedis.ping, context))
    )
    return Layer.mergeAll(
      Layer.unwrap(Effect.map(Redis.McpRedisCluster.requestStateSecret(prefix), gateway)),
      readiness
    ).pipe(Layer.provideMerge(stores))
  }))
