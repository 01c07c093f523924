/**
 * Start-up of a stdio server: how many modules it loads, how long it takes
 * from the spawn to the answer of its first `initialize`, and its memory then.
 * effect-mcp's echo server, written the README's way (`servers/startup-ours.mjs`:
 * effect-mcp from its package barrels, effect module by module), against the
 * same server with `effect`'s barrel too (`servers/startup-ours-barrels.mjs`:
 * `import { Effect, Layer, Schema } from "effect"`, what effect's barrel
 * costs), imported module by module (`servers/startup-ours-paths.mjs`, the
 * floor our barrels are compared with), and the official SDK's
 * (`servers/stdio-official.mjs`: `McpServer` + zod + `StdioServerTransport`).
 * `effect-floor` (`servers/startup-effect-floor.mjs`) loads the effect modules
 * our server imports itself and answers by hand: what `ours-paths` and `ours`
 * take beyond it ("on top of effect", printed after the tables) is our share.
 *
 * Every server runs with plain `node` from the compiled `dist/` (no
 * `--conditions=development`, no type stripping), as an installed package
 * would: run `npx tsc -b` first (the script warns when a source file changed
 * after the last build). `NODE_OPTIONS` is not passed to the servers.
 *
 * Method:
 * - time to first answer: `performance.now()` from just before `spawn` to the
 *   arrival of the `initialize` response line on the server's stdout (the
 *   request is written at once; the server reads it when it is ready).
 * - CPU: the server's user + system time (`/proc/<pid>/stat`, 10 ms ticks)
 *   when that answer arrives, steadier than the time on a busy machine.
 * - RSS: `VmRSS` of `/proc/<pid>/status` when that answer arrives (and
 *   `VmHWM`, the peak so far). Then `notifications/initialized` and one
 *   `tools/call` of `echo` check that the server works, and stdin is closed.
 * - modules: a separate run per server with `--import servers/startup-count.mjs`,
 *   which records every module loaded (ES modules and CommonJS, through
 *   `module.registerHooks`) and writes the list on SIGUSR2, sent once the
 *   `tools/call` answer arrived. Counted: files, and `node:` built-ins
 *   apart (CommonJS packages' built-ins are not all seen). The list is
 *   grouped by package (`effect` by folder).
 * - `--runs` timed runs per server (default 7), the order of the servers
 *   rotating every run; medians, min and max. One unmeasured spawn of each
 *   server first warms the file cache.
 *
 * Usage:
 *   npm run bench:startup
 *   node bench/startup.ts --runs 11 --only ours,official
 *   node bench/startup.ts --list ours     # also print every module ours loads
 *
 * Options (each also as an environment variable):
 *   --runs N        timed runs per server (BENCH_STARTUP_RUNS, default 7)
 *   --only LIST     subset of ours,ours-barrels,ours-paths,effect-floor,official,ours-bundled,official-bundled
 *                   (BENCH_STARTUP_ONLY)
 *   --list LIST     servers whose full module list is printed (BENCH_STARTUP_LIST)
 *   --timeout S     hard limit of the whole run (BENCH_STARTUP_TIMEOUT, default 120)
 *   --json FILE     write the medians as JSON (or into $BENCH_JSON_DIR/startup.json)
 *   --compile-cache every server runs with Node's compile cache (`NODE_COMPILE_CACHE`,
 *                   a fresh directory per server, filled by its unmeasured first
 *                   run) (BENCH_STARTUP_COMPILE_CACHE=1)
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import {
  assertAllGone,
  bundleServer,
  flag,
  hardTimeout,
  NODE,
  option,
  positiveInt,
  processCpuMicros,
  runMain,
  selection,
  track,
  waitGone,
  writeJson
} from "./harness.ts"
import { median } from "./stats.ts"

const ALL = [
  "ours",
  "ours-barrels",
  "ours-paths",
  "effect-floor",
  "official",
  "ours-bundled",
  "official-bundled"
] as const
type Impl = (typeof ALL)[number]

const RUNS = positiveInt(option("runs", "BENCH_STARTUP_RUNS"), 7, "runs")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_STARTUP_TIMEOUT"), 120, "timeout")
const IMPLS = selection(ALL, option("only", "BENCH_STARTUP_ONLY"))
const LIST_OPTION = option("list", "BENCH_STARTUP_LIST")
const LISTED = new Set<Impl>(LIST_OPTION === undefined ? [] : selection(ALL, LIST_OPTION))
const COMPILE_CACHE = flag("compile-cache") ||
  ["1", "yes", "true"].includes(process.env.BENCH_STARTUP_COMPILE_CACHE ?? "")

hardTimeout(TIMEOUT_S, "bench/startup")

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const SERVERS: Record<Impl, string> = {
  ours: join(ROOT, "bench/servers/startup-ours.mjs"),
  "ours-barrels": join(ROOT, "bench/servers/startup-ours-barrels.mjs"),
  "ours-paths": join(ROOT, "bench/servers/startup-ours-paths.mjs"),
  "effect-floor": join(ROOT, "bench/servers/startup-effect-floor.mjs"),
  official: join(ROOT, "bench/servers/stdio-official.mjs"),
  // written by `bundle` below, before the first run
  "ours-bundled": "",
  "official-bundled": ""
}
/** The rows bundled for production, and the server each one bundles. */
const BUNDLED: ReadonlyArray<readonly [Impl, Impl]> = [["ours-bundled", "ours"], ["official-bundled", "official"]]
const COUNTER = join(ROOT, "bench/servers/startup-count.mjs")

