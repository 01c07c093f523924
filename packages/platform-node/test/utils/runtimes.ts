/**
 * The runtimes the tests run our servers on besides Node: Bun and Deno, their
 * binaries from the `bun` and `deno` devDependencies in node_modules (never a
 * global install), each running an entry (a path from the repository root)
 * from the TypeScript sources with the `development` condition. A missing
 * binary is an error that says what to do: these tests fail, they are never
 * skipped. `serveOn` runs an HTTP server entry on one of them for a test's scope.
 */
import { Deferred, Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root, where the runtimes run. */
export const root = fileURLToPath(new URL("../../../..", import.meta.url))

/** What a run may do on Deno (Bun asks nothing): read these variables, use the network on 127.0.0.1. */
export interface Permissions {
  readonly env?: ReadonlyArray<string> | undefined
  readonly net?: boolean | undefined
}

/** A runtime, installed by an npm package. */
export interface Runtime {
  readonly name: string
  /** The npm package that installs the binary. */
  readonly pkg: string
  /** The binary inside that package. */
  readonly binary: (packageDir: string) => string
  /** The arguments that run `entry`. */
  readonly args: (entry: string, permissions?: Permissions) => ReadonlyArray<string>
}

const windows = process.platform === "win32"

/** Bun and Deno. */
export const runtimes: ReadonlyArray<Runtime> = [
  {
    name: "Bun",
    pkg: "bun",
    // `bin/bun.exe` on every platform: the package's install script puts the native binary there
    binary: (dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin: { bun: string } }
      return join(dir, manifest.bin.bun)
    },
    // --no-install: resolve from node_modules only, never fetch a package
    args: (entry) => ["--no-install", "--conditions=development", entry]
  },
  {
    name: "Deno",
    pkg: "deno",
    // the native binary itself, not the package's `bin.cjs` (a Node wrapper that would sit between us and it)
    binary: (dir) => join(dir, windows ? "deno.exe" : "deno"),
    // only the permissions asked for; --no-prompt turns a missing one into an error.
    // With the network, --unstable-no-legacy-abort: `request.signal` aborts when the client goes away,
    // not also once a response was delivered (Deno's legacy behaviour, which it warns about on stderr).
    // Effect's web handler reads that signal as "the client aborted" and interrupts the request's fiber
    // on it, as on Bun and Node: the flag gives Deno the same meaning.
    // --node-modules-dir=manual: use the workspace's node_modules as it is, never install into it
    args: (entry, permissions = {}) => [
      "run",
      "--no-prompt",
      ...(permissions.env !== undefined && permissions.env.length > 0
        ? [`--allow-env=${permissions.env.join(",")}`]
        : []),
      ...(permissions.net === true ? ["--allow-net=127.0.0.1", "--unstable-no-legacy-abort"] : []),
      "--node-modules-dir=manual",
      "--conditions=development",
      entry
    ]
  }
]

const require = createRequire(join(root, "package.json"))

/** The runtime's binary from node_modules; a missing one is an error that says what to do. */
export const resolveBinary = (runtime: Runtime): string => {
  let dir: string
  try {
    dir = dirname(require.resolve(`${runtime.pkg}/package.json`))
  } catch {
    throw new Error(
      `${runtime.name}: the "${runtime.pkg}" devDependency is not installed in ${root}node_modules (run npm install)`
    )
  }
  const binary = runtime.binary(dir)
  if (!existsSync(binary)) {
    throw new Error(
      `${runtime.name}: no binary at ${binary} (the "${runtime.pkg}" package's install script did not run: npm rebuild ${runtime.pkg})`
    )
  }
  return binary
}

/** How a served process ended. */
export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** An HTTP server entry running on a runtime. */
export interface Served {
  /** The URL it printed (`listening on http://127.0.0.1:PORT/mcp`). */
  readonly url: string
  readonly pid: number
  /** Its stderr so far. */
  readonly stderr: () => string
  /** SIGTERM, then its exit status (at most 10 s before a SIGKILL). */
  readonly stop: Effect.Effect<Exited>
}

/**
 * The HTTP server `entry` (a path from the repository's root) run by `runtime`
 * for the scope, with the network on 127.0.0.1 and the variables of `env` (set
 * for the child, and on Deno allowed to be read): its URL once it printed
 * `listening on http://127.0.0.1:PORT/mcp` (at most 30 s), its pid, its stderr
 * so far, and `stop`. The scope's end stops it too.
 */
export const serveOn = (runtime: Runtime, entry: string, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.callback<Served>((resume) => {
      const child = spawn(resolveBinary(runtime), [...runtime.args(entry, { env: Object.keys(env), net: true })], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      const exited = Deferred.makeUnsafe<Exited>()
      child.on("exit", (code, signal) => Deferred.doneUnsafe(exited, Effect.succeed({ code, signal })))
      const stop = Effect.suspend(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
        return Deferred.await(exited).pipe(
          Effect.timeoutOrElse({
            duration: "10 seconds",
            orElse: () => Effect.andThen(Effect.sync(() => child.kill("SIGKILL")), Deferred.await(exited))
          })
        )
      })
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        resume(
          Effect.die(new Error(`${runtime.name}: no "listening on" within 30 s\nstdout: ${stdout}\nstderr: ${stderr}`))
        )
      }, 30_000)
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stdout)
        if (match !== null) {
          clearTimeout(timer)
          resume(Effect.succeed({ url: match[1]!, pid: child.pid!, stderr: () => stderr, stop }))
        }
      })
      child.on("exit", (code, signal) => {
        clearTimeout(timer)
        resume(
          Effect.die(
            new Error(
              `${runtime.name} exited (${code ?? signal}) before listening\nstdout: ${stdout}\nstderr: ${stderr}`
            )
          )
        )
      })
      return Effect.sync(() => child.kill("SIGKILL"))
    }),
    (server) => server.stop
  )
