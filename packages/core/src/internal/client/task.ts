/**
 * The client's task handles (`McpTask.Task`), in the era of the session:
 *
 * - 2026-07-28: `tasks/get` carries the result, the error or the input the
 *   task waits for; input is answered with the client's handlers and sent
 *   with `tasks/update`.
 * - 2025-11-25: `tasks/get` gives the state; the server sends its input
 *   requests itself (the client's handlers answer them as any request), and
 *   `tasks/result` waits for the end.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpClient from "../../McpClient.ts"
import type * as McpClientSession from "../../McpClientSession.ts"
import * as McpError from "../../McpError.ts"
import * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpSession from "../../McpSession.ts"
import * as McpTask from "../../McpTask.ts"
import { answer } from "../era/statelessClient.ts"

const validateCreated = McpMethod.validator(McpSchema.ModernCreateTaskResult)

/**
 * `tools/call` answered with its result or, 2026-07-28, a task: told apart
 * by `resultType`, each checked against its own schema only.
 *
 * @internal
 */
export const CallToolOrTask: McpMethod.Request<
  "tools/call",
  McpMethod.Params<typeof McpSchema.CallTool>,
  McpSchema.CallToolResult | McpSchema.ModernCreateTaskResult
> = {
  ...McpMethod.withResult(
    McpSchema.CallTool,
    Schema.Union([McpSchema.CallToolResult, McpSchema.ModernCreateTaskResult])
  ),
  validateResult: (value) => isCreated(value) ? validateCreated(value) : McpSchema.CallTool.validateResult(value)
}

/** `tools/call` asking for a task (2025-11-25). @internal */
export const CallToolAsTask = McpMethod.withResult(McpSchema.CallTool, McpSchema.CreateTaskResult)

/** Whether an answer of `tools/call` is a task (2026-07-28). @internal */
export const isCreated = (value: unknown): value is McpSchema.ModernCreateTaskResult =>
  typeof value === "object" && value !== null && (value as { readonly resultType?: unknown }).resultType === "task"

// what either era's tasks/get gives, in one shape
interface Detailed extends McpTask.TaskState {
  readonly inputRequests?: Readonly<Record<string, { readonly method: string; readonly params?: unknown }>> | undefined
  readonly result?: unknown
  readonly error?: JsonRpc.ErrorObject | undefined
}

const fromLegacy: (task: McpSchema.Task) => Detailed = McpTask.fromLegacyTask

const fromModern = (task: McpSchema.ModernGetTaskResult | McpSchema.ModernCreateTaskResult): Detailed => {
  const { _meta: _, resultType: __, ...rest } = task as McpSchema.ModernGetTaskResult
  return rest as Detailed
}

/** The state of a task from a 2026-07-28 create answer. @internal */
export const createdState = (created: McpSchema.ModernCreateTaskResult): McpTask.TaskState => fromModern(created)

/** The state of a task from a 2025-11-25 create answer. @internal */
export const legacyState = (created: McpSchema.CreateTaskResult): McpTask.TaskState => fromLegacy(created.task)

const stateOf = ({ error: _, inputRequests: __, result: ___, ...state }: Detailed): McpTask.TaskState => state

// a poll loop ends by itself: at 1 s, this is more than a day
const MAX_POLLS = 100_000
const DEFAULT_POLL_MS = 1000

/** What a handle needs of the client. @internal */
export interface Client {
  readonly session: McpClientSession.ClientSession
  /** The client's handlers of sampling, elicitation and roots, by method. */
  readonly handlers: ReadonlyMap<string, McpSession.Handler>
  /** The server's notifications from now on. */
  readonly subscribe: Effect.Effect<Stream.Stream<McpClient.Notification>, never, Scope.Scope>
}

/**
 * A handle on the task `taskId`; `onProgress`, if given, hears of each new
 * status message (2026-07-28 tasks report progress so).
 *
 * @internal
 */