const CHILD_ENV: NodeJS.ProcessEnv = { ...process.env }
delete CHILD_ENV.NODE_OPTIONS
delete CHILD_ENV.NODE_COMPILE_CACHE

/** With `--compile-cache`: each server's own cache directory, filled by its first (unmeasured) run. */
const CACHE_ROOT = COMPILE_CACHE ? mkdtempSync(join(tmpdir(), "bench-startup-cache-")) : undefined
const envOf = (impl: Impl): NodeJS.ProcessEnv =>
  CACHE_ROOT === undefined ? CHILD_ENV : { ...CHILD_ENV, NODE_COMPILE_CACHE: join(CACHE_ROOT, impl) }

// -----------------------------------------------------------------------------
// dist freshness
// -----------------------------------------------------------------------------

/** Source files changed since the last build of their package (`tsc -b`'s own test: newer than the build info). */
const staleDist = (): Array<string> => {
  const stale: Array<string> = []
  for (const pkg of ["core", "platform-node"]) {
    const src = join(ROOT, "packages", pkg, "src")
    const info = join(ROOT, "packages", pkg, "dist", ".tsbuildinfo")
    const built = existsSync(info) ? statSync(info).mtimeMs : -Infinity
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (entry.name.endsWith(".ts") && statSync(path).mtimeMs > built) stale.push(relative(ROOT, path))
      }
    }
    walk(src)
  }
  return stale
}

// -----------------------------------------------------------------------------
// Production bundles
// -----------------------------------------------------------------------------

/** The `-bundled` rows: the same servers bundled by `bundleServer` (harness.ts), in a temporary directory. */
const BUNDLE_ROOT = IMPLS.some((impl) => impl.endsWith("-bundled"))
  ? mkdtempSync(join(tmpdir(), "bench-startup-bundles-"))
  : undefined
const bundle = async (): Promise<void> => {
  if (BUNDLE_ROOT === undefined) return
  for (const [impl, source] of BUNDLED) {
    if (!IMPLS.includes(impl)) continue
    const { file, files, bytes } = await bundleServer(SERVERS[source], join(BUNDLE_ROOT, impl))
    console.log(`${impl}: ${source}'s server bundled (${files} file(s), ${(bytes / 1024).toFixed(0)} KB)`)
    SERVERS[impl] = file
  }
}

// -----------------------------------------------------------------------------
// One server run
// -----------------------------------------------------------------------------

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-startup", version: "0.0.0" } }
}
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }
const TEXT = "The quick brown fox jumps over the lazy dog"
const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: TEXT } } }

interface Run {
  /** ms from spawn to the `initialize` answer */
  readonly firstAnswer: number
  /** bytes, at the first answer */
  readonly rss: number
  readonly hwm: number
  /** µs of CPU (user + system, all threads) at the first answer: less sensitive to a busy machine than the time */
  readonly cpu: number
  /** with the counter: the loaded module URLs */
  readonly modules?: ReadonlyArray<string>
}

const statusField = (pid: number, field: string): number => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? NaN : Number(match[1]) * 1024
}

