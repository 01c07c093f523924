/**
 * The table of outgoing requests awaiting a reply: one `Deferred` per request,
 * in a `Ref` holding an immutable `HashMap` keyed by JSON-RPC id. An entry is
 * registered before its request is sent, taken atomically when the reply
 * arrives, removed when the caller is interrupted or times out, and every
 * entry is failed at once when the session closes.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as JsonRpc from "../../JsonRpc.ts"
import type * as McpError from "../../McpError.ts"

/** @internal */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
  /** When it arrived (`Clock` time, in milliseconds). */
  readonly receivedAt: number
}

/** @internal */
export interface Entry {
  readonly method: string
  readonly reply: Deferred.Deferred<JsonRpc.SuccessResponse | JsonRpc.ErrorResponse, McpError.McpError>
  readonly onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined
  /** The idle limit in milliseconds (`Infinity`: none). */
  readonly idle: number
  /** The maximum total in milliseconds (`Infinity`: none). */
  readonly total: number
  /** When the maximum total runs out (`Clock` time). */
  readonly totalDeadline: number
  /** The time of the last sign of life (sending, or a progress notification), for idle timeouts. */
  lastActivity: number
}

/** When the entry times out, given its last sign of life. @internal */
export const deadline = (entry: Entry): number => Math.min(entry.lastActivity + entry.idle, entry.totalDeadline)

/** @internal */
export type Pending = Ref.Ref<HashMap.HashMap<JsonRpc.RequestId, Entry>>

/** @internal */
export const make: Effect.Effect<Pending> = Ref.make(HashMap.empty<JsonRpc.RequestId, Entry>())

/** @internal */
export const register = (pending: Pending, id: JsonRpc.RequestId, entry: Entry): Effect.Effect<void> =>
  Ref.update(pending, HashMap.set(id, entry))

/** Removes and returns the entry of `id`, atomically. */
export const take = (pending: Pending, id: JsonRpc.RequestId): Effect.Effect<Option.Option<Entry>> =>
  Ref.modify(pending, (map) => {
    const entry = HashMap.get(map, id)
    return [entry, Option.isSome(entry) ? HashMap.remove(map, id) : map] as const
  })

/** {@link take}, outside of any fiber (direct delivery). @internal */
export const takeUnsafe = (pending: Pending, id: JsonRpc.RequestId): Entry | undefined => {
  const map = MutableRef.get(pending.ref)
  const entry = HashMap.get(map, id)
  if (Option.isNone(entry)) return undefined
  MutableRef.set(pending.ref, HashMap.remove(map, id))
  return entry.value
}

/** @internal */
export const remove = (pending: Pending, id: JsonRpc.RequestId): Effect.Effect<void> =>
  Ref.update(pending, HashMap.remove(id))

/** @internal */
export const get = (pending: Pending, id: JsonRpc.RequestId): Effect.Effect<Option.Option<Entry>> =>
  Effect.map(Ref.get(pending), HashMap.get(id))

/** @internal */
export const size = (pending: Pending): Effect.Effect<number> => Effect.map(Ref.get(pending), HashMap.size)

/** Empties the table and fails every entry with `error`. */
export const failAll = (pending: Pending, error: McpError.McpError): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.getAndSet(pending, HashMap.empty()),
    (map) => Effect.forEach(HashMap.values(map), (entry) => Deferred.fail(entry.reply, error), { discard: true })
  )
