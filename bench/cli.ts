/**
 * The `effect-mcp` command against the other MCP command-line clients, in
 * one run: the official MCP Inspector's CLI mode
 * (`@modelcontextprotocol/inspector-cli`, bin `mcp-inspector-cli`) and
 * `mcporter`, each doing the same thing against the same servers, with a bare
 * `node -e 0` as the floor. Every row is a command run to its end, timed from
 * its spawn to its exit (wall clock), `--runs` times.
 *
 * Workloads:
 * - `help`: `--help` (ours is the target: within 4× `node -e 0`);
 * - `one`: the tools of one stdio server (ours `--stdio "node server.mjs"
 *   list tools`, the Inspector `--cli node server.mjs --method tools/list`,
 *   mcporter `list --stdio "node server.mjs" --schema`);
 * - `ten`: the tools of ten copies of that server from a config file (ours
 *   `--config ten.json list tools --qualify`; mcporter `list --config
 *   ten.mcporter.json --json`, which connects to every server of the file; the
 *   Inspector takes one server a run (`--config ten.json --server sN`), so its
 *   row is ten runs started together, timed until the last ends).
 * Target: ours at most 0.5× the others' time for `one` and `ten`.
 *
 * The server is our echo server (`servers/startup-ours.mjs`) bundled for
 * production as README "Production" says (`bundleServer`, harness.ts), in a
 * temporary directory: it starts in about the time of `node -e 0` plus a
 * little, so the rows measure the clients.
 *
 * Rows of ours:
 * - `ours`: the command as published: `packages/cli/bin/effect-mcp.js` and
 *   the bundle `scripts/build-cli.mjs` makes of the compiled packages at the
 *   start of the run, laid out as in the package in a temporary directory (so
 *   that no build running meanwhile in the repository changes what runs), with
 *   Node's compile cache on (the bin turns it on; here in a directory of the
 *   run's own, warmed by the unmeasured first run);
 * - `ours-unbundled`: `packages/cli/dist/bin.js`, the compiled modules, with
 *   the compile cache (what the bin ran before it was bundled);
 * - `--no-compile-cache` runs both without the cache.
 *
 * Method: one unmeasured run of each row first (file cache, compile cache);
 * then `--runs` rounds, each running every row once, the order rotating every
 * round; medians, min–max and the interquartile range. CPU is the user +
 * system time of the whole process tree (this process's `cutime` + `cstime`
 * from `/proc/self/stat` around each run: the command and every process it
 * waited for, the servers included when the command reaps them; 10 ms ticks).
 * Every run must exit 0 with the tools listed; every process of a run carries
 * a marker in its environment (an `LC_*` variable, passed on to stdio servers
 * by all three), and none may be left at the end. `HOME` is a temporary
 * directory, so no user config (mcporter's editor imports, …) is read.
 *
 * Build first (`npm run build`: `tsc -b`, then the bundle): the run bundles
 * the compiled `dist/` of the packages.
 *
 * Usage:
 *   npm run bench:cli
 *   npm run bench:cli -- --runs 5 --only node,help-ours,one-ours,one-inspector
 *
 * Options (each also as an environment variable):
 *   --runs N            measured rounds (BENCH_CLI_RUNS, default 10)
 *   --only LIST         rows (BENCH_CLI_ONLY; default all), of: node, help-ours, help-ours-unbundled,
 *                       help-inspector, help-mcporter, one-ours, one-ours-unbundled, one-inspector,
 *                       one-mcporter, ten-ours, ten-ours-unbundled, ten-inspector, ten-mcporter
 *   --timeout S         hard limit of the run (BENCH_CLI_TIMEOUT, default 600)
 *   --no-compile-cache  ours without Node's compile cache
 *   --json FILE         the medians as JSON (or $BENCH_JSON_DIR/cli.json)
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  bundleServer,
  flag,
  hardTimeout,
  NODE,
  option,
  positiveInt,
  runMain,
  selection,
  track,
  writeJson
} from "./harness.ts"
import { median, percentile } from "./stats.ts"

const ALL = [
  "node",
  "help-ours",
  "help-ours-unbundled",
  "help-inspector",
  "help-mcporter",
  "one-ours",
  "one-ours-unbundled",
  "one-inspector",
  "one-mcporter",
  "ten-ours",
  "ten-ours-unbundled",
  "ten-inspector",
  "ten-mcporter"
] as const
type Row = (typeof ALL)[number]

const RUNS = positiveInt(option("runs", "BENCH_CLI_RUNS"), 10, "runs")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_CLI_TIMEOUT"), 600, "timeout")
const ROWS = selection(ALL, option("only", "BENCH_CLI_ONLY"))
const COMPILE_CACHE = !flag("no-compile-cache")
const SERVERS = 10

hardTimeout(TIMEOUT_S, "bench/cli")

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const OURS_UNBUNDLED = join(ROOT, "packages/cli/dist/bin.js")
/** A package's bin script, run with this Node (as `npx` would, without npx's own start-up). */
const binOf = (pkg: string, name: string): string => {
  const dir = join(ROOT, "node_modules", pkg)
  const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin: string | Record<string, string> }
  return realpathSync(join(dir, typeof json.bin === "string" ? json.bin : json.bin[name]!))
}
const INSPECTOR = binOf("@modelcontextprotocol/inspector-cli", "mcp-inspector-cli")
const MCPORTER = binOf("mcporter", "mcporter")

