/**
 * Replicas of the Redis session registry in one process, for its tests
 * (`McpRedisSessions.test.ts`, `McpRedisSessions.direct.test.ts`): each on a
 * connection of its own, in a scope the test can close, with a Redis that
 * can "die" like a SIGKILLed process; plus the records, requests and bodies
 * the tests forward.
 */
import { McpSessionRegistry } from "@effect-mcp/core"
import { Context, Deferred, Effect, Exit, Layer, Schedule, Scope, Stream } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as McpRedis from "../../src/McpRedis.ts"
import * as McpRedisSessions from "../../src/McpRedisSessions.ts"

export const connect = (url: string) =>
  Effect.map(
    Layer.build(McpRedis.layer({ url, connectTimeout: "2 seconds" })),
    (context) => Context.get(context, Redis.Redis)
  )

export const timing = { heartbeatInterval: "100 millis", heartbeatTtl: "300 millis", prefix: "test:" } as const

/**
 * A Redis service that can "die" like a SIGKILLed process: from `kill` on,
 * every command fails, so the heartbeat stops, nothing more is published and
 * nothing is cleaned up (the heartbeat key is left to expire).
 */
export const killable = (redis: Redis.Redis["Service"]) => {
  let dead = false
  const killed = Effect.fail(new Redis.RedisError({ cause: new Error("killed") }))
  const service: Redis.Redis["Service"] = {
    send: <A>(command: string, ...args: ReadonlyArray<string>) =>
      Effect.suspend(() => (dead ? killed : redis.send<A>(command, ...args))),
    eval: (script) => (...params) => Effect.suspend(() => (dead ? killed : redis.eval(script)(...params))),
    subscribe: redis.subscribe,
    reserve: redis.reserve
  }
  return {
    redis: service,
    kill: Effect.sync(() => {
      dead = true
    })
  }
}

/** A replica: a registry on a connection of its own, in a scope the test can close. */
export const replica = (url: string, options: McpRedisSessions.Options = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const connection = yield* connect(url).pipe(Scope.provide(scope))
    const { kill, redis } = killable(connection)
    const context = yield* Layer.build(McpRedisSessions.layer({ ...timing, ...options })).pipe(
      Effect.provideService(Redis.Redis, redis),
      Scope.provide(scope)
    )
    const registry = Context.get(context, McpSessionRegistry.McpSessionRegistry)
    return { registry, redis: connection, kill, close: Scope.close(scope, Exit.void), scope }
  })

export const record = (id: string, owner: string): McpSessionRegistry.SessionRecord => ({
  id,
  owner,
  principal: "alice",
  initialize: { protocolVersion: "2025-06-18", capabilities: { roots: {} }, clientInfo: { name: "c", version: "1" } },
  protocolVersion: "2025-06-18"
})

export const request: McpSessionRegistry.ForwardedRequest = {
  method: "POST",
  url: "/mcp?x=1",
  headers: { "content-type": "application/json", "mcp-session-id": "s1" },
  body: new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }))
}

export const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
export const bytes = (value: string) => new TextEncoder().encode(value)

/** A body that sends "first" and then nothing, never ending. */
export const endless = Stream.concat(Stream.make(bytes("first")), Stream.never)

/** Serves every forwarded request with `endless`; the deferred completes when a handler's scope closes. */
export const serveEndless = (registry: McpSessionRegistry.Service) =>
  Effect.gen(function*() {
    const handlerClosed = yield* Deferred.make<void>()
    yield* registry.serve(() =>
      Effect.gen(function*() {
        yield* Effect.addFinalizer(() => Deferred.succeed(handlerClosed, undefined))
        return { status: 200, headers: {}, body: endless }
      })
    )
    return handlerClosed
  })

/** Polls until `check` holds (for what Redis does on its own time: expiry, disconnections). */
export const eventually = <E>(check: Effect.Effect<boolean, E>, what: string) =>
  check.pipe(
    Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail(new Error(`not yet: ${what}`)))),
    Effect.retry({ times: 100, schedule: Schedule.spaced("20 millis") })
  )

/** How many times Redis ran `PUBLISH` so far (`INFO commandstats`). */
export const published = (redis: Redis.Redis["Service"]) =>
  Effect.map(
    redis.send<string>("INFO", "commandstats"),
    (info) => Number(/cmdstat_publish:calls=(\d+)/.exec(info)?.[1] ?? 0)
  )
