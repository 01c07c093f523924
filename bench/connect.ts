/**
 * Connect N stdio servers concurrently from one client (PERF-BASELINE.md,
 * "D1"): the time from the start until all N sessions are initialized,
 * effect-mcp against the official TypeScript SDK, each against its own server
 * script (`servers/stdio-ours.ts`, `servers/stdio-official.mjs`).
 *
 * - "ours": N × (`NodeMcpStdio.makeClient` + `McpClientSession.make`, with
 *   `era: "legacy"`: `initialize`, as the official client) under
 *   `Effect.forEach` with unbounded concurrency, each in a scope of its own,
 *   closed all at once (a parent scope with parallel finalizers);
 * - "official": `Promise.all` of N × `client.connect(new StdioClientTransport(…))`;
 * - "floor": hand-written JSON-RPC on both sides (`floor.ts`,
 *   `servers/stdio-floor.mjs`): Node's own start-up plus a handshake;
 * - "ours-bundled", "official-bundled": the same clients, each against its
 *   server bundled for production (`bundleServer` in harness.ts, as README
 *   "Production" says), from a temporary directory.
 *
 * Once all are initialized, each child's RSS is read from /proc; then all
 * sessions are closed (ours: the parent scope; official: `Promise.all` of
 * `client.close()`), the close time is taken, and every child must be gone.
 *
 * Usage:
 *   npm run bench:connect
 *   node --conditions=development --expose-gc bench/connect.ts --servers 10 --rounds 1
 *
 * Options (each also as an environment variable):
 *   --servers N   (BENCH_CONNECT_SERVERS, default 50)
 *   --rounds R    (BENCH_ROUNDS, default 3)
 *   --only LIST   subset of ours,official,floor,ours-bundled,official-bundled (BENCH_CONNECT_ONLY)
 *   --timeout S   hard limit of the whole run (BENCH_CONNECT_TIMEOUT, default 300)
 *   --json FILE   write the medians as JSON (or into $BENCH_JSON_DIR/connect.json)
 */
import { McpClientSession, McpTransport } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Exit, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { floorStdio } from "./floor.ts"
import {
  assertAllGone,
  bundleServer,
  clientInfo,
  gc,
  hardTimeout,
  NODE,
  option,
  OURS_DIST,
  positiveInt,
  processRss,
  runMain,
  selection,
  SERVER_FLAGS,
  track,
  TS_FLAGS,
  waitGone,
  writeJson
} from "./harness.ts"
import { median } from "./stats.ts"

const ALL = ["ours", "official", "floor", "ours-bundled", "official-bundled"] as const
type Impl = (typeof ALL)[number]

const SERVERS = positiveInt(option("servers", "BENCH_CONNECT_SERVERS"), 50, "servers")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_CONNECT_TIMEOUT"), 300, "timeout")
const IMPLS = selection(ALL, option("only", "BENCH_CONNECT_ONLY"))

hardTimeout(TIMEOUT_S, "bench/connect")

interface ConnectSample {
  /** ms from the start until all N sessions are initialized */
  readonly connect: number
  /** ms from the start of closing until every child is gone */
  readonly close: number
  /** mean RSS of one child, bytes */
  readonly childRss: number
  /** this process's heap growth per connection, bytes (after gc) */
  readonly heapPerConnection: number
}

const sumRss = (pids: ReadonlyArray<number>): number => pids.reduce((sum, pid) => sum + processRss(pid), 0)

const heapNow = (): number => {
  if (gc !== undefined) gc()
  return process.memoryUsage().heapUsed
}

/** Each row's server: a file and the Node flags it needs (the bundles are filled in by `main`). */
const SERVER_ARGS: Record<Impl, ReadonlyArray<string>> = {
  ours: [...TS_FLAGS, ...SERVER_FLAGS, "bench/servers/stdio-ours.ts"],
  official: [...SERVER_FLAGS, "bench/servers/stdio-official.mjs"],
  floor: [...SERVER_FLAGS, "bench/servers/stdio-floor.mjs"],
  "ours-bundled": [],
  "official-bundled": []
}
const BUNDLED: ReadonlyArray<readonly [Impl, string]> = [
  ["ours-bundled", "bench/servers/stdio-ours.ts"],
  ["official-bundled", "bench/servers/stdio-official.mjs"]
]

const runOurs = async (args: ReadonlyArray<string>): Promise<ConnectSample> => {
  const pids: Array<number> = []
  const heap0 = heapNow()
  let connect = 0
  let childRss = 0
  let heapPerConnection = 0
  // each connection in a scope of its own, all closed at once (as the official
  // side's `Promise.all` of `close`): a scope closes its finalizers one by one
  const parent = Scope.makeUnsafe("parallel")
  const closing = await Effect.gen(function*() {
    const t0 = performance.now()
    yield* Effect.forEach(Array.from({ length: SERVERS }), () =>
      Effect.gen(function*() {
        const transport = yield* NodeMcpStdio.makeClient({
          command: NODE,
          args,
          stderr: "forward"
        })
        pids.push(transport.pid)
        track(transport.pid)
        return yield* McpClientSession.make({ clientInfo, era: "legacy" }).pipe(
          Effect.provideService(McpTransport.McpTransport, transport)
        )
      }).pipe(Scope.provide(Scope.forkUnsafe(parent, "sequential"))), { concurrency: "unbounded" })
    connect = performance.now() - t0
    childRss = sumRss(pids) / pids.length
    heapPerConnection = (heapNow() - heap0) / SERVERS
    const closing = performance.now()
    yield* Scope.close(parent, Exit.void)
    return closing
  }).pipe(Effect.runPromise)
  const alive = await waitGone(pids, 10_000)
  if (alive.length > 0) throw new Error(`ours: ${alive.length} server(s) still alive after close`)
  return { connect, close: performance.now() - closing, childRss, heapPerConnection }
}

