/**
 * stdio `tools/call` echo benchmark: this process is the client, the server is
 * a child process. effect-mcp against the official TypeScript SDK in the same
 * run, plus the cross rows that split the cost between client and server.
 *
 * - "ours": `NodeMcpStdio.makeClient` (spawning `servers/stdio-ours.ts`:
 *   `McpServer` + `McpTool` echo served by `NodeMcpStdio.runServer`) under
 *   `McpClient.callTool`;
 * - "official": `StdioClientTransport` + `Client.callTool` against
 *   `servers/stdio-official.mjs` (`McpServer.registerTool` with zod +
 *   `StdioServerTransport`);
 * - "ours>official", "official>ours": one side's client against the other
 *   side's server;
 * - "ours-modern" (diagnostic): "ours" in the 2026-07-28 era. Every other
 *   effect-mcp client pins `era: "legacy"` (2025-11-25, the official SDK
 *   1.32.2's revision); the default `era: "auto"` would settle on 2026-07-28
 *   against our server;
 * - "effect-ai": effect's own MCP client and server (`effect/ai`, effect
 *   4.1.0), what an Effect user would pick instead: `McpClient.layerStdio`
 *   (its `NodeChildProcessSpawner`, 2025-11-25) spawning
 *   `servers/stdio-effect-ai.ts` (`McpServer.layerStdio` + `NodeStdio`, the
 *   echo toolkit of `servers/effect-ai-echo.ts`). Its `callTool` takes the
 *   tool's descriptor, so the client lists the tools once before the warm-up
 *   (not measured). The ratios ours / effect-ai get a table of their own;
 * - "floor": hand-written newline-delimited JSON-RPC on both sides
 *   (`floor.ts`, `servers/stdio-floor.mjs`), the OS and Node's share of a
 *   round trip.
 *
 * Method (PERF-BASELINE.md, "B. stdio"): after `initialize`, a closed loop of
 * `c` workers; warm-up min(2000, max(200, n / 10)) calls, `gc()`, then `n`
 * measured calls; rps = n / wall time; CPU per call = this process's
 * `process.cpuUsage()` + the server's `/proc/<pid>/stat` utime + stime over
 * the measured phase. A fresh server is spawned for each measurement and must
 * be gone after it. Rounds alternate the order; medians; ratios are medians of
 * the per-round ratios impl / official.
 *
 * Usage:
 *   npm run bench:stdio
 *   node --conditions=development --expose-gc bench/stdio.ts --calls 2000 --rounds 1 --only ours,official
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_STDIO_CALLS, default 20000)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         subset of ours,ours-modern,official,ours>official,official>ours,effect-ai,floor
 *                       (BENCH_STDIO_ONLY)
 *   --json FILE         write the medians as JSON (or into $BENCH_JSON_DIR/stdio.json)
 *   --timeout S         hard limit of the whole run (BENCH_STDIO_TIMEOUT, default 300)
 */
import { McpClient, McpTransport } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Context, Effect, Layer } from "effect"
import * as EffectAiMcpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import { floorStdio } from "./floor.ts"
import {
  assertAllGone,
  checkEcho,
  checkEffectAiEcho,
  clientInfo,
  gc,
  hardTimeout,
  intList,
  measureEffect,
  measurePromise,
  NODE,
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
  TEXT,
  track,
  TS_FLAGS,
  waitGone,
  warmupFor,
  watchOfficialProtocol,
  writeJson
} from "./harness.ts"

const ALL = ["ours", "ours-modern", "official", "ours>official", "official>ours", "effect-ai", "floor"] as const
type Impl = (typeof ALL)[number]