const runServer = (impl: Impl, count: boolean): Promise<Run> =>
  new Promise<Run>((resolve, reject) => {
    const out = count ? join(mkdtempSync(join(tmpdir(), "bench-startup-")), "modules.json") : undefined
    const args = count ? ["--import", COUNTER, SERVERS[impl]] : [SERVERS[impl]]
    const started = performance.now()
    const child = spawn(NODE, args, {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
      env: out === undefined ? envOf(impl) : { ...envOf(impl), STARTUP_COUNT_OUT: out }
    })
    const pid = child.pid
    if (pid === undefined) return reject(new Error(`cannot spawn ${impl}`))
    track(pid)
    child.stdin.write(JSON.stringify(initialize) + "\n")
    let firstAnswer = NaN
    let rss = NaN
    let hwm = NaN
    let cpu = NaN
    let buffer = ""
    let settled = false
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      child.kill("SIGKILL")
      reject(error)
    }
    const finish = (modules: ReadonlyArray<string> | undefined) => {
      settled = true
      // the official server does not exit when stdin ends: SIGTERM it after a moment
      child.stdin.end()
      const term = setTimeout(() => child.kill("SIGTERM"), 1000)
      void waitGone([pid], 5000).then((alive) => {
        clearTimeout(term)
        if (alive.length > 0) {
          child.kill("SIGKILL")
          return reject(new Error(`${impl}: server ${pid} still alive 5 s after stdin closed`))
        }
        resolve({ firstAnswer, rss, hwm, cpu, ...(modules === undefined ? {} : { modules }) })
      })
    }
    child.on("exit", (code, signal) => fail(new Error(`${impl} exited early (${code ?? signal})`)))
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      buffer += chunk
      let newline: number
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        const message = JSON.parse(line) as {
          readonly id?: unknown
          readonly result?: {
            readonly protocolVersion?: unknown
            readonly content?: ReadonlyArray<{ readonly text?: unknown }>
          }
        }
        if (message.id === 1) {
          firstAnswer = performance.now() - started
          rss = statusField(pid, "VmRSS")
          hwm = statusField(pid, "VmHWM")
          cpu = processCpuMicros(pid)
          if (message.result?.protocolVersion === undefined) {
            return fail(new Error(`${impl}: bad initialize answer ${line}`))
          }
          child.stdin.write(JSON.stringify(initialized) + "\n" + JSON.stringify(call) + "\n")
        } else if (message.id === 2) {
          if (message.result?.content?.[0]?.text !== TEXT) return fail(new Error(`${impl}: bad echo answer ${line}`))
          if (out === undefined) return finish(undefined)
          child.kill("SIGUSR2")
          // the counter writes the list synchronously in its signal handler
          const poll = setInterval(() => {
            if (!existsSync(out)) return
            clearInterval(poll)
            const modules = JSON.parse(readFileSync(out, "utf8")) as Array<string>
            rmSync(join(out, ".."), { recursive: true, force: true })
            finish(modules)
          }, 10)
        }
      }
    })
  })

// -----------------------------------------------------------------------------
// Module groups
// -----------------------------------------------------------------------------

/** A module's group: `node:*`, a package (`effect` by folder), our packages by package. */
const groupOf = (url: string): string => {
  if (url.startsWith("node:")) return "node: built-ins"
  const path = url.startsWith("file:") ? fileURLToPath(url) : url
  if (path.includes("/bench-startup-bundles-")) return "(the bundle)"
  const ours = /\/packages\/(core|platform-node)\/dist\//.exec(path)
  if (ours !== null) return `@effect-mcp/${ours[1]}`
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path)
  if (pkg === null) return "(the server file)"
  if (pkg[1] === "effect") {
    const folder = /^dist\/([^/]+)\//.exec(pkg[2]!)
    return folder === null ? "effect" : `effect/${folder[1]}`
  }
  return pkg[1]!
}

const countFiles = (modules: ReadonlyArray<string>) => modules.filter((url) => !url.startsWith("node:")).length
const countBuiltins = (modules: ReadonlyArray<string>) => modules.filter((url) => url.startsWith("node:")).length

// -----------------------------------------------------------------------------
// Main
// -----------------------------------------------------------------------------

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const ms = (value: number) => `${value.toFixed(0)} ms`
const pad = (text: string, width: number) => text.padEnd(width)
const padStart = (text: string, width: number) => text.padStart(width)

