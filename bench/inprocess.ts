/**
 * In-process `tools/call` echo benchmark: effect-mcp against the official
 * TypeScript SDK ("official"), in one process and the same run. effect-mcp
 * runs in three shapes:
 *
 * - "ours": the low-level `McpServerSession` with a raw `tools/call` handler,
 *   and `McpClientSession.request(McpSchema.CallTool, ...)`;
 * - "ours-api": the high-level `McpServer` with an `McpTool.make` echo tool
 *   (Schema input), served by `McpServer.layerSession`; the same raw
 *   `McpClientSession` client as "ours", so the row isolates the server API;
 * - "ours-client": the same `McpServer` as "ours-api", called with the
 *   high-level `McpClient.callTool` (with the default validator; echo has
 *   no outputSchema, so nothing is validated): the like-for-like row;
 * - "ours-client-modern" (diagnostic): "ours-client" in the 2026-07-28 era.
 *
 * "effect-ai" is effect's own MCP server (`effect/ai`, effect 4.1.0), what an
 * Effect user would pick instead: the echo `Tool` of `servers/effect-ai-echo.ts`
 * in a `Toolkit` (`McpServer.toolkit`), called through `McpTest.makeClient`,
 * effect's in-memory test client (effect has no in-memory transport for its
 * `McpClient`): the server runs over an in-memory `RpcServer.Protocol`, every
 * message JSON-encoded to a string and parsed in both directions, and the
 * client is an `RpcClient` of `McpSchema.ClientRequestRpcs`. It speaks
 * 2025-11-25. Its ratios ours / effect-ai are printed in a table of their own.
 *
 * Every effect-mcp row but the last pins `era: "legacy"`, so that it speaks
 * 2025-11-25 like the official SDK 1.32.2 (the default `era: "auto"` would
 * probe with `server/discover` and settle on 2026-07-28 against our server).
 *
 * "official" is `McpServer.registerTool` (zod input) and `Client.callTool`,
 * i.e. the official SDK's high-level API on both sides.
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
 *   hits both alike; the table shows medians over rounds, and each ratio is
 *   the median of the per-round ratios impl / official.
 *
 * Every session pair is built fresh for each measurement and torn down after.
 *
 * Usage:
 *   npm run bench
 *   npm run bench -- --calls 2000 --rounds 1
 *   node --conditions=development --expose-gc bench/inprocess.ts --only ours-api --concurrency 64
 *   node --conditions=development --expose-gc bench/inprocess.ts --only ours-client,official
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_CALLS, default 20000)
 *   --rounds R          rounds per concurrency (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  concurrency levels (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         comma-separated subset of ours,ours-api,ours-client,ours-client-modern,official,
 *                       effect-ai (BENCH_ONLY, default all six)
 *   --json FILE         write the medians as JSON (or into $BENCH_JSON_DIR/inprocess.json)
 *   --timeout S         hard limit of the whole run in seconds (BENCH_TIMEOUT, default 600)
 */
import {
  McpClient,
  McpClientSession,
  McpSchema,
  McpServer as OurMcpServer,
  McpServerSession,
  McpTool,
  McpTransport
} from "@effect-mcp/core"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import * as McpTest from "effect/ai/McpTest"
import { z } from "zod"
import {
  checkEcho,
  checkEffectAiEcho,
  clientInfo,
  effectPhase,
  gc,
  intList,
  noteProtocol,
  option,
  positiveInt,
  printProtocols,
  printRatiosAgainst,
  promisePhase,
  protocols,
  runMain,
  selection,
  TEXT,
  type ThroughputRow,
  warmupFor,
  watchOfficialProtocol,
  writeJson
} from "./harness.ts"
import { effectAiProtocols, effectAiRegistrations } from "./servers/effect-ai-echo.ts"
import { formatMicros, median, percentile, type Stats } from "./stats.ts"

// -----------------------------------------------------------------------------
// Configuration
// -----------------------------------------------------------------------------

