/**
 * The table of outgoing requests awaiting a reply: one `Deferred` per request,
 * in a `Ref` holding a `Map` keyed by JSON-RPC id. An entry is
 * registered before its request is sent, taken atomically when the reply
 * arrives, removed when the caller is interrupted or times out, and every
 * entry is failed at once when the session closes.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
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
export type Pending = Ref.Ref<Map<JsonRpc.RequestId, Entry>>

// One map per session, changed in place: each operation below is synchronous,
// so it is atomic (JavaScript runs one fiber at a time), and a session with
// many requests in flight allocates nothing per request for its table.

/** @internal */
export const make: Effect.Effect<Pending> = Effect.suspend(() => Ref.make(new Map<JsonRpc.RequestId, Entry>()))

/** @internal */
export const register = (pending: Pending, id: JsonRpc.RequestId, entry: Entry): Effect.Effect<void> =>
  Effect.sync(() => {
    Ref.getUnsafe(pending).set(id, entry)
  })

/** Removes and returns the entry of `id`, atomically. */
export const take = (pending: Pending, id: JsonRpc.RequestId): Effect.Effect<Option.Option<Entry>> =>
  Effect.sync(() => Option.fromUndefinedOr(takeUnsafe(pending, id)))

/** {@link take}, outside of any fiber (direct delivery). @internal */
export const takeUnsafe = (pending: Pending, id: JsonRpc.RequestId): Entry | undefined => {
  const map = Ref.getUnsafe(pending)
  const entry = map.get(id)
  if (entry !== undefined) map.delete(id)
  return entry
}

/** @internal */
export const remove = (pending: Pending, id: JsonRpc.RequestId): Effect.Effect<void> =>
  Effect.sync(() => {
    Ref.getUnsafe(pending).delete(id)
  })

/** @internal */
export const get = (pending: Pending, id: JsonRpc.RequestId): Effect.Effect<Option.Option<Entry>> =>
  Effect.sync(() => Option.fromUndefinedOr(Ref.getUnsafe(pending).get(id)))

/** @internal */
export const size = (pending: Pending): Effect.Effect<number> => Effect.sync(() => Ref.getUnsafe(pending).size)

/** Empties the table and fails every entry with `error`. */
export const failAll = (pending: Pending, error: McpError.McpError): Effect.Effect<void> =>
  Effect.suspend(() => {
    const map = Ref.getUnsafe(pending)
    const entries = Array.from(map.values())
    map.clear()
    return Effect.forEach(entries, (entry) => Deferred.fail(entry.reply, error), { discard: true })
  })
