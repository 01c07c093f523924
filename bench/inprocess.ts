/**
 * In-process `tools/call` echo benchmark: effect-mcp ("ours") against the
 * official TypeScript SDK ("official"), in one process and the same run.
 *
 * Workload and method follow /work/shared/PERF-BASELINE.md ("A. In-process"):
 *
 * - after `initialize`, the client calls `tools/call` on `echo` with
 *   `{ text: "The quick brown fox jumps over the lazy dog" }`; the server
 *   returns `{ content: [{ type: "text", text }] }`; the client checks the text;
 * - closed loop: `c` workers, each awaiting its call before issuing the next;
 * - warm-up of min(2000, max(200, n / 10)) calls, then `gc()` when exposed,
 *   then `n` measured calls;
 * - latency is `performance.now()` around each call; rps = n / wall time;
 *   CPU is `process.cpuUsage()` (user + system, both sides, GC threads
 *   included) over the measured phase, per call;
 * - rounds alternate the implementations (and their order) so machine noise
 *   hits both alike; the table shows medians over rounds, and the ratio is the
 *   median of the per-round ratios ours / official.
 *
 * Every session pair is built fresh for each measurement and torn down after.
 *
 * Usage:
 *   npm run bench
 *   npm run bench -- --calls 2000 --rounds 1
 *   node --conditions=development --expose-gc bench/inprocess.ts --only ours --concurrency 64
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_CALLS, default 20000)
 *   --rounds R          rounds per concurrency (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  concurrency levels (BENCH_CONCURRENCY, default 1,64)
 *   --only ours|official  run one implementation only (BENCH_ONLY)
 *   --timeout S         hard limit of the whole run in seconds (BENCH_TIMEOUT, default 600)
 */
import { McpClientSession, McpSchema, McpServerSession, McpTransport } from "@effect-mcp/core"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Context, Effect, Layer } from "effect"
import { z } from "zod"
import { formatMicros, median, percentile, type Stats } from "./stats.ts"

// -----------------------------------------------------------------------------
// Configuration
// -----------------------------------------------------------------------------

type Impl = "ours" | "official"

