/**
 * The progress line on stderr: redrawn in place on a terminal, a bounded
 * number of plain lines otherwise.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"

/** @internal */
export interface Update {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/** @internal */
export interface Sink {
  /** Whether the sink is a terminal: the line is then redrawn in place. */
  readonly isTTY: boolean
  /** Width of the terminal (ignored when not a TTY). */
  readonly columns: number
  readonly write: (text: string) => Effect.Effect<void>
}

/** @internal */
export interface ProgressBar {
  readonly update: (update: Update) => Effect.Effect<void>
  /** How many times something was written (for tests). */
  readonly written: Effect.Effect<number>
}

const BAR_WIDTH = 20
const MAX_LINE = 200
const PLAIN_STEP = 10

// a server's message on one line, without C0/C1 controls (CSI is also 0x9b) or bidi overrides
const singleLine = (text: string) =>
  text.replace(/[\r\n\t]+/g, " ").replace(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, "")

const formatNumber = (n: number) => Number.isInteger(n) ? String(n) : n.toFixed(2)

/** The percentage of an update, when it has a usable total. @internal */
export const percent = (update: Update): number | undefined =>
  update.total !== undefined && update.total > 0 && Number.isFinite(update.total)
    ? Math.max(0, Math.min(100, Math.floor((update.progress / update.total) * 100)))
    : undefined

/**
 * One progress line, at most `width` characters, e.g.
 * `[########------------] 2/5 40% counting…`, or `[progress] 7 working` when
 * the total is unknown.
 *
 * @internal
 */
export const render = (update: Update, width: number): string => {
  const pct = percent(update)
  let head: string
  if (pct === undefined) {
    head = `[progress] ${formatNumber(update.progress)}`
  } else {
    const filled = Math.round((pct / 100) * BAR_WIDTH)
    head = `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${formatNumber(update.progress)}/${
      formatNumber(update.total!)
    } ${pct}%`
  }
  const message = update.message === undefined ? "" : singleLine(update.message)
  const line = message === "" ? head : `${head} ${message}`
  const limit = Math.max(1, Math.min(width, MAX_LINE))
  return line.length <= limit ? line : limit > 1 ? `${line.slice(0, limit - 1)}…` : line.slice(0, limit)
}

/**
 * A progress bar writing to `sink`; its scope's end erases the line (on a
 * terminal). Off a terminal, a line is printed for the first update, then only
 * when the percentage has moved by 10 points (or reached 100%), or, with no
 * total, when the progress has doubled: about a dozen lines at most per call.
 *
 * @internal
 */
export const make = (sink: Sink): Effect.Effect<ProgressBar, never, Scope.Scope> =>
  Effect.gen(function*() {
    const state = yield* Ref.make({ drawn: false, writes: 0, lastPct: -1, lastProgress: 0 })
    const width = sink.isTTY ? Math.max(10, sink.columns - 1) : MAX_LINE
    const update = (update: Update): Effect.Effect<void> =>
      Effect.gen(function*() {
        const current = yield* Ref.get(state)
        const pct = percent(update)
        if (sink.isTTY) {
          yield* sink.write(`\r${render(update, width)}\x1b[K`)
          yield* Ref.set(state, { ...current, drawn: true, writes: current.writes + 1 })
          return
        }
        const due = current.writes === 0 ||
          (pct !== undefined
            ? pct >= current.lastPct + PLAIN_STEP || (pct === 100 && current.lastPct < 100)
            : update.progress >= Math.max(1, current.lastProgress) * 2)
        if (!due) return
        yield* sink.write(`${render(update, width)}\n`)
        yield* Ref.set(state, {
          drawn: false,
          writes: current.writes + 1,
          lastPct: pct ?? current.lastPct,
          lastProgress: update.progress
        })
      })
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(state), ({ drawn }) => drawn ? sink.write("\r\x1b[K") : Effect.void)
    )
    return { update, written: Effect.map(Ref.get(state), (s) => s.writes) }
  })

/**
 * This process's stderr as a progress sink.
 *
 * @internal
 */
export const stderr: Effect.Effect<Sink> = Effect.sync(() => ({
  isTTY: process.stderr.isTTY === true,
  // a pseudo-terminal may report 0 columns
  columns: process.stderr.columns || 80,
  write: (text: string) =>
    Effect.callback<void>((resume) => {
      process.stderr.write(text, () => resume(Effect.void))
    })
}))
