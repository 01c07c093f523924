/**
 * Server→client tasks (2025-11-25): a server may ask the client to run a
 * `sampling/createMessage` or `elicitation/create` as a task (`task` in its
 * params) when the client declared `tasks.requests.*`. The client then
 * answers at once with the task, runs its own handler in a fiber of its own
 * (kept in memory, ended with the client), and answers the server's
 * `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import type * as Scope from "effect/Scope"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import * as McpSession from "../../McpSession.ts"
import type * as McpTaskStore from "../../McpTaskStore.ts"
import * as Answers from "../task/answers.ts"
import * as Tasks from "../task/tasks.ts"
import * as Wire from "../task/wire.ts"

// the client has one server: its tasks are that server's
const REQUESTOR = "server"

// the tasks one client keeps at most
const CAPACITY = 1000

const RUNNABLE: ReadonlySet<string> = new Set([McpSchema.CreateMessage.name, McpSchema.Elicit.name])

/** The capabilities of running `handlers` as tasks. @internal */
export const capabilities = (handlers: ReadonlyArray<McpSession.Handler>): McpSchema.ClientCapabilities["tasks"] => {
  const names = new Set(handlers.map((handler) => handler.method.name))
  if (!names.has(McpSchema.CreateMessage.name) && !names.has(McpSchema.Elicit.name)) return undefined
  return {
    list: {},
    cancel: {},
    requests: {
      ...(names.has(McpSchema.CreateMessage.name) ? { sampling: { createMessage: {} } } : {}),
      ...(names.has(McpSchema.Elicit.name) ? { elicitation: { create: {} } } : {})
    }
  }
}

/**
 * `handlers`, those that can run as tasks wrapped, and the `tasks/*`
 * handlers; the task fibers end with `scope`.
 *
 * @internal
 */
export const wrap = (
  handlers: ReadonlyArray<McpSession.Handler>,
  scope: Scope.Scope
): Effect.Effect<ReadonlyArray<McpSession.Handler>> =>
  Effect.map(Tasks.makeLocal(scope, CAPACITY), (tasks) => {
    const keyOf = (taskId: string): McpTaskStore.TaskKey => ({ requestor: REQUESTOR, taskId })

    const asTask = (handler: McpSession.Handler): McpSession.Handler => ({
      method: handler.method,
      handle: (params, context) => {
        const { task, ...rest } = params as { readonly task?: { readonly ttl?: number } }
        if (task === undefined) return handler.handle(params, context)
        const key = keyOf(globalThis.crypto.randomUUID())
        return Effect.gen(function*() {
          const record = yield* Tasks.newRecord(tasks, key, task.ttl)
          yield* tasks.store.create(record)
          yield* FiberMap.run(
            tasks.fibers,
            key.taskId,
            Effect.onExit(handler.handle(rest, context), (exit) => Tasks.settle(tasks, key, exit))
          )
          return { task: Wire.legacyTask(record) }
        })
      }
    })

    return [
      ...handlers.map((handler) => RUNNABLE.has(handler.method.name) ? asTask(handler) : handler),
      McpSession.handler(McpSchema.GetTask, (params) =>
        Effect.map(Answers.found(tasks, keyOf(params.taskId)), Wire.legacyTask)),
      McpSession.handler(
        McpSchema.GetTaskPayload,
        (params) =>
          Answers.result(tasks, keyOf(params.taskId)) as Effect.Effect<
            McpSchema.GetTaskPayloadResult,
            McpError.McpError
          >
      ),
      McpSession.handler(McpSchema.ListTasks, (params) =>
        Answers.list(tasks, REQUESTOR, params.cursor, 100)),
      McpSession.handler(McpSchema.CancelTask, (params) => Answers.cancelLegacy(tasks, keyOf(params.taskId)))
    ]
  })
