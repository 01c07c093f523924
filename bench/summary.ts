/**
 * The issue's table in one place: reads the JSON the benchmarks wrote
 * (`inprocess.json`, `stdio.json`, `http.json`, `connect.json`,
 * `startup.json`, from `--json`/`BENCH_JSON_DIR`) and prints one row per
 * target: ours, official, the ratio ours / official (of the medians; the
 * median of the per-round ratios beside it), p50/p99 and CPU per call for the
 * throughput rows, the target and whether it is met. A second table gives
 * the diagnostic rows (the 2026-07-28 era, the raw session API).
 *
 * Beside them, effect's own MCP (`effect/ai`, effect 4.1.0), what an Effect
 * user would pick instead: the `effect-ai` rows of `inprocess.ts`
 * (`McpTest.makeClient`), `stdio.ts` and `http.ts` (its `McpClient` against
 * its `McpServer`), in 2025-11-25: its rps (CPU per call in the CPU column)
 * and the ratio ours / effect-ai of the medians, for every row it runs. It
 * has no SSE answer mode, and `startup.ts` and `connect.ts` have no effect-ai
 * row.
 *
 * Every effect-mcp row of the headline speaks 2025-11-25, like the official
 * SDK 1.32.2, and uses the high-level API on both sides (`McpClient` →
 * `McpServer` + `McpTool`, against `Client` → `McpServer.registerTool`).
 *
 * Usage:
 *   node bench/summary.ts DIR          (or BENCH_JSON_DIR=DIR node bench/summary.ts)
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { ThroughputRow } from "./harness.ts"
import { formatMicros, median } from "./stats.ts"

const dirArg = process.argv.slice(2).find((arg) => !arg.startsWith("--"))
const DIR = dirArg ?? process.env.BENCH_JSON_DIR
if (DIR === undefined || DIR === "") {
  console.error("usage: node bench/summary.ts DIR (the directory of the benchmarks' JSON files)")
  process.exit(2)
}

interface Common {
  readonly date: string
  readonly node: string
  readonly loadavg: ReadonlyArray<number>
  readonly calls?: number
  readonly warmup?: number
  readonly rounds?: number
  readonly oursFrom?: string
}
interface Throughput extends Common {
  readonly throughput: ReadonlyArray<ThroughputRow>
  readonly sessions?: ReadonlyArray<
    { readonly server: string; readonly rssPerSession: number; readonly heapPerSession: number }
  >
}
interface Connect extends Common {
  readonly servers: number
  readonly connect: ReadonlyArray<{ readonly impl: string; readonly connect: number; readonly childRss: number }>
}
interface Startup extends Common {
  readonly runs: number
  readonly startup: ReadonlyArray<{
    readonly impl: string
    readonly modules: number
    readonly builtins: number
    readonly firstAnswer: number
    readonly cpu: number
    readonly rss: number
  }>
}

const read = <A>(name: string): A | undefined => {
  const file = join(DIR, `${name}.json`)
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as A : undefined
}

const inprocess = read<Throughput>("inprocess")
const stdio = read<Throughput>("stdio")
const http = read<Throughput>("http")
const connect = read<Connect>("connect")
const startup = read<Startup>("startup")

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const x = (ratio: number) => Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : "–"
const k = (rps: number) => rps >= 10_000 ? `${(rps / 1000).toFixed(1)}k` : `${Math.round(rps)}`

const lines: Array<string> = []
const row = (cells: ReadonlyArray<string>) => lines.push(`| ${cells.join(" | ")} |`)

const HEADER = [
  "row",
  "ours",
  "official",
  "ours/official",
  "median of per-round ratios",
  "effect/ai",
  "ours/effect-ai",
  "p50 ours / official",
  "p99 ours / official",
  "CPU µs/call ours / official / effect/ai",
  "target",
  "met"
]

/** The effect/ai cells of a row it has no measurement for: `why`, and no ratio. */
const noEffectAi = (why: string) => [why, ""]
/** Where the script has no effect-ai row. */
const NOT_IN_SCRIPT = "–"

