/**
 * Modern (MCP 2026-07-28, stateless) Streamable HTTP `tools/call` echo on
 * every runtime the web handler runs on: effect-mcp's servers against the
 * official TypeScript SDK v2's fetch handler (`createMcpHandler`) on Node,
 * Bun, Deno and workerd, all driven by ONE client (this process) in one run,
 * so that the rows compare servers and runtimes. One table: runtime, server,
 * rps, p50, p99, CPU per call, and ours/official per runtime.
 *
 * Rows (`--only`):
 * - `node-ours`: `NodeMcpHttpServer` (`servers/http-ours.ts`, as `modern.ts`);
 * - `node-ours-web`, `bun-ours-web`, `deno-ours-web`: `McpHttpServer.toWebHandler`
 *   (`servers/runtime-ours-web.ts`) on node:http through an adapter, `Bun.serve`,
 *   `Deno.serve` (`servers/runtime-serve.ts`);
 * - `node-official`, `bun-official`, `deno-official`: `createMcpHandler` of
 *   `@modelcontextprotocol/server` (`servers/runtime-official-web.mjs`, a fresh
 *   `McpServer` with a zod echo per request) served the same way;
 * - `workerd-ours-web`, `workerd-official`: the same servers as Worker modules
 *   (`servers/runtime-ours-worker.ts`, `servers/runtime-official-worker.mjs`),
 *   bundled once as the workerd tests bundle (`test/utils/workerd.ts`:
 *   rolldown, our packages from `dist/`, so run `npx tsc -b` first), served by
 *   workerd through miniflare (`servers/runtime-workerd.ts`) with no
 *   compatibility flag: neither needs `nodejs_compat`.
 *
 * Bun and Deno are the binaries of the `bun` and `deno` devDependencies,
 * run as the runtime tests run them (`packages/platform-node/test/utils/runtimes.ts`;
 * Deno with `--allow-net=127.0.0.1` only). Every server is a child process on
 * 127.0.0.1 and an ephemeral port, fresh for every measurement; it prints its
 * URL and exits when its stdin ends.
 *
 * The client is the raw one of `modern.ts`: node:http, a keep-alive agent
 * with `maxSockets` = concurrency, one POST per call with the modern headers
 * and the `_meta` envelope, checking status, id, `resultType` and the echoed
 * text. Method as in `modern.ts`: warm-up (`warmupFor`), `gc()`, a closed loop
 * of `c` workers, rounds alternating the order, medians over rounds; CPU per
 * call is this process's `process.cpuUsage()` plus the server process and its
 * descendants (workerd under miniflare) from `/proc` (10 ms ticks).
 * ours/official is the median of the per-round ratios of rps against the
 * official row of the same runtime.
 *
 * Usage:
 *   npm run bench:runtimes
 *   npm run bench:runtimes -- --calls 300 --rounds 1
 *   npm run bench:runtimes -- --runtimes bun,deno --concurrency 1,64
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_RUNTIMES_CALLS, default 5000)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 64    (BENCH_CONCURRENCY, default 64; e.g. 1,64)
 *   --runtimes LIST     subset of node,bun,deno,workerd (BENCH_RUNTIMES, default all)
 *   --only LIST         subset of the row ids above (BENCH_RUNTIMES_ONLY, default all)
 *   --timeout S         hard limit of the whole run (BENCH_RUNTIMES_TIMEOUT, default 900)
 *   --json FILE         medians as JSON (or $BENCH_JSON_DIR/runtimes.json)
 * `BENCH_OURS_DIST=1` runs our packages from `dist/` on Node, Bun and Deno too
 * (`npx tsc -b` first); `BENCH_SERVER_FLAGS` go to the Node processes.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { resolveBinary, root, type Runtime, runtimes } from "../packages/platform-node/test/utils/runtimes.ts"
import { bundleForWorkers } from "../packages/platform-node/test/utils/workerd.ts"
import {
  assertAllGone,
  gc,
  hardTimeout,
  intList,
  killTracked,
  NODE,
  option,
  OURS_DIST,
  positiveInt,
  processCpuOr0,
  processDescendants,
  promisePhase,
  runMain,
  type Sample,
  selection,
  SERVER_FLAGS,
  track,
  TS_FLAGS,
  waitGone,
  warmupFor,
  writeJson
} from "./harness.ts"
import { modernCaller, VERSION } from "./modernCall.ts"
import { formatMicros, median, percentile } from "./stats.ts"

// -----------------------------------------------------------------------------
// Options and rows
// -----------------------------------------------------------------------------

const RUNTIMES = ["node", "bun", "deno", "workerd"] as const
type RuntimeName = (typeof RUNTIMES)[number]
type Kind = "ours" | "ours-web" | "official"

const ALL = [
  "node-ours",
  "node-ours-web",
  "node-official",
  "bun-ours-web",
  "bun-official",
  "deno-ours-web",
  "deno-official",
  "workerd-ours-web",
  "workerd-official"
] as const
type Id = (typeof ALL)[number]

const runtimeOf = (id: Id): RuntimeName => id.slice(0, id.indexOf("-")) as RuntimeName
const kindOf = (id: Id): Kind => id.slice(id.indexOf("-") + 1) as Kind

const CALLS = positiveInt(option("calls", "BENCH_RUNTIMES_CALLS"), 5_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_RUNTIMES_TIMEOUT"), 900, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "64", "concurrency")
const SELECTED_RUNTIMES = selection(RUNTIMES, option("runtimes", "BENCH_RUNTIMES"))
const IDS = selection(ALL, option("only", "BENCH_RUNTIMES_ONLY")).filter((id) =>
  SELECTED_RUNTIMES.includes(runtimeOf(id))
)
const WARMUP = warmupFor(CALLS)

const SERVER_NAMES: Record<Kind, string> = {
  ours: "ours: NodeMcpHttpServer",
  "ours-web": "ours: McpHttpServer.toWebHandler",
  official: "official v2: createMcpHandler"
}

hardTimeout(TIMEOUT_S, "bench/runtimes")

const byName = (name: string): Runtime => {
  const found = runtimes.find((runtime) => runtime.name.toLowerCase() === name)
  if (found === undefined) throw new Error(`no runtime ${name} in test/utils/runtimes.ts`)
  return found
}

/**
 * Bun's or Deno's arguments for `entry`, as the runtime tests give them (the
 * network on 127.0.0.1 only); without `--conditions=development` when our
 * packages come from `dist/`.
 */
