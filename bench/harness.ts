/**
 * Shared pieces of the cross-process benchmarks (`stdio.ts`, `http.ts`,
 * `connect.ts`): options, closed loops (Effect and Promise), CPU and memory of
 * child processes from `/proc`, child-process bookkeeping (every spawned pid
 * is tracked and checked gone at the end) and the report tables.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { formatMicros, median, percentile } from "./stats.ts"

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

const argv = process.argv.slice(2)

/** `--name value`, `--name=value`, or the environment variable `env`. */
export const option = (name: string, env: string): string | undefined => {
  const index = argv.indexOf(`--${name}`)
  if (index >= 0) return argv[index + 1]
  const prefixed = argv.find((arg) => arg.startsWith(`--${name}=`))
  if (prefixed !== undefined) return prefixed.slice(name.length + 3)
  return process.env[env]
}

export const flag = (name: string): boolean => argv.includes(`--${name}`)

export const positiveInt = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive integer, got ${value}`)
  return parsed
}

export const intList = (value: string, name: string): ReadonlyArray<number> =>
  value.split(",").map((item) => positiveInt(item.trim(), 1, name))

/** `--only a,b` against the known names, in the known order. */
export const selection = <A extends string>(all: ReadonlyArray<A>, value: string | undefined): ReadonlyArray<A> => {
  if (value === undefined) return all
  const wanted = value.split(",").map((name) => name.trim())
  for (const name of wanted) {
    if (!(all as ReadonlyArray<string>).includes(name)) {
      throw new Error(`--only takes a list of ${all.join(", ")}; got ${value}`)
    }
  }
  return all.filter((name) => wanted.includes(name))
}

// -----------------------------------------------------------------------------
// JSON output (read by `summary.ts`)
// -----------------------------------------------------------------------------

/**
 * Where a script writes its medians as JSON: `--json FILE`, else
 * `$BENCH_JSON_DIR/<name>.json`, else nowhere.
 */
export const jsonTarget = (name: string): string | undefined => {
  const file = option("json", "BENCH_JSON_FILE")
  if (file !== undefined) return file
  const dir = process.env.BENCH_JSON_DIR
  return dir === undefined || dir === "" ? undefined : join(dir, `${name}.json`)
}

/** Writes `data` (with the script's name, the date, node and the load average) when a JSON target is set. */
export const writeJson = (name: string, data: Record<string, unknown>): void => {
  const file = jsonTarget(name)
  if (file === undefined) return
  mkdirSync(dirname(file), { recursive: true })
  const loadavg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number)
  writeFileSync(
    file,
    JSON.stringify({ bench: name, date: new Date().toISOString(), node: process.version, loadavg, ...data }, null, 2) +
      "\n"
  )
  console.log(`medians written to ${file}`)
}

/**
 * The protocol revision each row's client negotiated (`impl` → version),
 * printed under the tables and written to the JSON: which era a row really
 * measures.
 */
export const protocols = new Map<string, string>()

export const noteProtocol = (impl: string, version: string): void => {
  const known = protocols.get(impl)
  if (known !== undefined && known !== version) throw new Error(`${impl}: negotiated ${version}, earlier ${known}`)
  protocols.set(impl, version)
}

/** Records the version the official `Client` negotiates on `transport` (it calls `setProtocolVersion` after `initialize`). */
export const watchOfficialProtocol = <T extends object>(impl: string, transport: T): T => {
  const target = transport as { setProtocolVersion?: (version: string) => void }
  const original = target.setProtocolVersion?.bind(transport)
  target.setProtocolVersion = (version: string) => {
    noteProtocol(impl, version)
    original?.(version)
  }
  return transport
}

export const printProtocols = (): void => {
  if (protocols.size === 0) return
  console.log(`negotiated: ${[...protocols].map(([impl, version]) => `${impl} ${version}`).join(", ")}`)
}

/**
 * Warm-up calls before a measurement: at least 2,000 (below that both SDKs
 * are still compiling their hot paths, and the rows measure warm-up, not the
 * cost of a call), or a tenth of the calls.
 */
export const warmupFor = (calls: number): number => Math.max(2000, Math.floor(calls / 10))

export const TEXT = "The quick brown fox jumps over the lazy dog"
export const gc = (globalThis as { gc?: () => void }).gc
export const clientInfo = { name: "bench-client", version: "0.0.0" }

export const checkEcho = (content: ReadonlyArray<unknown> | undefined): void => {
  const first = content?.[0] as { readonly type?: unknown; readonly text?: unknown } | undefined
  if (first?.type !== "text" || first.text !== TEXT) {
    throw new Error(`unexpected echo result: ${JSON.stringify(content)}`)
  }
}

// -----------------------------------------------------------------------------
// Child processes
// -----------------------------------------------------------------------------

/**
 * The Node binary running the bench, and the flags of our servers: by default
 * `--conditions=development` (the packages' TypeScript sources, type-stripped
 * by Node at load); with `BENCH_OURS_DIST=1`, none, so the packages resolve to
 * their compiled `dist/` (run `npx tsc -b` first), as an installed package would.
 */
export const NODE = process.execPath
export const OURS_DIST = process.env.BENCH_OURS_DIST === "1"
export const TS_FLAGS: ReadonlyArray<string> = OURS_DIST ? [] : ["--conditions=development"]
/**
 * Extra Node flags for every server child, from `BENCH_SERVER_FLAGS` (split on
 * spaces), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the servers.
 */
export const SERVER_FLAGS: ReadonlyArray<string> = (process.env.BENCH_SERVER_FLAGS ?? "").split(" ").filter((f) =>
  f !== ""
)

/** A server file bundled for production by `bundleServer`. */
export interface Bundle {
  /** the entry module to run with `node` */
  readonly file: string
  /** modules written: the entry and one chunk per lazily imported module */
  readonly files: number
  readonly bytes: number
}

/**
 * Bundles a server file as README "Production" says:
 * rolldown, one minified ES module (plus a chunk per lazily imported module)
 * with every dependency inside, written to `dir` as `server.mjs`. Our packages
 * come from their `dist/` (run `npx tsc -b` first).
 */
export const bundleServer = async (input: string, dir: string): Promise<Bundle> => {
  const { build } = await import("rolldown")
  const output = await build({
    input,
    platform: "node",
    logLevel: "silent",
    output: { dir, format: "esm", minify: true, entryFileNames: "server.mjs" }
  })
  const chunks = output.output.filter((file) => file.type === "chunk")
  return {
    file: join(dir, "server.mjs"),
    files: chunks.length,
    bytes: chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.code), 0)
  }
}

const tracked = new Set<number>()

/** Remembers a child's pid, so that `assertAllGone` and the timeout can find it. */
export const track = (pid: number | undefined): void => {
  if (pid !== undefined) tracked.add(pid)
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits (at most `ms`) for every pid to be gone; returns those still alive. */
export const waitGone = async (pids: Iterable<number>, ms = 5000): Promise<Array<number>> => {
  const list = [...pids]
  const deadline = performance.now() + ms
  let alive = list.filter(isAlive)
  while (alive.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    alive = alive.filter(isAlive)
  }
  return alive
}

/** SIGKILLs every tracked child still alive; returns how many there were. */
export const killTracked = (): number => {
  let killed = 0
  for (const pid of tracked) {
    if (isAlive(pid)) {
      killed++
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // gone meanwhile
      }
    }
  }
  return killed
}

/**
 * Runs a benchmark's `main`: on failure, prints the error, kills the child
 * processes still alive and exits 1; on success, exits 0 once the event loop
 * is empty, or at once with `exit` (for scripts whose handles outlive them).
 */
export const runMain = (main: () => Promise<void>, options: { readonly exit?: boolean } = {}): void => {
  main().then(
    () => {
      if (options.exit === true) process.exit(0)
      process.exitCode = 0
    },
    (error: unknown) => {
      const killed = killTracked()
      console.error(error)
      if (killed > 0) console.error(`killed ${killed} child process(es)`)
      process.exit(1)
    }
  )
}

/** At the end of a run: every child spawned must be gone; stragglers are killed and reported. */
export const assertAllGone = async (): Promise<void> => {
  const alive = await waitGone(tracked, 5000)
  if (alive.length > 0) {
    killTracked()
    throw new Error(
      `${alive.length} child process(es) were still alive at the end and were killed: ${alive.join(", ")}`
    )
  }
  console.log(`all ${tracked.size} child processes are gone`)
}

/** A hard limit on the whole run: kills the children and exits 1. */
export const hardTimeout = (seconds: number, name: string): void => {
  setTimeout(() => {
    const killed = killTracked()
    console.error(`${name}: timed out after ${seconds} s (killed ${killed} child process(es))`)
    process.exit(1)
  }, seconds * 1000).unref()
}

const CLOCK_TICK_MICROS = 10_000 // CLK_TCK = 100 on Linux

/** user + system CPU of a process (all its threads), in µs, from `/proc/<pid>/stat`; 10 ms resolution. */
export const processCpuMicros = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MICROS
}

/** The parent of a live process, from `/proc/<pid>/stat`; `undefined` once it is gone. */
const parentOf = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // after "comm)": state, ppid, ...
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return undefined
  }
}

/** Every live descendant of each of `roots` (one scan of /proc), by root. */
export const processDescendants = (roots: ReadonlyArray<number>): Array<Array<number>> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const parent = parentOf(pid)
    if (parent === undefined) continue
    const list = children.get(parent)
    if (list === undefined) children.set(parent, [pid])
    else list.push(pid)
  }
  return roots.map((root) => {
    const out: Array<number> = []
    const queue = [root]
    while (queue.length > 0) {
      for (const child of children.get(queue.shift()!) ?? []) {
        out.push(child)
        queue.push(child)
      }
    }
    return out
  })
}

/** {@link processCpuMicros}, or 0 for a process that is gone. */
export const processCpuOr0 = (pid: number): number => {
  try {
    return processCpuMicros(pid)
  } catch {
    return 0 // gone
  }
}

/** The resident set size of a process, in bytes, from `/proc/<pid>/status`. */
export const processRss = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const match = /VmRSS:\s+(\d+) kB/.exec(status)
  return match === null ? NaN : Number(match[1]) * 1024
}

/** A server child with a line-oriented stdout (the HTTP servers' control channel, see servers/control.mjs). */
export interface LineChild {
  readonly child: ChildProcess
  readonly pid: number
  /** The next stdout line (at most `ms` to wait). */
  readonly nextLine: (ms?: number) => Promise<string>
  /** Ends stdin, waits for the exit, SIGKILLs after 3 s. */
  readonly stop: () => Promise<void>
}

export const spawnLineChild = (args: ReadonlyArray<string>): LineChild => {
  const child = spawn(NODE, args, { stdio: ["pipe", "pipe", "inherit"] })
  if (child.pid === undefined) throw new Error(`cannot spawn ${args.join(" ")}`)
  const pid = child.pid
  track(pid)
  const lines: Array<string> = []
  const waiters: Array<(line: string) => void> = []
  let buffer = ""
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (chunk: string) => {
    buffer += chunk
    let newline: number
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + 1)
      const waiter = waiters.shift()
      if (waiter !== undefined) waiter(line)
      else lines.push(line)
    }
  })
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })
  return {
    child,
    pid,
    nextLine: (ms = 30_000) => {
      const line = lines.shift()
      if (line !== undefined) return Promise.resolve(line)
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line from ${args.join(" ")} within ${ms} ms`)), ms)
        waiters.push((line) => {
          clearTimeout(timer)
          resolve(line)
        })
        child.once("exit", (code) => {
          clearTimeout(timer)
          reject(new Error(`${args.join(" ")} exited (${code}) before printing a line`))
        })
      })
    },
    stop: async () => {
      child.stdin!.end()
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000)
      await exited
      clearTimeout(timer)
    }
  }
}

