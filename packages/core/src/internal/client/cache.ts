/**
 * A cached server list (tools, prompts, resources, resource templates).
 *
 * - `get` answers from the cache, or fetches every page once; concurrent
 *   callers share one fetch (a one-permit semaphore).
 * - `invalidate` (on `list_changed`) drops the cached list and bumps a
 *   version: a fetch that started before it does not store its now stale
 *   answer.
 * - `changes` streams the cached list, if any, then every list stored later.
 * - A list fetched with a positive `ttlMs` (2026-07-28 cache hints) is
 *   fetched again by the first `get` after it; without one (or with `0`) it is
 *   kept until invalidated, as change notifications follow it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpError from "../../McpError.ts"

/** @internal */
export interface Cache<A> {
  readonly get: Effect.Effect<ReadonlyArray<A>, McpError.McpError>
  readonly refresh: Effect.Effect<ReadonlyArray<A>, McpError.McpError>
  readonly cached: Effect.Effect<Option.Option<ReadonlyArray<A>>>
  readonly changes: Stream.Stream<ReadonlyArray<A>>
  /** Drops the list; returns whether one was cached. */
  readonly invalidate: Effect.Effect<boolean>
  /** Bumped by every invalidation. */
  readonly version: () => number
  /** How long the server said the cached list stays fresh, if it said. */
  readonly ttlMs: Effect.Effect<number | undefined>
}

/** @internal */
/** What a fetch found: the list, and how long the server says it stays fresh. @internal */
export interface Fetched<A> {
  readonly items: ReadonlyArray<A>
  readonly ttlMs: number | undefined
}

/** @internal */
export const make = <A>(fetch: Effect.Effect<Fetched<A>, McpError.McpError>): Effect.Effect<Cache<A>> =>
  Effect.gen(function*() {
    const ref = yield* SubscriptionRef.make<Option.Option<ReadonlyArray<A>>>(Option.none())
    const lock = yield* Semaphore.make(1)
    let version = 0

    // when the cached list goes stale (epoch ms), and for how long it was fresh, if the server said
    let expiresAt = Infinity
    let freshFor: number | undefined

    // a list fetched again unchanged is not a change
    const load = Effect.suspend(() => {
      const started = version
      return Effect.flatMap(fetch, ({ items, ttlMs }) =>
        started !== version ? Effect.succeed(items) : Effect.flatMap(Clock.currentTimeMillis, (now) => {
          expiresAt = ttlMs !== undefined && ttlMs > 0 ? now + ttlMs : Infinity
          freshFor = ttlMs
          return Effect.flatMap(SubscriptionRef.get(ref), (cached) =>
            Option.isSome(cached) && JSON.stringify(cached.value) === JSON.stringify(items)
              ? Effect.succeed(items)
              : Effect.as(SubscriptionRef.set(ref, Option.some(items)), items))
        }))
    })

    const get = Semaphore.withPermits(lock, 1)(
      Effect.flatMap(SubscriptionRef.get(ref), (cached) =>
        Option.isNone(cached)
          ? load
          : expiresAt === Infinity
          ? Effect.succeed(cached.value)
          : Effect.flatMap(Clock.currentTimeMillis, (now) => now < expiresAt ? Effect.succeed(cached.value) : load))
    )

    return {
      get,
      refresh: Semaphore.withPermits(lock, 1)(load),
      cached: SubscriptionRef.get(ref),
      changes: SubscriptionRef.changes(ref).pipe(
        Stream.filter(Option.isSome),
        Stream.map((cached) => cached.value)
      ),
      invalidate: Effect.suspend(() => {
        version++
        return Effect.map(SubscriptionRef.getAndSet(ref, Option.none()), Option.isSome)
      }),
      version: () => version,
      ttlMs: Effect.sync(() => freshFor)
    }
  })
