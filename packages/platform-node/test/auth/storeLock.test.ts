/**
 * Issue 15, finding 5: `NodeMcpAuthStore` updates the token file holding a
 * cross-process lock (`<path>.lock`, created exclusively), reading the file
 * again under it: two CLIs updating the same file at once lose nothing (a
 * rotated refresh token stored by one is not overwritten by the other's
 * stale copy). Real child processes; a lock left by a dead process or too
 * old is taken over; a lock that stays is a bounded wait, then a `Storage`
 * error (TestClock).
 */
import { McpError } from "@effect-mcp/core"
import { NodeMcpAuthStore } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const WRITER = Path.join(import.meta.dirname, "..", "fixtures", "authStoreWriter.ts")
/** Updates per process: each is one lock, one read and one atomic rename. */
const COUNT = 100

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-mcp-lock-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A writer process (killed when the scope closes), once it said `ready`. */
const spawnWriter = (path: string, tag: string, count: number) =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess.ChildProcess>((resume) => {
      const child = ChildProcess.spawn(
        process.execPath,
        ["--conditions=development", WRITER, path, tag, String(count)],
        {
          stdio: ["pipe", "pipe", "inherit"]
        }
      )
      child.stdout!.setEncoding("utf8")
      child.stdout!.once("data", () => resume(Effect.succeed(child)))
      child.once("error", (error) => resume(Effect.die(error)))
    }),
    (child) => Effect.sync(() => void (child.exitCode === null && child.kill("SIGKILL")))
  )

