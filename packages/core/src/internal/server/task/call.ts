/**
 * `tools/call` of a tool that may run as a task.
 *
 * - 2025-11-25: the client asks for a task (`params.task`); the answer is a
 *   `CreateTaskResult` at once, the handler runs on, and what it asks the
 *   client goes out as requests tagged with the task (related-task `_meta`).
 * - 2026-07-28: the server decides, for a request that declared the tasks
 *   extension: the handler runs as a plain request for the tool's `taskAfter`
 *   (its asks are input-required rounds), then, still running, becomes a task
 *   and the request is answered `resultType: "task"`; its asks then wait in
 *   the task (`inputRequests`, answered by `tasks/update`).
 *
 * Either way the handler is the tool's own, and its fiber belongs to the
 * server from the start: the request only waits on it.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as JsonRpc from "../../../JsonRpc.ts"
import * as McpError from "../../../McpError.ts"
import * as McpMethod from "../../../McpMethod.ts"
import * as McpSchema from "../../../McpSchema.ts"
import type * as McpServer from "../../../McpServer.ts"
import type * as McpServerSession from "../../../McpServerSession.ts"
import type * as McpTaskStore from "../../../McpTaskStore.ts"
import type * as McpTool from "../../../McpTool.ts"
import { principal } from "../../auth/principal.ts"
import { missingCapability } from "../../era/stateless.ts"
import * as Legacy from "../../task/legacy.ts"
import * as Tasks from "../../task/tasks.ts"
import * as Wire from "../../task/wire.ts"
import { type Channel, CurrentRequestContext, type LiveSession, requestChannel, sessionContext } from "../context.ts"
import * as Logging from "../logging.ts"

type Params = McpMethod.Params<typeof McpSchema.CallTool>

/**
 * Who owns the tasks a request creates: its principal, else its session
 * (2025-11-25) or nobody in particular (2026-07-28, where ids are the guard).
 *
 * @internal
 */
export const requestorOf = (context: McpServer.RequestContext, live: LiveSession): string =>
  principal(context.auth) ??
    (context.era === "modern" ? "anonymous" : (live.requestor ??= globalThis.crypto.randomUUID()))

/**
 * Inside a tool call that may become a task (2026-07-28, a request that
 * declared the tasks extension; 2025-11-25, one that asked for a task): makes
 * it a task now, rather than after the tool's `taskAfter`, as soon as no
 * input-required round is pending, and returns once it is one (already one:
 * at once). `undefined` elsewhere: the client did not ask for a task.
 *
 * @internal
 */
export const CurrentTaskRequest = Context.Reference<Effect.Effect<void> | undefined>(
  "@effect-mcp/core/McpServer/CurrentTaskRequest",
  { defaultValue: () => undefined }
)

/** The capability a 2026-07-28 request declares to take tasks. @internal */
export const extension = McpMethod.clientCapability("extensions", McpSchema.TASKS_EXTENSION_ID)

const refuse = (message: string) => Effect.fail(McpError.protocol(JsonRpc.ErrorCode.MethodNotFound, message))

/**
 * Calls `tool`, as a task when the request and the tool say so.
 *
 * @internal
 */
export const call = (
  tasks: Tasks.Tasks,
  tool: McpTool.McpTool,
  params: Params,
  context: McpServer.RequestContext,
  raw: McpServerSession.RequestContext,
  live: LiveSession
): Effect.Effect<unknown, McpError.McpError> => {
  if (context.era === "modern") {
    if (tool.task === "forbidden") return tool.call(params.arguments, context)
    if (!context.checkClientCapability(...extension.path)) {
      return tool.task === "required"
        ? Effect.fail(missingCapability(extension, McpSchema.CallTool.name))
        : tool.call(params.arguments, context)
    }
    const after = tool.taskAfter === undefined ? tasks.settings.afterMs : Duration.toMillis(tool.taskAfter)
    return run(tasks, tool, params, context, raw, live, after)
  }
  if (params.task === undefined) {
    return tool.task === "required"
      ? refuse(`Tool ${params.name} can only be called as a task`)
      : tool.call(params.arguments, context)
  }
  if (tool.task === "forbidden") return refuse(`Tool ${params.name} does not support task execution`)
  return run(tasks, tool, params, context, raw, live, 0)
}

