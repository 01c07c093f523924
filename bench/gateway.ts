/**
 * What `McpGateway` costs a call: `tools/call` echo through the gateway
 * against the same call made directly to the same stdio server, in one run.
 * This process is the client (effect-mcp's `McpClient`, era `"auto"`, the
 * default); every server is a child process (the gateway's upstreams are its
 * own children).
 *
 * - "direct": `NodeMcpStdio.makeClient` (what `NodeMcpStdio.layerClient`
 *   builds) spawning `servers/stdio-ours.ts`, the echo server of `stdio.ts`;
 * - "gateway": `NodeMcpHttpClient.layer({ url })` to `servers/gateway-ours.ts`
 *   (`McpGateway` over `NodeMcpGroup.layer({ servers: { echo:
 *   McpGroup.stdio(node, [stdio-ours.ts]) } })`, served by
 *   `NodeMcpHttpServer.layer({ port: 0 })`, JSON answers) in a process of its
 *   own (the group made as `NodeMcpGateway.layer` makes it, its client
 *   options `McpGateway.clientOptions`), which spawns the same echo server.
 *   Client → HTTP → gateway → stdio → server. Both eras settle on 2026-07-28
 *   (our client's `"auto"` against our servers, and the group's against the
 *   echo server): the gateway is a modern server in front of a modern one,
 *   and every call goes on the group's one connection;
 * - "http" (diagnostic): the same client over HTTP to `servers/http-ours.ts`
 *   (the echo tool served by `NodeMcpHttpServer.layer({ port: 0 })`, JSON
 *   answers, 2026-07-28 too), no gateway: the share of the HTTP front alone
 *   in "gateway" (gateway − http is the forwarding: the gateway's server
 *   work beyond a plain server's, its client, and the stdio hop);
 * - "legacy-elicit" (diagnostic): the upstream pinned legacy
 *   (`McpGroup.stdio(…, { era: "legacy" })`) and a client that declares an
 *   elicitation handler (never called: echo asks nothing). A legacy server's
 *   questions and logs say nothing of the call they belong to, so each call
 *   of a client that can be asked takes a session of the gateway's own with
 *   the server for as long as it runs (`forward.ts` `sessionFor` →
 *   `Capabilities.ALL`; `pool.ts` `acquire`): one of at most 8 per server
 *   (`upstreams.echo.sessions`), each a process of its own for a stdio
 *   server; a 9th call at once waits for one;
 * - "legacy-refusing" (diagnostic): the same upstream, a client that declares
 *   nothing: `sessionFor` → `undefined`, its calls share the group's one
 *   connection, which declares every question and refuses each with `-32021`
 *   (`McpGateway.clientOptions`).
 *
 * Method as in `stdio.ts` and `http.ts`: fresh processes for every
 * measurement (the gateway, its upstream; the direct row's server), warm-up
 * (`warmupFor(calls)`), `gc()` in this process, a closed loop of `c` Effect
 * workers, rounds in alternating order, medians. CPU per call: this process
 * (`process.cpuUsage()`), the gateway and every upstream process
 * (`/proc/<pid>/stat`, 10 ms ticks; upstreams found as the gateway's child
 * processes, before and after the measured phase). The gateway's ratio to
 * "direct" is the median of the per-round ratios; its added p50 and p99 are
 * the medians of the per-round differences.
 *
 * Usage:
 *   npm run bench:gateway
 *   npm run bench:gateway -- --only direct,gateway --calls 1000 --rounds 1
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_GATEWAY_CALLS, default 1500)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         subset of direct,gateway,http,legacy-elicit,legacy-refusing (BENCH_GATEWAY_ONLY)
 *   --json FILE         write the medians as JSON (or into $BENCH_JSON_DIR/gateway.json)
 *   --timeout S         hard limit of the whole run (BENCH_GATEWAY_TIMEOUT, default 420)
 *
 * `BENCH_SERVER_FLAGS` go to every server process (gateway and upstreams),
 * `BENCH_GATEWAY_FLAGS` to the gateway process only (e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof/gateway`: it exits normally, so its profile is
 * written). `BENCH_OURS_DIST=1`: the servers' packages from `dist/`.
 */
import { McpClient, McpTransport } from "@effect-mcp/core"
import { NodeMcpHttpClient, NodeMcpStdio } from "@effect-mcp/platform-node"
import { Context, Effect, Layer } from "effect"
import {
  assertAllGone,
  checkEcho,
  clientInfo,
  effectPhase,
  gc,
  hardTimeout,
  intList,
  isAlive,
  killTracked,
  type LineChild,
  NODE,
  noteProtocol,
  option,
  OURS_DIST,
  positiveInt,
  processCpuMicros,
  processCpuOr0,
  processDescendants,
  runMain,
  runRounds,
  type Sample,
  selection,
  SERVER_FLAGS,
  spawnLineChild,
  TEXT,
  type ThroughputRow,
  track,
  TS_FLAGS,
  waitGone,
  warmupFor,
  warningCount,
  writeJson
} from "./harness.ts"
import { formatMicros, median, percentile } from "./stats.ts"

