/**
 * The client's feed of change notifications in the stateless era: one
 * `subscriptions/listen` request, opened only once something follows changes
 * (a cached list read again or whose `changes` are streamed, a watched
 * resource), filtered to exactly that, reopened when the filter changes, and
 * reopened with backoff when it drops or ends. Its notifications reach the
 * client's notification hub like any other, so cached lists and
 * `watchResource` work as in the stateful era.
 *
 * - Opening is deferred by one turn of the scheduler: what becomes followed
 *   meanwhile (the four lists of a group, say) joins the same filter, so the
 *   stream is opened once with all of it.
 * - A stream is "pending" from its request until its acknowledgement (or its
 *   end). A list fetched while one is pending could miss a change made before
 *   the server registered the stream, so a followed list's fetch first waits
 *   for the acknowledgement ({@link Listen.ready}, bounded); and every
 *   acknowledgement is counted ({@link Listen.acks}): a followed list fetched
 *   before the latest one is fetched again (see `cache.ts`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as McpClientSession from "../../McpClientSession.ts"
import * as McpSchema from "../../McpSchema.ts"

/** The kinds of list whose changes can be asked for. @internal */
export type ListKind = "tools" | "prompts" | "resources"

/** @internal */
export interface Listen {
  /** Follows the changes of a list: its kind joins the filter (the stream opens or reopens on the next turn). */
  readonly follow: (kind: ListKind) => Effect.Effect<void>
  /** One more watcher of `uri`. */
  readonly watch: (uri: string) => Effect.Effect<void>
  /** One watcher of `uri` fewer. */
  readonly unwatch: (uri: string) => Effect.Effect<void>
  /**
   * Completes when a fetch of a `kind` list would miss no later change: at
   * once when the kind is not followed or no stream is being opened, else
   * once the stream is acknowledged or has ended (at most {@link ACK_WAIT}).
   */
  readonly ready: (kind: ListKind) => Effect.Effect<void>
  /** How many acknowledgements of the stream arrived so far. */
  readonly acks: () => number
  /**
   * An acknowledgement arrived: if it is one of this stream's, counts it and
   * returns the kinds of list it agreed to; else (a task's stream) `[]`.
   */
  readonly acknowledged: (agreed: McpSchema.SubscriptionFilter) => ReadonlyArray<ListKind>
}

/** The longest a fetch waits for a stream's acknowledgement before it goes ahead anyway. @internal */
export const ACK_WAIT = Duration.seconds(5)

// after a drop: 1 s, doubling, at most 30 s between attempts
const backoff = Schedule.exponential("1 second", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30))))
)

const FLAG = { tools: "toolsListChanged", prompts: "promptsListChanged", resources: "resourcesListChanged" } as const
const KINDS: ReadonlyArray<ListKind> = ["tools", "prompts", "resources"]