// The run: the handler's fiber in the server's map from the start; the
// request waits on it for `after` milliseconds (with no ask of an
// input-required round pending), then the task is created and answered.
const run = (
  tasks: Tasks.Tasks,
  tool: McpTool.McpTool,
  params: Params,
  context: McpServer.RequestContext,
  raw: McpServerSession.RequestContext,
  live: LiveSession,
  after: number
) =>
  Effect.gen(function*() {
    const modern = context.era === "modern"
    const key: McpTaskStore.TaskKey = { requestor: requestorOf(context, live), taskId: globalThis.crypto.randomUUID() }
    let detached = after <= 0
    let asking = 0
    // asked for by the handler (`CurrentTaskRequest`); `idle` is done when no round is pending
    const requested = Deferred.makeUnsafe<void>()
    const created = Deferred.makeUnsafe<void>()
    let idle = Deferred.makeUnsafe<void>()
    const untilIdle: Effect.Effect<void> = Effect.suspend(() =>
      asking === 0 ? Effect.void : Effect.andThen(Deferred.await(idle), untilIdle)
    )
    const asTask = modern ? Tasks.inputOf(tasks, key, context.clientCapabilities) : legacyInput(tasks, key, raw)
    const asRequest = requestChannel(raw)
    const channel: Channel = {
      era: context.era,
      input: ((method, inputParams, options) =>
        detached
          ? withTimeout(asTask(method, inputParams, options?.inputKey), method.name, options?.timeout)
          : Effect.suspend(() => {
            asking++
            return Effect.ensuring(
              asRequest.input(method, inputParams, options),
              Effect.sync(() => {
                if (--asking > 0) return
                Deferred.doneUnsafe(idle, Effect.void)
                idle = Deferred.makeUnsafe()
              })
            )
          })) as Channel["input"],
      // 2026-07-28 tasks send no logs (nowhere to send them); 2025-11-25 ones go to the session
      level: () => !detached ? asRequest.level() : modern ? undefined : live.logLevel,
      log: (params) =>
        !detached
          ? asRequest.log(params)
          : !modern && Logging.passes(params.level, live.logLevel)
          ? Effect.ignore(context.session.notify(McpSchema.LoggingMessage, params))
          : Effect.void
    }
    const client = {
      protocolVersion: context.protocolVersion,
      capabilities: context.clientCapabilities,
      clientInfo: context.clientInfo
    }
    const taskContext: McpServer.RequestContext = {
      ...context,
      ...sessionContext(live, context.session, client, context.protocolVersion, channel),
      logLevel: channel.level(),
      reportProgress: (progress) =>
        detached && modern
          ? Effect.ignore(Tasks.change(tasks, key, (record, now) => ({
            ...record,
            statusMessage: progress.message ??
              (progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`),
            lastUpdatedAt: now
          })))
          : context.reportProgress(progress)
    }
    // once a task, a cancel recorded in the store (by any process sharing
    // it) or the task's expiry interrupts the run
    const isTask = yield* Deferred.make<McpTaskStore.TaskRecord>()
    const body = Effect.raceFirst(
      tool.call(params.arguments, taskContext),
      Effect.flatMap(Deferred.await(isTask), (record) => Tasks.ended(tasks, record))
    ).pipe(
      Effect.provideService(CurrentRequestContext, taskContext),
      Effect.provideService(
        CurrentTaskRequest,
        Effect.andThen(Deferred.succeed(requested, undefined), Deferred.await(created))
      ),
      Effect.onExit((exit) => detached ? Tasks.settle(tasks, key, exit) : Effect.void)
    )
    const create = Effect.gen(function*() {
      const record = yield* Tasks.newRecord(tasks, key, params.task?.ttl)
      yield* tasks.store.create(record)
      return record
    })

    if (detached) {
      const record = yield* create
      yield* Deferred.succeed(isTask, record)
      yield* Deferred.succeed(created, undefined)
      yield* FiberMap.run(tasks.fibers, key.taskId, body)
      if (!modern) yield* Legacy.notifyStatus(tasks, key, context.session)
      return modern ? Wire.modernCreated(record) : { task: Wire.legacyTask(record) }
    }

    const fiber = yield* FiberMap.run(tasks.fibers, key.taskId, body)
    type Outcome =
      | { readonly _tag: "Done"; readonly exit: Exit.Exit<McpSchema.CallToolResult, McpError.McpError> }
      | { readonly _tag: "Detach" }
    const done = Effect.map(Fiber.await(fiber), (exit): Outcome => ({ _tag: "Done", exit }))
    const outcome: Outcome = yield* Effect.raceAll([
      done,
      Effect.andThen(
        Effect.sleep(after),
        Effect.suspend(() => asking > 0 ? done : Effect.succeed<Outcome>({ _tag: "Detach" }))
      ),
      Effect.as(Effect.andThen(Deferred.await(requested), untilIdle), { _tag: "Detach" } as Outcome)
    ]).pipe(Effect.onInterrupt(() => FiberMap.remove(tasks.fibers, key.taskId)))
    if (outcome._tag === "Done") return yield* outcome.exit
    const record = yield* Effect.onError(create, () => FiberMap.remove(tasks.fibers, key.taskId))
    detached = true
    yield* Deferred.succeed(isTask, record)
    yield* Deferred.succeed(created, undefined)
    // the run may have ended while the task was being stored
    const ended = fiber.pollUnsafe()
    if (ended !== undefined) {
      yield* Tasks.settle(tasks, key, ended as Exit.Exit<McpSchema.CallToolResult, McpError.McpError>)
    }
    return Wire.modernCreated(record)
  })

// 2025-11-25: the task's asks are requests over the session, tagged with the
// task (`legacy.ts`: on a pending `tasks/result`'s stream when there is one)
const legacyInput = (tasks: Tasks.Tasks, key: McpTaskStore.TaskKey, raw: McpServerSession.RequestContext): Tasks.Ask =>
  Legacy.input(tasks, key, Legacy.sendOver(raw))

// an ask's own `timeout`, over the whole wait
const withTimeout = <A>(
  ask: Effect.Effect<A, McpError.McpError>,
  method: string,
  timeout: Duration.Input | undefined
): Effect.Effect<A, McpError.McpError> => {
  if (timeout === undefined) return ask
  const millis = Duration.toMillis(Duration.fromInputUnsafe(timeout))
  return Effect.timeoutOrElse(ask, {
    duration: Duration.millis(millis),
    orElse: () => Effect.fail(McpError.timeout(method, millis, "total"))
  })
}
