/**
 * Task records for the tests of the task stores (in memory here, on Redis in
 * packages/redis): two requestors, a working record with overrides, a key,
 * and the JSON-RPC code of a refusal.
 */
import type * as McpError from "../../src/McpError.ts"
import type * as McpTaskStore from "../../src/McpTaskStore.ts"

export const ALICE = "alice"
export const BOB = "bob"

/** A working task of ALICE's, created at 0, kept a minute. */
export const record = (
  taskId: string,
  overrides: Partial<McpTaskStore.TaskRecord> = {}
): McpTaskStore.TaskRecord => ({
  requestor: ALICE,
  taskId,
  status: "working",
  createdAt: 0,
  lastUpdatedAt: 0,
  ttlMs: 60_000,
  pollIntervalMs: 1000,
  inputRequests: {},
  inputResponses: {},
  ...overrides
})

export const key = (taskId: string, requestor = ALICE): McpTaskStore.TaskKey => ({ requestor, taskId })

/** The JSON-RPC code of a store's refusal, if it is a protocol error. */
export const codeOf = (error: McpError.McpError) =>
  error.reason._tag === "ProtocolError" ? error.reason.code : undefined
