/**
 * 2025-11-25 tasks in a stateful session: how a running task's requests
 * reach its client, and the status notifications of its session.
 *
 * A task asks with real requests tagged with the task (related-task
 * `_meta`), status `input_required` while they wait. The request that
 * created the task has been answered, so a request cannot ride on it: it
 * goes on the stream of a pending `tasks/result` for the task (what the
 * specification and the official SDKs expect: a client seeing
 * `input_required` calls `tasks/result`), else straight over the session
 * (stdio, or the HTTP session's GET stream). A request the session cannot
 * deliver now (HTTP without a GET stream) waits for the next `tasks/result`,
 * at most until the task expires; one whose `tasks/result` ends before it is
 * answered goes again on the next.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as McpError from "../../McpError.ts"
import type * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import * as McpTaskStore from "../../McpTaskStore.ts"
import { RequestOrigin } from "../../McpTransport.ts"
import * as Tasks from "./tasks.ts"
import * as Wire from "./wire.ts"

/** Sends a request to the client, answered with its result. @internal */
export type Send = (method: McpMethod.Request, params: unknown) => Effect.Effect<unknown, McpError.McpError>

/**
 * Sends over a request's own channel, with no idle limit: a task's question
 * may wait as long as the task lives (an ask's own `timeout` bounds it).
 *
 * @internal
 */
export const sendOver = (raw: McpServerSession.RequestContext): Send => (method, params) =>
  raw.input(method as typeof McpSchema.Elicit, params as never, NO_IDLE_LIMIT)

const NO_IDLE_LIMIT = { timeout: "Infinity" } as const

// a request waiting for a `tasks/result` to carry it
interface Entry {
  readonly method: McpMethod.Request
  readonly params: unknown
  readonly reply: Deferred.Deferred<unknown, McpError.McpError>
}

// the requests of one task waiting for a `tasks/result`, and how many `tasks/result`s wait with it
interface Outbox {
  readonly entries: Array<Entry>
  /** Done when an entry arrives (then replaced). */
  arrived: Deferred.Deferred<void>
  forwarders: number
  users: number
}

const outboxes = new WeakMap<Tasks.Tasks, Map<string, Outbox>>()

const acquire = (tasks: Tasks.Tasks, taskId: string): Outbox => {
  let byTask = outboxes.get(tasks)
  if (byTask === undefined) outboxes.set(tasks, byTask = new Map())
  let outbox = byTask.get(taskId)
  if (outbox === undefined) {
    byTask.set(taskId, outbox = { entries: [], arrived: Deferred.makeUnsafe(), forwarders: 0, users: 0 })
  }
  outbox.users++
  return outbox
}

const release = (tasks: Tasks.Tasks, taskId: string, outbox: Outbox) =>
  Effect.sync(() => {
    if (--outbox.users === 0) outboxes.get(tasks)?.delete(taskId)
  })

const push = (outbox: Outbox, entry: Entry) =>
  Effect.sync(() => {
    outbox.entries.push(entry)
    const arrived = outbox.arrived
    outbox.arrived = Deferred.makeUnsafe()
    Deferred.doneUnsafe(arrived, Effect.void)
  })

const take = (outbox: Outbox): Effect.Effect<Entry> =>
  Effect.suspend(() => {
    const entry = outbox.entries.shift()
    return entry === undefined ? Effect.andThen(Deferred.await(outbox.arrived), take(outbox)) : Effect.succeed(entry)
  })

// what a session answers for a request it has no stream to send on
const undeliverable = (error: McpError.McpError) => error.reason._tag === "ClosedError"

/**
 * The asks of a 2025-11-25 task: each a request tagged with the task, status
 * `input_required` while it waits (visible to `tasks/get`).
 *
 * @internal
 */