const runtimeArgs = (name: "bun" | "deno", entry: string): Array<string> =>
  byName(name).args(entry, { net: true }).filter((arg) => !(OURS_DIST && arg === "--conditions=development"))

const WEB = {
  "ours-web": "bench/servers/runtime-ours-web.ts",
  official: "bench/servers/runtime-official-web.mjs"
} as const
const WORKER = {
  "ours-web": "bench/servers/runtime-ours-worker.ts",
  official: "bench/servers/runtime-official-worker.mjs"
} as const

/** The Worker bundles, made once (`bundleWorkers`), by kind. */
const bundles = new Map<Kind, string>()

/** The command that starts `id`'s server: binary and arguments. */
const commandOf = (id: Id): readonly [string, ReadonlyArray<string>] => {
  const kind = kindOf(id)
  switch (runtimeOf(id)) {
    case "node":
      return kind === "ours"
        ? [NODE, [...TS_FLAGS, ...SERVER_FLAGS, "bench/servers/http-ours.ts"]]
        : [NODE, [...(kind === "ours-web" ? TS_FLAGS : []), ...SERVER_FLAGS, WEB[kind]]]
    case "bun":
    case "deno": {
      const name = runtimeOf(id) as "bun" | "deno"
      return [resolveBinary(byName(name)), runtimeArgs(name, WEB[kind as "ours-web" | "official"])]
    }
    case "workerd":
      return [NODE, [...SERVER_FLAGS, "bench/servers/runtime-workerd.ts", bundles.get(kind)!]]
  }
}

/**
 * Bundles the Worker of each selected workerd row into `dir` with
 * `bundleForWorkers` of the workerd tests (rolldown, one ES module, wrangler's
 * conditions, any Node built-in an error): our packages from their `dist/`.
 */
const bundleWorkers = async (dir: string): Promise<void> => {
  for (const id of IDS.filter((id) => runtimeOf(id) === "workerd")) {
    const kind = kindOf(id) as "ours-web" | "official"
    const file = join(dir, `${kind}.mjs`)
    writeFileSync(file, (await bundleForWorkers(WORKER[kind])).code)
    bundles.set(kind, file)
  }
}

// -----------------------------------------------------------------------------
// Server processes
// -----------------------------------------------------------------------------

interface Server {
  readonly url: string
  /** what the server printed: the runtime and its version */
  readonly runtime: string
  readonly pid: number
  /** Ends stdin, waits for the exit (SIGKILL after 5 s), then for its descendants (SIGKILL after 3 s). */
  readonly stop: () => Promise<void>
}

