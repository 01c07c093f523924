/**
 * The client's feed of change notifications in the stateless era: one
 * `subscriptions/listen` request, opened when something needs it (a list
 * cached with auto-refresh on, a watched resource), filtered to exactly
 * that, reopened when the filter changes, and reopened with backoff when
 * it drops or ends. Its notifications reach the client's notification hub
 * like any other, so cached lists and `watchResource` work as in the
 * stateful era.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as McpClientSession from "../../McpClientSession.ts"
import * as McpSchema from "../../McpSchema.ts"

/** The kinds of list whose changes can be asked for. @internal */
export type ListKind = "tools" | "prompts" | "resources"

/** @internal */
export interface Listen {
  /** Asks for the changes of a list (once it is cached). */
  readonly lists: (kind: ListKind) => Effect.Effect<void>
  /** One more watcher of `uri`. */
  readonly watch: (uri: string) => Effect.Effect<void>
  /** One watcher of `uri` fewer. */
  readonly unwatch: (uri: string) => Effect.Effect<void>
}

// after a drop: 1 s, doubling, at most 30 s between attempts
const backoff = Schedule.exponential("1 second", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30))))
)

const FLAG = { tools: "toolsListChanged", prompts: "promptsListChanged", resources: "resourcesListChanged" } as const

/** @internal */
export const make = (session: McpClientSession.ClientSession, scope: Scope.Scope): Effect.Effect<Listen> =>
  Effect.map(Semaphore.make(1), (lock) => {
    const kinds = new Set<ListKind>()
    const watched = new Map<string, number>()
    let open: { readonly key: string; readonly fiber: Fiber.Fiber<void> } | undefined

    const filter = (): McpSchema.SubscriptionFilter => {
      const out: Record<string, unknown> = {}
      for (const kind of kinds) out[FLAG[kind]] = true
      if (watched.size > 0) out.resourceSubscriptions = Array.from(watched.keys()).sort()
      return out as McpSchema.SubscriptionFilter
    }

    // one listen request after another: each ends by a drop or a graceful end, then a pause
    const run = (notifications: McpSchema.SubscriptionFilter): Effect.Effect<void> =>
      session.request(McpSchema.SubscriptionsListen, { notifications }, { timeout: Duration.infinity }).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Exit.isFailure(exit) && exit.cause.reasons.every((reason) => reason._tag === "Interrupt")
            ? Effect.interrupt
            : Effect.logDebug(`the subscriptions/listen stream ended (${Exit.isSuccess(exit) ? "by the server" : "dropped"}); reopening`)
        ),
        Effect.repeat(backoff),
        Effect.asVoid
      )

    const reopen = Semaphore.withPermits(lock, 1)(Effect.suspend(() => {
      const wanted = filter()
      const key = JSON.stringify(wanted)
      if (open?.key === key) return Effect.void
      const previous = open
      open = undefined
      const stop = previous === undefined ? Effect.void : Fiber.interrupt(previous.fiber)
      if (key === "{}") return stop
      return Effect.andThen(
        stop,
        Effect.map(Effect.forkIn(run(wanted), scope), (fiber) => {
          open = { key, fiber }
        })
      )
    }))

    return {
      lists: (kind) => kinds.has(kind) ? Effect.void : Effect.andThen(Effect.sync(() => kinds.add(kind)), reopen),
      watch: (uri) =>
        Effect.suspend(() => {
          const count = watched.get(uri) ?? 0
          watched.set(uri, count + 1)
          return count === 0 ? reopen : Effect.void
        }),
      unwatch: (uri) =>
        Effect.suspend(() => {
          const count = watched.get(uri) ?? 0
          if (count > 1) {
            watched.set(uri, count - 1)
            return Effect.void
          }
          watched.delete(uri)
          return reopen
        })
    }
  })
