/**
 * Session records and replica liveness in Redis.
 *
 * - `${prefix}sessions:${id}`: a hash (`owner`, `principal`, `initialize` as
 *   JSON, `protocolVersion`) that expires `sessionTtl` after it was last
 *   written or touched.
 * - `${prefix}replicas:${replicaId}`: the replica's heartbeat, set every
 *   `heartbeatInterval` to expire after `heartbeatTtl`, deleted when the
 *   replica closes. Its value is `"1"`, or the address of the replica's
 *   direct hop (`directServer.ts`); liveness only asks whether it exists.
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Errors from "./errors.ts"

/** @internal */
export interface StoreOptions {
  readonly prefix: string
  readonly replicaId: string
  readonly heartbeatIntervalMillis: number
  readonly heartbeatTtlMillis: number
  readonly sessionTtlMillis: number
  /** The heartbeat's value: the direct hop's address. Default `"1"`. */
  readonly heartbeatValue?: string | undefined
}

/** @internal */
export type Store =
  & Pick<
    McpSessionRegistry.Service,
    "replicaId" | "register" | "lookup" | "claim" | "touch" | "release" | "remove"
  >
  & {
    /** Whether `replicaId` keeps its heartbeat (or is this replica). */
    readonly isLive: (replicaId: string) => Effect.Effect<boolean, McpError.McpError>
  }

const registerScript = Redis.script(
  (
    key: string,
    owner: string,
    initialize: string,
    protocolVersion: string,
    principal: string | undefined,
    ttl: number,
    replay: string
  ) => [
    key,
    owner,
    initialize,
    protocolVersion,
    principal === undefined ? "0" : "1",
    principal ?? "",
    ttl,
    replay
  ],
  {
    numberOfKeys: 1,
    lua: `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'initialize', ARGV[2], 'protocolVersion', ARGV[3])
if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'principal', ARGV[5]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'replay', ARGV[7]) end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1`
  }
).withReturnType<number>()

/** Sets the owner to `to` if it is `from`: 1 if it did. */
const swapOwnerScript = Redis.script(
  (key: string, from: string, to: string) => [key, from, to],
  {
    numberOfKeys: 1,
    lua: `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'owner', ARGV[2])
  return 1
end
return 0`
  }
).withReturnType<number>()

/**
 * The record and, in the same round trip, whether its owner keeps its
 * heartbeat (`live`: "1" or "0"), under the heartbeat key prefix `ARGV[1]`.
 */
const lookupScript = Redis.script(
  (key: string, heartbeatPrefix: string) => [key, heartbeatPrefix],
  {
    numberOfKeys: 1,
    lua: `
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return fields end
local owner = redis.call('HGET', KEYS[1], 'owner')
local live = 0
if owner and owner ~= '' then live = redis.call('EXISTS', ARGV[1] .. owner) end
table.insert(fields, 'live')
table.insert(fields, tostring(live))
return fields`
  }
).withReturnType<unknown>()

const StoredRecord = Schema.Struct({
  owner: Schema.String,
  principal: Schema.optionalKey(Schema.String),
  initialize: Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown)),
  protocolVersion: Schema.String,
  replay: Schema.optionalKey(Schema.fromJsonString(Schema.Array(Schema.Struct({
    method: Schema.String,
    params: Schema.Record(Schema.String, Schema.Unknown)
  }))))
})
const decodeStored = Schema.decodeUnknownOption(StoredRecord)

/** `HGETALL`'s answer as an object: a flat array in RESP2, a map in RESP3. */
const fields = (reply: unknown): Record<string, unknown> => {
  if (Array.isArray(reply)) {
    const out: Record<string, unknown> = {}
    for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = reply[i + 1]
    return out
  }
  if (reply instanceof Map) return Object.fromEntries(reply)
  return typeof reply === "object" && reply !== null ? { ...reply } : {}
}

/**
 * Whether a replica keeps its heartbeat (`EXISTS`): this one always does,
 * `""` (a released session's owner) never.
 *
 * @internal
 */
