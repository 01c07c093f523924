/**
 * Issue 15, finding 5 (stale locks): when several processes find the same
 * abandoned lock (its process gone) at once, exactly one takes it over:
 * breaking it removes only that lock, never the one another process took
 * meanwhile. Real child processes race for a lock left by a dead process,
 * round after round; every round each either updates the store (no update
 * may be lost) or holds the lock itself, logging `enter`/`exit` around a
 * read-increment-write of a counter (the records never interleave, the
 * counter misses nothing). The abandoned lock is a lock directory, or a
 * lock file of an earlier version.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const CONTENDER = Path.join(import.meta.dirname, "..", "fixtures", "lockContender.ts")
const PROCESSES = 4
const ROUNDS = 40

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-mcp-takeover-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

interface Contender {
  readonly child: ChildProcess.ChildProcess
  /** Resolves once the child printed `done <round>` (fails if it exits first). */
  readonly done: (round: number) => Effect.Effect<void, string>
}

/** A contender process (killed when the scope closes), once it said `ready`. */
const spawnContender = (path: string, tag: string) =>
  Effect.acquireRelease(
    Effect.callback<Contender>((resume) => {
      const child = ChildProcess.spawn(process.execPath, ["--conditions=development", CONTENDER, path, tag], {
        stdio: ["pipe", "pipe", "inherit"]
      })
      const lines: Array<string> = []
      const waiting = new Set<() => void>()
      let buffered = ""
      child.stdout!.setEncoding("utf8")
      child.stdout!.on("data", (chunk: string) => {
        buffered += chunk
        const complete = buffered.split("\n")
        buffered = complete.pop() ?? ""
        lines.push(...complete)
        if (complete.includes("ready")) {
          resume(Effect.succeed({
            child,
            done: (round) =>
              Effect.callback<void, string>((resumeDone) => {
                const check = () => {
                  if (lines.includes(`done ${round}`)) return resumeDone(Effect.void), true
                  if (child.exitCode !== null) return resumeDone(Effect.fail(`${tag} exited ${child.exitCode}`)), true
                  return false
                }
                if (check()) return
                const waiter = () => {
                  if (check()) waiting.delete(waiter)
                }
                waiting.add(waiter)
              })
          }))
        }
        for (const waiter of [...waiting]) waiter()
      })
      child.once("exit", () => {
        for (const waiter of [...waiting]) waiter()
      })
      child.once("error", (error) => resume(Effect.die(error)))
    }),
    ({ child }) => Effect.sync(() => void (child.exitCode === null && child.kill("SIGKILL")))
  )

/** The pid of a process that has exited (and was reaped). */
const deadPid = Effect.callback<number>((resume) => {
  const child = ChildProcess.spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
  child.once("exit", () => resume(Effect.succeed(child.pid!)))
})

/** Leaves an abandoned lock of process `pid`: a lock directory (even rounds of 4) or an old lock file. */
const leaveAbandoned = (lockPath: string, pid: number, round: number) => {
  const owner = JSON.stringify({ pid, host: Os.hostname(), time: Date.now(), nonce: `dead${round}` })
  if (round % 4 < 2) {
    Fs.mkdirSync(lockPath)
    Fs.writeFileSync(Path.join(lockPath, `dead${round}.json`), owner)
  } else {
    Fs.writeFileSync(lockPath, owner)
  }
}

describe("issue 15 #5: an abandoned lock is taken over by exactly one process", () => {
  it.live(`${PROCESSES} processes racing for a dead process's lock, ${ROUNDS} rounds: one holder at a time, nothing lost`, () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      const lockPath = `${path}.lock`
      const tags = Array.from({ length: PROCESSES }, (_, i) => `p${i}`)
      const contenders = yield* Effect.forEach(tags, (tag) => spawnContender(path, tag), { concurrency: "unbounded" })
      const pid = yield* deadPid
      for (let round = 0; round < ROUNDS; round++) {
        assert.isFalse(Fs.existsSync(lockPath), `round ${round}: the last holder released the lock`)
        leaveAbandoned(lockPath, pid, round)
        for (const { child } of contenders) child.stdin!.write(`${round}\n`)
        yield* Effect.forEach(contenders, ({ done }) => done(round), { concurrency: "unbounded" }).pipe(
          Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(`round ${round} did not finish`) })
        )
      }
      // the store: every update of every even round
      const file = JSON.parse(Fs.readFileSync(path, "utf8")) as { tokens: Record<string, { accessToken: string }> }
      const lost: Array<string> = []
      for (let round = 0; round < ROUNDS; round += 2) {
        for (const tag of tags) {
          if (file.tokens[`https://${tag}-${round}.example/mcp`]?.accessToken !== `at-${tag}-${round}`) {
            lost.push(`${tag}-${round}`)
          }
        }
      }
      assert.deepStrictEqual(lost, [], "no update is lost")
      // the odd rounds: enter/exit pairs of one holder at a time
      const log = Fs.readFileSync(`${path}.log`, "utf8").trim().split("\n")
      const overlaps: Array<string> = []
      for (let i = 0; i < log.length; i += 2) {
        const [enter, exit] = [log[i]!, log[i + 1]]
        if (!enter.startsWith("enter ") || exit !== `exit ${enter.slice(6)}`) overlaps.push(`${i}: ${enter} / ${exit}`)
      }
      assert.deepStrictEqual(overlaps, [], "the holders never overlap")
      assert.strictEqual(log.length, 2 * PROCESSES * (ROUNDS / 2))
      assert.strictEqual(Number(Fs.readFileSync(`${path}.count`, "utf8")), PROCESSES * (ROUNDS / 2))
      // no lock and no private lock directory left
      assert.deepStrictEqual(Fs.readdirSync(dir).sort(), ["auth.json", "auth.json.count", "auth.json.log"])
    }))
})