const exitCode = (child: ChildProcess.ChildProcess) =>
  Effect.callback<number | null>((resume) => {
    if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

const lockOwner = (pid: number, time: number) =>
  JSON.stringify({ pid, host: Os.hostname(), time, nonce: "left-behind" })

/** The pid of a process that has exited (and was reaped). */
const deadPid = Effect.callback<number>((resume) => {
  const child = ChildProcess.spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
  child.once("exit", () => resume(Effect.succeed(child.pid!)))
})

/**
 * Moves TestClock `seconds` seconds ahead, one at a time, letting the file
 * operations the woken store does between its sleeps finish (a 5 ms live
 * wait per step: they are real I/O, not clock time); stops once `fiber` is done.
 */
const advance = (fiber: Fiber.Fiber<unknown, unknown>, seconds: number) =>
  Effect.gen(function*() {
    for (let step = 0; step < seconds && fiber.pollUnsafe() === undefined; step++) {
      yield* TestClock.adjust("1 second")
      // bounded: 20 × 5 ms of live time for the store's file operations
      for (let wait = 0; wait < 20 && fiber.pollUnsafe() === undefined; wait++) {
        yield* TestClock.withLive(Effect.sleep("5 millis"))
      }
    }
  })

const tokens = (accessToken: string) => ({ accessToken, tokenType: "Bearer", refreshToken: `rt-${accessToken}` })

describe("issue 15 #5: the auth file is updated under a cross-process lock", () => {
  it.live("two processes updating the same file concurrently, many times, lose nothing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      const writers = yield* Effect.forEach(["a", "b"], (tag) => spawnWriter(path, tag, COUNT), { concurrency: 2 })
      // both started: go at once
      for (const writer of writers) writer.stdin!.write("go\n")
      const codes = yield* Effect.forEach(writers, exitCode, { concurrency: 2 })
      assert.deepStrictEqual(codes, [0, 0])
      const file = JSON.parse(Fs.readFileSync(path, "utf8")) as { tokens: Record<string, { accessToken: string }> }
      const lost: Array<string> = []
      for (const tag of ["a", "b"]) {
        for (let i = 0; i < COUNT; i++) {
          if (file.tokens[`https://${tag}-${i}.example/mcp`]?.accessToken !== `at-${tag}-${i}`) lost.push(`${tag}-${i}`)
        }
      }
      assert.deepStrictEqual(lost, [], "every update of both processes is in the file")
      assert.strictEqual(Object.keys(file.tokens).length, 2 * COUNT + 1)
      // the shared resource holds the last rotation of one of them
      assert.match(file.tokens["https://shared.example/mcp"]!.accessToken, /^at-shared-[ab]-\d+$/)
      // no lock file, no temporary file left
      assert.deepStrictEqual(Fs.readdirSync(dir), ["auth.json"])
    }))

  it.live("two stores of one process on the same file, concurrently: every update lands", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      const one = yield* NodeMcpAuthStore.make({ path })
      const two = yield* NodeMcpAuthStore.make({ path })
      yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) => (i % 2 === 0 ? one : two).setTokens(`https://s${i}.example/mcp`, tokens(`at-${i}`)),
        { concurrency: "unbounded" }
      )
      for (let i = 0; i < 40; i++) {
        assert.strictEqual((yield* one.getTokens(`https://s${i}.example/mcp`))?.accessToken, `at-${i}`)
      }
      assert.deepStrictEqual(Fs.readdirSync(dir), ["auth.json"])
    }))

  it.live("a lock left by a process that is gone is taken over at once", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      const pid = yield* deadPid
      Fs.writeFileSync(`${path}.lock`, lockOwner(pid, Date.now()))
      const store = yield* NodeMcpAuthStore.make({ path })
      yield* store.setTokens("https://x.example/mcp", tokens("at-x"))
      assert.strictEqual((yield* store.getTokens("https://x.example/mcp"))?.accessToken, "at-x")
      assert.isFalse(Fs.existsSync(`${path}.lock`))
    }))

  it.effect("a lock of a live process is waited for until it is 10 s old, then taken over", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      // held by this (live) process, taken at TestClock's 0
      Fs.writeFileSync(`${path}.lock`, lockOwner(process.pid, 0))
      const store = yield* NodeMcpAuthStore.make({ path })
      const fiber = yield* store.setTokens("https://x.example/mcp", tokens("at-x")).pipe(
        Effect.exit,
        Effect.forkChild({ startImmediately: true })
      )
      yield* advance(fiber, 9)
      assert.isUndefined(fiber.pollUnsafe(), "still waiting for the lock")
      assert.isFalse(Fs.existsSync(path))
      yield* advance(fiber, 3)
      assert.isTrue(Exit.isSuccess(yield* Fiber.join(fiber)))
      assert.strictEqual(JSON.parse(Fs.readFileSync(path, "utf8")).tokens["https://x.example/mcp"].accessToken, "at-x")
      assert.isFalse(Fs.existsSync(`${path}.lock`))
    }))

  it.effect("a lock that stays (never stale) fails the update after a bounded wait, the file untouched", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      Fs.writeFileSync(path, JSON.stringify({ version: 1, tokens: {}, clients: {} }))
      // a live owner whose lock is always fresh (its time far ahead)
      Fs.writeFileSync(`${path}.lock`, lockOwner(process.pid, Number.MAX_SAFE_INTEGER))
      const store = yield* NodeMcpAuthStore.make({ path })
      const fiber = yield* store.setTokens("https://x.example/mcp", tokens("at-x")).pipe(
        Effect.exit,
        Effect.forkChild({ startImmediately: true })
      )
      yield* advance(fiber, 14)
      assert.isUndefined(fiber.pollUnsafe(), "still waiting for the lock")
      yield* advance(fiber, 3)
      const exit = yield* Fiber.join(fiber)
      assert.isTrue(Exit.isFailure(exit))
      const failure = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      const error = failure?._tag === "Fail" ? failure.error : undefined
      assert.isTrue(McpError.isMcpError(error))
      assert.strictEqual(error?.reason._tag === "AuthError" ? error.reason.kind : undefined, "Storage")
      assert.include(error?.message ?? "", `${path}.lock`)
      assert.deepStrictEqual(JSON.parse(Fs.readFileSync(path, "utf8")).tokens, {})
      assert.isTrue(Fs.existsSync(`${path}.lock`), "someone else's lock is left alone")
    }))
})