// -----------------------------------------------------------------------------
// Runs
// -----------------------------------------------------------------------------

const MARKER_NAME = "LC_BENCH_CLI_RUN"
const MARKER = randomUUID()
const WORK = mkdtempSync(join(tmpdir(), "bench-cli-"))
const HOME = join(WORK, "home")
mkdirSync(HOME)
// every command runs in WORK/run, under a package.json: `mcp-inspector-cli` 1.0.3 reads its own
// package.json with `import(existsSync("../package.json") ? "../package.json" : "../../package.json")`,
// the test relative to the working directory and the import relative to its module, so it fails
// ("Cannot find module …/@modelcontextprotocol/package.json") unless ../package.json exists here
const CWD = join(WORK, "run")
mkdirSync(CWD)
writeFileSync(join(WORK, "package.json"), "{}\n")

const BASE_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  // children that start `node` themselves (the Inspector's CLI) get this one
  PATH: `${dirname(NODE)}:${process.env.PATH ?? ""}`,
  HOME,
  NO_COLOR: "1",
  [MARKER_NAME]: MARKER
}
for (
  const key of [
    "NODE_OPTIONS",
    "NODE_COMPILE_CACHE",
    "NODE_DISABLE_COMPILE_CACHE",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "MCPORTER_CONFIG"
  ]
) {
  delete BASE_ENV[key]
}
/** Ours with the compile cache in a directory of the run (warmed by the unmeasured first run), or none. */
const oursEnv = (row: string): NodeJS.ProcessEnv =>
  COMPILE_CACHE
    ? { ...BASE_ENV, NODE_COMPILE_CACHE: join(WORK, "compile-cache", row) }
    : { ...BASE_ENV, NODE_DISABLE_COMPILE_CACHE: "1" }

