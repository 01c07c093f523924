/**
 * A server's tasks: the store, the fibers running its tasks (owned by the
 * server, not by the requests that started them), how a run ends in the
 * store, and how a running task asks its client for input.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpMethod from "../../McpMethod.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as McpTaskStore from "../../McpTaskStore.ts"
import * as Capabilities from "../era/capabilities.ts"
import { KEY_PREFIX } from "../era/inputRequired.ts"
import { missingCapability } from "../era/stateless.ts"
import * as Metrics from "../metrics.ts"
import * as Memory from "./memoryStore.ts"

/** How a server's tasks are kept. @internal */
export interface Settings {
  readonly ttlMs: number
  readonly maxTtlMs: number
  readonly pollIntervalMs: number
  readonly afterMs: number
}

/** Where a server runs, in a cluster: its replica's id, and how to tell another replica is alive. @internal */
export interface Cluster {
  readonly replica: string
  readonly isLive: ((replicaId: string) => Effect.Effect<boolean, McpError.McpError>) | undefined
}

/** A server's tasks. @internal */
export interface Tasks {
  readonly store: McpTaskStore.Service
  readonly settings: Settings
  /** In a cluster: the tasks run here are recorded as this replica's. */
  readonly cluster?: Cluster | undefined
  /** The fibers of the tasks running here, by task id. */
  readonly fibers: FiberMap.FiberMap<string>
}

// a task is kept an hour (a client may ask for up to a day), polled every second, made at once
const DEFAULTS: Settings = { ttlMs: 60 * 60 * 1000, maxTtlMs: 24 * 60 * 60 * 1000, pollIntervalMs: 1000, afterMs: 0 }

const millis = (input: Duration.Input | undefined, fallback: number) =>
  input === undefined ? fallback : Duration.toMillis(Duration.fromInputUnsafe(input))

/**
 * The tasks of a server made with `options`: the store in context, or one in
 * memory; the fibers in a scope of their own, closed with the scope in
 * context (a server's layer) if there is one.
 *
 * @internal
 */
export const make = (options: McpTaskStore.TaskOptions | undefined, cluster?: Cluster): Effect.Effect<Tasks> =>
  Effect.gen(function*() {
    const given = yield* Effect.serviceOption(McpTaskStore.McpTaskStore)
    const store = Option.isSome(given) ? given.value : yield* Memory.make()
    const scope = yield* Scope.make()
    const outer = yield* Effect.serviceOption(Scope.Scope)
    if (Option.isSome(outer)) yield* Scope.addFinalizer(outer.value, Scope.close(scope, Exit.void))
    const fibers = yield* Scope.provide(FiberMap.make<string>(), scope)
    return {
      store,
      fibers,
      cluster,
      settings: {
        ttlMs: millis(options?.ttl, DEFAULTS.ttlMs),
        maxTtlMs: millis(options?.maxTtl, DEFAULTS.maxTtlMs),
        pollIntervalMs: millis(options?.pollInterval, DEFAULTS.pollIntervalMs),
        afterMs: millis(options?.after, DEFAULTS.afterMs)
      }
    }
  })

/**
 * Tasks kept in memory by this process alone (a client's, for the requests
 * its server asks it to run as tasks); the fibers end with `scope`.
 *
 * @internal
 */
export const makeLocal = (scope: Scope.Scope, capacity: number): Effect.Effect<Tasks> =>
  Effect.gen(function*() {
    const store = yield* Memory.make({ capacity })
    const fibers = yield* Scope.provide(FiberMap.make<string>(), scope)
    return { store, fibers, settings: DEFAULTS }
  })

/** A new task's record, `working` (counted as entering it: it is made to be stored). @internal */
export const newRecord = (tasks: Tasks, key: McpTaskStore.TaskKey, requestedTtl: number | undefined) =>
  Effect.map(
    Effect.andThen(Metrics.taskEntered("working"), Clock.currentTimeMillis),
    (now): McpTaskStore.TaskRecord => ({
      ...key,
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: Math.min(Math.max(1, requestedTtl ?? tasks.settings.ttlMs), tasks.settings.maxTtlMs),
      pollIntervalMs: tasks.settings.pollIntervalMs,
      inputRequests: {},
      inputResponses: {},
      ...(tasks.cluster === undefined ? {} : { runner: tasks.cluster.replica })
    })
  )

