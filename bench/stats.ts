/**
 * Small statistics helpers of the benchmarks.
 */

/** One measurement: throughput, latency percentiles (ms) and CPU per call (µs). */
export interface Stats {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuPerCall: number
}

/** The nearest-rank percentile of sorted values, `q` in [0, 1]. */
export const percentile = (sorted: ArrayLike<number>, q: number): number => {
  if (sorted.length === 0) return NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]!
}

export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Milliseconds as "16µs" or "1.37ms", as in PERF-BASELINE.md. */
export const formatMicros = (ms: number): string => ms < 1 ? `${Math.round(ms * 1000)}µs` : `${ms.toFixed(2)}ms`
