/**
 * Session registries of several replicas in one process, for tests of the
 * HTTP route's cluster logic without Redis: records in a map, a replica is
 * alive until `kill`ed (or its registry's scope closes), and a forwarded
 * request calls the owner's handler directly, in a scope of its own that the
 * forwarder's scope closes.
 */
import { Effect, Exit, Option, Scope } from "effect"
import * as McpError from "../../src/McpError.ts"
import type * as McpSessionRegistry from "../../src/McpSessionRegistry.ts"

type Handle = (
  request: McpSessionRegistry.ForwardedRequest
) => Effect.Effect<McpSessionRegistry.ForwardedResponse, never, Scope.Scope>

export const makeHub = () => {
  const records = new Map<string, McpSessionRegistry.SessionRecord>()
  const alive = new Set<string>()
  const handlers = new Map<string, Handle>()
  let forwarded = 0
  // replicas that take a forwarded request and die before answering it
  const dying = new Set<string>()
  // replicas just killed: the next forwarded request meets a connection reset, the ones after nobody
  const resetting = new Set<string>()
  // Redis down: every lookup fails
  let down = false

  const replica = (replicaId: string): Effect.Effect<McpSessionRegistry.Service, never, Scope.Scope> =>
    Effect.gen(function*() {
      alive.add(replicaId)
      yield* Effect.addFinalizer(() => Effect.sync(() => kill(replicaId)))
      const update = (id: string, f: (record: McpSessionRegistry.SessionRecord) => McpSessionRegistry.SessionRecord) =>
        Effect.sync(() => {
          const record = records.get(id)
          if (record !== undefined) records.set(id, f(record))
        })
      return {
        replicaId,
        register: (record) => Effect.sync(() => void records.set(record.id, record)),
        lookup: (id) =>
          down ? Effect.fail(McpError.transport("Redis HGETALL failed: connection refused")) : Effect.sync(() => {
            const record = records.get(id)
            return record === undefined
              ? Option.none()
              : Option.some({ record, live: record.owner === replicaId || alive.has(record.owner) })
          }),
        claim: (id, from) =>
          Effect.sync(() => {
            const record = records.get(id)
            if (record === undefined || record.owner !== from) return false
            records.set(id, { ...record, owner: replicaId })
            return true
          }),
        isLive: (id) => Effect.sync(() => id === replicaId || alive.has(id)),
        touch: () => Effect.void,
        release: (id) => update(id, (record) => ({ ...record, owner: "" })),
        remove: (id) => Effect.sync(() => void records.delete(id)),
        forward: (owner, request) =>
          Effect.gen(function*() {
            const handle = handlers.get(owner)
            if (handle === undefined) return yield* Effect.fail(McpError.serverUnavailable(owner, "not listening"))
            if (dying.has(owner)) return yield* Effect.fail(McpError.transport(`replica ${owner} is gone`))
            if (resetting.delete(owner)) {
              kill(owner)
              return yield* Effect.fail(
                McpError.transport(`the connection to replica ${owner} failed: read ECONNRESET`)
              )
            }
            forwarded++
            const scope = yield* Scope.make()
            yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
            return yield* Scope.provide(handle(request), scope)
          }),
        serve: (handle) =>
          Effect.gen(function*() {
            handlers.set(replicaId, handle)
            yield* Effect.addFinalizer(() => Effect.sync(() => void handlers.delete(replicaId)))
          })
      } satisfies McpSessionRegistry.Service
    })

  /** The replica stops answering (as if SIGKILLed): its heartbeat and its forwarded requests are gone. */
  const kill = (replicaId: string) => {
    alive.delete(replicaId)
    handlers.delete(replicaId)
  }

  /** The replica no longer takes forwarded requests, though its heartbeat has not lapsed yet. */
  const silence = (replicaId: string) => {
    handlers.delete(replicaId)
  }

  return {
    replica,
    kill,
    silence,
    records,
    forwardedCount: () => forwarded,
    /** The replica takes the next forwarded requests and dies before it answers them. */
    dieWhileServing: (replicaId: string) => void dying.add(replicaId),
    /** The replica is killed while a pooled connection to it looks open: the next forward is reset. */
    killWithReset: (replicaId: string) => void resetting.add(replicaId),
    setDown: (value: boolean) => {
      down = value
    }
  }
}