const ALL_IMPLS = ["ours", "ours-api", "ours-client", "ours-client-modern", "official", "effect-ai"] as const
type Impl = (typeof ALL_IMPLS)[number]
const CALLS = positiveInt(option("calls", "BENCH_CALLS"), 20_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_TIMEOUT"), 600, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS: ReadonlyArray<Impl> = selection(ALL_IMPLS, option("only", "BENCH_ONLY"))
const WARMUP = warmupFor(CALLS)

// a hard limit on the whole run, whatever happens
setTimeout(() => {
  console.error(`bench: timed out after ${TIMEOUT_S} s`)
  process.exit(1)
}, TIMEOUT_S * 1000).unref()

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
// effect-mcp: the closed loop, shared by the three shapes
// -----------------------------------------------------------------------------

const now = Effect.sync(() => performance.now())

/** The warm-up, `gc()` and the measured phase of an Effect call (the session pair already built). */
const measureCall = <E>(call: Effect.Effect<void, E>, concurrency: number, calls: number, warmup: number) =>
  Effect.gen(function*() {
    const phase = (total: number, latencies: Float64Array | undefined) =>
      effectPhase(call, concurrency, total, latencies)

    yield* phase(warmup, undefined)
    if (gc !== undefined) gc()
    const latencies = new Float64Array(calls)
    const cpu0 = process.cpuUsage()
    const t0 = yield* now
    yield* phase(calls, latencies)
    const wall = (yield* now) - t0
    return summarize(latencies, wall, process.cpuUsage(cpu0))
  })

/**
 * Builds a fresh server and client over a new in-memory link (`setup`, in the
 * measurement's scope, which closes both), then runs the warm-up and the
 * measured phase against the call it returns.
 */
const runEffect = <E1, E2>(
  setup: (link: McpTransport.InMemoryLink) => Effect.Effect<Effect.Effect<void, E2>, E1, Scope.Scope>,
  concurrency: number,
  calls: number,
  warmup: number
): Promise<Stats> =>
  Effect.gen(function*() {
    const call = yield* setup(yield* McpTransport.makeInMemoryLink)
    return yield* measureCall(call, concurrency, calls, warmup)
  }).pipe(Effect.scoped, Effect.runPromise)

const serverInfo = { name: "bench-server", version: "0.0.0" }

// the raw client of "ours" and "ours-api": `McpClientSession.request`, in the
// official SDK's era (2025-11-25)
const OurClient = McpClientSession.layer({ clientInfo, era: "legacy" })

const rawClientCall = (impl: Impl) => (link: McpTransport.InMemoryLink) =>
  Effect.map(
    Layer.build(OurClient.pipe(Layer.provide(link.client))),
    (context) => {
      const session = Context.get(context, McpClientSession.McpClientSession)
      noteProtocol(impl, session.protocolVersion)
      return Effect.map(
        session.request(McpSchema.CallTool, {
          name: "echo",
          arguments: { text: TEXT }
        }),
        // the result type also admits a task handle (`CreateTaskResult`); echo never returns one
        (result) => checkEcho("content" in result ? result.content : undefined)
      )
    }
  )

// -----------------------------------------------------------------------------
// ours: McpServerSession with a raw tools/call handler
// -----------------------------------------------------------------------------

const OurServer = McpServerSession.layer({
  serverInfo,
  capabilities: { tools: {} },
  handlers: [
    McpServerSession.handler(
      McpSchema.CallTool,
      (params) => Effect.succeed({ content: [{ type: "text", text: String(params.arguments?.text) }] })
    )
  ]
})

const setupOurs = (link: McpTransport.InMemoryLink) =>
  Effect.andThen(Layer.build(OurServer.pipe(Layer.provide(link.server))), rawClientCall("ours")(link))

// -----------------------------------------------------------------------------
// ours-api / ours-client: McpServer with an McpTool
// -----------------------------------------------------------------------------

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

// one served connection of a fresh McpServer that has `echo` registered
const ApiServer = OurMcpServer.layerSession.pipe(
  Layer.provide(OurMcpServer.register(echo).pipe(Layer.provideMerge(OurMcpServer.layer(serverInfo))))
)

const buildApiServer = (link: McpTransport.InMemoryLink) => Layer.build(ApiServer.pipe(Layer.provide(link.server)))

const setupOursApi = (link: McpTransport.InMemoryLink) =>
  Effect.andThen(buildApiServer(link), rawClientCall("ours-api")(link))

// the high-level client; echo has no outputSchema, so callTool validates nothing
// (its first call fetches tools/list once, during the warm-up). "ours-client"
// pins the official SDK's era; "ours-client-modern" speaks 2026-07-28 (what
// the default `era: "auto"` settles on against our server)
const setupOursClient = (impl: "ours-client" | "ours-client-modern") => (link: McpTransport.InMemoryLink) =>
  Effect.andThen(
    buildApiServer(link),
    Effect.map(
      Layer.build(
        McpClient.layer({ clientInfo, era: impl === "ours-client" ? "legacy" : "modern" }).pipe(
          Layer.provide(link.client)
        )
      ),
      (context) => {
        const client = Context.get(context, McpClient.McpClient)
        noteProtocol(impl, client.protocolVersion)
        return Effect.map(client.callTool("echo", { text: TEXT }), (result) => checkEcho(result.content))
      }
    )
  )

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
  const client = new Client(clientInfo)
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await server.connect(serverTransport)
  await client.connect(watchOfficialProtocol("official", clientTransport))
  try {
    const call = async (): Promise<void> => {
      const result = await client.callTool({ name: "echo", arguments: { text: TEXT } })
      checkEcho(result.content as ReadonlyArray<unknown> | undefined)
    }
    const phase = (total: number, latencies: Float64Array | undefined) =>
      promisePhase(call, concurrency, total, latencies)

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
// effect-ai: effect/ai McpServer + its in-memory test client, McpTest.makeClient
// -----------------------------------------------------------------------------

// a fresh server and client per measurement, closed with the scope; the
// client's `callTool` is the typed `tools/call` of effect's RpcClient
const runEffectAi = (concurrency: number, calls: number, warmup: number): Promise<Stats> =>
  Effect.gen(function*() {
    const client = yield* McpTest.makeClient(effectAiRegistrations, { protocols: effectAiProtocols, clientInfo })
    noteProtocol("effect-ai", client.protocolVersion)
    const call = Effect.map(client.callTool({ name: "echo", arguments: { text: TEXT } }), checkEffectAiEcho)
    return yield* measureCall(call, concurrency, calls, warmup)
  }).pipe(Effect.scoped, Effect.runPromise)

// -----------------------------------------------------------------------------
// Rounds and report
// -----------------------------------------------------------------------------

const run = (impl: Impl, concurrency: number): Promise<Stats> => {
  switch (impl) {
    case "ours":
      return runEffect(setupOurs, concurrency, CALLS, WARMUP)
    case "ours-api":
      return runEffect(setupOursApi, concurrency, CALLS, WARMUP)
    case "ours-client":
    case "ours-client-modern":
      return runEffect(setupOursClient(impl), concurrency, CALLS, WARMUP)
    case "official":
      return runOfficial(concurrency, CALLS, WARMUP)
    case "effect-ai":
      return runEffectAi(concurrency, CALLS, WARMUP)
  }
}

const main = async (): Promise<void> => {
  console.log(
    `in-process tools/call echo: ${CALLS} calls (+${WARMUP} warm-up) × ${ROUNDS} rounds, ` +
      `concurrency ${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}`
  )
  const started = performance.now()
  const rows: Array<string> = []
  const ratios: Array<string> = []
  const results: Array<ThroughputRow> = []
  for (const concurrency of CONCURRENCY) {
    const samples: Record<Impl, Array<Stats>> = {
      ours: [],
      "ours-api": [],
      "ours-client": [],
      "ours-client-modern": [],
      official: [],
      "effect-ai": []
    }
    for (let round = 0; round < ROUNDS; round++) {
      // alternate who goes first, so neither always runs on a warmer (or more tired) process
      const order = round % 2 === 0 ? IMPLS : [...IMPLS].reverse()
      for (const impl of order) {
        const stats = await run(impl, concurrency)
        samples[impl].push(stats)
        console.log(
          `  c=${concurrency} round ${round + 1}/${ROUNDS} ${impl.padEnd(11)} ` +
            `${Math.round(stats.rps).toString().padStart(7)} rps  p50 ${formatMicros(stats.p50)}  ` +
            `p99 ${formatMicros(stats.p99)}  cpu ${stats.cpuPerCall.toFixed(1)} µs/call`
        )
      }
    }
    for (const impl of IMPLS) {
      const list = samples[impl]
      results.push({
        impl,
        concurrency,
        rps: median(list.map((s) => s.rps)),
        p50: median(list.map((s) => s.p50)),
        p99: median(list.map((s) => s.p99)),
        cpuPerCall: median(list.map((s) => s.cpuPerCall)),
        protocol: protocols.get(impl),
        rounds: list
      })
      rows.push(
        `| ${impl} | ${concurrency} | ${Math.round(median(list.map((s) => s.rps)))} | ` +
          `${formatMicros(median(list.map((s) => s.p50)))} | ${formatMicros(median(list.map((s) => s.p99)))} | ` +
          `${median(list.map((s) => s.cpuPerCall)).toFixed(1)} | ${list.length} |`
      )
    }
    if (IMPLS.includes("official")) {
      for (const impl of IMPLS) {
        if (impl === "official") continue
        const perRound = samples[impl].map((s, i) => s.rps / samples.official[i]!.rps)
        const cpuPerRound = samples[impl].map((s, i) => s.cpuPerCall / samples.official[i]!.cpuPerCall)
        ratios.push(
          `| ${impl} | ${concurrency} | **${median(perRound).toFixed(2)}×** | ` +
            `${perRound.map((r) => r.toFixed(2)).join(", ")} | ${median(cpuPerRound).toFixed(2)}× |`
        )
      }
    }
  }
  console.log()
  console.log("| impl | c | rps | p50 | p99 | CPU µs/call | n |")
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  for (const row of rows) console.log(row)
  if (ratios.length > 0) {
    console.log()
    console.log("| impl | c | impl/official rps (median of rounds) | per round | impl/official CPU µs/call |")
    console.log("|---|---:|---:|---|---:|")
    for (const row of ratios) console.log(row)
  }
  if (IMPLS.includes("effect-ai")) {
    console.log()
    printRatiosAgainst(results, "effect-ai", IMPLS.filter((impl) => impl !== "effect-ai"))
  }
  printProtocols()
  writeJson("inprocess", { calls: CALLS, warmup: WARMUP, rounds: ROUNDS, throughput: results })
  console.log()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
