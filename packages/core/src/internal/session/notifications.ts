/**
 * The runner of a session's queued notifications: one fiber, started at the
 * first queued notification (an idle session has none), runs their handlers
 * in order. The observer of a notification is called once it is queued for
 * its handler and before the handler runs: an observer's subscriber that
 * wakes after the handler's fiber (both are woken on the same turn, in
 * order) sees it handled.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../JsonRpc.ts"
import type * as McpSession from "../../McpSession.ts"

/** @internal */
export interface QueuedNotification {
  readonly handler: McpSession.NotificationHandler
  readonly params: unknown
}

/** @internal */
export interface Notifications {
  /** Runs a handler now, its failures logged. */
  readonly run: (queued: QueuedNotification) => Effect.Effect<void>
  /** Queues a handler for the runner (started now if it is not). */
  readonly enqueue: (queued: QueuedNotification, message: JsonRpc.Notification) => Effect.Effect<void>
  /** Calls the observer, after the message was routed (unless `enqueue` calls it later). */
  readonly observe: (message: JsonRpc.Notification) => void
  /** Ends the queue: the runner stops once what is queued has run. */
  readonly end: Effect.Effect<void>
}

/** @internal */
export const make = (options: {
  readonly session: McpSession.Session
  readonly scope: Scope.Scope
  readonly isOpen: () => boolean
  readonly observe: ((message: JsonRpc.Notification) => void) | undefined
}): Notifications => {
  const { isOpen, scope, session } = options
  const observeNotification = options.observe
  // the runner's queue, made at the first queued notification
  let inbox: Queue.Queue<QueuedNotification, Cause.Done> | undefined

  // set by `enqueue` when the first queued notification starts the runner:
  // the observer is called then, once it is queued
  let observedLater = false

  const observe = (message: JsonRpc.Notification) => {
    if (observedLater) observedLater = false
    else observeNotification?.(message)
  }

  const run = ({ handler, params }: QueuedNotification) =>
    handler.handle(params, session).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`handler of ${handler.method.name} failed`, cause))
    )

  const startRunner = (first: QueuedNotification, message: JsonRpc.Notification): Effect.Effect<void> =>
    Effect.flatMap(Queue.unbounded<QueuedNotification, Cause.Done>(), (queue) => {
      if (inbox !== undefined) Queue.offerUnsafe(inbox, first)
      else if (isOpen()) {
        inbox = queue
        Queue.offerUnsafe(queue, first)
        // forked from the reading fiber, with its services; a finalizer of
        // the session's scope interrupts it
        return Effect.andThen(
          Effect.forkIn(Stream.runForEach(Stream.fromQueue(queue), run), scope),
          Effect.sync(() => observeNotification?.(message))
        )
      }
      observeNotification?.(message)
      return Effect.void
    })

  // the inbox is unbounded: queued now, before the observer is called
  const enqueue = (queued: QueuedNotification, message: JsonRpc.Notification): Effect.Effect<void> => {
    if (inbox === undefined) {
      observedLater = true
      return startRunner(queued, message)
    }
    Queue.offerUnsafe(inbox, queued)
    return Effect.void
  }

  const end = Effect.suspend(() => inbox === undefined ? Effect.void : Queue.end(inbox))

  return { run, enqueue, observe, end }
}
