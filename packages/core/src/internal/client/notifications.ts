/**
 * The client's notification hub.
 *
 * The session engine consumes `notifications/progress` and
 * `notifications/cancelled` itself and routes other notifications to at most
 * one handler each, so the hub watches the transport instead: it wraps the
 * transport's `incoming` stream and copies every server notification it sees
 * (validated against its `McpSchema` declaration) into an unbounded inbox,
 * in arrival order, without slowing the reader. One dispatcher fiber drains
 * the inbox: it runs the client's own reactions (cache invalidation), then
 * publishes the notification to subscribers, then runs the user's handler.
 *
 * Subscribers read from a sliding `PubSub`: each keeps up to `capacity`
 * unread notifications, and a subscriber that falls further behind loses the
 * oldest ones (the reader and the handlers are never blocked by a slow
 * subscriber). Streams end when the session ends, after what was already
 * received.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type { Notification, ServerNotificationMethod } from "./notificationTypes.ts"

/** The notifications a server may send, by method name. @internal */
export const serverNotifications: ReadonlyMap<string, McpMethod.Notification> = new Map(
  ([
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete",
    "notifications/tasks/status",
    "notifications/tasks",
    "notifications/subscriptions/acknowledged"
  ] satisfies ReadonlyArray<ServerNotificationMethod>).map((name) => [name, McpSchema.notifications[name]])
)

const End = { _tag: "End" } as const
type Item = Notification | typeof End

/** @internal */
export interface Hub {
  /** Copies a notification from the server to the hub (called by the session, in order). */
  readonly observe: (message: JsonRpc.Notification) => void
  /** Drains the inbox with `handle` until the hub ends; returns when it has. */
  readonly run: (handle: (notification: Notification) => Effect.Effect<void>) => Effect.Effect<void>
  readonly publish: (notification: Notification) => Effect.Effect<void>
  /** Stops accepting notifications; the dispatcher ends after the backlog. */
  readonly end: Effect.Effect<void>
  readonly stream: Stream.Stream<Notification>
  readonly subscribe: Effect.Effect<Stream.Stream<Notification>, never, Scope.Scope>
}

const untilEnd = (stream: Stream.Stream<Item>): Stream.Stream<Notification> =>
  stream.pipe(
    Stream.takeWhile((item): item is Notification => item !== End)
  ) as Stream.Stream<Notification>

/** @internal */
export const make = (capacity: number): Effect.Effect<Hub, never, Scope.Scope> =>
  Effect.gen(function*() {
    const inbox = yield* Queue.unbounded<Notification, Cause.Done>()
    const pubsub = yield* Effect.acquireRelease(
      PubSub.sliding<Item>(capacity),
      (pubsub) => PubSub.end(pubsub, End)
    )

    const observe = (message: JsonRpc.Notification): void => {
      const declaration = serverNotifications.get(message.method)
      if (declaration === undefined) return
      const params = declaration.validateParams(message.params ?? {})
      // invalid params: the session's own handling logs it
      if (Exit.isSuccess(params)) {
        Queue.offerUnsafe(inbox, { method: declaration.name, params: params.value } as Notification)
      }
    }

    return {
      observe,
      run: (handle) =>
        Stream.fromQueue(inbox).pipe(
          Stream.runForEach(handle),
          Effect.andThen(PubSub.end(pubsub, End)),
          Effect.asVoid
        ),
      publish: (notification) => Effect.asVoid(PubSub.publish(pubsub, notification)),
      end: Effect.asVoid(Queue.end(inbox)),
      stream: untilEnd(Stream.fromPubSub(pubsub)),
      subscribe: Effect.map(PubSub.subscribe(pubsub), (subscription) => untilEnd(Stream.fromSubscription(subscription)))
    }
  })
