/**
 * `subscriptions/listen` (2026-07-28): the server's listeners, fed by the
 * same registry events that send legacy sessions their `list_changed` and
 * `resources/updated` notifications. A listen request is acknowledged first;
 * then its handler fiber forwards what its filter asks for, each tagged with
 * `_meta.subscriptionId` (the request's id), until the client goes away (the
 * fiber is interrupted) or the connection closes (a graceful `complete`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import type { LiveSession } from "./context.ts"
import * as Demand from "./demand.ts"
import type * as TaskListen from "./task/listen.ts"

interface Notice {
  readonly method: McpSchema.NotificationMethod
  readonly params: Readonly<Record<string, unknown>>
}

interface Listener {
  readonly filter: McpSchema.SubscriptionFilter
  readonly queue: Queue.Queue<Notice>
}

/** The live listeners of one server. @internal */
export type Listeners = Set<Listener>

/** @internal */
export const make = (): Listeners => new Set()

// a slow listener drops its oldest notices rather than hold the server's memory
const QUEUE_CAPACITY = 1024
// how long the end of a connection waits for its listen streams' answers
const END_GRACE = Duration.seconds(1)

const FLAG = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged"
} as const

/** Tells the listeners that asked for it that a list changed. @internal */
export const listChanged = (
  listeners: Listeners,
  kind: keyof typeof FLAG,
  method: McpSchema.NotificationMethod
): Effect.Effect<void> =>
  Effect.sync(() => {
    for (const listener of listeners) {
      if (listener.filter[FLAG[kind]] === true) Queue.offerUnsafe(listener.queue, { method, params: {} })
    }
  })

/** Tells the listeners subscribed to `uri` that it changed. @internal */
export const resourceUpdated = (listeners: Listeners, uri: string): Effect.Effect<void> =>
  Effect.sync(() => {
    for (const listener of listeners) {
      if (listener.filter.resourceSubscriptions?.includes(uri) === true) {
        Queue.offerUnsafe(listener.queue, { method: McpSchema.ResourceUpdated.name, params: { uri } })
      }
    }
  })

// the part of the filter honoured: what the server's capabilities say it reports
const agreed = (
  asked: McpSchema.SubscriptionFilter,
  capabilities: McpSchema.ServerCapabilities
): McpSchema.SubscriptionFilter => {
  const filter: Record<string, unknown> = {}
  for (
    const [kind, flag] of Object.entries(FLAG) as ReadonlyArray<[keyof typeof FLAG, typeof FLAG[keyof typeof FLAG]]>
  ) {
    if (asked[flag] === true && capabilities[kind]?.listChanged === true) filter[flag] = true
  }
  if (asked.resourceSubscriptions !== undefined && capabilities.resources?.subscribe === true) {
    filter.resourceSubscriptions = asked.resourceSubscriptions
  }
  return filter as McpSchema.SubscriptionFilter
}

/**
 * Answers a `subscriptions/listen` request; `watchTasks` gives the tasks its
 * filter's `taskIds` may follow (and refuses a request that may follow none).
 *
 * @internal
 */
export const listen = (
  listeners: Listeners,
  demand: Demand.Demand,
  live: LiveSession,
  asked: McpSchema.SubscriptionFilter,
  capabilities: McpSchema.ServerCapabilities,
  context: McpServer.RequestContext,
  watchTasks: (taskIds: ReadonlyArray<string>) => Effect.Effect<TaskListen.Watch, McpError.McpError>
): Effect.Effect<{ readonly _meta: Record<string, unknown> }, McpError.McpError> =>
  Effect.flatMap(
    Effect.all([
      Queue.sliding<Notice>(QUEUE_CAPACITY),
      asked.taskIds === undefined ? Effect.succeed(undefined) : watchTasks(asked.taskIds)
    ]),
    ([queue, tasks]) => {
      const filter = agreed(asked, capabilities)
      return serve(
        listeners,
        demand,
        live,
        tasks === undefined ? filter : { ...filter, taskIds: tasks.taskIds },
        context,
        queue,
        tasks
      )
    }
  )

// forwards what `filter` agreed to, and the followed tasks' changes, until the end
const serve = (
  listeners: Listeners,
  demand: Demand.Demand,
  live: LiveSession,
  filter: McpSchema.SubscriptionFilter,
  context: McpServer.RequestContext,
  queue: Queue.Queue<Notice>,
  tasks: TaskListen.Watch | undefined
): Effect.Effect<{ readonly _meta: Record<string, unknown> }> =>
  Effect.withFiber((fiber) => {
    const meta = { [McpSchema.MetaKey.subscriptionId]: context.requestId }
    const listener: Listener = { filter, queue }
    const session = context.session
    const forward: Effect.Effect<never> = Queue.take(listener.queue).pipe(
      Effect.flatMap((notice) =>
        Effect.ignore(session.notify(McpSchema.notifications[notice.method], { ...notice.params, _meta: meta } as any))
      ),
      Effect.forever
    )
    const followTasks = tasks === undefined ?
      Effect.void :
      Effect.forEach(tasks.taskIds, (taskId) =>
        Effect.forkScoped(Effect.ignore(Stream.runForEach(
          tasks.follow(taskId),
          (params) => Effect.sync(() => Queue.offerUnsafe(queue, { method: McpSchema.TasksNotification.name, params }))
        ))), { discard: true })
    const acknowledge = Effect.ignore(
      session.notify(McpSchema.SubscriptionsAcknowledged, { _meta: meta, notifications: filter })
    )
    const closing = live.closing ??= Deferred.makeUnsafe()
    const listens = live.listens ??= new Set()
    // the URIs it follows have a subscriber while it runs
    const uris = filter.resourceSubscriptions ?? []
    const subscribe = uris.length === 0 ?
      Effect.void :
      Effect.forEach(uris, (uri) =>
        Effect.catchCause(
          Demand.acquire(demand, uri),
          (cause) => Effect.logWarning(`subscribing to ${uri} failed`, cause)
        ), {
        discard: true
      })
    const unsubscribe = uris.length === 0
      ? Effect.void
      : Effect.forEach(uris, (uri) => Demand.release(demand, uri), { discard: true })
    return Effect.sync(() => {
      listeners.add(listener)
      listens.add(fiber)
    }).pipe(
      Effect.andThen(subscribe),
      Effect.andThen(acknowledge),
      Effect.andThen(followTasks),
      Effect.andThen(Effect.raceFirst(forward, Effect.raceFirst(Deferred.await(closing), session.awaitClosing))),
      Effect.as({ _meta: meta }),
      Effect.scoped,
      Effect.ensuring(Effect.andThen(
        Effect.sync(() => {
          listeners.delete(listener)
          listens.delete(fiber)
        }),
        unsubscribe
      ))
    )
  })

/**
 * Ends a connection's listen streams gracefully: each answers its request
 * (`complete`) before the connection goes; bounded by a short grace period.
 *
 * @internal
 */
export const end = (live: LiveSession): Effect.Effect<void> =>
  Effect.suspend(() => {
    // made here if no listen did: one that comes later ends at once
    Deferred.doneUnsafe(live.closing ??= Deferred.makeUnsafe(), Effect.void)
    if (live.listens === undefined || live.listens.size === 0) return Effect.void
    return Effect.forEach(Array.from(live.listens), Fiber.await, { discard: true }).pipe(
      Effect.timeoutOption(END_GRACE),
      Effect.asVoid
    )
  })