/** Changes a task that has not ended yet; `f` is given the time. @internal */
export const change = (
  tasks: Tasks,
  key: McpTaskStore.TaskKey,
  f: (record: McpTaskStore.TaskRecord, now: number) => McpTaskStore.TaskRecord | undefined
) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    // the status entered, counted once the change is made (see `McpMetrics`)
    let entered: McpSchema.TaskStatus | undefined
    return Effect.tap(
      tasks.store.update(key, (record) => {
        const next = McpTaskStore.isTerminal(record.status) ? undefined : f(record, now)
        entered = next !== undefined && next.status !== record.status ? next.status : undefined
        return next
      }),
      () => entered === undefined ? Effect.void : Metrics.taskEntered(entered)
    )
  })

const internalError = (message: string): JsonRpc.ErrorObject => ({ code: JsonRpc.ErrorCode.InternalError, message })

/** What a run's end makes of the task: its result, its JSON-RPC error, or cancelled. @internal */
export const settle = (
  tasks: Tasks,
  key: McpTaskStore.TaskKey,
  exit: Exit.Exit<unknown, McpError.McpError>
): Effect.Effect<void> => {
  const ended = (record: McpTaskStore.TaskRecord, now: number): McpTaskStore.TaskRecord => {
    const base = { ...record, lastUpdatedAt: now, inputRequests: {}, inputResponses: {} }
    if (Exit.isSuccess(exit)) return { ...base, status: "completed", result: exit.value as Record<string, unknown> }
    if (Cause.hasInterruptsOnly(exit.cause)) {
      return { ...base, status: "cancelled", statusMessage: "The task was cancelled" }
    }
    const error = Cause.findErrorOption(exit.cause)
    const object = Option.isSome(error) ? McpError.toErrorObject(error.value) : internalError("Internal error")
    return { ...base, status: "failed", statusMessage: object.message, error: object }
  }
  return Effect.ignore(change(tasks, key, ended))
}

/**
 * The task as it is: failed when it has not ended and the replica running it
 * is gone (its fiber ended with it). When liveness cannot be told, the
 * replica is taken to be alive.
 *
 * @internal
 */
export const checkRunner = (tasks: Tasks, record: McpTaskStore.TaskRecord): Effect.Effect<McpTaskStore.TaskRecord> => {
  const runner = record.runner
  const isLive = tasks.cluster?.isLive
  if (
    runner === undefined || isLive === undefined || runner === tasks.cluster!.replica ||
    McpTaskStore.isTerminal(record.status)
  ) return Effect.succeed(record)
  return Effect.suspend(() => isLive(runner)).pipe(
    Effect.orElseSucceed(() => true),
    Effect.flatMap((live) =>
      live ? Effect.succeed(record) : change(tasks, record, (current, now) => {
        const message = `The replica running this task (${runner}) is gone: the task ended with it`
        return {
          ...current,
          status: "failed",
          statusMessage: message,
          lastUpdatedAt: now,
          error: { code: JsonRpc.ErrorCode.ServerError, message, data: { runner } },
          inputRequests: {},
          inputResponses: {}
        }
      }).pipe(Effect.map(Option.getOrElse(() => record)), Effect.orElseSucceed(() => record))
    )
  )
}

/**
 * Fails the task once the replica running it is gone, looking every poll
 * interval; never ends otherwise (for a task run here, or without liveness).
 *
 * @internal
 */
export const watchRunner = (tasks: Tasks, record: McpTaskStore.TaskRecord): Effect.Effect<never> => {
  const cluster = tasks.cluster
  if (record.runner === undefined || cluster?.isLive === undefined || record.runner === cluster.replica) {
    return Effect.never
  }
  const look: Effect.Effect<never> = Effect.andThen(
    Effect.sleep(Duration.millis(record.pollIntervalMs)),
    Effect.flatMap(
      Effect.suspend(() => checkRunner(tasks, record)),
      (current) => McpTaskStore.isTerminal(current.status) ? Effect.never : look
    )
  )
  return look
}

