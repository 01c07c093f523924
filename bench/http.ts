/**
 * Streamable HTTP `tools/call` echo benchmark (JSON responses): this process
 * is the client, the server is a child process on 127.0.0.1 and an ephemeral
 * port. effect-mcp against the official TypeScript SDK in the same run, the
 * cross rows, and the server's memory per idle session.
 *
 * - "ours": `NodeMcpHttpClient.layer({ url })` under `McpClient.callTool`,
 *   against `servers/http-ours.ts` (`NodeMcpHttpServer.layer({ port: 0,
 *   responseMode: "json" })` serving `McpServer` + `McpTool` echo);
 * - "official": `StreamableHTTPClientTransport` + `Client.callTool` against
 *   `servers/http-official.mjs` (stateful `StreamableHTTPServerTransport`
 *   with `enableJsonResponse: true` on bare node:http, one `McpServer` per
 *   session, as in PERF-BASELINE.md);
 * - "ours>official", "official>ours": the cross rows;
 * - "ours-sse", "official-sse": the same clients against the same servers
 *   answering with SSE (`responseMode: "sse"`, `enableJsonResponse: false`;
 *   the servers' argument `sse`);
 * - "ours-modern" (diagnostic): "ours" in the 2026-07-28 era (stateless, no
 *   session). Every other effect-mcp client pins `era: "legacy"`
 *   (2025-11-25, the official SDK 1.32.2's revision); the default
 *   `era: "auto"` would settle on 2026-07-28 against our server;
 * - "effect-ai": effect's own MCP client and server (`effect/ai`, effect
 *   4.1.0), what an Effect user would pick instead: `McpClient.layerHttp`
 *   (2025-11-25) on `NodeHttpClient.layerUndici` (the `HttpClient` our
 *   client uses too, so the row compares the MCP layers, not the HTTP
 *   clients) against `servers/http-effect-ai.ts` (`McpServer.layerHttp` +
 *   `HttpRouter.serve` + `NodeHttpServer`, the echo toolkit of
 *   `servers/effect-ai-echo.ts`). Its `callTool` takes the tool's
 *   descriptor, so the client lists the tools once before the warm-up (not
 *   measured). It opens no GET stream (effect's client has none). effect/ai's
 *   server picks JSON for a single answer and cannot be made to answer with
 *   SSE, so there is no effect-ai SSE row. The ratios ours / effect-ai get a
 *   table of their own;
 * - "effect-ai-fetch" (diagnostic): "effect-ai" on `FetchHttpClient.layer`
 *   (the global `fetch`), the `HttpClient` of effect's documentation and of
 *   PERF-BASELINE.md;
 * - "floor": a plain `node:http` keep-alive client against a bare
 *   `node:http` server with a minimal session map (`floor.ts`,
 *   `servers/http-floor.mjs`), the OS and Node's share of a round trip.
 *
 * Throughput method as in `stdio.ts` (PERF-BASELINE.md, "C"), with 5,000
 * calls per measurement and a fresh server per measurement. Both clients open
 * their session's GET stream after the handshake, as they do by default.
 *
 * Sessions (PERF-BASELINE.md, "D2"): a fresh server per sample; 20 warm-up
 * sessions; the server's RSS and heap after forced GCs; then 1,000 sessions
 * initialized (`initialize` + `notifications/initialized`, no GET stream) by a
 * plain node:http keep-alive client, 8 at a time, and left idle; RSS and heap
 * again. Reported per session, with the rate of session creation.
 *
 * Usage:
 *   npm run bench:http
 *   node --conditions=development --expose-gc --no-warnings bench/http.ts --calls 1000 --rounds 1
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_HTTP_CALLS, default 5000)
 *   --sessions N        idle sessions of the memory measurement (BENCH_HTTP_SESSIONS, default 1000)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         subset of ours,ours-modern,official,ours-sse,official-sse,ours>official,
 *                       official>ours,effect-ai,effect-ai-fetch,floor (BENCH_HTTP_ONLY)
 *   --json FILE         write the medians as JSON (or into $BENCH_JSON_DIR/http.json)
 *   --no-sessions       skip the memory measurement
 *   --timeout S         hard limit of the whole run (BENCH_HTTP_TIMEOUT, default 300)
 *
 * Start it with `--no-warnings`: the official client's warnings (if any) are
 * then counted in the "warnings" column instead of printed.
 */