/** user + system CPU of this process's reaped children (and theirs), in ms: `cutime` + `cstime`. */
const childrenCpuMs = (): number => {
  const stat = readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // fields[0] is field 3 (state); cutime and cstime are fields 16 and 17
  return (Number(fields[13]) + Number(fields[14])) * 10
}

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs one command to its end (60 s at most: then SIGKILL, and the run fails). */
const exec = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<Exited> =>
  new Promise((resolve) => {
    const child = spawn(NODE, args, { cwd: CWD, env, stdio: ["ignore", "pipe", "pipe"] })
    track(child.pid)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

interface Task {
  /** the command lines run together (one, or the Inspector's ten) */
  readonly commands: ReadonlyArray<ReadonlyArray<string>>
  readonly env: NodeJS.ProcessEnv
  /** what each run's output must show */
  readonly check: (runs: ReadonlyArray<Exited>) => string | undefined
  /** shown in the header */
  readonly shown: string
}

const count = (text: string, pattern: RegExp): number => (text.match(pattern) ?? []).length

const tasksOf = (ours: string, server: string, ten: string, tenMcporter: string): Record<Row, Task> => {
  const ok = (runs: ReadonlyArray<Exited>) =>
    runs.map((run) =>
      run.code === 0 ? undefined : `exit ${run.code ?? run.signal}: ${(run.stderr || run.stdout).slice(-600)}`
    )
      .find((problem) => problem !== undefined)
  const listed = (perRun: number, pattern: RegExp) => (runs: ReadonlyArray<Exited>) =>
    ok(runs) ?? runs.map((run) => {
      const found = count(run.stdout, pattern)
      return found >= perRun ? undefined : `${found} of ${perRun} tools listed: ${run.stdout.slice(0, 600)}`
    }).find((problem) => problem !== undefined)
  const help = (runs: ReadonlyArray<Exited>) =>
    ok(runs) ?? (/usage/i.test(runs[0]!.stdout + runs[0]!.stderr) ? undefined : "no usage text")
  const names = Array.from({ length: SERVERS }, (_, i) => `s${i + 1}`)
  return {
    node: { commands: [["-e", "0"]], env: BASE_ENV, check: ok, shown: "node -e 0" },
    "help-ours": { commands: [[ours, "--help"]], env: oursEnv("ours"), check: help, shown: "effect-mcp --help" },
    "help-ours-unbundled": {
      commands: [[OURS_UNBUNDLED, "--help"]],
      env: oursEnv("ours-unbundled"),
      check: help,
      shown: "node packages/cli/dist/bin.js --help"
    },
    "help-inspector": {
      commands: [[INSPECTOR, "--help"]],
      env: BASE_ENV,
      check: help,
      shown: "mcp-inspector-cli --help"
    },
    "help-mcporter": { commands: [[MCPORTER, "--help"]], env: BASE_ENV, check: help, shown: "mcporter --help" },
    "one-ours": {
      commands: [[ours, "--stdio", `${NODE} ${server}`, "list", "tools"]],
      env: oursEnv("ours"),
      check: listed(1, /^echo\s/gm),
      shown: `effect-mcp --stdio "node server.mjs" list tools`
    },
    "one-ours-unbundled": {
      commands: [[OURS_UNBUNDLED, "--stdio", `${NODE} ${server}`, "list", "tools"]],
      env: oursEnv("ours-unbundled"),
      check: listed(1, /^echo\s/gm),
      shown: "the same with dist/bin.js"
    },
    "one-inspector": {
      commands: [[INSPECTOR, "--cli", NODE, server, "--method", "tools/list"]],
      env: BASE_ENV,
      check: listed(1, /"name": "echo"/g),
      shown: "mcp-inspector-cli --cli node server.mjs --method tools/list"
    },
    "one-mcporter": {
      commands: [[MCPORTER, "list", "--stdio", `${NODE} ${server}`, "--schema"]],
      env: BASE_ENV,
      check: listed(1, /\becho\b/g),
      shown: `mcporter list --stdio "node server.mjs" --schema`
    },
    "ten-ours": {
      commands: [[ours, "--config", ten, "list", "tools", "--qualify"]],
      env: oursEnv("ours"),
      check: listed(SERVERS, /^s\d+_echo\s/gm),
      shown: "effect-mcp --config ten.json list tools --qualify"
    },
    "ten-ours-unbundled": {
      commands: [[OURS_UNBUNDLED, "--config", ten, "list", "tools", "--qualify"]],
      env: oursEnv("ours-unbundled"),
      check: listed(SERVERS, /^s\d+_echo\s/gm),
      shown: "the same with dist/bin.js"
    },
    "ten-inspector": {
      commands: names.map((name) => [INSPECTOR, "--config", ten, "--server", name, "--cli", "--method", "tools/list"]),
      env: BASE_ENV,
      check: listed(1, /"name": "echo"/g),
      shown: "10 × mcp-inspector-cli --config ten.json --server sN --cli --method tools/list, together"
    },
    "ten-mcporter": {
      commands: [[MCPORTER, "list", "--config", tenMcporter, "--json"]],
      env: BASE_ENV,
      check: listed(SERVERS, /"name": "echo"/g),
      shown: "mcporter list --config ten.mcporter.json --json"
    }
  }
}

interface Sample {
  readonly ms: number
  readonly cpuMs: number
}

const runTask = async (row: Row, task: Task): Promise<Sample> => {
  const cpuBefore = childrenCpuMs()
  const started = performance.now()
  const runs = await Promise.all(task.commands.map((command) => exec(command, task.env)))
  const ms = performance.now() - started
  const cpuMs = childrenCpuMs() - cpuBefore
  const problem = task.check(runs)
  if (problem !== undefined) throw new Error(`${row} (${task.shown}): ${problem}`)
  return { ms, cpuMs }
}

// -----------------------------------------------------------------------------
// Leftovers
// -----------------------------------------------------------------------------

/** Live processes carrying the run's marker (any row's command or server). */
const marked = (): Array<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1").includes(`${MARKER_NAME}=${MARKER}`) ? [Number(pid)] : []
    } catch {
      return []
    }
  })