export const handle = (
  client: Client,
  taskId: string,
  options?: McpSession.RequestOptions
): McpTask.Task => {
  const session = client.session
  const modern = session.era === "modern"
  const requestOptions = options?.onProgress === undefined ? options : { ...options, onProgress: undefined }
  const get: Effect.Effect<Detailed, McpError.McpError> = modern
    ? Effect.map(session.request(McpSchema.GetTaskModern, { taskId }, requestOptions), fromModern)
    : Effect.map(session.request(McpSchema.GetTask, { taskId }, requestOptions), fromLegacy)

  // 2026-07-28: each input request is answered once, all of a poll together
  const answered = new Set<string>()
  // The answers run beside the polls (a user may take long to answer; the
  // task may end meanwhile, which ends them): a failure fails the next poll,
  // an answer sent brings the next poll at once.
  const answerInput = (detailed: Detailed, following: Following): Effect.Effect<void, McpError.McpError> => {
    if (following.failure !== undefined) return Effect.fail(following.failure)
    if (!modern || detailed.status !== "input_required" || detailed.inputRequests === undefined) return Effect.void
    const open = Object.entries(detailed.inputRequests).filter(([key]) => !answered.has(key))
    if (open.length === 0) return Effect.void
    for (const [key] of open) answered.add(key)
    const answering = Effect.flatMap(
      Effect.forEach(
        open,
        ([key, request]) => answer({ session: session as never, handlers: client.handlers }, key, request),
        {
          concurrency: "unbounded"
        }
      ),
      (answers) =>
        session.request(McpSchema.UpdateTask, { taskId, inputResponses: Object.fromEntries(answers) }, requestOptions)
    ).pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.sync(() => void (following.failure = error)),
        onSuccess: () => Effect.void
      }),
      Effect.andThen(Queue.offer(following.nudged, undefined))
    )
    return Effect.asVoid(Effect.forkIn(answering, following.scope))
  }

  let lastMessage: string | undefined
  let reported = 0
  const progress = (detailed: Detailed): Effect.Effect<void> => {
    if (
      options?.onProgress === undefined || detailed.statusMessage === undefined ||
      detailed.statusMessage === lastMessage
    ) {
      return Effect.void
    }
    lastMessage = detailed.statusMessage
    const message = detailed.statusMessage
    return Effect.flatMap(
      Clock.currentTimeMillis,
      (receivedAt) => options.onProgress!({ progress: ++reported, message, receivedAt })
    )
  }

  // what one following of the task shares: its nudges, its scope, an answer's failure
  interface Following {
    readonly nudged: Queue.Queue<void>
    readonly scope: Scope.Scope
    failure: McpError.McpError | undefined
  }
  interface Polling {
    readonly polls: number
    readonly seen: string | undefined
    readonly wait: number
    readonly last: Detailed | undefined
  }
  // A notification about the task (2025-11-25: notifications/tasks/status;
  // 2026-07-28: notifications/tasks on a subscriptions/listen stream asking
  // for it) makes the next poll come at once; without one, polls come at the
  // server's interval.
  const follow: Effect.Effect<Following, never, Scope.Scope> = Effect.gen(function*() {
    const nudged = yield* Queue.sliding<void>(1)
    const notifications = yield* client.subscribe
    yield* notifications.pipe(
      Stream.filter((notification) =>
        (notification.method === "notifications/tasks" || notification.method === "notifications/tasks/status") &&
        notification.params.taskId === taskId
      ),
      Stream.runForEach(() => Queue.offer(nudged, undefined)),
      Effect.forkScoped
    )
    if (modern) {
      yield* session.request(McpSchema.SubscriptionsListen, { notifications: { taskIds: [taskId] } }, {
        timeout: "Infinity"
      }).pipe(
        Effect.ignore,
        Effect.forkScoped
      )
    }
    return { nudged, scope: yield* Effect.scope, failure: undefined }
  })

  // every state that differs from the one before, until a final one
  const statesWith = (following: Following): Stream.Stream<Detailed, McpError.McpError> =>
    Stream.paginate<Polling, Detailed, McpError.McpError>(
      { polls: 0, seen: undefined, wait: 0, last: undefined },
      (polling) =>
        Effect.gen(function*() {
          if (polling.polls >= MAX_POLLS) {
            return yield* McpError.protocol(
              JsonRpc.ErrorCode.InternalError,
              `Task ${taskId} did not end after ${MAX_POLLS} polls`
            )
          }
          if (polling.wait > 0) {
            yield* Effect.raceFirst(Effect.sleep(Duration.millis(polling.wait)), Queue.take(following.nudged))
          }
          const detailed = yield* get
          yield* answerInput(detailed, following)
          yield* progress(detailed)
          const seen = `${detailed.status}\u0000${detailed.lastUpdatedAt}\u0000${detailed.statusMessage ?? ""}`
          const next: Polling = {
            polls: polling.polls + 1,
            seen,
            wait: Math.max(1, detailed.pollIntervalMs ?? DEFAULT_POLL_MS),
            last: detailed
          }
          const emitted = seen === polling.seen ? [] : [detailed]
          if (McpTask.isTerminal(detailed.status)) {
            terminal = detailed
          }
          return [emitted, McpTask.isTerminal(detailed.status) ? Option.none() : Option.some(next)] as const
        })
    )
  // a final state seen once is final: `result` after `status` ran to the end follows the task no more
  let terminal: Detailed | undefined
  const states = Stream.suspend(() =>
    terminal !== undefined ? Stream.make(terminal) : Stream.unwrap(Effect.map(follow, statesWith))
  )

  const ended = (detailed: Detailed): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> => {
    switch (detailed.status) {
      case "completed": {
        const valid = McpSchema.CallTool.validateResult(detailed.result)
        return Exit.isSuccess(valid)
          ? Effect.succeed(valid.value)
          : Effect.fail(McpError.invalidResult("tasks/get", `task ${taskId} completed without a tool result`))
      }
      case "failed":
        return Effect.fail(
          detailed.error === undefined
            ? McpError.protocol(JsonRpc.ErrorCode.InternalError, detailed.statusMessage ?? `Task ${taskId} failed`)
            : McpError.fromErrorObject(detailed.error)
        )
      default:
        return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InternalError, `Task ${taskId} was ${detailed.status}`))
    }
  }

  const result: Effect.Effect<McpSchema.CallToolResult, McpError.McpError> = modern
    ? Effect.flatMap(
      Stream.runLast(states),
      (last) =>
        Option.isSome(last)
          ? ended(last.value)
          : Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InternalError, `Task ${taskId} vanished`))
    )
    // 2025-11-25: tasks/result waits; the task's input requests reach the client's handlers meanwhile
    : Effect.map(
      session.request(McpSchema.GetTaskPayload, { taskId }, {
        ...requestOptions,
        timeout: options?.timeout ?? "Infinity"
      }),
      (payload) => {
        const { _meta, ...rest } = payload as McpSchema.CallToolResult & { readonly _meta?: Record<string, unknown> }
        const { [McpSchema.RELATED_TASK_META_KEY]: _, ...meta } = _meta ?? {}
        return (Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta }) as McpSchema.CallToolResult
      }
    )

  return {
    taskId,
    poll: Effect.map(get, stateOf),
    status: Stream.map(states, stateOf),
    result,
    cancel: modern
      ? Effect.asVoid(session.request(McpSchema.CancelTaskModern, { taskId }, requestOptions))
      : Effect.asVoid(session.request(McpSchema.CancelTask, { taskId }, requestOptions))
  }
}

/** A handle on a call the server answered at once (2026-07-28): already completed. @internal */
export const completed = (result: McpSchema.CallToolResult): McpTask.Task => {
  const state: McpTask.TaskState = {
    taskId: "",
    status: "completed",
    createdAt: "",
    lastUpdatedAt: "",
    ttlMs: null
  }
  return {
    taskId: "",
    poll: Effect.succeed(state),
    status: Stream.succeed(state),
    result: Effect.succeed(result),
    cancel: Effect.void
  }
}