/** @internal */
export const make = (session: McpClientSession.ClientSession, scope: Scope.Scope): Effect.Effect<Listen> =>
  Effect.map(Semaphore.make(1), (lock) => {
    const kinds = new Set<ListKind>()
    const watched = new Map<string, number>()
    let open: { readonly key: string; readonly fiber: Fiber.Fiber<void> } | undefined
    // a reopen is forked and has not computed its filter yet
    let scheduled = false
    // a reopen is under way (its filter computed, its stream not yet asked for)
    let reopening = false
    // the current stream's request is out and neither acknowledged nor ended
    let pending = false
    let acks = 0
    // replaced (and completed) on every change of the above: what `ready` waits on
    let signal = Deferred.makeUnsafe<void>()
    const changed = () => {
      const previous = signal
      signal = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(previous, Exit.void)
    }
    const setPending = (value: boolean) => {
      pending = value
      changed()
    }

    const filter = (): McpSchema.SubscriptionFilter => {
      const out: Record<string, unknown> = {}
      for (const kind of kinds) out[FLAG[kind]] = true
      if (watched.size > 0) out.resourceSubscriptions = Array.from(watched.keys()).sort()
      return out as McpSchema.SubscriptionFilter
    }

    // one listen request after another: each ends by a drop or a graceful end, then a pause
    const attempt = (notifications: McpSchema.SubscriptionFilter): Effect.Effect<void> =>
      Effect.suspend(() => {
        setPending(true)
        return session.request(McpSchema.SubscriptionsListen, { notifications }, { timeout: Duration.infinity }).pipe(
          Effect.onExit(() => Effect.sync(() => setPending(false))),
          Effect.exit,
          Effect.flatMap((exit) =>
            Exit.isFailure(exit) && exit.cause.reasons.every((reason) => reason._tag === "Interrupt")
              ? Effect.interrupt
              : Effect.logDebug(
                `the subscriptions/listen stream ended (${
                  Exit.isSuccess(exit) ? "by the server" : "dropped"
                }); reopening`
              )
          )
        )
      })
    const run = (notifications: McpSchema.SubscriptionFilter): Effect.Effect<void> =>
      Effect.asVoid(Effect.repeat(attempt(notifications), backoff))

    const reopen = Semaphore.withPermits(lock, 1)(
      Effect.suspend(() => {
        scheduled = false
        reopening = true
        const wanted = filter()
        const key = JSON.stringify(wanted)
        if (open?.key === key) return Effect.void
        const previous = open
        open = undefined
        const stop = previous === undefined ? Effect.void : Fiber.interrupt(previous.fiber)
        if (key === "{}") return stop
        return Effect.andThen(
          stop,
          Effect.suspend(() => {
            // pending from now: a waiter must not slip between this and the request
            pending = true
            return Effect.map(Effect.forkIn(run(wanted), scope, { startImmediately: true }), (fiber) => {
              open = { key, fiber }
            })
          })
        )
      }).pipe(
        Effect.ensuring(Effect.sync(() => {
          reopening = false
          changed()
        }))
      )
    )

    // what changes the filter in one turn is opened once
    const schedule = Effect.suspend(() => {
      if (scheduled) return Effect.void
      scheduled = true
      changed()
      // started on the next turn: what the caller asks for before it yields joins this reopen
      return Effect.asVoid(Effect.forkIn(reopen, scope))
    })

    const waitFor = (kind: ListKind): Effect.Effect<void> =>
      Effect.suspend(() =>
        !kinds.has(kind) || (!scheduled && !reopening && !pending)
          ? Effect.void
          : Effect.andThen(Deferred.await(signal), waitFor(kind))
      )

    return {
      follow: (kind) => kinds.has(kind) ? Effect.void : Effect.andThen(Effect.sync(() => kinds.add(kind)), schedule),
      watch: (uri) =>
        Effect.suspend(() => {
          const count = watched.get(uri) ?? 0
          watched.set(uri, count + 1)
          return count === 0 ? schedule : Effect.void
        }),
      unwatch: (uri) =>
        Effect.suspend(() => {
          const count = watched.get(uri) ?? 0
          if (count > 1) {
            watched.set(uri, count - 1)
            return Effect.void
          }
          watched.delete(uri)
          return schedule
        }),
      ready: (kind) =>
        waitFor(kind).pipe(
          Effect.timeoutOption(ACK_WAIT),
          Effect.flatMap((done) => {
            if (Option.isSome(done)) return Effect.void
            // given up on: the next fetches do not wait for it either
            pending = false
            changed()
            return Effect.logDebug(
              `no acknowledgement of the subscriptions/listen stream within ${
                Duration.format(ACK_WAIT)
              }; fetching anyway`
            )
          })
        ),
      acks: () => acks,
      acknowledged: (agreed) => {
        // a task's stream asks for taskIds, ours never; without a stream of ours it is not ours
        if (agreed.taskIds !== undefined || open === undefined) return []
        acks++
        setPending(false)
        return KINDS.filter((kind) => agreed[FLAG[kind]] === true)
      }
    }
  })