export const input = (tasks: Tasks.Tasks, key: McpTaskStore.TaskKey, send: Send): Tasks.Ask => {
  let count = 0
  return (method, params, inputKey) =>
    Effect.suspend(() => {
      const name = `${inputKey ?? "input"}-${++count}`
      const object = (params ?? {}) as { readonly _meta?: Record<string, unknown> }
      const tagged = {
        ...object,
        _meta: { ...object._meta, [McpSchema.RELATED_TASK_META_KEY]: { taskId: key.taskId } }
      }
      // waits for a `tasks/result` to carry it, at most until the task expires
      const queued = (outbox: Outbox, record: Option.Option<McpTaskStore.TaskRecord>) =>
        Effect.suspend(() => {
          const entry: Entry = { method, params: tagged, reply: Deferred.makeUnsafe() }
          const ends = Option.isSome(record) && record.value.ttlMs !== null
            ? record.value.createdAt + record.value.ttlMs
            : undefined
          const wait = ends === undefined ?
            Deferred.await(entry.reply) :
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const left = Math.max(0, ends - now)
              return Effect.timeoutOrElse(Deferred.await(entry.reply), {
                duration: left,
                orElse: () => Effect.fail(McpError.timeout(method.name, left, "total"))
              })
            })
          // once it ends (answered, expired, the task interrupted) no `tasks/result` takes it
          return Effect.andThen(push(outbox, entry), wait).pipe(
            Effect.ensuring(Effect.sync(() => Deferred.doneUnsafe(entry.reply, Effect.interrupt)))
          )
        })
      const asked = Tasks.change(tasks, key, (record, now) => ({
        ...record,
        status: "input_required",
        lastUpdatedAt: now,
        inputRequests: { ...record.inputRequests, [name]: { method: method.name, params: tagged } }
      }))
      const answered = Effect.ignore(Tasks.change(tasks, key, (record, now) => {
        const { [name]: _, ...rest } = record.inputRequests
        return {
          ...record,
          status: Object.keys(rest).length === 0 ? "working" : "input_required",
          lastUpdatedAt: now,
          inputRequests: rest
        }
      }))
      return Effect.acquireUseRelease(
        Effect.sync(() => acquire(tasks, key.taskId)),
        (outbox) =>
          Effect.acquireUseRelease(
            asked,
            // a pending `tasks/result` carries it; else the session, if it can
            (record) =>
              outbox.forwarders > 0
                ? queued(outbox, record)
                : Effect.catchIf(send(method, tagged), undeliverable, () => queued(outbox, record)),
            () => answered
          ),
        (outbox) => release(tasks, key.taskId, outbox)
      )
    })
}

/**
 * Carries the task's waiting requests with `send` (a pending `tasks/result`'s
 * own, so they go on its stream) until interrupted; a request it has not had
 * answered by then waits for the next.
 *
 * @internal
 */
export const forward = (tasks: Tasks.Tasks, taskId: string, send: Send): Effect.Effect<never> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const outbox = acquire(tasks, taskId)
      outbox.forwarders++
      return outbox
    }),
    (outbox) =>
      Effect.forever(
        Effect.flatMap(take(outbox), (entry) =>
          Deferred.isDoneUnsafe(entry.reply) ? Effect.void : Effect.forkChild(
            Effect.raceFirst(
              Effect.flatMap(Effect.exit(send(entry.method, entry.params)), (exit) => Deferred.done(entry.reply, exit)),
              // the ask ended meanwhile: the request is withdrawn
              Effect.asVoid(Effect.exit(Deferred.await(entry.reply)))
            ).pipe(Effect.onInterrupt(() => Deferred.isDoneUnsafe(entry.reply) ? Effect.void : push(outbox, entry)))
          ))
      ),
    (outbox) =>
      Effect.suspend(() => {
        outbox.forwarders--
        return release(tasks, taskId, outbox)
      })
  )

/**
 * Tells the session of a task its status changes (`notifications/tasks/status`,
 * the full task, no related-task `_meta`), from its creation to its end; the
 * creator knows it starts `working`. Sent on no request's stream (the HTTP
 * session's GET stream, if open); best effort.
 *
 * @internal
 */
export const notifyStatus = (
  tasks: Tasks.Tasks,
  key: McpTaskStore.TaskKey,
  session: McpServerSession.ServerSession
): Effect.Effect<void> => {
  let previous: McpSchema.TaskStatus = "working"
  const changes = tasks.store.changes(key).pipe(
    Stream.filter((record) => {
      const changed = record.status !== previous
      previous = record.status
      return changed
    }),
    Stream.takeUntil((record) => McpTaskStore.isTerminal(record.status)),
    Stream.runForEach((record) =>
      Effect.ignore(session.notify(McpSchema.TaskStatusNotification, Wire.legacyTask(record)))
    ),
    Effect.ignore,
    Effect.provideService(RequestOrigin, undefined)
  )
  return Effect.asVoid(FiberMap.run(tasks.fibers, `${key.taskId}/status`, changes))
}