import { McpClient } from "@effect-mcp/core"
import { NodeMcpHttpClient } from "@effect-mcp/platform-node"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Layer } from "effect"
import * as EffectAiMcpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Http from "node:http"
import { floorHttp, openSession } from "./floor.ts"
import {
  assertAllGone,
  checkEcho,
  checkEffectAiEcho,
  clientInfo,
  flag,
  gc,
  hardTimeout,
  intList,
  type LineChild,
  measureEffect,
  measurePromise,
  noteProtocol,
  option,
  OURS_DIST,
  positiveInt,
  printRatiosAgainst,
  runMain,
  runRounds,
  type Sample,
  selection,
  SERVER_FLAGS,
  spawnLineChild,
  TEXT,
  TS_FLAGS,
  warmupFor,
  watchOfficialProtocol,
  writeJson
} from "./harness.ts"
import { median } from "./stats.ts"

const ALL = [
  "ours",
  "ours-modern",
  "official",
  "ours-sse",
  "official-sse",
  "ours>official",
  "official>ours",
  "effect-ai",
  "effect-ai-fetch",
  "floor"
] as const
type Impl = (typeof ALL)[number]

const CALLS = positiveInt(option("calls", "BENCH_HTTP_CALLS"), 5_000, "calls")
const SESSIONS = positiveInt(option("sessions", "BENCH_HTTP_SESSIONS"), 1_000, "sessions")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_HTTP_TIMEOUT"), 300, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS = selection(ALL, option("only", "BENCH_HTTP_ONLY"))
const WARMUP = warmupFor(CALLS)

hardTimeout(TIMEOUT_S, "bench/http")

type Side = "ours" | "ours-sse" | "official" | "official-sse" | "effect-ai" | "floor"
type ClientSide = "ours" | "ours-modern" | "official" | "effect-ai" | "floor"
const serverSide = (impl: Impl): Side => {
  switch (impl) {
    case "ours":
    case "ours-modern":
    case "official>ours":
      return "ours"
    case "official":
    case "ours>official":
      return "official"
    case "effect-ai":
    case "effect-ai-fetch":
      return "effect-ai"
    default:
      return impl
  }
}
const clientSide = (impl: Impl): ClientSide => {
  switch (impl) {
    case "ours":
    case "ours-sse":
    case "ours>official":
      return "ours"
    case "official":
    case "official-sse":
    case "official>ours":
      return "official"
    case "effect-ai":
    case "effect-ai-fetch":
      return "effect-ai"
    default:
      return impl
  }
}

const serverArgs: Record<Side, ReadonlyArray<string>> = {
  ours: [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-ours.ts"],
  "ours-sse": [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-ours.ts", "sse"],
  official: [...SERVER_FLAGS, "--expose-gc", "bench/servers/http-official.mjs"],
  "official-sse": [...SERVER_FLAGS, "--expose-gc", "bench/servers/http-official.mjs", "sse"],
  "effect-ai": [...SERVER_FLAGS, "--expose-gc", "bench/servers/http-effect-ai.ts"],
  floor: [...SERVER_FLAGS, "--expose-gc", "bench/servers/http-floor.mjs"]
}

/** Starts a server child and reads its URL. */
const startServer = async (side: Side): Promise<{ readonly server: LineChild; readonly url: string }> => {
  const server = spawnLineChild(serverArgs[side])
  try {
    const { url } = JSON.parse(await server.nextLine()) as { url: string }
    return { server, url }
  } catch (error) {
    await server.stop()
    throw error
  }
}

const withServer = async <A>(side: Side, f: (url: string, pid: number) => Promise<A>): Promise<A> => {
  const { server, url } = await startServer(side)
  try {
    return await f(url, server.pid)
  } finally {
    await server.stop()
  }
}

// -----------------------------------------------------------------------------
// Throughput
// -----------------------------------------------------------------------------

const oursClient = (impl: Impl, url: string, pid: number, concurrency: number): Promise<Sample> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      McpClient.layer({ clientInfo, era: impl === "ours-modern" ? "modern" : "legacy" }).pipe(
        Layer.provide(NodeMcpHttpClient.layer({ url }))
      )
    )
    const client = Context.get(context, McpClient.McpClient)
    noteProtocol(impl, client.protocolVersion)
    const call = Effect.map(client.callTool("echo", { text: TEXT }), (result) => checkEcho(result.content))
    return yield* measureEffect(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  }).pipe(Effect.scoped, Effect.runPromise)

