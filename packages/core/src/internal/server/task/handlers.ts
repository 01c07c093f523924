/**
 * The `tasks/*` requests a server answers, in the era of each request:
 * `tasks/get` and `tasks/cancel` in both, `tasks/update` in 2026-07-28,
 * `tasks/result` and `tasks/list` in 2025-11-25. A task is only ever found
 * with the key of the requestor that created it: another's is not found.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as JsonRpc from "../../../JsonRpc.ts"
import * as McpError from "../../../McpError.ts"
import * as McpSchema from "../../../McpSchema.ts"
import type * as McpServer from "../../../McpServer.ts"
import type * as McpServerSession from "../../../McpServerSession.ts"
import * as McpTaskStore from "../../../McpTaskStore.ts"
import { missingCapability } from "../../era/stateless.ts"
import * as Answers from "../../task/answers.ts"
import * as Legacy from "../../task/legacy.ts"
import * as Tasks from "../../task/tasks.ts"
import * as Wire from "../../task/wire.ts"
import type { LiveSession } from "../context.ts"
import { extension, requestorOf } from "./call.ts"

const invalid = (message: string) => McpError.protocol(JsonRpc.ErrorCode.InvalidParams, message)

const keyOf = (taskId: string, context: McpServer.RequestContext, live: LiveSession): McpTaskStore.TaskKey => ({
  requestor: requestorOf(context, live),
  taskId
})

// 2026-07-28: only a request that declared the extension may use tasks
const gated = <A>(
  method: string,
  context: McpServer.RequestContext,
  effect: Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  context.era === "modern" && !context.checkClientCapability(...extension.path)
    ? Effect.fail(missingCapability(extension, method))
    : effect

type Params = { readonly taskId: string }

/** `tasks/get`. @internal */
export const get = (tasks: Tasks.Tasks) => (params: Params, context: McpServer.RequestContext, live: LiveSession) =>
  gated(
    "tasks/get",
    context,
    Effect.map(
      Answers.found(tasks, keyOf(params.taskId, context, live)),
      (record) => context.era === "modern" ? Wire.modernDetailed(record) : Wire.legacyTask(record)
    )
  )

/**
 * `tasks/cancel`: 2026-07-28 acknowledges (a finished task too); 2025-11-25
 * answers the cancelled task and refuses a finished one.
 *
 * @internal
 */
export const cancel = (tasks: Tasks.Tasks) => (params: Params, context: McpServer.RequestContext, live: LiveSession) =>
  gated(
    "tasks/cancel",
    context,
    Effect.gen(function*() {
      const key = keyOf(params.taskId, context, live)
      if (context.era === "legacy") return yield* Answers.cancelLegacy(tasks, key)
      // 2026-07-28 acknowledges, a finished task too
      const record = yield* Answers.found(tasks, key)
      if (!McpTaskStore.isTerminal(record.status)) yield* Tasks.cancel(tasks, key)
      return {}
    })
  )

/**
 * `tasks/update` (2026-07-28): answers to outstanding input requests move
 * into the task, where its fiber takes them; other keys are ignored. An
 * answer that is not a result of the asked method is refused (`-32602`) and
 * nothing is applied.
 *
 * @internal
 */
export const update = (tasks: Tasks.Tasks) =>
(
  params: McpSchema.UpdateTaskParams,
  context: McpServer.RequestContext,
  live: LiveSession
) =>
  gated(
    "tasks/update",
    context,
    Effect.gen(function*() {
      const key = keyOf(params.taskId, context, live)
      const record = yield* Answers.found(tasks, key)
      for (const [name, answer] of Object.entries(params.inputResponses)) {
        const request = record.inputRequests[name]
        const method = request === undefined ? undefined : McpSchema.requests[request.method as McpSchema.RequestMethod]
        if (method !== undefined && Exit.isFailure(method.validateResult(answer))) {
          return yield* invalid(`Invalid params: inputResponses["${name}"] is not a ${request!.method} result`)
        }
      }
      yield* Tasks.change(tasks, key, (current, now) => {
        let requests: Record<string, McpTaskStore.InputRequest> | undefined
        let responses: Record<string, unknown> | undefined
        for (const [name, answer] of Object.entries(params.inputResponses)) {
          if (!(name in current.inputRequests) || (requests !== undefined && !(name in requests))) continue
          requests ??= { ...current.inputRequests }
          responses ??= { ...current.inputResponses }
          delete requests[name]
          responses[name] = answer
        }
        if (requests === undefined) return undefined
        return {
          ...current,
          status: Object.keys(requests).length === 0 ? "working" : "input_required",
          lastUpdatedAt: now,
          inputRequests: requests,
          inputResponses: responses!
        }
      })
      return {}
    })
  )

/**
 * `tasks/result` (2025-11-25): waits for the task to end, then answers what
 * the request would have (tagged with the task) or fails with its error.
 * While it waits, the task's requests to the client go with it (`legacy.ts`).
 *
 * @internal
 */
export const result = (tasks: Tasks.Tasks) =>
(
  params: Params,
  context: McpServer.RequestContext,
  live: LiveSession,
  raw?: McpServerSession.RequestContext
) =>
  // meanwhile the task's requests to the client go on this request's stream
  Answers.result(
    tasks,
    keyOf(params.taskId, context, live),
    raw === undefined
      ? Effect.never
      : Legacy.forward(tasks, params.taskId, Legacy.sendOver(raw))
  )

/** `tasks/list` (2025-11-25): the requestor's tasks, newest first. @internal */
export const list = (tasks: Tasks.Tasks, pageSize: number) =>
(
  params: { readonly cursor?: string | undefined },
  context: McpServer.RequestContext,
  live: LiveSession
) => Answers.list(tasks, requestorOf(context, live), params.cursor, pageSize)
