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
 * - With a {@link Follow} (2026-07-28, where following changes takes a
 *   `subscriptions/listen` stream), the list is followed only once something
 *   needs it to stay current: a second `get` (which fetches it again, as
 *   nothing followed it since the first), or a subscriber of `changes`. A
 *   list read once is never followed. A followed list is fetched once the
 *   stream asking for its changes is acknowledged, and `catchUp` fetches it
 *   again when it was fetched before the latest acknowledgement.
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
  /**
   * A stream following the list was acknowledged: a followed list fetched
   * before that acknowledgement is fetched again (it may have missed a change).
   */
  readonly catchUp: Effect.Effect<void, McpError.McpError>
}

/** What a fetch found: the list, and how long the server says it stays fresh. @internal */
export interface Fetched<A> {
  readonly items: ReadonlyArray<A>
  readonly ttlMs: number | undefined
}

/** How a list is followed when following it takes a stream (2026-07-28). @internal */
export interface Follow {
  /** Starts following the list (its kind joins the stream's filter). */
  readonly start: Effect.Effect<void>
  /** Completes when a fetch would miss no later change (the stream is acknowledged, or none is being opened). */
  readonly ready: Effect.Effect<void>
  /** How many acknowledgements arrived so far. */
  readonly acks: () => number
}

/** @internal */
export const make = <A>(
  fetch: Effect.Effect<Fetched<A>, McpError.McpError>,
  follow?: Follow | undefined
): Effect.Effect<Cache<A>> =>
  Effect.gen(function*() {
    const ref = yield* SubscriptionRef.make<Option.Option<ReadonlyArray<A>>>(Option.none())
    const lock = yield* Semaphore.make(1)
    let version = 0
    // how many fetches stored a list (a reader that waited for one is answered by it)
    let loads = 0
    // without a Follow the list is followed as it is (change notifications come unasked)
    let followed = follow === undefined
    // the acknowledgements counted when the cached list's fetch started
    let fetchedAt = 0

    // when the cached list goes stale (epoch ms), and for how long it was fresh, if the server said
    let expiresAt = Infinity
    let freshFor: number | undefined

    const startFollowing = Effect.suspend(() => {
      if (followed || follow === undefined) return Effect.void
      followed = true
      return follow.start
    })

    // a list fetched again unchanged is not a change
    const load = Effect.suspend(() => {
      const started = version
      const ready = followed && follow !== undefined ? follow.ready : Effect.void
      return Effect.flatMap(ready, () => {
        const acks = follow?.acks() ?? 0
        return Effect.flatMap(fetch, ({ items, ttlMs }) =>
          started !== version ? Effect.succeed(items) : Effect.flatMap(Clock.currentTimeMillis, (now) => {
            expiresAt = ttlMs !== undefined && ttlMs > 0 ? now + ttlMs : Infinity
            freshFor = ttlMs
            fetchedAt = acks
            loads++
            return Effect.flatMap(SubscriptionRef.get(ref), (cached) =>
              Option.isSome(cached) && JSON.stringify(cached.value) === JSON.stringify(items)
                ? Effect.succeed(items)
                : Effect.as(SubscriptionRef.set(ref, Option.some(items)), items))
          }))
      })
    })

    const get = Effect.suspend(() => {
      const seen = loads
      return Semaphore.withPermits(lock, 1)(
        Effect.flatMap(SubscriptionRef.get(ref), (cached) => {
          if (Option.isNone(cached)) {
            return load
          }
          // read again, and nothing followed it since it was fetched: follow it from now on, and fetch it
          // again (unless it was fetched while this reader waited)
          if (!followed) {
            return loads !== seen ? Effect.succeed(cached.value) : Effect.andThen(startFollowing, load)
          }
          return expiresAt === Infinity
            ? Effect.succeed(cached.value)
            : Effect.flatMap(Clock.currentTimeMillis, (now) =>
              now < expiresAt ? Effect.succeed(cached.value) : load)
        })
      )
    })

    return {
      get,
      refresh: Semaphore.withPermits(lock, 1)(load),
      cached: SubscriptionRef.get(ref),
      changes: Stream.unwrap(Effect.as(
        startFollowing,
        SubscriptionRef.changes(ref).pipe(
          Stream.filter(Option.isSome),
          Stream.map((cached) =>
            cached.value
          )
        )
      )),
      invalidate: Effect.suspend(() => {
        version++
        return Effect.map(SubscriptionRef.getAndSet(ref, Option.none()), Option.isSome)
      }),
      version: () => version,
      ttlMs: Effect.sync(() => freshFor),
      catchUp: Semaphore.withPermits(lock, 1)(
        Effect.flatMap(SubscriptionRef.get(ref), (cached) =>
          follow !== undefined && followed && Option.isSome(cached) && fetchedAt < follow.acks()
            ? Effect.asVoid(load)
            : Effect.void)
      )
    }
  })