const officialClient = async (impl: Impl, url: string, pid: number, concurrency: number): Promise<Sample> => {
  const transport = watchOfficialProtocol(impl, new StreamableHTTPClientTransport(new URL(url)))
  const client = new Client(clientInfo)
  await client.connect(transport)
  try {
    const call = async (): Promise<void> => {
      const result = await client.callTool({ name: "echo", arguments: { text: TEXT } })
      checkEcho(result.content as ReadonlyArray<unknown> | undefined)
    }
    return await measurePromise(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    // DELETE the session, then close
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  }
}

/**
 * effect/ai's McpClient over Streamable HTTP (`McpClient.layerHttp`,
 * 2025-11-25) on undici (`effect-ai`) or the global `fetch`
 * (`effect-ai-fetch`); closing the scope DELETEs the session.
 */
const effectAiClient = (impl: Impl, url: string, pid: number, concurrency: number): Promise<Sample> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      EffectAiMcpClient.layerHttp({ ...clientInfo, url, protocol: McpProtocol.v2025_11_25 }).pipe(
        Layer.provide(impl === "effect-ai-fetch" ? FetchHttpClient.layer : NodeHttpClient.layerUndici)
      )
    )
    const client = Context.get(context, EffectAiMcpClient.McpClient)
    noteProtocol(impl, client.protocolVersion)
    // `callTool` takes the tool's descriptor: listed once, before the warm-up
    const tool = (yield* client.listTools()).find((tool) => tool.name === "echo")
    if (tool === undefined) return yield* Effect.die(new Error(`${impl}: no echo tool listed`))
    const call = Effect.map(client.callTool({ tool, arguments: { text: TEXT } }), checkEffectAiEcho)
    return yield* measureEffect(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  }).pipe(Effect.scoped, Effect.runPromise)