/** Marks a task cancelled and interrupts its fiber if it runs here. @internal */
export const cancel = (tasks: Tasks, key: McpTaskStore.TaskKey) =>
  Effect.tap(
    change(tasks, key, (record, now) => ({
      ...record,
      status: "cancelled",
      statusMessage: "The task was cancelled",
      lastUpdatedAt: now,
      inputRequests: {},
      inputResponses: {}
    })),
    () => FiberMap.remove(tasks.fibers, key.taskId)
  )

/**
 * Interrupts when the task is found cancelled in the store (a `tasks/cancel`
 * answered by another process sharing it) or when it expires; never ends
 * otherwise.
 *
 * @internal
 */
export const ended = (tasks: Tasks, record: McpTaskStore.TaskRecord): Effect.Effect<never> => {
  const cancelled = tasks.store.changes(record).pipe(
    Stream.filter((current) => current.status === "cancelled"),
    Stream.runHead,
    Effect.matchEffect({
      onFailure: () => Effect.never,
      onSuccess: (found) => Option.isSome(found) ? Effect.interrupt : Effect.never
    })
  )
  if (record.ttlMs === null) return cancelled
  const expiry = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) =>
      Effect.andThen(
        Effect.sleep(Duration.millis(Math.max(0, record.createdAt + record.ttlMs! - now))),
        Effect.interrupt
      )
  )
  return Effect.raceFirst(cancelled, expiry)
}

// -----------------------------------------------------------------------------
// Input
// -----------------------------------------------------------------------------

/** How a running task asks its client for input. @internal */
export type Ask = (
  method: McpMethod.Request,
  params: unknown,
  inputKey?: string
) => Effect.Effect<unknown, McpError.McpError>

/**
 * The asks of one task: a key of its own per ask over the task's life, the
 * request published in the store (status `input_required`), and the answer
 * taken from it once the client gave one (`tasks/update`), validated as the
 * asked method's result.
 *
 * @internal
 */
export const inputOf = (
  tasks: Tasks,
  key: McpTaskStore.TaskKey,
  clientCapabilities: McpSchema.ClientCapabilities
): Ask => {
  const used = new Set<string>()
  let count = 0
  return (method, params, inputKey) =>
    Effect.suspend(() => {
      const capability = method.capability(params)
      if (capability !== undefined && !Capabilities.declares(clientCapabilities, capability)) {
        return Effect.fail(missingCapability(capability, method.name))
      }
      const base = inputKey ?? KEY_PREFIX[method.name] ?? "input"
      let name = base
      while (used.has(name)) name = `${base}-${++count}`
      used.add(name)
      const request: McpTaskStore.InputRequest = params === undefined
        ? { method: method.name }
        : { method: method.name, params: params as Record<string, unknown> }
      return change(tasks, key, (record, now) => ({
        ...record,
        status: "input_required",
        lastUpdatedAt: now,
        inputRequests: { ...record.inputRequests, [name]: request }
      })).pipe(
        Effect.andThen(
          tasks.store.changes(key).pipe(
            Stream.filter((record) => name in record.inputResponses || McpTaskStore.isTerminal(record.status)),
            Stream.runHead
          )
        ),
        Effect.flatMap((found) => {
          if (Option.isNone(found) || !(name in found.value.inputResponses)) return Effect.interrupt
          const answer = found.value.inputResponses[name]
          return Effect.as(
            tasks.store.update(key, (record) => {
              const { [name]: _, ...rest } = record.inputResponses
              return { ...record, inputResponses: rest }
            }),
            answer
          )
        }),
        Effect.flatMap((answer) => {
          const result = method.validateResult(answer)
          return Exit.isSuccess(result)
            ? Effect.succeed(result.value)
            : Effect.fail(McpError.protocol(
              JsonRpc.ErrorCode.InvalidParams,
              `Invalid params: the answer to "${name}" is not a ${method.name} result`
            ))
        })
      )
    })
}