const find = (data: Throughput | undefined, impl: string, concurrency: number) =>
  data?.throughput.find((r) => r.impl === impl && r.concurrency === concurrency)

/**
 * One throughput row: `ours` against `official` at `concurrency`; `p99NoWorse`
 * adds that condition. `effectAi` names effect/ai's row of the same workload,
 * or says why there is none.
 */
const throughputRow = (
  label: string,
  data: Throughput | undefined,
  ours: string,
  official: string,
  concurrency: number,
  target: number | undefined,
  p99NoWorse = false,
  effectAi: { readonly impl: string } | { readonly none: string } = { impl: "effect-ai" }
) => {
  const a = find(data, ours, concurrency)
  const b = find(data, official, concurrency)
  const e = "impl" in effectAi ? find(data, effectAi.impl, concurrency) : undefined
  const effectCells = "impl" in effectAi
    ? e === undefined
      ? noEffectAi("not run")
      : [k(e.rps), a === undefined ? "" : `**${x(a.rps / e.rps)}**`]
    : noEffectAi(effectAi.none)
  const name = `${label}, c=${concurrency} (rps)`
  if (a === undefined || b === undefined) {
    row([name, "not run", "", "", "", ...effectCells, "", "", "", target === undefined ? "" : `≥ ${target}`, ""])
    return
  }
  const ratio = a.rps / b.rps
  const perRound = median(a.rounds.map((s, i) => s.rps / (b.rounds[i]?.rps ?? NaN)))
  const p99ok = a.p99 <= b.p99
  const met = target === undefined ? "" : ratio >= target && (!p99NoWorse || p99ok) ? "**met**" : "not met"
  row([
    name,
    k(a.rps),
    k(b.rps),
    `**${x(ratio)}**`,
    x(perRound),
    ...effectCells,
    `${formatMicros(a.p50)} / ${formatMicros(b.p50)}`,
    `${formatMicros(a.p99)} / ${formatMicros(b.p99)}${p99NoWorse ? (p99ok ? " ✓" : " ✗") : ""}`,
    `${a.cpuPerCall.toFixed(1)} / ${b.cpuPerCall.toFixed(1)}${e === undefined ? "" : ` / ${e.cpuPerCall.toFixed(1)}`}`,
    target === undefined ? "diagnostic" : `≥ ${target}${p99NoWorse ? ", p99 no worse" : ""}`,
    met
  ])
}

// -----------------------------------------------------------------------------
// Headline
// -----------------------------------------------------------------------------

row(HEADER)
row(HEADER.map((_, i) => (i === 0 || i === HEADER.length - 1 ? "---" : "---:")))
for (const c of [1, 64]) throughputRow("in-process", inprocess, "ours-client", "official", c, 1.5)
throughputRow("stdio", stdio, "ours", "official", 1, 1.3, true)
throughputRow("stdio", stdio, "ours", "official", 64, 2, true)
throughputRow("Streamable HTTP, JSON answers", http, "ours", "official", 1, 1.5)
throughputRow("Streamable HTTP, JSON answers", http, "ours", "official", 64, 2)
const noSse = { none: "no SSE answers" }
throughputRow("Streamable HTTP, SSE answers", http, "ours-sse", "official-sse", 1, 1.5, false, noSse)
throughputRow("Streamable HTTP, SSE answers", http, "ours-sse", "official-sse", 64, 2, false, noSse)

/** What a start-up or connect row compares: our server and the official one, as published or bundled for production. */
const PAIRS = [
  { ours: "ours", official: "official", label: "" },
  { ours: "ours-bundled", official: "official-bundled", label: ", both bundled for production" },
  { ours: "ours-bundled", official: "official", label: ", ours bundled for production, official as published" }
] as const