const waitUnmarked = async (ms: number): Promise<Array<number>> => {
  const deadline = performance.now() + ms
  let alive = marked()
  while (alive.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    alive = marked()
  }
  return alive
}

// -----------------------------------------------------------------------------
// Main
// -----------------------------------------------------------------------------

const fmt = (ms: number) => `${ms.toFixed(0)} ms`
const pad = (text: string, width: number) => text.padEnd(width)
const padStart = (text: string, width: number) => text.padStart(width)

const main = async () => {
  // the command as a package: bin/ and dist/bundle/ (no build info beside them: the bin runs the bundle)
  const oursBin = join(WORK, "cli/bin/effect-mcp.js")
  if (ROWS.some((row) => row.endsWith("-ours"))) {
    const built = await exec([
      join(ROOT, "scripts/build-cli.mjs"),
      "--quiet",
      "--outdir",
      join(WORK, "cli/dist/bundle")
    ], BASE_ENV)
    if (built.code !== 0) {
      throw new Error(`scripts/build-cli.mjs failed (run \`npm run build\` first?):\n${built.stderr}${built.stdout}`)
    }
    cpSync(join(ROOT, "packages/cli/bin"), join(WORK, "cli/bin"), { recursive: true })
    writeFileSync(join(WORK, "cli/package.json"), JSON.stringify({ type: "module" }) + "\n")
  }
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
  console.log(
    `node ${process.version}, ${RUNS} rounds, load ${load}; ours ${
      COMPILE_CACHE ? "with" : "without"
    } Node's compile cache`
  )

  const bundle = await bundleServer(join(ROOT, "bench/servers/startup-ours.mjs"), join(WORK, "server"))
  console.log(
    `server: bench/servers/startup-ours.mjs bundled (${bundle.files} file(s), ${(bundle.bytes / 1024).toFixed(0)} KB)`
  )
  const servers = Object.fromEntries(
    Array.from({ length: SERVERS }, (_, i) => [`s${i + 1}`, { command: NODE, args: [bundle.file] }])
  )
  const ten = join(WORK, "ten.json")
  writeFileSync(ten, JSON.stringify({ mcpServers: servers }, null, 2))
  // mcporter: no imports of editors' configs
  const tenMcporter = join(WORK, "ten.mcporter.json")
  writeFileSync(tenMcporter, JSON.stringify({ mcpServers: servers, imports: [] }, null, 2))
  const tasks = tasksOf(oursBin, bundle.file, ten, tenMcporter)

  for (const row of ROWS) {
    console.log(`  ${pad(row, 20)} ${tasks[row].shown}`)
    await runTask(row, tasks[row])
  }
  const samples = new Map<Row, Array<Sample>>(ROWS.map((row) => [row, []]))
  for (let round = 0; round < RUNS; round++) {
    const order = ROWS.map((_, i) => ROWS[(i + round) % ROWS.length]!)
    for (const row of order) samples.get(row)!.push(await runTask(row, tasks[row]))
  }

  const stats = (row: Row) => {
    const list = samples.get(row)!
    const times = list.map((sample) => sample.ms).sort((a, b) => a - b)
    return {
      median: median(times),
      min: times[0]!,
      max: times.at(-1)!,
      q1: percentile(times, 0.25),
      q3: percentile(times, 0.75),
      cpu: median(list.map((sample) => sample.cpuMs))
    }
  }
  console.log(
    `\n${pad("row", 22)}${padStart("median", 10)}${padStart("min–max", 14)}${padStart("IQR", 14)}${
      padStart("CPU (tree)", 12)
    }`
  )
  for (const row of ROWS) {
    const s = stats(row)
    console.log(
      `${pad(row, 22)}${padStart(fmt(s.median), 10)}${padStart(`${s.min.toFixed(0)}–${s.max.toFixed(0)}`, 14)}${
        padStart(`${s.q1.toFixed(0)}–${s.q3.toFixed(0)}`, 14)
      }${padStart(fmt(s.cpu), 12)}`
    )
  }

  // the targets: medians of per-round ratios (rounds interleave the rows, so noise hits them alike)
  const ratio = (a: Row, b: Row): number | undefined =>
    ROWS.includes(a) && ROWS.includes(b)
      ? median(samples.get(a)!.map((sample, i) => sample.ms / samples.get(b)![i]!.ms))
      : undefined
  const ratios: Array<{ readonly what: string; readonly value: number; readonly target: number }> = []
  const target = (what: string, a: Row, b: Row, limit: number) => {
    const value = ratio(a, b)
    if (value !== undefined) ratios.push({ what, value, target: limit })
  }
  target("effect-mcp --help / node -e 0", "help-ours", "node", 4)
  for (const workload of ["one", "ten"] as const) {
    for (const other of ["inspector", "mcporter"] as const) {
      target(
        `list tools, ${workload === "one" ? "one server" : "ten servers"}: ours / ${other}`,
        `${workload}-ours`,
        `${workload}-${other}`,
        0.5
      )
    }
    target(
      `list tools, ${workload === "one" ? "one server" : "ten servers"}: bundled / unbundled`,
      `${workload}-ours`,
      `${workload}-ours-unbundled`,
      1
    )
  }
  target("--help: bundled / unbundled", "help-ours", "help-ours-unbundled", 1)
  if (ratios.length > 0) {
    console.log("\nratios (medians of per-round ratios)")
    for (const { target: limit, value, what } of ratios) {
      console.log(
        `  ${pad(what, 52)}${padStart(`${value.toFixed(2)}×`, 8)}   target ≤ ${limit}×: ${
          value <= limit ? "met" : "NOT met"
        }`
      )
    }
  }

  writeJson("cli", {
    runs: RUNS,
    compileCache: COMPILE_CACHE,
    rows: ROWS.map((row) => ({
      row,
      shown: tasks[row].shown,
      ...stats(row),
      samples: samples.get(row)!.map((s) => s.ms)
    })),
    ratios
  })

  const left = await waitUnmarked(5_000)
  rmSync(WORK, { recursive: true, force: true })
  if (left.length > 0) {
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // gone meanwhile
      }
    }
    throw new Error(
      `${left.length} process(es) of the runs were still alive at the end and were killed: ${left.join(", ")}`
    )
  }
  console.log("no process of any run is left")
}

runMain(main, { exit: true })