const argv = process.argv.slice(2)
const option = (name: string, env: string): string | undefined => {
  const index = argv.indexOf(`--${name}`)
  if (index >= 0) return argv[index + 1]
  const prefixed = argv.find((arg) => arg.startsWith(`--${name}=`))
  if (prefixed !== undefined) return prefixed.slice(name.length + 3)
  return process.env[env]
}
const positiveInt = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive integer, got ${value}`)
  return parsed
}

const CALLS = positiveInt(option("calls", "BENCH_CALLS"), 20_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_TIMEOUT"), 600, "timeout")
const CONCURRENCY = (option("concurrency", "BENCH_CONCURRENCY") ?? "1,64")
  .split(",")
  .map((value) => positiveInt(value.trim(), 1, "concurrency"))
const only = option("only", "BENCH_ONLY")
if (only !== undefined && only !== "ours" && only !== "official") {
  throw new Error(`--only must be "ours" or "official", got ${only}`)
}
const IMPLS: ReadonlyArray<Impl> = only === undefined ? ["ours", "official"] : [only]
const WARMUP = Math.min(2000, Math.max(200, Math.floor(CALLS / 10)))

const TEXT = "The quick brown fox jumps over the lazy dog"
const gc = (globalThis as { gc?: () => void }).gc

// a hard limit on the whole run, whatever happens
setTimeout(() => {
  console.error(`bench: timed out after ${TIMEOUT_S} s`)
  process.exit(1)
}, TIMEOUT_S * 1000).unref()

const checkEcho = (content: ReadonlyArray<unknown> | undefined): void => {
  const first = content?.[0] as { readonly type?: unknown; readonly text?: unknown } | undefined
  if (first?.type !== "text" || first.text !== TEXT) {
    throw new Error(`unexpected echo result: ${JSON.stringify(content)}`)
  }
}

const summarize = (latencies: Float64Array, wallMs: number, cpu: NodeJS.CpuUsage): Stats => {
  const n = latencies.length
  latencies.sort()
  return {
    rps: n / (wallMs / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerCall: (cpu.user + cpu.system) / n
  }
}

// -----------------------------------------------------------------------------
// ours: @effect-mcp/core sessions over the in-memory link
// -----------------------------------------------------------------------------

const OurServer = McpServerSession.layer({
  serverInfo: { name: "bench-server", version: "0.0.0" },
  capabilities: { tools: {} },
  handlers: [
    McpServerSession.handler(McpSchema.CallTool, (params) =>
      Effect.succeed({ content: [{ type: "text", text: String(params.arguments?.text) }] }))
  ]
})

const OurClient = McpClientSession.layer({ clientInfo: { name: "bench-client", version: "0.0.0" } })

const now = Effect.sync(() => performance.now())

const runOurs = (concurrency: number, calls: number, warmup: number): Promise<Stats> =>
  Effect.gen(function*() {
    const link = yield* McpTransport.makeInMemoryLink
    yield* Layer.build(OurServer.pipe(Layer.provide(link.server)))
    const client = Context.get(
      yield* Layer.build(OurClient.pipe(Layer.provide(link.client))),
      McpClientSession.McpClientSession
    )
    const call = Effect.map(
      client.request(McpSchema.CallTool, { name: "echo", arguments: { text: TEXT } }),
      // the result type also admits a task handle (`CreateTaskResult`); echo never returns one
      (result) => checkEcho("content" in result ? result.content : undefined)
    )

    // `total` calls over `concurrency` workers; each worker takes the next slot
    // until none are left, so the loop is bounded by `total`
    const phase = (total: number, latencies: Float64Array | undefined) => {
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

    yield* phase(warmup, undefined)
    if (gc !== undefined) gc()
    const latencies = new Float64Array(calls)
    const cpu0 = process.cpuUsage()
    const t0 = yield* now
    yield* phase(calls, latencies)
    const wall = (yield* now) - t0
    return summarize(latencies, wall, process.cpuUsage(cpu0))
  }).pipe(Effect.scoped, Effect.runPromise)

// -----------------------------------------------------------------------------
// official: @modelcontextprotocol/sdk McpServer + Client over InMemoryTransport
// -----------------------------------------------------------------------------

const runOfficial = async (concurrency: number, calls: number, warmup: number): Promise<Stats> => {
  const server = new McpServer({ name: "bench-server", version: "0.0.0" })
  server.registerTool(
    "echo",
    { inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] })
  )
  const client = new Client({ name: "bench-client", version: "0.0.0" })
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await server.connect(serverTransport)
  await client.connect(clientTransport)
  try {
    const call = async (): Promise<void> => {
      const result = await client.callTool({ name: "echo", arguments: { text: TEXT } })
      checkEcho(result.content as ReadonlyArray<unknown> | undefined)
    }
    const phase = async (total: number, latencies: Float64Array | undefined): Promise<void> => {
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

    await phase(warmup, undefined)
    if (gc !== undefined) gc()
    const latencies = new Float64Array(calls)
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    await phase(calls, latencies)
    const wall = performance.now() - t0
    return summarize(latencies, wall, process.cpuUsage(cpu0))
  } finally {
    await client.close()
    await server.close()
  }
}

// -----------------------------------------------------------------------------
// Rounds and report
// -----------------------------------------------------------------------------

const run = (impl: Impl, concurrency: number): Promise<Stats> =>
  impl === "ours" ? runOurs(concurrency, CALLS, WARMUP) : runOfficial(concurrency, CALLS, WARMUP)

const main = async (): Promise<void> => {
  console.log(
    `in-process tools/call echo: ${CALLS} calls (+${WARMUP} warm-up) × ${ROUNDS} rounds, ` +
      `concurrency ${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}`
  )
  const started = performance.now()
  const rows: Array<string> = []
  const ratios: Array<string> = []
  for (const concurrency of CONCURRENCY) {
    const samples: Record<Impl, Array<Stats>> = { ours: [], official: [] }
    for (let round = 0; round < ROUNDS; round++) {
      // alternate who goes first, so neither always runs on a warmer (or more tired) process
      const order = round % 2 === 0 ? IMPLS : [...IMPLS].reverse()
      for (const impl of order) {
        const stats = await run(impl, concurrency)
        samples[impl].push(stats)
        console.log(
          `  c=${concurrency} round ${round + 1}/${ROUNDS} ${impl.padEnd(8)} ` +
            `${Math.round(stats.rps).toString().padStart(7)} rps  p50 ${formatMicros(stats.p50)}  ` +
            `p99 ${formatMicros(stats.p99)}  cpu ${stats.cpuPerCall.toFixed(1)} µs/call`
        )
      }
    }
    for (const impl of IMPLS) {
      const list = samples[impl]
      rows.push(
        `| ${impl} | ${concurrency} | ${Math.round(median(list.map((s) => s.rps)))} | ` +
          `${formatMicros(median(list.map((s) => s.p50)))} | ${formatMicros(median(list.map((s) => s.p99)))} | ` +
          `${median(list.map((s) => s.cpuPerCall)).toFixed(1)} | ${list.length} |`
      )
    }
    if (IMPLS.length === 2) {
      const perRound = samples.ours.map((s, i) => s.rps / samples.official[i]!.rps)
      const cpuPerRound = samples.ours.map((s, i) => s.cpuPerCall / samples.official[i]!.cpuPerCall)
      ratios.push(
        `| ${concurrency} | **${median(perRound).toFixed(2)}×** | ` +
          `${perRound.map((r) => r.toFixed(2)).join(", ")} | ${median(cpuPerRound).toFixed(2)}× |`
      )
    }
  }
  console.log()
  console.log("| impl | c | rps | p50 | p99 | CPU µs/call | n |")
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  for (const row of rows) console.log(row)
  if (ratios.length > 0) {
    console.log()
    console.log("| c | ours/official rps (median of rounds) | per round | ours/official CPU µs/call |")
    console.log("|---:|---:|---|---:|")
    for (const row of ratios) console.log(row)
  }
  console.log()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

main().then(
  () => {
    process.exitCode = 0
  },
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