// -----------------------------------------------------------------------------
// Closed loops and measurements
// -----------------------------------------------------------------------------

/** One measurement of a cross-process workload. CPU in µs per call; latencies in ms. */
export interface Sample {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** client + server */
  readonly cpuPerCall: number
  readonly clientCpu: number
  readonly serverCpu: number
  /** process warnings printed by the client process during the measured phase */
  readonly warnings: number
}

let warnings = 0
process.on("warning", () => {
  warnings++
})

/** How many process warnings this process has printed so far (for scripts that measure on their own). */
export const warningCount = (): number => warnings

interface Probe {
  readonly cpu0: NodeJS.CpuUsage
  readonly server0: number
  readonly warnings0: number
  readonly t0: number
}

const startProbe = (serverPid: number): Probe => ({
  cpu0: process.cpuUsage(),
  server0: processCpuMicros(serverPid),
  warnings0: warnings,
  t0: performance.now()
})

const endProbe = (probe: Probe, serverPid: number, latencies: Float64Array): Sample => {
  const wall = performance.now() - probe.t0
  const cpu = process.cpuUsage(probe.cpu0)
  const server = processCpuMicros(serverPid) - probe.server0
  const n = latencies.length
  latencies.sort()
  const clientCpu = (cpu.user + cpu.system) / n
  const serverCpu = server / n
  return {
    rps: n / (wall / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerCall: clientCpu + serverCpu,
    clientCpu,
    serverCpu,
    warnings: warnings - probe.warnings0
  }
}

const now = Effect.sync(() => performance.now())

/** `total` calls over `concurrency` Effect workers; each takes the next slot until none are left (so the loop is bounded by `total`). */
export const effectPhase = <E>(
  call: Effect.Effect<void, E>,
  concurrency: number,
  total: number,
  latencies: Float64Array | undefined
): Effect.Effect<void, E> => {
  let issued = 0
  const worker = Effect.gen(function*() {
    while (issued < total) {
      const slot = issued++
      const start = yield* now
      yield* call
      if (latencies !== undefined) latencies[slot] = (yield* now) - start
    }
  })
  return Effect.forEach(Array.from({ length: concurrency }, () => worker), (w) => w, {
    concurrency,
    discard: true
  })
}

/** Warm-up, `gc()`, then `calls` measured calls in an Effect closed loop; the server's CPU read from /proc. */
export const measureEffect = <E>(
  call: Effect.Effect<void, E>,
  options: { readonly concurrency: number; readonly calls: number; readonly warmup: number; readonly serverPid: number }
): Effect.Effect<Sample, E> =>
  Effect.gen(function*() {
    yield* effectPhase(call, options.concurrency, options.warmup, undefined)
    if (gc !== undefined) gc()
    const latencies = new Float64Array(options.calls)
    const probe = startProbe(options.serverPid)
    yield* effectPhase(call, options.concurrency, options.calls, latencies)
    return endProbe(probe, options.serverPid, latencies)
  })

export const promisePhase = async (
  call: () => Promise<void>,
  concurrency: number,
  total: number,
  latencies: Float64Array | undefined
): Promise<void> => {
  let issued = 0
  const worker = async (): Promise<void> => {
    while (issued < total) {
      const slot = issued++
      const start = performance.now()
      await call()
      if (latencies !== undefined) latencies[slot] = performance.now() - start
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

/** The same as `measureEffect`, for a Promise-returning call (the official SDK's client). */
export const measurePromise = async (
  call: () => Promise<void>,
  options: { readonly concurrency: number; readonly calls: number; readonly warmup: number; readonly serverPid: number }
): Promise<Sample> => {
  await promisePhase(call, options.concurrency, options.warmup, undefined)
  if (gc !== undefined) gc()
  const latencies = new Float64Array(options.calls)
  const probe = startProbe(options.serverPid)
  await promisePhase(call, options.concurrency, options.calls, latencies)
  return endProbe(probe, options.serverPid, latencies)
}

// -----------------------------------------------------------------------------
// Rounds and report
// -----------------------------------------------------------------------------

export const formatSample = (sample: Sample): string =>
  `${Math.round(sample.rps).toString().padStart(6)} rps  p50 ${formatMicros(sample.p50).padStart(7)}  ` +
  `p99 ${formatMicros(sample.p99).padStart(8)}  cpu ${sample.cpuPerCall.toFixed(1).padStart(6)} µs/call ` +
  `(client ${sample.clientCpu.toFixed(1)}, server ${sample.serverCpu.toFixed(1)})` +
  (sample.warnings > 0 ? `  ${sample.warnings} warnings` : "")

/** The medians of one impl at one concurrency (latencies in ms, CPU in µs per call), with its per-round samples. */
export interface ThroughputRow {
  readonly impl: string
  readonly concurrency: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuPerCall: number
  readonly clientCpu?: number | undefined
  readonly serverCpu?: number | undefined
  /** the protocol revision the client negotiated */
  readonly protocol?: string | undefined
  readonly rounds: ReadonlyArray<
    { readonly rps: number; readonly p50: number; readonly p99: number; readonly cpuPerCall: number }
  >
}

/**
 * Runs `rounds` rounds of every implementation at every concurrency (the
 * order flips every round), then prints the medians and, when `baseline` is
 * selected, the median per-round ratios impl / baseline (and impl / `floor`,
 * when that is selected too).
 */
export const runRounds = async <I extends string>(options: {
  readonly title: string
  readonly impls: ReadonlyArray<I>
  readonly baseline: I
  readonly floor?: I | undefined
  readonly concurrency: ReadonlyArray<number>
  readonly rounds: number
  readonly run: (impl: I, concurrency: number) => Promise<Sample>
}): Promise<Array<ThroughputRow>> => {
  const results: Array<ThroughputRow> = []
  const rows: Array<string> = []
  const ratios: Array<string> = []
  const ratio = (list: ReadonlyArray<Sample>, base: ReadonlyArray<Sample> | undefined, f: (s: Sample) => number) =>
    base === undefined ? [] : list.map((s, i) => f(s) / f(base[i]!))
  for (const concurrency of options.concurrency) {
    const samples = new Map<I, Array<Sample>>(options.impls.map((impl) => [impl, []]))
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? options.impls : [...options.impls].reverse()
      for (const impl of order) {
        const sample = await options.run(impl, concurrency)
        samples.get(impl)!.push(sample)
        console.log(
          `  c=${concurrency} round ${round + 1}/${options.rounds} ${impl.padEnd(15)} ${formatSample(sample)}`
        )
      }
    }
    for (const impl of options.impls) {
      const list = samples.get(impl)!
      const med = (f: (s: Sample) => number) => median(list.map(f))
      results.push({
        impl,
        concurrency,
        rps: med((s) => s.rps),
        p50: med((s) => s.p50),
        p99: med((s) => s.p99),
        cpuPerCall: med((s) => s.cpuPerCall),
        clientCpu: med((s) => s.clientCpu),
        serverCpu: med((s) => s.serverCpu),
        protocol: protocols.get(impl),
        rounds: list
      })
      rows.push(
        `| ${impl} | ${concurrency} | ${Math.round(med((s) => s.rps))} | ${formatMicros(med((s) => s.p50))} | ` +
          `${formatMicros(med((s) => s.p99))} | ${med((s) => s.cpuPerCall).toFixed(1)} | ` +
          `${med((s) => s.clientCpu).toFixed(1)} | ${med((s) => s.serverCpu).toFixed(1)} | ` +
          `${list.reduce((sum, s) => sum + s.warnings, 0)} | ${list.length} |`
      )
    }
    const base = samples.get(options.baseline)
    const floor = options.floor === undefined ? undefined : samples.get(options.floor)
    if (base !== undefined) {
      for (const impl of options.impls) {
        if (impl === options.baseline) continue
        const list = samples.get(impl)!
        const perRound = ratio(list, base, (s) => s.rps)
        const floorRatio = impl === options.floor ? [] : ratio(list, floor, (s) => s.rps)
        ratios.push(
          `| ${impl} | ${concurrency} | **${median(perRound).toFixed(2)}×** | ` +
            `${perRound.map((r) => r.toFixed(2)).join(", ")} | ${
              median(ratio(list, base, (s) => s.cpuPerCall)).toFixed(2)
            }× | ` +
            `${floorRatio.length === 0 ? "" : `${median(floorRatio).toFixed(2)}×`} |`
        )
      }
    }
  }
  console.log()
  console.log(`### ${options.title}`)
  console.log()
  console.log("| impl (client>server) | c | rps | p50 | p99 | CPU µs/call | client | server | warnings | n |")
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const row of rows) console.log(row)
  if (ratios.length > 0) {
    console.log()
    console.log(
      `| impl | c | rps / ${options.baseline} (median of rounds) | per round | CPU µs/call / ${options.baseline} | ` +
        `rps / ${options.floor ?? "floor"} |`
    )
    console.log("|---|---:|---:|---|---:|---:|")
    for (const row of ratios) console.log(row)
  }
  printProtocols()
  console.log()
  return results
}

// -----------------------------------------------------------------------------
// effect/ai (effect's own MCP server and client): its echo and the ratios
// against it
// -----------------------------------------------------------------------------

/**
 * The text block of effect/ai's echo answer: effect/ai answers a tool's
 * success value JSON-encoded in one text block (and as `structuredContent`),
 * so its echo (`servers/effect-ai-echo.ts`) answers `{ text }`.
 */
export const EFFECT_AI_TEXT = JSON.stringify({ text: TEXT })

/** The check of the `effect-ai` rows: the JSON text block and the `structuredContent` of effect/ai's echo. */
export const checkEffectAiEcho = (result: {
  readonly content?: ReadonlyArray<unknown> | undefined
  readonly structuredContent?: unknown
}): void => {
  const first = result.content?.[0] as { readonly type?: unknown; readonly text?: unknown } | undefined
  const structured = result.structuredContent as { readonly text?: unknown } | undefined
  if (first?.type !== "text" || first.text !== EFFECT_AI_TEXT || structured?.text !== TEXT) {
    throw new Error(`unexpected effect/ai echo result: ${JSON.stringify(result)}`)
  }
}

/**
 * Prints, for each of `impls` and each concurrency, the ratio impl / `base`
 * of the medians and the median of the per-round ratios (rps and CPU per
 * call), from the rows `runRounds` returned; nothing when `base` was not
 * run. The `effect-ai` rows use it for ours / effect-ai.
 */
export const printRatiosAgainst = (
  rows: ReadonlyArray<ThroughputRow>,
  base: string,
  impls: ReadonlyArray<string>
): void => {
  const lines: Array<string> = []
  for (const b of rows.filter((row) => row.impl === base)) {
    for (const impl of impls) {
      const a = rows.find((row) => row.impl === impl && row.concurrency === b.concurrency)
      if (a === undefined) continue
      const perRound = a.rounds.map((s, i) => s.rps / (b.rounds[i]?.rps ?? NaN))
      const cpuPerRound = a.rounds.map((s, i) => s.cpuPerCall / (b.rounds[i]?.cpuPerCall ?? NaN))
      lines.push(
        `| ${impl} | ${b.concurrency} | **${(a.rps / b.rps).toFixed(2)}×** | ${median(perRound).toFixed(2)}× | ` +
          `${perRound.map((r) => r.toFixed(2)).join(", ")} | ${median(cpuPerRound).toFixed(2)}× |`
      )
    }
  }
  if (lines.length === 0) return
  console.log(
    `| impl | c | rps / ${base} (ratio of medians) | median of per-round ratios | per round | CPU µs/call / ${base} |`
  )
  console.log("|---|---:|---:|---:|---|---:|")
  for (const line of lines) console.log(line)
  console.log()
}
