/**
 * The process tree of a spawned child, for shutting down everything it
 * started: its process group, its session and its descendants.
 *
 * The child is spawned `detached`, so on POSIX it leads a new session and
 * process group whose id is its pid. Its descendants stay in that session (and
 * usually in that group) even after an intermediate process dies and they are
 * re-parented, so matching on session and group ids finds them then too.
 * A descendant that starts a session of its own is found only through the
 * parent links, that is while its parent lives: every scan records the
 * members it finds (with their start time, so a reused pid is not mistaken
 * for one) and later scans keep following them.
 *
 * The table of processes comes from `/proc` on Linux and from `ps` elsewhere
 * (no session ids or start times there: group and parent links only). Reading
 * it is shared among the callers of one moment (see {@link scan}): fifty
 * stdio clients closing at once read it a few times, not fifty times at each
 * step.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"

/** @internal */
export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  /** The session id; `-1` when unknown. */
  readonly sid: number
  /** An opaque start time; `""` when unknown. */
  readonly start: string
  readonly zombie: boolean
}

const isLinux = process.platform === "linux"

/** One line of `/proc/<pid>/stat`: the fields after the command name (which may hold spaces and parentheses). */
const parseStat = (pid: number, stat: string): ProcessInfo | undefined => {
  const end = stat.lastIndexOf(")")
  if (end < 0) return undefined
  const fields = stat.slice(end + 2).split(" ")
  // fields[0] is field 3 of proc(5): state, ppid, pgrp, session, ..., starttime (field 22)
  const state = fields[0]
  const ppid = Number(fields[1])
  const pgid = Number(fields[2])
  const sid = Number(fields[3])
  const start = fields[19]
  if (state === undefined || start === undefined || !Number.isInteger(ppid)) return undefined
  return { pid, ppid, pgid, sid, start, zombie: state === "Z" || state === "X" }
}

const readStat = (pid: number): ProcessInfo | undefined => {
  const text = Result.try(() => NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  return Result.isSuccess(text) ? parseStat(pid, text.success) : undefined
}

const scanProc = (): ReadonlyMap<number, ProcessInfo> => {
  const table = new Map<number, ProcessInfo>()
  const entries = Result.try(() => NodeFs.readdirSync("/proc"))
  if (Result.isFailure(entries)) return table
  for (const entry of entries.success) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid <= 0) continue
    const info = readStat(pid)
    if (info !== undefined) table.set(pid, info)
  }
  return table
}

const scanPs: Effect.Effect<ReadonlyMap<number, ProcessInfo>> = Effect.callback((resume) => {
  NodeChildProcess.execFile("ps", ["-A", "-o", "pid=,ppid=,pgid=,stat="], { windowsHide: true }, (error, stdout) => {
    const table = new Map<number, ProcessInfo>()
    if (error === null) {
      for (const line of stdout.split("\n")) {
        const [pid, ppid, pgid, stat] = line.trim().split(/\s+/)
        if (pid === undefined || ppid === undefined || pgid === undefined) continue
        const info: ProcessInfo = {
          pid: Number(pid),
          ppid: Number(ppid),
          pgid: Number(pgid),
          sid: -1,
          start: "",
          zombie: stat?.startsWith("Z") === true
        }
        if (Number.isInteger(info.pid)) table.set(info.pid, info)
      }
    }
    resume(Effect.succeed(table))
  })
})

// -----------------------------------------------------------------------------
// one read of the table shared among the callers of one moment
// -----------------------------------------------------------------------------

const counts = { requests: 0, reads: 0 }

/**
 * How many tables were asked for ({@link scan}) and how many were read from
 * the system, since this module loaded: a test seam.
 *
 * @internal
 */
export const scanCounts = (): { readonly requests: number; readonly reads: number } => ({ ...counts })

/**
 * Shares the reads of `read` among concurrent callers without ever handing a
 * caller a table read before it asked: every caller waits for the first read
 * that starts after it asked (a snapshot of the process tree is only good for
 * what happened before it was taken: the child's spawn, a signal just sent).
 *
 * - A caller joins the batch waiting to be read, if there is one, or opens
 *   one and forks its read.
 * - The read first yields, so that the callers of the same moment (fibers
 *   woken by the same timers or the same exits) join; then waits for the
 *   read in progress, if any (`ps` is asynchronous), so that two reads never
 *   overlap and the callers arriving meanwhile join too; then closes the
 *   batch (later callers open the next one) and only then reads.
 * - A result is never kept for later callers, however young: it was read
 *   before they asked.
 * - The read runs in a fiber of its own, so a caller that is interrupted
 *   leaves the others' read running; it needs no clock (it works under
 *   `TestClock`).
 */