/**
 * Starts `id`'s server (cwd: the repository's root) and waits (at most 60 s)
 * for its first stdout line, `{"url":…,"runtime":…}`. Its pid and its
 * descendants' (workerd under miniflare) are tracked, so that a failure, the
 * hard timeout and `assertAllGone` find them.
 */
const startServer = (id: Id): Promise<Server> => {
  const [command, args] = commandOf(id)
  const child = spawn(command, args, { cwd: root, stdio: ["pipe", "pipe", "inherit"] })
  const pid = child.pid ?? -1
  track(child.pid)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const descendants = new Set<number>()
  const stop = async (): Promise<void> => {
    for (const descendant of processDescendants([pid])[0]!) descendants.add(descendant)
    child.stdin!.end()
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000)
    await exited
    clearTimeout(timer)
    for (const straggler of await waitGone(descendants, 3000)) {
      try {
        process.kill(straggler, "SIGKILL")
      } catch {
        // gone meanwhile
      }
    }
  }
  return new Promise<Server>((resolve, reject) => {
    child.once("error", (error) => reject(new Error(`${id}: cannot spawn ${command}: ${error.message}`)))
    let stdout = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${id}: no URL within 60 s (${command} ${args.join(" ")})`))
    }, 60_000)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${id}: exited (${code ?? signal}) before printing its URL (${command} ${args.join(" ")})`))
    })
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => {
      if (stdout.includes("\n")) return
      stdout += chunk
      const newline = stdout.indexOf("\n")
      if (newline < 0) return
      clearTimeout(timer)
      let first: { readonly url: string; readonly runtime?: string }
      try {
        first = JSON.parse(stdout.slice(0, newline))
      } catch {
        child.kill("SIGKILL")
        return reject(new Error(`${id}: its first line is not {"url":…}: ${stdout.slice(0, newline)}`))
      }
      const { runtime, url } = first
      for (const descendant of processDescendants([pid])[0]!) {
        track(descendant)
        descendants.add(descendant)
      }
      resolve({ url, runtime: runtime ?? `node ${process.version}`, pid, stop })
    })
  })
}

/** `f` against a fresh server of `id`; the server stopped (and waited for) afterwards. */
const withServer = async <A>(id: Id, f: (server: Server) => Promise<A>): Promise<A> => {
  const server = await startServer(id)
  try {
    return await f(server)
  } finally {
    await server.stop()
  }
}

// -----------------------------------------------------------------------------
// The client and a measurement
// -----------------------------------------------------------------------------

/** CPU (µs) of `pids`, those gone counting 0. */
const treeCpu = (pids: ReadonlyArray<number>): number => pids.reduce((sum, pid) => sum + processCpuOr0(pid), 0)

/**
 * The raw client of `modern.ts` against `server` at `concurrency`: warm-up,
 * `gc()`, `CALLS` measured calls; CPU of this process and of the server's
 * process tree over the measured phase.
 */
const measure = async (server: Server, concurrency: number): Promise<Sample> => {
  const { call, close } = modernCaller(server.url, concurrency)
  try {
    await promisePhase(call, concurrency, WARMUP, undefined)
    if (gc !== undefined) gc()
    const pids = [server.pid, ...processDescendants([server.pid])[0]!]
    const latencies = new Float64Array(CALLS)
    const cpu0 = process.cpuUsage()
    const server0 = treeCpu(pids)
    const t0 = performance.now()
    await promisePhase(call, concurrency, CALLS, latencies)
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const serverCpu = (treeCpu(pids) - server0) / CALLS
    const clientCpu = (cpu.user + cpu.system) / CALLS
    latencies.sort()
    return {
      rps: CALLS / (wall / 1000),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      cpuPerCall: clientCpu + serverCpu,
      clientCpu,
      serverCpu,
      warnings: 0
    }
  } finally {
    close()
  }
}

// -----------------------------------------------------------------------------
// Rounds and the table
// -----------------------------------------------------------------------------

interface Row {
  readonly id: Id
  readonly runtime: string
  readonly server: string
  readonly concurrency: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuPerCall: number
  readonly clientCpu: number
  readonly serverCpu: number
  /** median of the per-round rps ratios against the official row of the same runtime (ours rows) */
  readonly oursOverOfficial: number | undefined
  readonly perRound: ReadonlyArray<number>
  readonly rounds: ReadonlyArray<Sample>
}

