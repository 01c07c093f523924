/**
 * The two notifications either side may send about a request in flight:
 * cancellation and progress.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { RequestId } from "../../JsonRpc.ts"
import * as McpMethod from "../../McpMethod.ts"
import { Meta, ProgressToken } from "./base.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Params of `notifications/cancelled`. `requestId` is required up to
 * 2025-06-18; 2025-11-25 makes it optional (it must be given for non-task
 * requests; tasks are cancelled with `tasks/cancel`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const CancelledNotificationParams = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  requestId: Schema.optionalKey(RequestId),
  reason: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CancelledNotificationParams = typeof CancelledNotificationParams.Type

/**
 * Params of `notifications/progress`. `progress` should increase with every
 * notification; `message` is new in 2025-03-26.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ProgressNotificationParams = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  progressToken: ProgressToken,
  progress: Schema.Finite,
  total: Schema.optionalKey(Schema.Finite),
  message: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ProgressNotificationParams = typeof ProgressNotificationParams.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `notifications/cancelled`: the sender no longer wants the result of a
 * request it issued. A client must not cancel `initialize`.
 *
 * @category methods
 * @since 0.1.0
 */
export const Cancelled = McpMethod.notification({
  name: "notifications/cancelled",
  params: CancelledNotificationParams,
  from: "both"
})

/**
 * `notifications/progress`: progress of a request that carried
 * `_meta.progressToken`.
 *
 * @category methods
 * @since 0.1.0
 */
export const Progress = McpMethod.notification({
  name: "notifications/progress",
  params: ProgressNotificationParams,
  from: "both"
})