const CALLS = positiveInt(option("calls", "BENCH_STDIO_CALLS"), 20_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_STDIO_TIMEOUT"), 300, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS = selection(ALL, option("only", "BENCH_STDIO_ONLY"))
const WARMUP = warmupFor(CALLS)

hardTimeout(TIMEOUT_S, "bench/stdio")

const servers = {
  ours: { command: NODE, args: [...TS_FLAGS, ...SERVER_FLAGS, "bench/servers/stdio-ours.ts"] },
  official: { command: NODE, args: [...SERVER_FLAGS, "bench/servers/stdio-official.mjs"] },
  "effect-ai": { command: NODE, args: [...SERVER_FLAGS, "bench/servers/stdio-effect-ai.ts"] },
  floor: { command: NODE, args: [...SERVER_FLAGS, "bench/servers/stdio-floor.mjs"] }
} as const

const serverOf = (impl: Impl) =>
  servers[
    impl === "ours" || impl === "ours-modern" || impl === "official>ours"
      ? "ours"
      : impl === "floor" || impl === "effect-ai"
      ? impl
      : "official"
  ]

/** McpClient over `NodeMcpStdio.makeClient`; the child is shut down when the scope closes. */
const runOursClient = (impl: Impl, concurrency: number): Promise<Sample> => {
  let pid = 0
  return Effect.gen(function*() {
    const transport = yield* NodeMcpStdio.makeClient({ ...serverOf(impl), stderr: "forward" })
    pid = transport.pid
    track(pid)
    const client = yield* McpClient.make({ clientInfo, era: impl === "ours-modern" ? "modern" : "legacy" }).pipe(
      Effect.provideService(McpTransport.McpTransport, transport)
    )
    noteProtocol(impl, client.protocolVersion)
    const call = Effect.map(client.callTool("echo", { text: TEXT }), (result) => checkEcho(result.content))
    return yield* measureEffect(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  }).pipe(Effect.scoped, Effect.runPromise).then(async (sample) => {
    if ((await waitGone([pid], 3000)).length > 0) throw new Error(`${impl}: server ${pid} still alive after close`)
    return sample
  })
}

/** Client + StdioClientTransport; `client.close()` ends the child's stdin (then SIGTERM, SIGKILL). */
const runOfficialClient = async (impl: Impl, concurrency: number): Promise<Sample> => {
  const transport = new StdioClientTransport({ ...serverOf(impl), args: [...serverOf(impl).args], stderr: "inherit" })
  const client = new Client(clientInfo)
  await client.connect(watchOfficialProtocol(impl, transport))
  const pid = transport.pid!
  track(pid)
  try {
    const call = async (): Promise<void> => {
      const result = await client.callTool({ name: "echo", arguments: { text: TEXT } })
      checkEcho(result.content as ReadonlyArray<unknown> | undefined)
    }
    return await measurePromise(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    await client.close()
    if ((await waitGone([pid], 3000)).length > 0) throw new Error(`${impl}: server ${pid} still alive after close`)
  }
}

/**
 * effect's `ChildProcessSpawner` on Node (`NodeChildProcessSpawner.layer`),
 * which also reports the pid of every child it spawns to `onSpawn`: the
 * server's, whose CPU the measurement reads from /proc.
 */
const recordingSpawner = (onSpawn: (pid: number) => void) =>
  Layer.effect(
    ChildProcessSpawner.ChildProcessSpawner,
    Effect.gen(function*() {
      const node = yield* ChildProcessSpawner.ChildProcessSpawner
      return ChildProcessSpawner.make((command) =>
        Effect.tap(node.spawn(command), (handle) => Effect.sync(() => onSpawn(handle.pid)))
      )
    })
  ).pipe(
    Layer.provide(NodeChildProcessSpawner.layer),
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

/**
 * effect/ai's McpClient over stdio (`McpClient.layerStdio`, 2025-11-25); the
 * scope's close ends the child's stdin (then SIGTERM after 5 s).
 */
const runEffectAiClient = (impl: Impl, concurrency: number): Promise<Sample> => {
  let pid = 0
  const server = serverOf(impl)
  return Effect.gen(function*() {
    const context = yield* Layer.build(
      EffectAiMcpClient.layerStdio({
        ...clientInfo,
        command: ChildProcess.make(server.command, [...server.args]),
        protocol: McpProtocol.v2025_11_25
      }).pipe(Layer.provide(recordingSpawner((spawned) => {
        pid = spawned
        track(spawned)
      })))
    )
    const client = Context.get(context, EffectAiMcpClient.McpClient)
    noteProtocol(impl, client.protocolVersion)
    // `callTool` takes the tool's descriptor: listed once, before the warm-up
    const tool = (yield* client.listTools()).find((tool) => tool.name === "echo")
    if (tool === undefined) return yield* Effect.die(new Error(`${impl}: no echo tool listed`))
    const call = Effect.map(client.callTool({ tool, arguments: { text: TEXT } }), checkEffectAiEcho)
    return yield* measureEffect(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  }).pipe(Effect.scoped, Effect.runPromise).then(async (sample) => {
    if ((await waitGone([pid], 3000)).length > 0) throw new Error(`${impl}: server ${pid} still alive after close`)
    return sample
  })
}

/** The hand-written client against the hand-written server. */
const runFloor = async (concurrency: number): Promise<Sample> => {
  const client = await floorStdio(servers.floor.args)
  try {
    return await measurePromise(client.call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: client.pid })
  } finally {
    await client.close()
  }
}

const run = (impl: Impl, concurrency: number): Promise<Sample> =>
  impl === "floor"
    ? runFloor(concurrency)
    : impl === "effect-ai"
    ? runEffectAiClient(impl, concurrency)
    : impl === "ours" || impl === "ours-modern" || impl === "ours>official"
    ? runOursClient(impl, concurrency)
    : runOfficialClient(impl, concurrency)

const main = async (): Promise<void> => {
  console.log(
    `stdio tools/call echo: ${CALLS} calls (+${WARMUP} warm-up) × ${ROUNDS} rounds, concurrency ` +
      `${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}; our servers from ` +
      (OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)")
  )
  const started = performance.now()
  const throughput = await runRounds({
    title: `stdio, ${CALLS} calls (CPU = client process + server process, µs/call)`,
    impls: IMPLS,
    baseline: "official",
    floor: "floor",
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    run
  })
  printRatiosAgainst(throughput, "effect-ai", IMPLS.filter((impl) => impl !== "effect-ai" && impl !== "floor"))
  writeJson("stdio", { calls: CALLS, warmup: WARMUP, rounds: ROUNDS, oursFrom: OURS_DIST ? "dist" : "src", throughput })
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