export const liveness = (
  redis: Redis.Redis["Service"],
  prefix: string,
  replicaId: string
) =>
(replica: string): Effect.Effect<boolean, McpError.McpError> =>
  replica === replicaId
    ? Effect.succeed(true)
    : replica === ""
    ? Effect.succeed(false)
    : redis.send<number>("EXISTS", `${prefix}replicas:${replica}`).pipe(
      Effect.map((count) => Number(count) > 0),
      Errors.mapRedis("EXISTS")
    )

/**
 * The store, with this replica's heartbeat kept for the life of the scope
 * and deleted when it closes.
 *
 * @internal
 */
export const make = (
  redis: Redis.Redis["Service"],
  options: StoreOptions
): Effect.Effect<Store, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { prefix, replicaId } = options
    const sessionKey = (id: string) => `${prefix}sessions:${id}`
    const heartbeatKey = (replica: string) => `${prefix}replicas:${replica}`
    const ttl = String(options.sessionTtlMillis)

    // the deletion is registered before the heartbeat fiber, so it runs after the fiber stops
    yield* Effect.addFinalizer(() => redis.send("DEL", heartbeatKey(replicaId)).pipe(Effect.ignore))
    // a failure is logged once, until the heartbeat is written again
    let failing = false
    const beat = redis.send(
      "SET",
      heartbeatKey(replicaId),
      options.heartbeatValue ?? "1",
      "PX",
      String(options.heartbeatTtlMillis)
    ).pipe(
      Effect.tap(() => Effect.sync(() => (failing = false))),
      Effect.tapError((error) =>
        failing ? Effect.void : Effect.andThen(
          Effect.sync(() => (failing = true)),
          Effect.logWarning("Redis heartbeat failed", error.cause)
        )
      ),
      Effect.ignore
    )
    yield* beat
    // repeats for the life of the scope
    yield* beat.pipe(
      Effect.delay(options.heartbeatIntervalMillis),
      Effect.forever,
      Effect.forkScoped
    )

    const isLive = liveness(redis, prefix, replicaId)

    const register = (record: McpSessionRegistry.SessionRecord) =>
      redis.eval(registerScript)(
        sessionKey(record.id),
        record.owner,
        JSON.stringify(record.initialize),
        record.protocolVersion,
        record.principal,
        options.sessionTtlMillis,
        record.replay === undefined || record.replay.length === 0 ? "" : JSON.stringify(record.replay)
      ).pipe(Effect.asVoid, Errors.mapRedis("session register"))

    const lookup = (id: string) =>
      Effect.gen(function*() {
        // the record and its owner's heartbeat in one round trip
        const reply = fields(
          yield* redis.eval(lookupScript)(sessionKey(id), heartbeatKey("")).pipe(Errors.mapRedis("session lookup"))
        )
        const stored = decodeStored(reply)
        if (Option.isNone(stored)) return Option.none<McpSessionRegistry.Lookup>()
        const { initialize, owner, principal, protocolVersion, replay } = stored.value
        const record: McpSessionRegistry.SessionRecord = { id, owner, principal, initialize, protocolVersion, replay }
        return Option.some<McpSessionRegistry.Lookup>({
          record,
          live: owner === replicaId || String(reply.live) === "1"
        })
      })

    const claim = (id: string, from: string) =>
      Effect.gen(function*() {
        const swapped = yield* redis.eval(swapOwnerScript)(sessionKey(id), from, replicaId).pipe(
          Errors.mapRedis("session claim")
        )
        if (Number(swapped) !== 1) return false
        yield* touch(id)
        return true
      })

    const touch = (id: string) =>
      redis.send("PEXPIRE", sessionKey(id), ttl).pipe(Effect.asVoid, Errors.mapRedis("session touch"))

    // only while this replica owns it: a replica that took the session over keeps it
    const release = (id: string) =>
      redis.eval(swapOwnerScript)(sessionKey(id), replicaId, "").pipe(Effect.asVoid, Errors.mapRedis("session release"))

    const remove = (id: string) =>
      redis.send("DEL", sessionKey(id)).pipe(Effect.asVoid, Errors.mapRedis("session remove"))

    return { replicaId, register, lookup, claim, touch, release, remove, isLive }
  })
