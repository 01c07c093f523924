/**
 * The metrics an MCP server records, as effect `Metric`s: nothing to set up,
 * they are recorded in the `Metric.MetricRegistry` of the server's context
 * (the process-wide default unless one is provided) and read with
 * `Metric.value` / `Metric.snapshot`, or exported (`PrometheusMetrics`,
 * `OtlpMetrics` from `effect/observability`, or `@effect/opentelemetry`).
 *
 * | name | type | attributes |
 * | --- | --- | --- |
 * | `mcp_requests_total` | counter | `method`, `outcome` (`ok`, `error`, `cancelled`, `refused`) |
 * | `mcp_request_duration_ms` | histogram | `method` |
 * | `mcp_sessions_active` | gauge | none |
 * | `mcp_sse_streams_active` | gauge | none |
 * | `mcp_task_transitions_total` | counter | `status` (the status entered) |
 *
 * - Requests are the ones a server's handlers run, in both protocol eras
 *   (2025-11-25 sessions and 2026-07-28 requests), `initialize` and `ping`
 *   included. The outcome is the JSON-RPC one: a tool's `isError` result
 *   is `ok`; `cancelled` is a request interrupted (`notifications/cancelled`,
 *   the session closing); `refused` a request answered with an error before
 *   its handler ran (invalid params, not admitted, a duplicate id; an
 *   unknown method, counted under the method `(unknown)`, since the peer
 *   chooses the name). Requests a transport refuses before the session sees
 *   them (a wrong protocol version header, say) are not counted.
 * - Sessions are the live ones of `McpServer.serve`: stdio, WebSocket, SSE
 *   and 2025-11-25 Streamable HTTP sessions. 2026-07-28 requests have none.
 * - SSE streams are the open SSE connections of the Streamable HTTP server
 *   (a quick answer sent whole, with a length, is not one).
 * - Tasks are counted as transitions, not as a gauge: each time a task this
 *   process runs enters a status (`working` when created, `input_required`,
 *   `completed`, `failed`, `cancelled`); a client's tasks (the requests its
 *   server asks it to run as tasks) count too. A gauge of tasks by status would be wrong with a
 *   shared task store (the other replicas change them too); the counters sum
 *   over replicas, and `working - (completed + failed + cancelled)` estimates
 *   the tasks running.
 *
 * To read one series, add its attributes:
 * `Metric.value(Metric.withAttributes(McpMetrics.requests, { method: "tools/call", outcome: "ok" }))`.
 *
 * @since 0.2.0
 */
import type * as Metric from "effect/Metric"
import * as internal from "./internal/metrics.ts"

/**
 * The attributes of a {@link requests} series.
 *
 * @category models
 * @since 0.2.0
 */
export interface RequestAttributes {
  readonly method: string
  readonly outcome: "ok" | "error" | "cancelled" | "refused"
}

/**
 * `mcp_requests_total`: requests handled, by `method` and `outcome`.
 *
 * @category metrics
 * @since 0.2.0
 */
export const requests: Metric.Counter<number> = internal.requests

/**
 * `mcp_request_duration_ms`: how long requests took, in milliseconds, by
 * `method` (from the handler's start to its end, the answer's writing not
 * included).
 *
 * @category metrics
 * @since 0.2.0
 */
export const requestDuration: Metric.Histogram<number> = internal.requestDuration

/**
 * The bucket boundaries of {@link requestDuration}, in milliseconds.
 *
 * @category metrics
 * @since 0.2.0
 */
export const durationBoundaries: ReadonlyArray<number> = internal.BOUNDARIES

/**
 * `mcp_sessions_active`: live sessions.
 *
 * @category metrics
 * @since 0.2.0
 */
export const sessions: Metric.Gauge<number> = internal.sessions

/**
 * `mcp_sse_streams_active`: open SSE connections of the Streamable HTTP server.
 *
 * @category metrics
 * @since 0.2.0
 */
export const sseStreams: Metric.Gauge<number> = internal.sseStreams

/**
 * `mcp_task_transitions_total`: tasks entering a status, by `status`.
 *
 * @category metrics
 * @since 0.2.0
 */
export const taskTransitions: Metric.Counter<number> = internal.taskTransitions

/**
 * The names of the metrics.
 *
 * @category metrics
 * @since 0.2.0
 */
export const names = {
  requests: internal.REQUESTS,
  requestDuration: internal.REQUEST_DURATION,
  sessions: internal.SESSIONS,
  sseStreams: internal.SSE_STREAMS,
  taskTransitions: internal.TASK_TRANSITIONS
} as const