const floorClient = async (_impl: Impl, url: string, pid: number, concurrency: number): Promise<Sample> => {
  const client = await floorHttp(url)
  try {
    return await measurePromise(client.call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    await client.close()
  }
}

const clients = {
  ours: oursClient,
  "ours-modern": oursClient,
  official: officialClient,
  "effect-ai": effectAiClient,
  floor: floorClient
} as const

const run = (impl: Impl, concurrency: number): Promise<Sample> =>
  withServer(serverSide(impl), (url, pid) => clients[clientSide(impl)](impl, url, pid, concurrency))

// -----------------------------------------------------------------------------
// Idle sessions
// -----------------------------------------------------------------------------

const openSessions = async (agent: Http.Agent, url: URL, count: number, parallel: number): Promise<void> => {
  let issued = 0
  const worker = async (): Promise<void> => {
    while (issued < count) {
      issued++
      await openSession(agent, url)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
}

interface Memory {
  readonly rss: number
  readonly heapUsed: number
}

interface SessionSample {
  readonly rssBefore: number
  readonly rssAfter: number
  readonly rssPerSession: number
  readonly heapPerSession: number
  readonly rate: number
}

// the server's control channel: `mem` on stdin, one JSON line back
const memoryOf = async (server: LineChild): Promise<Memory> => {
  server.child.stdin!.write("mem\n")
  return JSON.parse(await server.nextLine()) as Memory
}

const sessionsOn = async (server: LineChild, url: URL, agent: Http.Agent): Promise<SessionSample> => {
  await openSessions(agent, url, 20, 4)
  const before = await memoryOf(server)
  const t0 = performance.now()
  await openSessions(agent, url, SESSIONS, 8)
  const seconds = (performance.now() - t0) / 1000
  const after = await memoryOf(server)
  return {
    rssBefore: before.rss,
    rssAfter: after.rss,
    rssPerSession: (after.rss - before.rss) / SESSIONS,
    heapPerSession: (after.heapUsed - before.heapUsed) / SESSIONS,
    rate: SESSIONS / seconds
  }
}

/** A fresh server per sample. */
const sessionSample = async (side: Side): Promise<SessionSample> => {
  const { server, url } = await startServer(side)
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 8 })
  try {
    return await sessionsOn(server, new URL(url), agent)
  } finally {
    agent.destroy()
    await server.stop()
  }
}

// the JSON-answer servers only: an idle session holds no answer stream either way
const runSessions = async (): Promise<Array<Record<string, number | string>>> => {
  const sides = [...new Set(IMPLS.map(serverSide))].filter((side) => side !== "ours-sse" && side !== "official-sse")
  const samples = new Map<Side, Array<SessionSample>>(sides.map((side) => [side, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) {
      const sample = await sessionSample(side)
      samples.get(side)!.push(sample)
      console.log(
        `  sessions round ${round + 1}/${ROUNDS} ${side.padEnd(8)} RSS ${mb(sample.rssBefore)} → ${
          mb(sample.rssAfter)
        }, ` +
          `${kb(sample.rssPerSession)}/session (heap ${kb(sample.heapPerSession)}), ${
            Math.round(sample.rate)
          } sessions/s`
      )
    }
  }
  console.log()
  console.log(`### Streamable HTTP server memory with ${SESSIONS} idle initialized sessions`)
  console.log()
  console.log("| server | RSS before | RSS after | RSS / session | heap / session | sessions/s | n |")
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  for (const side of sides) {
    const list = samples.get(side)!
    const med = (f: (s: SessionSample) => number) => median(list.map(f))
    console.log(
      `| ${side} | ${mb(med((s) => s.rssBefore))} | ${mb(med((s) => s.rssAfter))} | ${
        kb(med((s) => s.rssPerSession))
      } | ` +
        `${kb(med((s) => s.heapPerSession))} | ${Math.round(med((s) => s.rate))} | ${list.length} |`
    )
  }
  const ours = samples.get("ours")
  const official = samples.get("official")
  if (ours !== undefined && official !== undefined) {
    const ratio = median(official.map((s, i) => s.rssPerSession / ours[i]!.rssPerSession))
    console.log()
    console.log(`official / ours RSS per session (median of rounds): **${ratio.toFixed(2)}×**`)
  }
  const effectAi = samples.get("effect-ai")
  if (ours !== undefined && effectAi !== undefined) {
    const ratio = median(effectAi.map((s, i) => s.rssPerSession / ours[i]!.rssPerSession))
    console.log()
    console.log(`effect-ai / ours RSS per session (median of rounds): **${ratio.toFixed(2)}×**`)
  }
  console.log()
  return sides.map((side) => {
    const list = samples.get(side)!
    const med = (f: (s: SessionSample) => number) => median(list.map(f))
    return {
      server: side,
      rssBefore: med((s) => s.rssBefore),
      rssAfter: med((s) => s.rssAfter),
      rssPerSession: med((s) => s.rssPerSession),
      heapPerSession: med((s) => s.heapPerSession),
      rate: med((s) => s.rate),
      n: list.length
    }
  })
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`

// -----------------------------------------------------------------------------

const main = async (): Promise<void> => {
  console.log(
    `Streamable HTTP tools/call echo (JSON answers; SSE answers in the -sse rows): ${CALLS} calls (+${WARMUP} warm-up) × ${ROUNDS} rounds, ` +
      `concurrency ${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}; our servers from ` +
      (OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)")
  )
  const started = performance.now()
  const throughput = await runRounds({
    title: `Streamable HTTP, ${CALLS} calls (CPU = client process + server process, µs/call)`,
    impls: IMPLS,
    baseline: "official",
    floor: "floor",
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    run
  })
  printRatiosAgainst(
    throughput,
    "effect-ai",
    IMPLS.filter((impl) => impl !== "effect-ai" && impl !== "floor" && !impl.endsWith("-sse"))
  )
  const sessions = flag("no-sessions") ? [] : await runSessions()
  writeJson("http", {
    calls: CALLS,
    warmup: WARMUP,
    rounds: ROUNDS,
    sessionsOpened: SESSIONS,
    oursFrom: OURS_DIST ? "dist" : "src",
    throughput,
    sessions
  })
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