const main = async () => {
  const stale = staleDist()
  if (stale.length > 0) {
    console.warn(
      `warning: ${stale.length} source file(s) newer than dist/ (run npx tsc -b): ${stale.slice(0, 5).join(", ")}${
        stale.length > 5 ? ", …" : ""
      }`
    )
  }
  console.log(
    `node ${process.version}, ${RUNS} timed runs per server, from dist/ with plain node${
      COMPILE_CACHE ? ", with NODE_COMPILE_CACHE (warmed by the first run)" : ""
    }\n`
  )

  await bundle()
  // modules, and a warm-up of the file cache
  const modules = new Map<Impl, ReadonlyArray<string>>()
  for (const impl of IMPLS) modules.set(impl, (await runServer(impl, true)).modules!)

  const runs = new Map<Impl, Array<Run>>(IMPLS.map((impl) => [impl, []]))
  for (let round = 0; round < RUNS; round++) {
    const order = IMPLS.map((_, i) => IMPLS[(i + round) % IMPLS.length]!)
    for (const impl of order) runs.get(impl)!.push(await runServer(impl, false))
  }

  console.log(
    `${pad("server", 18)}${padStart("modules", 9)}${padStart("node:", 7)}${padStart("first answer", 14)}${
      padStart("min–max", 14)
    }${padStart("CPU", 10)}${padStart("RSS", 10)}${padStart("peak RSS", 10)}`
  )
  for (const impl of IMPLS) {
    const list = modules.get(impl)!
    const times = runs.get(impl)!.map((run) => run.firstAnswer)
    console.log(
      `${pad(impl, 18)}${padStart(String(countFiles(list)), 9)}${padStart(String(countBuiltins(list)), 7)}${
        padStart(ms(median(times)), 14)
      }${padStart(`${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)}`, 14)}${
        padStart(ms(median(runs.get(impl)!.map((run) => run.cpu)) / 1000), 10)
      }${padStart(mb(median(runs.get(impl)!.map((run) => run.rss))), 10)}${
        padStart(mb(median(runs.get(impl)!.map((run) => run.hwm))), 10)
      }`
    )
  }

  // modules by group
  const groups = new Map<string, Map<Impl, number>>()
  for (const impl of IMPLS) {
    for (const url of modules.get(impl)!) {
      const group = groupOf(url)
      const counts = groups.get(group) ?? new Map<Impl, number>()
      counts.set(impl, (counts.get(impl) ?? 0) + 1)
      groups.set(group, counts)
    }
  }
  const total = (group: string) => Math.max(...IMPLS.map((impl) => groups.get(group)!.get(impl) ?? 0))
  console.log(
    `\nmodules by package (effect by folder)\n${pad("", 32)}${IMPLS.map((impl) => padStart(impl, 17)).join("")}`
  )
  for (const group of [...groups.keys()].sort((a, b) => total(b) - total(a) || a.localeCompare(b))) {
    console.log(
      `${pad(group, 32)}${IMPLS.map((impl) => padStart(String(groups.get(group)!.get(impl) ?? "·"), 17)).join("")}`
    )
  }

  // ours on top of effect's own graph: per-round differences against effect-floor (rounds interleave the rows)
  const onTop = IMPLS.includes("effect-floor")
    ? (["ours-paths", "ours", "ours-barrels"] as const).filter((impl) => IMPLS.includes(impl)).map((impl) => {
      const floor = runs.get("effect-floor")!
      const own = runs.get(impl)!
      const list = modules.get(impl)!
      return {
        impl,
        modules: countFiles(list) - countFiles(modules.get("effect-floor")!),
        ourModules: list.filter((url) => /^@effect-mcp\//.test(groupOf(url))).length,
        firstAnswer: median(own.map((run, i) => run.firstAnswer - floor[i]!.firstAnswer)),
        cpu: median(own.map((run, i) => run.cpu - floor[i]!.cpu)) / 1000
      }
    })
    : []
  if (onTop.length > 0) {
    console.log(`
on top of effect's own graph (against effect-floor; medians of per-round differences)`)
    console.log(
      `${pad("server", 18)}${padStart("+modules", 10)}${padStart("of ours", 9)}${padStart("+first answer", 15)}${
        padStart("+CPU", 9)
      }`
    )
    for (const row of onTop) {
      console.log(
        `${pad(row.impl, 18)}${padStart(String(row.modules), 10)}${padStart(String(row.ourModules), 9)}${
          padStart(ms(row.firstAnswer), 15)
        }${padStart(ms(row.cpu), 9)}`
      )
    }
  }

  for (const impl of IMPLS.filter((impl) => LISTED.has(impl))) {
    console.log(`\nmodules of ${impl}, in load order:`)
    for (const url of modules.get(impl)!) {
      console.log(`  ${url.startsWith("file:") ? relative(ROOT, fileURLToPath(url)) : url}`)
    }
  }
  console.log("")
  // --json FILE or $BENCH_JSON_DIR/startup.json (read by summary.ts)
  writeJson("startup", {
    runs: RUNS,
    startup: IMPLS.map((impl) => {
      const list = runs.get(impl)!
      return {
        impl,
        modules: countFiles(modules.get(impl)!),
        builtins: countBuiltins(modules.get(impl)!),
        firstAnswer: median(list.map((run) => run.firstAnswer)),
        cpu: median(list.map((run) => run.cpu)),
        rss: median(list.map((run) => run.rss)),
        hwm: median(list.map((run) => run.hwm)),
        firstAnswers: list.map((run) => run.firstAnswer)
      }
    }),
    onTop
  })
  if (CACHE_ROOT !== undefined) rmSync(CACHE_ROOT, { recursive: true, force: true })
  if (BUNDLE_ROOT !== undefined) rmSync(BUNDLE_ROOT, { recursive: true, force: true })
  await assertAllGone()
}

runMain(main, { exit: true })
