/**
 * Which resource URIs have subscribers (legacy sessions' `resources/subscribe`,
 * `subscriptions/listen` streams naming them), for a server told when a URI
 * gains its first and loses its last (`McpServer.Options.onSubscriptions`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as McpError from "../../McpError.ts"

/** @internal */
export interface Demand {
  readonly hook: ((uri: string, subscribed: boolean) => Effect.Effect<void, McpError.McpError>) | undefined
  readonly counts: Map<string, number>
}

/** @internal */
export const make = (hook: Demand["hook"]): Demand => ({ hook, counts: new Map() })

/** One subscriber more; the first is told to the hook, and its failure undoes it. @internal */
export const acquire = (demand: Demand, uri: string): Effect.Effect<void, McpError.McpError> =>
  Effect.suspend(() => {
    if (demand.hook === undefined) return Effect.void
    const count = demand.counts.get(uri) ?? 0
    demand.counts.set(uri, count + 1)
    if (count > 0) return Effect.void
    return Effect.tapError(demand.hook(uri, true), () => Effect.sync(() => release_(demand, uri)))
  })

const release_ = (demand: Demand, uri: string): boolean => {
  const count = demand.counts.get(uri) ?? 0
  if (count <= 1) demand.counts.delete(uri)
  else demand.counts.set(uri, count - 1)
  return count === 1
}

/** One subscriber less; the last is told to the hook (its failure is logged). @internal */
export const release = (demand: Demand, uri: string): Effect.Effect<void> =>
  Effect.suspend(() =>
    demand.hook === undefined || !release_(demand, uri)
      ? Effect.void
      : Effect.catchCause(demand.hook(uri, false), (cause) =>
        Effect.logWarning(`unsubscribing from ${uri} failed`, cause))
  )