const runOfficial = async (args: ReadonlyArray<string>): Promise<ConnectSample> => {
  const heap0 = heapNow()
  const t0 = performance.now()
  const clients = await Promise.all(
    Array.from({ length: SERVERS }, async () => {
      const transport = new StdioClientTransport({
        command: NODE,
        args: [...args],
        stderr: "inherit"
      })
      const client = new Client(clientInfo)
      await client.connect(transport)
      track(transport.pid ?? undefined)
      return { client, pid: transport.pid! }
    })
  )
  const connect = performance.now() - t0
  const pids = clients.map((c) => c.pid)
  const childRss = sumRss(pids) / pids.length
  const heapPerConnection = (heapNow() - heap0) / SERVERS
  const closing = performance.now()
  await Promise.all(clients.map((c) => c.client.close()))
  const alive = await waitGone(pids, 10_000)
  if (alive.length > 0) throw new Error(`official: ${alive.length} server(s) still alive after close`)
  return { connect, close: performance.now() - closing, childRss, heapPerConnection }
}

/** The hand-written client and server (`floor.ts`, `servers/stdio-floor.mjs`): Node start-up plus a handshake. */
const runFloor = async (args: ReadonlyArray<string>): Promise<ConnectSample> => {
  const heap0 = heapNow()
  const t0 = performance.now()
  const clients = await Promise.all(
    Array.from({ length: SERVERS }, () => floorStdio(args))
  )
  const connect = performance.now() - t0
  const pids = clients.map((c) => c.pid)
  const childRss = sumRss(pids) / pids.length
  const heapPerConnection = (heapNow() - heap0) / SERVERS
  const closing = performance.now()
  await Promise.all(clients.map((c) => c.close()))
  const alive = await waitGone(pids, 10_000)
  if (alive.length > 0) throw new Error(`floor: ${alive.length} server(s) still alive after close`)
  return { connect, close: performance.now() - closing, childRss, heapPerConnection }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

const main = async (): Promise<void> => {
  console.log(
    `connect ${SERVERS} stdio servers concurrently × ${ROUNDS} rounds, ${
      IMPLS.join(" vs ")
    }; node ${process.version}; ` +
      `our servers from ${OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)"}`
  )
  const started = performance.now()
  const bundles = IMPLS.some((impl) => impl.endsWith("-bundled"))
    ? mkdtempSync(join(tmpdir(), "bench-connect-"))
    : undefined
  for (const [impl, source] of BUNDLED) {
    if (bundles === undefined || !IMPLS.includes(impl)) continue
    const bundle = await bundleServer(source, join(bundles, impl))
    SERVER_ARGS[impl] = [...SERVER_FLAGS, bundle.file]
  }
  const samples = new Map<Impl, Array<ConnectSample>>(IMPLS.map((impl) => [impl, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? IMPLS : [...IMPLS].reverse()
    for (const impl of order) {
      const run = impl === "floor" ? runFloor : impl.startsWith("ours") ? runOurs : runOfficial
      const sample = await run(SERVER_ARGS[impl])
      samples.get(impl)!.push(sample)
      console.log(
        `  round ${round + 1}/${ROUNDS} ${impl.padEnd(16)} connect ${Math.round(sample.connect)} ms, ` +
          `close ${Math.round(sample.close)} ms, ${mb(sample.childRss)}/child, ` +
          `client heap ${(sample.heapPerConnection / 1024).toFixed(0)} KB/connection`
      )
    }
  }
  console.log()
  console.log(`### Connect ${SERVERS} stdio servers concurrently`)
  console.log()
  console.log("| impl | connect (all initialized) | close (all gone) | RSS / child | client heap / connection | n |")
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const impl of IMPLS) {
    const list = samples.get(impl)!
    const med = (f: (s: ConnectSample) => number) => median(list.map(f))
    console.log(
      `| ${impl} | ${Math.round(med((s) => s.connect))} ms | ${Math.round(med((s) => s.close))} ms | ` +
        `${mb(med((s) => s.childRss))} | ${(med((s) => s.heapPerConnection) / 1024).toFixed(0)} KB | ${list.length} |`
    )
  }
  const pairs: ReadonlyArray<readonly [Impl, Impl]> = [
    ["ours", "official"],
    ["ours-bundled", "official-bundled"],
    ["ours-bundled", "official"]
  ]
  for (const [a, b] of pairs) {
    const ours = samples.get(a)
    const official = samples.get(b)
    if (ours === undefined || official === undefined) continue
    const speedup = median(official.map((s, i) => s.connect / ours[i]!.connect))
    console.log(`\n${b} / ${a} connect time (median of rounds): **${speedup.toFixed(2)}×** (above 1: ours is faster)`)
  }
  console.log()
  writeJson("connect", {
    servers: SERVERS,
    rounds: ROUNDS,
    oursFrom: OURS_DIST ? "dist" : "src",
    connect: IMPLS.map((impl) => {
      const list = samples.get(impl)!
      const med = (f: (s: ConnectSample) => number) => median(list.map(f))
      return {
        impl,
        connect: med((s) => s.connect),
        close: med((s) => s.close),
        childRss: med((s) => s.childRss),
        heapPerConnection: med((s) => s.heapPerConnection),
        rounds: list
      }
    })
  })
  if (bundles !== undefined) rmSync(bundles, { recursive: true, force: true })
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