const officialOf = (id: Id): Id => `${runtimeOf(id)}-official` as Id

const main = async (): Promise<void> => {
  if (IDS.length === 0) throw new Error("no row selected (--only / --runtimes)")
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
  console.log(
    `Modern (2026-07-28) Streamable HTTP tools/call echo across runtimes: ${CALLS} calls (+${WARMUP} warm-up) × ` +
      `${ROUNDS} rounds, concurrency ${CONCURRENCY.join(",")}; ${IDS.join(", ")}; client node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}; our packages from ` +
      `${
        OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (development condition; workerd's bundles: dist/)"
      }; load ${load}`
  )
  const started = performance.now()
  const dir = mkdtempSync(join(tmpdir(), "bench-runtimes-"))
  // the bundles go however the run ends (a failure, the hard timeout, a signal: each exits the process)
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }))
  const versions = new Map<RuntimeName, string>()
  const rows: Array<Row> = []
  try {
    await bundleWorkers(dir)
    for (const concurrency of CONCURRENCY) {
      const samples = new Map<Id, Array<Sample>>(IDS.map((id) => [id, []]))
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? IDS : [...IDS].reverse()
        for (const id of order) {
          const sample = await withServer(id, (server) => {
            versions.set(runtimeOf(id), server.runtime)
            return measure(server, concurrency)
          })
          samples.get(id)!.push(sample)
          console.log(
            `  c=${concurrency} round ${round + 1}/${ROUNDS} ${id.padEnd(17)} ${
              Math.round(sample.rps).toString().padStart(6)
            } rps  ` +
              `p50 ${formatMicros(sample.p50).padStart(7)}  p99 ${formatMicros(sample.p99).padStart(8)}  ` +
              `cpu ${sample.cpuPerCall.toFixed(1).padStart(6)} µs/call (client ${sample.clientCpu.toFixed(1)}, ` +
              `server ${sample.serverCpu.toFixed(1)})`
          )
        }
      }
      for (const id of IDS) {
        const list = samples.get(id)!
        const base = samples.get(officialOf(id))
        const perRound = kindOf(id) === "official" || base === undefined ? [] : list.map((s, i) => s.rps / base[i]!.rps)
        const med = (f: (s: Sample) => number) => median(list.map(f))
        rows.push({
          id,
          runtime: versions.get(runtimeOf(id)) ?? runtimeOf(id),
          server: SERVER_NAMES[kindOf(id)],
          concurrency,
          rps: med((s) => s.rps),
          p50: med((s) => s.p50),
          p99: med((s) => s.p99),
          cpuPerCall: med((s) => s.cpuPerCall),
          clientCpu: med((s) => s.clientCpu),
          serverCpu: med((s) => s.serverCpu),
          oursOverOfficial: perRound.length === 0 ? undefined : median(perRound),
          perRound,
          rounds: list
        })
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log()
  console.log(
    `### Modern stateless HTTP across runtimes, raw node:http client, ${CALLS} calls, medians of ${ROUNDS} round(s)`
  )
  console.log()
  console.log(
    "| runtime | server | c | rps | p50 | p99 | CPU µs/call (client + server) | ours/official rps (per round) |"
  )
  console.log("|---|---|---:|---:|---:|---:|---:|---:|")
  for (const row of rows) {
    const ratio = row.oursOverOfficial === undefined
      ? ""
      : `**${row.oursOverOfficial.toFixed(2)}×** (${row.perRound.map((r) => r.toFixed(2)).join(", ")})`
    console.log(
      `| ${row.runtime} | ${row.server} | ${row.concurrency} | ${Math.round(row.rps)} | ${formatMicros(row.p50)} | ` +
        `${formatMicros(row.p99)} | ${row.cpuPerCall.toFixed(1)} (${row.clientCpu.toFixed(1)} + ${
          row.serverCpu.toFixed(1)
        }) | ${ratio} |`
    )
  }
  console.log()
  writeJson("runtimes", {
    protocol: VERSION,
    calls: CALLS,
    warmup: WARMUP,
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    oursDist: OURS_DIST,
    runtimes: Object.fromEntries(versions),
    rows
  })
  await assertAllGone()
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

// Ctrl-C or a kill: the servers (and workerd under miniflare) go too
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    const killed = killTracked()
    console.error(`bench/runtimes: ${signal} (killed ${killed} child process(es))`)
    process.exit(1)
  })
}

runMain(main)