const shareReads = <A>(read: Effect.Effect<A>): Effect.Effect<A> => {
  // the batch not read yet, which new callers join
  let waiting: Deferred.Deferred<A> | undefined
  // the batch read last (or being read)
  let last: Deferred.Deferred<A> | undefined
  return Effect.suspend(() => {
    counts.requests++
    if (waiting !== undefined) return Deferred.await(waiting)
    const batch = Deferred.makeUnsafe<A>()
    const previous = last
    waiting = batch
    const run = Effect.yieldNow.pipe(
      Effect.andThen(previous === undefined ? Effect.void : Effect.exit(Deferred.await(previous))),
      Effect.andThen(Effect.suspend(() => {
        waiting = undefined
        last = batch
        counts.reads++
        return read
      })),
      Effect.exit,
      Effect.flatMap((exit) => Deferred.done(batch, exit))
    )
    return Effect.andThen(Effect.forkDetach(run), Deferred.await(batch))
  })
}

/**
 * Every process of the system, as read after the call began; the callers of
 * one moment share one read (see `shareReads`).
 *
 * @internal
 */
export const scan: Effect.Effect<ReadonlyMap<number, ProcessInfo>> = shareReads(
  isLinux ? Effect.sync(scanProc) : scanPs
)

/**
 * The start time of one process (`""` when unknown or where there are none).
 *
 * @internal
 */
export const startTimeOf = (pid: number): string => isLinux ? readStat(pid)?.start ?? "" : ""

/**
 * Sends a signal to a process (a positive pid) or a process group (a negative
 * one); `false` when there was none (or no permission).
 *
 * @internal
 */
export const signal = (pid: number, signal: NodeJS.Signals): boolean =>
  Result.isSuccess(Result.try(() => process.kill(pid, signal)))

/**
 * Follows the process tree of one child across scans.
 *
 * @internal
 */
export interface Tracker {
  /** Scans the system, records the members found and returns those alive (not zombies). */
  readonly scan: Effect.Effect<ReadonlyArray<number>>
  /** Signals each member found alive by the last scan, and the child's process group if it had any. */
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
}

/**
 * A tracker of the tree rooted at `root`, a child spawned detached (so that
 * its pid is also its process group and session id). `rootStart` is its start
 * time as read right after spawning.
 *
 * @internal
 */
export const makeTracker = (root: number, rootStart: string): Tracker => {
  // every member seen, with its start time
  const known = new Map<number, string>([[root, rootStart]])
  let alive: ReadonlyArray<number> = []
  // group and session ids name this tree while the root's pid has not been reused
  let idsSafe = true
  // whether the last scan found a live member in the root's process group (so
  // that its id cannot have been reused by another group)
  let groupAlive = false

  const sameProcess = (info: ProcessInfo, start: string) => start === "" || info.start === "" || info.start === start

  const collect = (table: ReadonlyMap<number, ProcessInfo>): ReadonlyArray<number> => {
    const rootInfo = table.get(root)
    if (rootInfo !== undefined && !sameProcess(rootInfo, rootStart)) idsSafe = false
    const members = new Set<number>()
    for (const [pid, start] of known) {
      const info = table.get(pid)
      if (info !== undefined && sameProcess(info, start)) members.add(pid)
    }
    const children = new Map<number, Array<number>>()
    for (const info of table.values()) {
      if (idsSafe && (info.pgid === root || info.sid === root) && info.pid !== root) members.add(info.pid)
      const siblings = children.get(info.ppid)
      if (siblings === undefined) children.set(info.ppid, [info.pid])
      else siblings.push(info.pid)
    }
    // descendants, breadth first (bounded by the table's size: each pid is added once)
    const queue = Array.from(members)
    for (let index = 0; index < queue.length && index < table.size; index++) {
      for (const child of children.get(queue[index]!) ?? []) {
        if (!members.has(child) && child !== process.pid) {
          members.add(child)
          queue.push(child)
        }
      }
    }
    const result: Array<number> = []
    groupAlive = false
    for (const pid of members) {
      const info = table.get(pid)
      if (info === undefined) continue
      if (!known.has(pid)) known.set(pid, info.start)
      if (info.zombie) continue
      result.push(pid)
      if (info.pgid === root) groupAlive = true
    }
    return result
  }

  return {
    scan: Effect.map(scan, (table) => {
      alive = collect(table)
      return alive
    }),
    signal: (sig) =>
      Effect.sync(() => {
        // the group too: it also reaches members started since the scan
        if (idsSafe && groupAlive) signal(-root, sig)
        for (const pid of alive) signal(pid, sig)
      })
  }
}
