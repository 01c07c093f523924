/**
 * Task status on `subscriptions/listen` (2026-07-28): a listen request whose
 * filter names `taskIds` (and that declared the tasks extension) gets a
 * `notifications/tasks` with the detailed task each time one of them
 * changes, until it ends. Only the requestor's own tasks are agreed to.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as McpError from "../../../McpError.ts"
import * as McpSchema from "../../../McpSchema.ts"
import type * as McpServer from "../../../McpServer.ts"
import * as McpTaskStore from "../../../McpTaskStore.ts"
import { missingCapability } from "../../era/stateless.ts"
import type * as Tasks from "../../task/tasks.ts"
import * as Wire from "../../task/wire.ts"
import type { LiveSession } from "../context.ts"
import { extension, requestorOf } from "./call.ts"

/** What a listen stream forwards of tasks. @internal */
export interface Watch {
  /** The ids agreed to: the requestor's tasks among those asked for. */
  readonly taskIds: ReadonlyArray<string>
  /** Each later state of an agreed task as `notifications/tasks` params, until it ends. */
  readonly follow: (taskId: string) => Stream.Stream<Readonly<Record<string, unknown>>, McpError.McpError>
}

/**
 * The tasks a listen request may follow; `-32021` when it asks for some
 * without declaring the extension.
 *
 * @internal
 */
export const watch = (
  tasks: Tasks.Tasks,
  taskIds: ReadonlyArray<string>,
  context: McpServer.RequestContext,
  live: LiveSession
): Effect.Effect<Watch, McpError.McpError> => {
  if (!context.checkClientCapability(...extension.path)) {
    return Effect.fail(missingCapability(extension, McpSchema.SubscriptionsListen.name))
  }
  const requestor = requestorOf(context, live)
  return Effect.map(
    Effect.filter(taskIds, (taskId) => Effect.map(tasks.store.get({ requestor, taskId }), Option.isSome)),
    (agreed): Watch => ({
      taskIds: agreed,
      follow: (taskId) =>
        tasks.store.changes({ requestor, taskId }).pipe(
          // the first version is the state when the stream opened: not a change
          Stream.drop(1),
          Stream.takeUntil((record) => McpTaskStore.isTerminal(record.status)),
          Stream.map(Wire.modernDetailed)
        )
    })
  )
}
