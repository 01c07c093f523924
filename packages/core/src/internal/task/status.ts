/**
 * The final statuses of a task, for both sides (a module of its own: the
 * client's handles need it without the server's store).
 *
 * @internal
 */
import type * as McpSchema from "../../McpSchema.ts"

/** Whether a status is final (`completed`, `failed`, `cancelled`). @internal */
export const isTerminal = (status: McpSchema.TaskStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"