// median of per-round ratios, effect/ai, ours/effect-ai, p50, p99, CPU
const blank = ["", ...noEffectAi(NOT_IN_SCRIPT), "", "", ""]
for (const pair of PAIRS) {
  const a = startup?.startup.find((s) => s.impl === pair.ours)
  const b = startup?.startup.find((s) => s.impl === pair.official)
  if (a === undefined || b === undefined) {
    if (pair.label === "") {
      row(["start one stdio server and initialize", "not run", "", "", ...blank, "≥ 1", ""])
      row(["RSS of one idle stdio server process", "not run", "", "", ...blank, "≤ SDK", ""])
    }
    continue
  }
  const startCell = (s: typeof a) =>
    `${s.firstAnswer.toFixed(0)} ms (CPU ${(s.cpu / 1000).toFixed(0)} ms, ${s.modules} + ${s.builtins} node: modules)`
  const ratio = b.firstAnswer / a.firstAnswer
  row([
    `start one stdio server and initialize${pair.label} (spawn → first answer; official / ours)`,
    startCell(a),
    startCell(b),
    `**${x(ratio)}**`,
    ...blank,
    "≥ 1",
    ratio >= 1 ? "**met**" : "not met"
  ])
  const rss = a.rss / b.rss
  row([
    `RSS of one idle stdio server process${pair.label} (at its initialize answer; ours / official)`,
    mb(a.rss),
    mb(b.rss),
    `**${x(rss)}**`,
    ...blank,
    "≤ 1 (≤ SDK)",
    rss <= 1 ? "**met**" : "not met"
  ])
}

for (const pair of PAIRS) {
  const a = connect?.connect.find((s) => s.impl === pair.ours)
  const b = connect?.connect.find((s) => s.impl === pair.official)
  if (a === undefined || b === undefined) {
    if (pair.label === "") {
      row(["connect 50 stdio servers concurrently from one client", "not run", "", "", ...blank, "≥ 1", ""])
    }
    continue
  }
  const ratio = b.connect / a.connect
  row([
    `connect ${connect!.servers} stdio servers concurrently from one client${pair.label} (official / ours)`,
    `${(a.connect / 1000).toFixed(2)} s (${mb(a.childRss)}/child)`,
    `${(b.connect / 1000).toFixed(2)} s (${mb(b.childRss)}/child)`,
    `**${x(ratio)}**`,
    ...blank,
    "≥ 1",
    ratio >= 1 ? "**met**" : "not met"
  ])
}

const sessOurs = http?.sessions?.find((s) => s.server === "ours")
const sessOfficial = http?.sessions?.find((s) => s.server === "official")
const sessEffectAi = http?.sessions?.find((s) => s.server === "effect-ai")
if (sessOurs !== undefined) {
  row([
    "RSS per idle legacy HTTP session (heap)",
    `${kb(sessOurs.rssPerSession)} (${kb(sessOurs.heapPerSession)})`,
    sessOfficial === undefined ? "" : `${kb(sessOfficial.rssPerSession)} (${kb(sessOfficial.heapPerSession)})`,
    sessOfficial === undefined ? "" : x(sessOurs.rssPerSession / sessOfficial.rssPerSession),
    "",
    ...(sessEffectAi === undefined
      ? noEffectAi("not run")
      : [
        `${kb(sessEffectAi.rssPerSession)} (${kb(sessEffectAi.heapPerSession)})`,
        x(sessOurs.rssPerSession / sessEffectAi.rssPerSession)
      ]),
    "",
    "",
    "",
    "≤ 12 KB",
    sessOurs.rssPerSession <= 12 * 1024 ? "**met**" : "not met"
  ])
} else {
  row(["RSS per idle legacy HTTP session", "not run", "", "", ...blank, "≤ 12 KB", ""])
}

// -----------------------------------------------------------------------------
// Diagnostics
// -----------------------------------------------------------------------------

