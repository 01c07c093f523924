/**
 * The server's metrics (see `McpMetrics`) and what records them. A request is
 * recorded synchronously with series made once per method (attributes baked
 * in), so the hot path allocates nothing but its start time.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type * as Scope from "effect/Scope"
import type * as McpSchema from "../McpSchema.ts"

/** @internal */
export const REQUESTS = "mcp_requests_total"
/** @internal */
export const REQUEST_DURATION = "mcp_request_duration_ms"
/** @internal */
export const SESSIONS = "mcp_sessions_active"
/** @internal */
export const SSE_STREAMS = "mcp_sse_streams_active"
/** @internal */
export const TASK_TRANSITIONS = "mcp_task_transitions_total"

const descriptions = {
  requests: "MCP requests handled by the server, by method and outcome (ok, error, cancelled)",
  duration: "Time to handle an MCP request, in milliseconds, by method",
  sessions: "Live MCP server sessions (stdio, WebSocket, 2025-11-25 HTTP sessions)",
  streams: "Open SSE connections of the Streamable HTTP server",
  tasks: "Task status changes, by the status entered (a new task enters working)"
}

/** @internal */
export const BOUNDARIES: ReadonlyArray<number> = [
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  25,
  50,
  100,
  250,
  500,
  1000,
  2500,
  5000,
  10000,
  30000,
  60000
]

/** @internal */
export const requests: Metric.Counter<number> = Metric.counter(REQUESTS, {
  description: descriptions.requests,
  incremental: true
})

/** @internal */
export const requestDuration: Metric.Histogram<number> = Metric.histogram(REQUEST_DURATION, {
  description: descriptions.duration,
  boundaries: BOUNDARIES
})

/** @internal */
export const sessions: Metric.Gauge<number> = Metric.gauge(SESSIONS, { description: descriptions.sessions })

/** @internal */
export const sseStreams: Metric.Gauge<number> = Metric.gauge(SSE_STREAMS, { description: descriptions.streams })

/** @internal */
export const taskTransitions: Metric.Counter<number> = Metric.counter(TASK_TRANSITIONS, {
  description: descriptions.tasks,
  incremental: true
})

// -----------------------------------------------------------------------------
// requests
// -----------------------------------------------------------------------------

/** The series of one method, made once. @internal */
export interface MethodSeries {
  readonly ok: Metric.Counter<number>
  readonly error: Metric.Counter<number>
  readonly cancelled: Metric.Counter<number>
  readonly refused: Metric.Counter<number>
  readonly duration: Metric.Histogram<number>
}

const outcome = (method: string, value: "ok" | "error" | "cancelled" | "refused") =>
  Metric.counter(REQUESTS, {
    description: descriptions.requests,
    incremental: true,
    attributes: { method, outcome: value }
  })

// by method name: only the names of methods with a handler come here
const bySeries = new Map<string, MethodSeries>()

/** The series of a method. @internal */
export const seriesOf = (method: string): MethodSeries => {
  let series = bySeries.get(method)
  if (series === undefined) {
    series = {
      ok: outcome(method, "ok"),
      error: outcome(method, "error"),
      cancelled: outcome(method, "cancelled"),
      refused: outcome(method, "refused"),
      duration: Metric.histogram(REQUEST_DURATION, {
        description: descriptions.duration,
        boundaries: BOUNDARIES,
        attributes: { method }
      })
    }
    bySeries.set(method, series)
  }
  return series
}

const nanosPerMilli = 1_000_000

/**
 * Records a handled request when `effect` ends, however it ends: `ok` on
 * success, `cancelled` when only interrupted, `error` otherwise (a tool's
 * `isError` result is a success here). `context` holds the metric registry.
 *
 * @internal
 */
export const measure = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  method: string,
  clock: Clock.Clock,
  context: Context.Context<never>
): Effect.Effect<A, E, R> => {
  const series = seriesOf(method)
  const start = clock.monotonicTimeNanosUnsafe()
  return Effect.onExit(effect, (exit) => {
    const counter = Exit.isSuccess(exit)
      ? series.ok
      : Cause.hasInterruptsOnly(exit.cause)
      ? series.cancelled
      : series.error
    counter.updateUnsafe(1, context)
    series.duration.updateUnsafe(Number(clock.monotonicTimeNanosUnsafe() - start) / nanosPerMilli, context)
    return Effect.void
  })
}

/** The `method` of a request for a method the server does not have: one series for all (a peer chooses the name). @internal */
export const UNKNOWN_METHOD = "(unknown)"

/**
 * Counts a request answered with an error before any handler ran (unknown
 * method, invalid params, not admitted, duplicate id). `known` is false for
 * an unknown method, counted under {@link UNKNOWN_METHOD}.
 *
 * @internal
 */
export const refuse = (method: string, known: boolean, context: Context.Context<never>): void =>
  seriesOf(known ? method : UNKNOWN_METHOD).refused.updateUnsafe(1, context)

// -----------------------------------------------------------------------------
// sessions, streams, tasks
// -----------------------------------------------------------------------------

/** One more live session; one fewer when the scope closes. @internal */
export const trackSession: Effect.Effect<void, never, Scope.Scope> = Effect.acquireRelease(
  Metric.modify(sessions, 1),
  () => Metric.modify(sessions, -1)
)

/** One more open SSE connection. @internal */
export const streamOpened: Effect.Effect<void> = Metric.modify(sseStreams, 1)

/** One fewer open SSE connection. @internal */
export const streamClosed: Effect.Effect<void> = Metric.modify(sseStreams, -1)

const byStatus = new Map<McpSchema.TaskStatus, Effect.Effect<void>>()

/** A task entered `status`. @internal */
export const taskEntered = (status: McpSchema.TaskStatus): Effect.Effect<void> => {
  let counted = byStatus.get(status)
  if (counted === undefined) {
    const series = Metric.counter(TASK_TRANSITIONS, {
      description: descriptions.tasks,
      incremental: true,
      attributes: { status }
    })
    counted = Metric.update(series, 1)
    byStatus.set(status, counted)
  }
  return counted
}
