/**
 * Ctrl-C on the real command: `bin/effect-mcp.js` as published, running the
 * bundle scripts/build-cli.mjs makes of the compiled packages (made here, in a
 * temporary directory laid out as the package, so that no build running
 * meanwhile in the repository changes what runs) over ten stdio servers that ignore
 * the end of their stdin and SIGTERM (platform-node's `fixtures/stubborn-server.mjs`), sent
 * SIGINT while it waits: it must exit (130) within 5 seconds and leave no
 * process behind. Each server's close is stdin's end, then SIGTERM, then
 * SIGKILL (about 2 s with the command's delays), so the ten must be closed
 * concurrently, and under `serve` the gateway's own sessions of them with the
 * group's.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { cpSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { processesWith, root, tempDir } from "./utils/cli.ts"

// the platform package's fixture (its group close test uses it with a grandchild)
const stubborn = join(root, "packages/platform-node/test/fixtures/stubborn-server.mjs")
const SERVERS = 10
const LIMIT_MS = 5_000
/** A run still alive this long after SIGINT is SIGKILLed (its servers are then left, and killed by the test). */
const KILL_AFTER_MS = 12_000

const servers = (env: Record<string, string>) =>
  Object.fromEntries(
    Array.from({ length: SERVERS }, (_, i) => [
      `stubborn${i + 1}`,
      { command: process.execPath, args: [stubborn], env, era: "legacy" }
    ])
  )
const files = tempDir({
  "silent.json": { mcpServers: servers({ STUBBORN_SILENT: "1" }) },
  "answering.json": { mcpServers: servers({}) }
})
/** The command as installed: bin/ and dist/bundle/, no build info beside them (the bin runs the bundle). */
const launcher = files.path("cli/bin/effect-mcp.js")

beforeAll(() => {
  execFileSync(process.execPath, [
    join(root, "scripts/build-cli.mjs"),
    "--quiet",
    "--outdir",
    files.path("cli/dist/bundle")
  ], {
    cwd: root,
    stdio: "pipe",
    timeout: 120_000
  })
  cpSync(join(root, "packages/cli/bin"), files.path("cli/bin"), { recursive: true })
  writeFileSync(files.path("cli/package.json"), JSON.stringify({ type: "module" }))
}, 180_000)
afterAll(() => files.cleanup())

interface Run {
  readonly pid: number
  readonly marker: string
  /** Resolves once stderr matches `pattern` `times` times (rejects after 30 s or at the end of the run). */
  readonly stderrCount: (pattern: RegExp, times: number) => Promise<void>
  readonly exited: Promise<{ readonly code: number | null; readonly signal: string | null; readonly stderr: string }>
  readonly kill: () => void
}

/** `node bin/effect-mcp.js ...args`, its processes marked by an `LC_*` variable the servers inherit. */
const start = (args: ReadonlyArray<string>): Run => {
  const id = randomUUID()
  const child = spawn(process.execPath, [launcher, ...args], {
    cwd: files.dir,
    env: { ...process.env, NO_COLOR: "1", LC_EFFECT_MCP_CLI_TEST_RUN: id },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  const listeners = new Set<() => void>()
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
    for (const listener of listeners) listener()
  })
  child.stdout.resume()
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on("close", (code, signal) => {
      for (const listener of listeners) listener()
      resolve({ code, signal, stderr })
    })
  )
  return {
    pid: child.pid!,
    marker: `EFFECT_MCP_CLI_TEST_RUN=${id}`,
    stderrCount: (pattern, times) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`not ${times} × ${pattern} on stderr within 30 s:\n${stderr}`)),
          30_000
        )
        const done = (error?: Error) => {
          clearTimeout(timer)
          listeners.delete(check)
          if (error === undefined) resolve()
          else reject(error)
        }
        const check = () => {
          if ((stderr.match(new RegExp(pattern, "g")) ?? []).length >= times) done()
          else if (child.exitCode !== null || child.signalCode !== null) {
            done(new Error(`the run ended before ${times} × ${pattern} on stderr:\n${stderr}`))
          }
        }
        listeners.add(check)
        check()
      }),
    exited,
    kill: () => child.kill("SIGKILL")
  }
}

/** SIGINT, then: the exit's code and how long it took, and what was left once it had exited. */
const interrupt = (run: Run) =>
  Effect.promise(async () => {
    const sent = performance.now()
    process.kill(run.pid, "SIGINT")
    const timer = setTimeout(run.kill, KILL_AFTER_MS)
    const exit = await run.exited
    const elapsed = performance.now() - sent
    clearTimeout(timer)
    // a SIGKILLed server may still be in /proc for a moment (reparented, not yet reaped)
    let left = processesWith(run.marker)
    for (let i = 0; i < 20 && left.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      left = processesWith(run.marker)
    }
    return { ...exit, elapsed, left }
  })

/** Exit 130 within the limit, nothing left: all three checked at once, so a failure tells the whole story. */
const assertQuickAndClean = (
  ended: {
    readonly code: number | null
    readonly signal: string | null
    readonly elapsed: number
    readonly left: ReadonlyArray<number>
    readonly stderr: string
  }
) =>
  assert.deepStrictEqual(
    { code: ended.code, withinLimit: ended.elapsed < LIMIT_MS, left: ended.left },
    { code: 130, withinLimit: true, left: [] },
    `exit ${ended.code ?? ended.signal} ${Math.round(ended.elapsed)} ms after SIGINT (SIGKILLed by the test after ${
      KILL_AFTER_MS / 1000
    } s), ` +
      `${ended.left.length} process(es) of the run left; stderr:\n${ended.stderr}`
  )

const cleanup = (run: Run) =>
  Effect.sync(() => {
    run.kill()
    for (const pid of processesWith(run.marker)) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // gone meanwhile
      }
    }
  })

describe("effect-mcp (bundled) and Ctrl-C over ten servers that ignore stdin's end and SIGTERM", () => {
  it.live(
    "list tools, every server still starting (none answers initialize): SIGINT exits 130 within 5 s, no process left",
    () =>
      Effect.gen(function*() {
        const run = start(["--config", files.path("silent.json"), "--verbose", "list", "tools"])
        yield* Effect.addFinalizer(() => cleanup(run))
        // --verbose passes the servers' stderr through: every one has read its initialize
        yield* Effect.promise(() => run.stderrCount(/stubborn \d+: got initialize/, SERVERS))
        assert.lengthOf(processesWith(run.marker), SERVERS + 1, "the command and its ten servers")
        assertQuickAndClean(yield* interrupt(run))
      }),
    60_000
  )

  it.live(
    "serve --port 0 (an interactive wait), every server up: SIGINT exits 130 within 5 s, no process left",
    () =>
      Effect.gen(function*() {
        const run = start(["--config", files.path("answering.json"), "serve", "--port", "0"])
        yield* Effect.addFinalizer(() => cleanup(run))
        yield* Effect.promise(() => run.stderrCount(/^effect-mcp: serving .* on http:\/\/127\.0\.0\.1:\d+\/mcp/m, 1))
        // the gateway may hold a second session (a process) of each legacy server, opened ahead
        assert.isAtLeast(processesWith(run.marker).length, SERVERS + 1, "the command and its ten servers")
        assertQuickAndClean(yield* interrupt(run))
      }),
    60_000
  )
})