const diagnostics: Array<string> = []
const diagnostic = (label: string, data: Throughput | undefined, ours: string, official: string) => {
  for (const c of [1, 64]) {
    const a = find(data, ours, c)
    const b = find(data, official, c)
    if (a === undefined || b === undefined) continue
    const perRound = median(a.rounds.map((s, i) => s.rps / (b.rounds[i]?.rps ?? NaN)))
    diagnostics.push(
      `| ${label}, c=${c} | ${a.protocol ?? "?"} | ${k(a.rps)} | ${k(b.rps)} | ${x(a.rps / b.rps)} | ${
        x(perRound)
      } | ` +
        `${formatMicros(a.p99)} / ${formatMicros(b.p99)} | ${a.cpuPerCall.toFixed(1)} / ${b.cpuPerCall.toFixed(1)} |`
    )
  }
}
diagnostic(
  "in-process, `ours-client-modern` (McpClient → McpServer, 2026-07-28)",
  inprocess,
  "ours-client-modern",
  "official"
)
diagnostic("in-process, `ours-api` (raw McpClientSession → McpServer)", inprocess, "ours-api", "official")
diagnostic("in-process, `ours` (raw McpClientSession → raw McpServerSession)", inprocess, "ours", "official")
diagnostic("stdio, `ours-modern` (2026-07-28)", stdio, "ours-modern", "official")
diagnostic("Streamable HTTP JSON, `ours-modern` (2026-07-28, stateless)", http, "ours-modern", "official")
diagnostic(
  "Streamable HTTP JSON, `effect-ai-fetch` in the ours column (effect/ai's McpClient on `fetch` → its McpServer)",
  http,
  "effect-ai-fetch",
  "official"
)

// -----------------------------------------------------------------------------

const describe = (name: string, data: Common | undefined) =>
  data === undefined
    ? `${name}: not run`
    : `${name}: ${data.calls === undefined ? "" : `${data.calls} calls (+${data.warmup} warm-up) × `}` +
      `${data.rounds ?? (data as Partial<Startup>).runs ?? "?"} ${data.rounds === undefined ? "runs" : "rounds"}` +
      `${data.oursFrom === undefined ? "" : `, ours from ${data.oursFrom}/`}, load ${data.loadavg.join(" ")}`

const protocolsOf = (data: Throughput | undefined, impls: ReadonlyArray<string>) =>
  impls.map((impl) => `${impl} ${data?.throughput.find((r) => r.impl === impl)?.protocol ?? "?"}`).join(", ")

console.log()
console.log("## Summary: effect-mcp against the official SDK 1.32.2 and effect/ai 4.1.0 (the issue's table)")
console.log()
console.log(
  "Workload: `tools/call` echo after the handshake; McpClient → McpServer + McpTool against Client → " +
    "McpServer.registerTool, and against effect/ai (McpTest.makeClient in-process, McpClient otherwise → " +
    "McpServer + Toolkit), all in 2025-11-25; medians over interleaved rounds; ratio = ratio of the medians. " +
    "effect/ai: – where the script has no effect-ai row."
)
console.log()
for (const line of lines) console.log(line)
console.log()
console.log("Diagnostics (not targets): other shapes and the 2026-07-28 era against the same official rows.")
console.log()
console.log(
  "| row | protocol | ours | official | ours/official | median of per-round ratios | p99 ours / official | CPU µs/call ours / official |"
)
console.log("|---|---|---:|---:|---:|---:|---:|---:|")
for (const line of diagnostics) console.log(line)
console.log()
console.log(
  `negotiated: in-process ${protocolsOf(inprocess, ["ours-client", "official", "effect-ai"])}; stdio ${
    protocolsOf(stdio, ["ours", "official", "effect-ai"])
  }; HTTP ${protocolsOf(http, ["ours", "official", "ours-sse", "official-sse", "effect-ai"])}`
)
for (
  const [name, data] of [
    ["in-process", inprocess],
    ["stdio", stdio],
    ["http", http],
    ["connect", connect],
    ["startup", startup]
  ] as const
) {
  console.log(`- ${describe(name, data)}`)
}
console.log()
