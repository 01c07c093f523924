/**
 * Runs the built `effect-mcp` (packages/cli/dist/bin.js, built by the
 * globalSetup) as a process, to its end (`runCli`) or watched and signalled
 * (`startCli`), and writes config files for it.
 */
import { assert } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { execFile, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../../..", import.meta.url))
export const bin = join(root, "packages/cli/dist/bin.js")
export const exampleServer = join(root, "scratchpad/example-server.ts")
export const weatherServer = join(root, "packages/cli/test/fixtures/weather-server.ts")
// the package's bin, resolved to its script so it runs on this Node
export const everything = realpathSync(join(root, "node_modules/.bin/mcp-server-everything"))

export interface Ran {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  /** The environment variable (NAME=value) every process of the run inherited. */
  readonly marker: string
}

/**
 * Runs `node dist/bin.js ...args` in `cwd` with a marker in its environment,
 * which the servers it spawns inherit (see {@link processesWith}).
 */
export const runCli = (
  args: ReadonlyArray<string>,
  options?: { readonly cwd?: string; readonly env?: Record<string, string>; readonly timeout?: number }
): Effect.Effect<Ran> =>
  Effect.callback<Ran>((resume) => {
    const id = randomUUID()
    const started = performance.now()
    const child = execFile(
      process.execPath,
      [bin, ...args],
      {
        cwd: options?.cwd ?? root,
        timeout: options?.timeout ?? 60_000,
        // SIGKILL: a SIGTERM would be handled (exit 130) and look like an answer
        killSignal: "SIGKILL",
        // an LC_* variable: the servers inherit it with the default environment
        env: { ...process.env, NO_COLOR: "1", ...options?.env, LC_EFFECT_MCP_CLI_TEST_RUN: id }
      },
      (error, stdout, stderr) => {
        if (process.env.CLI_TEST_TIMING) {
          process.stderr.write(`[${Math.round(performance.now() - started)} ms] ${args.join(" ")}\n`)
        }
        const failed = error as { code?: number | string; signal?: string } | null
        resume(Effect.succeed({
          code: failed === null ? 0 : typeof failed.code === "number" ? failed.code : null,
          signal: failed?.signal ?? null,
          stdout,
          stderr,
          marker: `EFFECT_MCP_CLI_TEST_RUN=${id}`
        }))
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** The pids of the live processes whose environment holds `marker`. */
export const processesWith = (marker: string): ReadonlyArray<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1").includes(marker) ? [Number(pid)] : []
    } catch {
      return [] // gone meanwhile, or not ours
    }
  })

/** A temporary directory with files in it; removed by `cleanup`. */
export const tempDir = (files: Record<string, unknown>) => {
  const dir = mkdtempSync(join(tmpdir(), "effect-mcp-cli-"))
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof content === "string" ? content : JSON.stringify(content, null, 2))
  }
  return { dir, path: (name: string) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Our example server and server-everything, over stdio. The example server
 * runs on the built packages (the globalSetup built them), which starts
 * faster than from sources.
 */
export const config = {
  mcpServers: {
    example: { command: process.execPath, args: [exampleServer] },
    everything: {
      command: process.execPath,
      args: [everything, "stdio"],
      // its gzip tool fetches a URL by default: let it fetch nothing
      env: { GZIP_ALLOWED_DOMAINS: "127.0.0.1" }
    }
  }
}

/** The run exited with `code` and left no process with its marker behind. */
export const assertExit = (ran: Ran, code: number): void => {
  assert.strictEqual(
    ran.code,
    code,
    `exit code ${ran.code} (signal ${ran.signal}), expected ${code}\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`
  )
  assert.deepStrictEqual(processesWith(ran.marker), [], "processes left behind")
}

/** A word quoted for `--stdio`'s command line (single quotes: taken as it is). */
export const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`

/** A run of the built bin that a test watches and signals (see {@link startCli}). */
export interface Running {
  readonly pid: number
  /** The environment variable (NAME=value) every process of the run inherited. */
  readonly marker: string
  /** Waits (up to 30 seconds) until stderr matches, and gives the match. */
  readonly stderrMatching: (pattern: RegExp) => Effect.Effect<RegExpMatchArray>
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Waits for the end (the run is killed after 60 seconds). */
  readonly exit: Effect.Effect<Ran>
}

/**
 * Starts `node dist/bin.js ...args` with a marker in its environment (see
 * {@link processesWith}), stdin ignored; killed (SIGKILL) when the scope
 * closes, or after 60 seconds.
 */
export const startCli = (args: ReadonlyArray<string>): Effect.Effect<Running, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const id = randomUUID()
      const child = spawn(process.execPath, [bin, ...args], {
        cwd: root,
        env: { ...process.env, NO_COLOR: "1", LC_EFFECT_MCP_CLI_TEST_RUN: id },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      const waiters = new Set<() => void>()
      child.stdout.on("data", (chunk) => stdout += chunk)
      child.stderr.on("data", (chunk) => {
        stderr += chunk
        for (const waiter of waiters) waiter()
      })
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
      const marker = `EFFECT_MCP_CLI_TEST_RUN=${id}`
      const ended = new Promise<Ran>((resolve) =>
        child.on("close", (code, signal) => {
          clearTimeout(timer)
          for (const waiter of waiters) waiter()
          resolve({ code, signal, stdout, stderr, marker })
        })
      )
      const running: Running = {
        pid: child.pid!,
        marker,
        stderrMatching: (pattern) =>
          Effect.callback<RegExpMatchArray, Error>((resume) => {
            const check = () => {
              const match = stderr.match(pattern)
              if (match !== null) {
                waiters.delete(check)
                resume(Effect.succeed(match))
              } else if (child.exitCode !== null || child.signalCode !== null) {
                waiters.delete(check)
                resume(Effect.fail(new Error(`the run ended without ${pattern} on stderr:\n${stderr}`)))
              }
            }
            waiters.add(check)
            check()
            return Effect.sync(() => waiters.delete(check))
          }).pipe(
            Effect.timeoutOrElse({
              duration: "30 seconds",
              orElse: () => Effect.fail(new Error(`no ${pattern} on stderr within 30 seconds:\n${stderr}`))
            }),
            Effect.orDie
          ),
        signal: (signal) => Effect.sync(() => void child.kill(signal)),
        exit: Effect.promise(() => ended)
      }
      return { running, kill: () => child.kill("SIGKILL") }
    }),
    ({ kill }) => Effect.sync(kill)
  ).pipe(Effect.map(({ running }) => running))
