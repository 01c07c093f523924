/**
 * Modern (MCP 2026-07-28, stateless) Streamable HTTP `tools/call` echo:
 * effect-mcp's server against the official TypeScript SDK v2's server, both
 * driven by ONE client, so that the comparison is about the servers. Each
 * server is a child process on 127.0.0.1 and an ephemeral port, fresh for
 * every measurement.
 *
 * - "ours": `servers/http-ours.ts`, `NodeMcpHttpServer.layer({ port: 0,
 *   responseMode: "json" })` serving `McpServer` + `McpTool` echo (the
 *   server of `http.ts`; modern requests share the endpoint with 2025 ones);
 * - "official": `servers/modern-official.mjs`, `createMcpHandler(factory)` of
 *   `@modelcontextprotocol/server` 2.4.0 (a fresh `McpServer` with a zod echo
 *   tool per request, as the SDK documents) on bare `node:http`.
 *
 * The client of these two rows is a plain `node:http` client (keep-alive
 * agent, `maxSockets` = concurrency): each call is one POST with the modern
 * headers (`MCP-Protocol-Version: 2026-07-28`, `Mcp-Method: tools/call`,
 * `Mcp-Name: echo`) and the `_meta` envelope in the body, no `initialize`,
 * no session id; it checks the status, the id, `resultType: "complete"` and
 * the echoed text.
 *
 * Optional rows "v2>ours" and "v2>official" use the official v2 client
 * (`@modelcontextprotocol/client` 2.4.0, `versionNegotiation: { mode: { pin:
 * "2026-07-28" } }`, one `server/discover` at connect, then
 * `client.callTool`) against the same two servers; they get a table of their
 * own (baseline "v2>official").
 *
 * Method as in `http.ts` (PERF-BASELINE.md, "C"): warm-up, `gc()`, a closed
 * loop of `c` workers, rounds alternating the order, medians over rounds; CPU
 * per call is this process's `process.cpuUsage()` and the server's
 * `/proc/<pid>/stat` (10 ms ticks). At the end, the target of the issue:
 * ours ≥ 2× official rps at c = 64 with a p99 no worse (raw client).
 *
 * Usage:
 *   npm run bench:modern
 *   node --conditions=development --expose-gc --no-warnings bench/modern.ts --calls 1000 --rounds 1
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_MODERN_CALLS, default 5000)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         subset of ours,official,ours-stateless,ours-legacy,v2>ours,v2>official
 *                       (BENCH_MODERN_ONLY, default ours,official)
 *   --timeout S         hard limit of the whole run (BENCH_MODERN_TIMEOUT, default 300)
 *
 * Diagnostic rows (not in the default run): "ours-stateless" is the same
 * server started with `stateless: true`; "ours-legacy" is the same server on
 * its 2025-11-25 path, with one session opened before the measurement
 * (`floorHttp` of `floor.ts`: `initialize`, then `tools/call` POSTs with
 * `Mcp-Session-Id`), to show what serving each modern request by a session
 * of its own costs.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { floorHttp } from "./floor.ts"
import {
  assertAllGone,
  checkEcho,
  gc,
  hardTimeout,
  intList,
  type LineChild,
  measurePromise,
  option,
  OURS_DIST,
  positiveInt,
  runMain,
  runRounds,
  type Sample,
  selection,
  SERVER_FLAGS,
  spawnLineChild,
  TEXT,
  TS_FLAGS,
  warmupFor
} from "./harness.ts"
import { modernCaller, VERSION } from "./modernCall.ts"
import { formatMicros, median } from "./stats.ts"

const ALL = ["ours", "official", "ours-stateless", "ours-legacy", "v2>ours", "v2>official"] as const
type Impl = (typeof ALL)[number]

const CALLS = positiveInt(option("calls", "BENCH_MODERN_CALLS"), 5_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_MODERN_TIMEOUT"), 300, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS = selection(ALL, option("only", "BENCH_MODERN_ONLY") ?? "ours,official")
const WARMUP = warmupFor(CALLS)

hardTimeout(TIMEOUT_S, "bench/modern")

type Side = "ours" | "official" | "ours-stateless"
const serverSide = (impl: Impl): Side =>
  impl === "v2>ours" || impl === "ours-legacy" ? "ours" : impl === "v2>official" ? "official" : impl

const serverArgs: Record<Side, ReadonlyArray<string>> = {
  ours: [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-ours.ts"],
  "ours-stateless": [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-ours.ts", "stateless"],
  official: [...SERVER_FLAGS, "--expose-gc", "bench/servers/modern-official.mjs"]
}

/** A fresh server child for `f`; stopped (and waited for) afterwards. */
const withServer = async <A>(side: Side, f: (url: string, pid: number) => Promise<A>): Promise<A> => {
  const server: LineChild = spawnLineChild(serverArgs[side])
  try {
    const { url } = JSON.parse(await server.nextLine()) as { url: string }
    return await f(url, server.pid)
  } finally {
    await server.stop()
  }
}