const ALL = ["direct", "gateway", "http", "legacy-elicit", "legacy-refusing"] as const
type Impl = (typeof ALL)[number]

const CALLS = positiveInt(option("calls", "BENCH_GATEWAY_CALLS"), 1_500, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_GATEWAY_TIMEOUT"), 420, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS = selection(ALL, option("only", "BENCH_GATEWAY_ONLY"))
const WARMUP = warmupFor(CALLS)
const GATEWAY_FLAGS: ReadonlyArray<string> = (process.env.BENCH_GATEWAY_FLAGS ?? "").split(" ").filter((f) => f !== "")

hardTimeout(TIMEOUT_S, "bench/gateway")
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    const killed = killTracked()
    console.error(`bench/gateway: ${signal} (killed ${killed} child process(es))`)
    process.exit(130)
  })
}

/** The echo server, for the direct row and as the gateway's upstream. */
const ECHO_ARGS: ReadonlyArray<string> = [...TS_FLAGS, ...SERVER_FLAGS, "bench/servers/stdio-ours.ts"]

// -----------------------------------------------------------------------------
// Processes: the gateway's children, their CPU
// -----------------------------------------------------------------------------

/** The server side of a row: the process the client talks to, and how to find the processes behind it. */
interface ServerSide {
  /** the direct row's echo server, or the gateway */
  readonly front: number
  /** the upstream processes now (none for the direct row) */
  readonly upstreams: () => Array<number>
}

/** A measurement, with the CPU split by process and the upstream processes counted. */
interface GatewaySample extends Sample {
  /** the gateway's CPU per call (the direct row: the echo server's) */
  readonly frontCpu: number
  /** the upstream processes' CPU per call, together */
  readonly upstreamCpu: number
  /** upstream processes at the start and at the end of the measured phase */
  readonly upstreamsBefore: number
  readonly upstreams: number
}

/** Warm-up, `gc()`, then `calls` measured calls in an Effect closed loop, with the CPU of every server-side process. */
const measure = <E>(
  call: Effect.Effect<void, E>,
  concurrency: number,
  side: ServerSide
): Effect.Effect<GatewaySample, E> =>
  Effect.gen(function*() {
    yield* effectPhase(call, concurrency, WARMUP, undefined)
    if (gc !== undefined) gc()
    const before = new Map<number, number>()
    for (const pid of side.upstreams()) {
      track(pid)
      before.set(pid, processCpuOr0(pid))
    }
    const latencies = new Float64Array(CALLS)
    const warnings0 = warningCount()
    const front0 = processCpuMicros(side.front)
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    yield* effectPhase(call, concurrency, CALLS, latencies)
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const front = processCpuMicros(side.front) - front0
    const after = side.upstreams()
    let upstream = 0
    for (const pid of after) {
      track(pid)
      upstream += processCpuOr0(pid) - (before.get(pid) ?? 0)
    }
    latencies.sort()
    const clientCpu = (cpu.user + cpu.system) / CALLS
    const frontCpu = front / CALLS
    const upstreamCpu = upstream / CALLS
    return {
      rps: CALLS / (wall / 1000),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      cpuPerCall: clientCpu + frontCpu + upstreamCpu,
      clientCpu,
      serverCpu: frontCpu + upstreamCpu,
      frontCpu,
      upstreamCpu,
      upstreamsBefore: before.size,
      upstreams: after.length,
      warnings: warningCount() - warnings0
    }
  })

// -----------------------------------------------------------------------------
// Rows
// -----------------------------------------------------------------------------

/** The era each row's gateway settled on with its upstream (`era protocolVersion`). */
const upstreamProtocols = new Map<string, string>()

const call = (client: McpClient.Client) =>
  Effect.map(client.callTool("echo", { text: TEXT }), (result) => checkEcho(result.content))

const runDirect = (impl: Impl, concurrency: number): Promise<GatewaySample> => {
  let pid = 0
  return Effect.gen(function*() {
    const transport = yield* NodeMcpStdio.makeClient({ command: NODE, args: ECHO_ARGS, stderr: "forward" })
    pid = transport.pid
    track(pid)
    const client = yield* McpClient.make({ clientInfo }).pipe(
      Effect.provideService(McpTransport.McpTransport, transport)
    )
    noteProtocol(impl, client.protocolVersion)
    return yield* measure(call(client), concurrency, { front: pid, upstreams: () => [] })
  }).pipe(Effect.scoped, Effect.runPromise).then(async (sample) => {
    if ((await waitGone([pid], 3000)).length > 0) throw new Error(`${impl}: server ${pid} still alive after close`)
    return sample
  })
}