// -----------------------------------------------------------------------------
// Clients
// -----------------------------------------------------------------------------

/** The raw client (`modernCall.ts`): one modern POST per call on a keep-alive agent with `concurrency` sockets. */
const rawClient = async (href: string, pid: number, concurrency: number): Promise<Sample> => {
  const { call, close } = modernCaller(href, concurrency)
  try {
    return await measurePromise(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    close()
  }
}

/** The official v2 client pinned to 2026-07-28 (one `server/discover` at connect). */
const v2Client = async (href: string, pid: number, concurrency: number): Promise<Sample> => {
  const client = new Client({ name: "bench", version: "1" }, { versionNegotiation: { mode: { pin: VERSION } } })
  await client.connect(new StreamableHTTPClientTransport(new URL(href)))
  try {
    const call = async (): Promise<void> => {
      const result = await client.callTool({ name: "echo", arguments: { text: TEXT } })
      checkEcho(result.content as ReadonlyArray<unknown> | undefined)
    }
    return await measurePromise(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    await client.close()
  }
}

/** For contrast, the 2025-11-25 path of the same server: one session (`floor.ts`), then plain `tools/call` POSTs. */
const legacyClient = async (href: string, pid: number, concurrency: number): Promise<Sample> => {
  const client = await floorHttp(href)
  try {
    return await measurePromise(client.call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    await client.close()
  }
}

const clientOf = (impl: Impl) => impl.startsWith("v2>") ? v2Client : impl === "ours-legacy" ? legacyClient : rawClient

const run = (impl: Impl, concurrency: number): Promise<Sample> =>
  withServer(serverSide(impl), (url, pid) => clientOf(impl)(url, pid, concurrency))

// -----------------------------------------------------------------------------

/** Every sample, by impl and concurrency, in round order (for the target check). */
const samples = new Map<string, Array<Sample>>()
const recorded = (impl: Impl, concurrency: number): Promise<Sample> =>
  run(impl, concurrency).then((sample) => {
    const key = `${impl}@${concurrency}`
    samples.set(key, [...(samples.get(key) ?? []), sample])
    return sample
  })

/** The target: ours ≥ 2× official rps at c = 64, p99 no worse (medians; ratio = median of per-round ratios). */
const target = (): void => {
  const ours = samples.get("ours@64")
  const official = samples.get("official@64")
  if (ours === undefined || official === undefined) return
  const ratio = median(ours.map((s, i) => s.rps / official[i]!.rps))
  const p99Ours = median(ours.map((s) => s.p99))
  const p99Official = median(official.map((s) => s.p99))
  const met = ratio >= 2 && p99Ours <= p99Official
  console.log(
    `target (ours ≥ 2× official rps at c=64, p99 no worse): rps ${ratio.toFixed(2)}× ` +
      `(per round ${ours.map((s, i) => (s.rps / official[i]!.rps).toFixed(2)).join(", ")}), ` +
      `p99 ${formatMicros(p99Ours)} vs ${formatMicros(p99Official)} → ${met ? "MET" : "NOT MET"}`
  )
  console.log()
}

const main = async (): Promise<void> => {
  console.log(
    `Modern (2026-07-28) Streamable HTTP tools/call echo: ${CALLS} calls (+${WARMUP} warm-up) × ${ROUNDS} rounds, ` +
      `concurrency ${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}; our servers from ` +
      (OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)")
  )
  const started = performance.now()
  const raw = IMPLS.filter((impl) => !impl.startsWith("v2>"))
  const v2 = IMPLS.filter((impl) => impl.startsWith("v2>"))
  if (raw.length > 0) {
    await runRounds({
      title:
        `Modern stateless HTTP, raw node:http client, ${CALLS} calls (CPU = client process + server process, µs/call)`,
      impls: raw,
      baseline: "official",
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      run: recorded
    })
    target()
  }
  if (v2.length > 0) {
    await runRounds({
      title: `Modern stateless HTTP, official v2 client (pinned 2026-07-28), ${CALLS} calls (CPU µs/call)`,
      impls: v2,
      baseline: "v2>official",
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      run: recorded
    })
  }
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