const startGateway = async (impl: Impl): Promise<{ readonly gateway: LineChild; readonly url: string }> => {
  const era = impl === "gateway" ? "auto" : "legacy"
  const gateway = spawnLineChild([
    ...TS_FLAGS,
    ...SERVER_FLAGS,
    ...GATEWAY_FLAGS,
    "bench/servers/gateway-ours.ts",
    era,
    NODE,
    ...ECHO_ARGS
  ])
  try {
    const line = JSON.parse(await gateway.nextLine()) as {
      readonly url: string
      readonly upstream: { readonly era?: string; readonly protocolVersion?: string }
    }
    const settled = `${line.upstream.era} ${line.upstream.protocolVersion}`
    const known = upstreamProtocols.get(impl)
    if (known !== undefined && known !== settled) {
      throw new Error(`${impl}: the upstream settled on ${settled}, earlier ${known}`)
    }
    upstreamProtocols.set(impl, settled)
    for (const pid of processDescendants([gateway.pid])[0]!) track(pid)
    return { gateway, url: line.url }
  } catch (error) {
    await gateway.stop()
    throw error
  }
}

/** The plain HTTP echo server of `http.ts` (no gateway): prints its URL, exits when stdin ends. */
const startHttp = async (): Promise<{ readonly gateway: LineChild; readonly url: string }> => {
  const server = spawnLineChild([...TS_FLAGS, ...SERVER_FLAGS, "bench/servers/http-ours.ts"])
  try {
    const { url } = JSON.parse(await server.nextLine()) as { readonly url: string }
    return { gateway: server, url }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** Our client over HTTP to the gateway (or, for "http", to the plain HTTP echo server). */
const runGateway = async (impl: Impl, concurrency: number): Promise<GatewaySample> => {
  const { gateway, url } = await (impl === "http" ? startHttp() : startGateway(impl))
  const seen = new Set<number>()
  const upstreams = () => {
    const now = processDescendants([gateway.pid])[0]!
    for (const pid of now) seen.add(pid)
    return now
  }
  try {
    return await Effect.gen(function*() {
      const context = yield* Layer.build(
        McpClient.layer({
          clientInfo,
          // declared, never asked: the echo tool asks nothing
          ...(impl === "legacy-elicit"
            ? { elicitation: { form: () => Effect.succeed({ action: "decline" as const }) } }
            : {})
        }).pipe(Layer.provide(NodeMcpHttpClient.layer({ url })))
      )
      const client = Context.get(context, McpClient.McpClient)
      noteProtocol(impl, client.protocolVersion)
      return yield* measure(call(client), concurrency, { front: gateway.pid, upstreams })
    }).pipe(Effect.scoped, Effect.runPromise)
  } finally {
    upstreams()
    await gateway.stop()
    const alive = await waitGone(seen, 3000)
    if (alive.length > 0) {
      throw new Error(`${impl}: upstream process(es) ${alive.join(", ")} still alive after the gateway stopped`)
    }
    if (isAlive(gateway.pid)) throw new Error(`${impl}: gateway ${gateway.pid} still alive after stop`)
  }
}

const run = (impl: Impl, concurrency: number): Promise<Sample> =>
  impl === "direct" ? runDirect(impl, concurrency) : runGateway(impl, concurrency)

// -----------------------------------------------------------------------------
// Report
// -----------------------------------------------------------------------------

interface Comparison {
  readonly impl: Impl
  readonly base: Impl
  readonly concurrency: number
  /** median of per-round rps ratios impl / base */
  readonly ratio: number
  /** medians of per-round differences impl − base, ms (CPU: µs per call) */
  readonly addedP50: number
  readonly addedP99: number
  readonly addedCpu: number
}

const noUpstream = (impl: string) => impl === "direct" || impl === "http"

const report = (rows: ReadonlyArray<ThroughputRow>): Array<Comparison> => {
  const samplesOf = (impl: Impl, concurrency: number) =>
    rows.find((row) => row.impl === impl && row.concurrency === concurrency)?.rounds as
      | ReadonlyArray<GatewaySample>
      | undefined
  console.log(
    "CPU µs per call by process (medians), and the upstream processes in each round (before→after the measured phase):"
  )
  console.log()
  console.log(
    "| row | c | client | gateway (direct, http: the echo server) | upstream(s) | upstream processes by round |"
  )
  console.log("|---|---:|---:|---:|---:|---|")
  for (const row of rows) {
    const list = samplesOf(row.impl as Impl, row.concurrency)!
    const med = (f: (s: GatewaySample) => number) => median(list.map(f))
    console.log(
      `| ${row.impl} | ${row.concurrency} | ${med((s) => s.clientCpu).toFixed(0)} | ${
        med((s) => s.frontCpu).toFixed(0)
      } | ` +
        `${noUpstream(row.impl) ? "" : med((s) => s.upstreamCpu).toFixed(0)} | ` +
        `${
          noUpstream(row.impl)
            ? ""
            : list.map((s) => s.upstreamsBefore === s.upstreams ? s.upstreams : `${s.upstreamsBefore}→${s.upstreams}`)
              .join(", ")
        } |`
    )
  }
  console.log()
  const signed = (ms: number) => (ms < 0 ? "−" : "+") + formatMicros(Math.abs(ms))
  const against = (base: Impl, impls: ReadonlyArray<Impl>): Array<Comparison> => {
    const out: Array<Comparison> = []
    for (const concurrency of CONCURRENCY) {
      const baseline = samplesOf(base, concurrency)
      if (baseline === undefined) continue
      for (const impl of impls) {
        const list = samplesOf(impl, concurrency)
        if (impl === base || list === undefined) continue
        const per = (f: (s: GatewaySample, b: GatewaySample) => number) =>
          median(list.map((s, i) => f(s, baseline[i]!)))
        out.push({
          impl,
          base,
          concurrency,
          ratio: per((s, b) => s.rps / b.rps),
          addedP50: per((s, b) => s.p50 - b.p50),
          addedP99: per((s, b) => s.p99 - b.p99),
          addedCpu: per((s, b) => s.cpuPerCall - b.cpuPerCall)
        })
      }
    }
    if (out.length > 0) {
      console.log(`Against ${base} (medians of the per-round ratios and differences):`)
      console.log()
      console.log(`| row | c | rps / ${base} | added p50 | added p99 | added CPU µs/call |`)
      console.log("|---|---:|---:|---:|---:|---:|")
      for (const c of out) {
        console.log(
          `| ${c.impl} | ${c.concurrency} | **${c.ratio.toFixed(2)}×** | ${signed(c.addedP50)} | ${
            signed(c.addedP99)
          } | ` +
            `${c.addedCpu >= 0 ? "+" : "−"}${Math.abs(c.addedCpu).toFixed(0)} |`
        )
      }
      console.log()
    }
    return out
  }
  const comparisons = [
    ...against("direct", IMPLS),
    // the gateway's own share: the same HTTP front with nothing behind it
    ...against("http", IMPLS.filter((impl) => impl !== "direct"))
  ]
  const at64 = comparisons.find((c) => c.impl === "gateway" && c.base === "direct" && c.concurrency === 64)
  const at1 = comparisons.find((c) => c.impl === "gateway" && c.base === "direct" && c.concurrency === 1)
  if (at64 !== undefined) {
    console.log(
      `target: gateway keeps >= 0.7 of direct throughput at c=64: ${at64.ratio.toFixed(2)}× — ${
        at64.ratio >= 0.7 ? "met" : "MISSED"
      }`
    )
  }
  if (at1 !== undefined) {
    console.log(
      `target: gateway adds < 1 ms p50 at c=1: ${signed(at1.addedP50)} — ${at1.addedP50 < 1 ? "met" : "MISSED"}`
    )
  }
  if (upstreamProtocols.size > 0) {
    console.log(
      `gateway ↔ upstream settled on: ${[...upstreamProtocols].map(([impl, v]) => `${impl} ${v}`).join(", ")}`
    )
  }
  console.log()
  return comparisons
}

// -----------------------------------------------------------------------------

const main = async (): Promise<void> => {
  console.log(
    `gateway tools/call echo (client → HTTP → McpGateway → stdio echo server, against client → stdio echo server): ` +
      `${CALLS} calls (+${WARMUP} warm-up) × ${ROUNDS} rounds, concurrency ${CONCURRENCY.join(",")}, ${
        IMPLS.join(" vs ")
      }; ` +
      `node ${process.version}, gc ${
        gc === undefined ? "not exposed" : "forced before each measurement"
      }; our servers from ` +
      (OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)")
  )
  const started = performance.now()
  const throughput = await runRounds({
    title: `gateway, ${CALLS} calls (CPU = client + gateway + upstream processes, or client + echo server, µs/call)`,
    impls: IMPLS,
    baseline: "direct",
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    run
  })
  const comparisons = report(throughput)
  writeJson("gateway", {
    calls: CALLS,
    warmup: WARMUP,
    rounds: ROUNDS,
    oursFrom: OURS_DIST ? "dist" : "src",
    upstreamProtocols: Object.fromEntries(upstreamProtocols),
    throughput,
    comparisons
  })
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
