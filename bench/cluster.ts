/**
 * The clustered server (issue 18): Streamable HTTP `tools/call whoami` after
 * the handshake, from this process (`McpClient` over `NodeMcpHttpClient`),
 * against one server process without Redis, one replica with Redis, three
 * replicas on Redis behind a round-robin proxy, and the plain server behind
 * the same proxy, all in the same run on the same machine.
 *
 * - "plain": one `servers/cluster-plain.ts` (the replica's `McpServer`, same
 *   tools, every store in memory), direct; legacy era (2025-11-25);
 * - "redis-1": one `scratchpad/cluster/replica.ts` (`McpRedisCluster` on a
 *   real redis-server), direct, legacy era: the replica owns the session, so
 *   Redis is touched only by its heartbeat (`SET … PX`, once a second) and the
 *   session record's refresh (`PEXPIRE`, at most every quarter of the idle
 *   timeout), not per request;
 * - "redis-3": three replicas behind `servers/cluster-proxy.ts` (the demo's
 *   round-robin proxy, no sticky sessions, in a process of its own), legacy
 *   era: 2 requests of 3 land on a replica that does not own the session,
 *   which looks the session up (`HGETALL` + `EXISTS` of the owner's
 *   heartbeat), PUBLISHes the request (body in base64, JSON) to the owner's
 *   channel and relays the answer the owner PUBLISHes back (`head`, the body's
 *   `chunk`s, `end`);
 * - "redis-3-modern": the same cluster, `era: "modern"` (2026-07-28:
 *   stateless, each request served where it lands, nothing forwarded);
 * - "plain-proxy": one plain server behind the same proxy (the proxy's own
 *   cost, to subtract from the "redis-3" rows);
 * - "plain-proxy-modern": the plain server behind the proxy, `era: "modern"`
 *   (the base of "redis-3-modern": the modern era's own cost, without Redis);
 * - "redis-3-direct": "redis-3" with the direct hop (`DIRECT=1`: a forwarded
 *   request goes straight to its owner over HTTP, Redis only saying where the
 *   owner listens);
 * - "pin-local" / "pin-forwarded": three replicas behind the proxy, legacy,
 *   the session opened on replica a and every call pinned (`x-upstream`) to
 *   a (its owner: served where it lands) or to b (forwarded to a every time),
 *   on pub/sub; "pin-local-direct" / "pin-forwarded-direct" the same with the
 *   direct hop. `forwarded / local` (below) is the forwarding's cost as a
 *   ratio, for each relay;
 * - "gw-pin-local" / "gw-pin-forwarded" / "gw-pin-local-direct" /
 *   "gw-pin-forwarded-direct": the same four with the gateway instead of the
 *   plain replica (issue 28): three `scratchpad/gateway-cluster/replica.ts`
 *   (`DIRECT=0` or `1`) on Redis behind the proxy, each with one upstream in
 *   its `mcp.json` (written to a temporary directory): `echo`, a stdio child
 *   of its own running `servers/stdio-ours.ts` (the echo server of
 *   `stdio.ts` and `gateway.ts`: no questions; era `auto`, which settles on
 *   2026-07-28 with it), so the tool is `echo` in front. The legacy session
 *   is opened on a, and every `tools/call echo` pinned to a (served there:
 *   HTTP → gateway → stdio → echo) or to b (forwarded to a, which makes the
 *   same call behind). The client declares no capability, so every call
 *   goes on the group's one connection of the serving replica. The echo
 *   answers say nothing of the replica, so instead of `whoami` the CPU
 *   checks the path: replica a's stdio child must have done the upstream
 *   work, and replica b must have worked (forwarded) or idled (local).
 *   The stdio children count in the CPU (found in `/proc` as the replicas'
 *   descendants, before and after the measured phase).
 *
 * One redis-server for the whole run (`packages/redis/test/utils/redisServer.ts`,
 * no persistence); every deployment gets a key prefix of its own. Fresh
 * server, replica and proxy processes for every measurement. Method as in
 * `http.ts` (PERF-BASELINE.md, "C"): warm-up (`warmupFor(calls)` per server
 * process, so that each replica behind the proxy is as warm as a single
 * server), `gc()`, a closed loop of `c` workers, rounds alternating the
 * order, medians over rounds. CPU per call
 * is this process's `process.cpuUsage()` plus every server-side process's
 * `/proc/<pid>/stat` (replicas, proxy, redis-server, the gateway replicas'
 * stdio children; 10 ms ticks), also printed apart. Each call's answer is
 * checked: a legacy client must hear one replica only (its session's owner,
 * wherever the proxy sent the request), a modern one through the proxy every
 * replica (the gateway rows: the echo, and the CPU check above).
 *
 * Usage:
 *   npm run bench:cluster
 *   node --conditions=development --expose-gc --no-warnings bench/cluster.ts --calls 1000 --rounds 1
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_CLUSTER_CALLS, default 3000)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         subset of plain,redis-1,redis-3,redis-3-modern,plain-proxy,plain-proxy-modern,
 *                       redis-3-direct,pin-local,pin-forwarded,pin-local-direct,pin-forwarded-direct,
 *                       gw-pin-local,gw-pin-forwarded,gw-pin-local-direct,gw-pin-forwarded-direct
 *                       (BENCH_CLUSTER_ONLY, default all)
 *   --json FILE         write the medians as JSON (or into $BENCH_JSON_DIR/cluster.json)
 *   --timeout S         hard limit of the whole run (BENCH_CLUSTER_TIMEOUT, default 1800)
 *
 * Needs `redis-server` on PATH (or `REDIS_SERVER`).
 */
import { McpClient } from "@effect-mcp/core"
import { NodeMcpHttpClient } from "@effect-mcp/platform-node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as RedisServer from "../packages/redis/test/utils/redisServer.ts"
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
  TEXT,
  type ThroughputRow,
  track,
  TS_FLAGS,
  waitGone,
  warmupFor,
  writeJson
} from "./harness.ts"
import { NO_STATS, perCall, redisStats } from "./redisStats.ts"
import { formatMicros, median, percentile } from "./stats.ts"

const ALL = [
  "plain",
  "redis-1",
  "redis-3",
  "redis-3-modern",
  "plain-proxy",
  "plain-proxy-modern",
  "redis-3-direct",
  "pin-local",
  "pin-forwarded",
  "pin-local-direct",
  "pin-forwarded-direct",
  "gw-pin-local",
  "gw-pin-forwarded",
  "gw-pin-local-direct",
  "gw-pin-forwarded-direct"
] as const
type Impl = (typeof ALL)[number]

const CALLS = positiveInt(option("calls", "BENCH_CLUSTER_CALLS"), 3_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_CLUSTER_TIMEOUT"), 1800, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS = selection(ALL, option("only", "BENCH_CLUSTER_ONLY"))
const WARMUP = warmupFor(CALLS)
/** A bound on one measurement (handshake, warm-up and calls): a stuck call fails the run instead of hanging it. */
const MEASUREMENT_TIMEOUT_S = Math.max(120, Math.ceil((CALLS + 3 * WARMUP) / 50))

hardTimeout(TIMEOUT_S, "bench/cluster")
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    const killed = killTracked()
    console.error(`bench/cluster: ${signal} (killed ${killed} child process(es))`)
    process.exit(1)
  })
}

interface Shape {
  /** processes serving MCP */
  readonly servers: number
  readonly redis: boolean
  readonly proxy: boolean
  readonly era: "legacy" | "modern"
  /** the replicas forward on the direct hop (`DIRECT=1`), pub/sub being the fallback */
  readonly direct?: boolean
  /** every call pinned to the session's owner (replica a), or to another replica (b) */
  readonly pin?: "owner" | "other"
  /** the replicas are gateways (`scratchpad/gateway-cluster/replica.ts`) in front of a stdio echo server each */
  readonly gateway?: boolean
}

const shapes: Record<Impl, Shape> = {
  plain: { servers: 1, redis: false, proxy: false, era: "legacy" },
  "redis-1": { servers: 1, redis: true, proxy: false, era: "legacy" },
  "redis-3": { servers: 3, redis: true, proxy: true, era: "legacy" },
  "redis-3-modern": { servers: 3, redis: true, proxy: true, era: "modern" },
  "plain-proxy": { servers: 1, redis: false, proxy: true, era: "legacy" },
  "plain-proxy-modern": { servers: 1, redis: false, proxy: true, era: "modern" },
  "redis-3-direct": { servers: 3, redis: true, proxy: true, era: "legacy", direct: true },
  "pin-local": { servers: 3, redis: true, proxy: true, era: "legacy", pin: "owner" },
  "pin-forwarded": { servers: 3, redis: true, proxy: true, era: "legacy", pin: "other" },
  "pin-local-direct": { servers: 3, redis: true, proxy: true, era: "legacy", direct: true, pin: "owner" },
  "pin-forwarded-direct": { servers: 3, redis: true, proxy: true, era: "legacy", direct: true, pin: "other" },
  "gw-pin-local": { servers: 3, redis: true, proxy: true, era: "legacy", pin: "owner", gateway: true },
  "gw-pin-forwarded": { servers: 3, redis: true, proxy: true, era: "legacy", pin: "other", gateway: true },
  "gw-pin-local-direct": {
    servers: 3,
    redis: true,
    proxy: true,
    era: "legacy",
    direct: true,
    pin: "owner",
    gateway: true
  },
  "gw-pin-forwarded-direct": {
    servers: 3,
    redis: true,
    proxy: true,
    era: "legacy",
    direct: true,
    pin: "other",
    gateway: true
  }
}

// -----------------------------------------------------------------------------
// Processes
// -----------------------------------------------------------------------------

interface Child {
  readonly pid: number
  readonly port: number
  /** Ends stdin, sends SIGTERM, waits for the exit; SIGKILL after 3 s. */
  readonly stop: () => Promise<void>
}

/**
 * Spawns a Node child (tracked), waits (at most 30 s) for its first stdout
 * line naming its port: `listening <port>` (the replica) or `{"url":…}` (the
 * bench servers).
 */
const startChild = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Child> =>
  new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "inherit"] })
    if (child.pid === undefined) return reject(new Error(`cannot spawn ${args.join(" ")}`))
    const pid = child.pid
    track(pid)
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    const stop = async (): Promise<void> => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.stdin!.end()
      child.kill("SIGTERM")
      if ((await waitGone([pid], 3000)).length > 0) child.kill("SIGKILL")
      await exited
    }
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${args.join(" ")}: no port within 30 s`))
    }, 30_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${args.join(" ")} exited (${code}) before listening`))
    })
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => {
      output += chunk
      const match = /listening (\d+)|"url":"http:\/\/127\.0\.0\.1:(\d+)\//.exec(output)
      if (match === null) return
      clearTimeout(timer)
      output = ""
      resolve({ pid, port: Number(match[1] ?? match[2]), stop })
    })
  })

const REPLICA_ARGS = [...TS_FLAGS, ...SERVER_FLAGS, "scratchpad/cluster/replica.ts"]
const PLAIN_ARGS = [...TS_FLAGS, ...SERVER_FLAGS, "bench/servers/cluster-plain.ts"]
const PROXY_ARGS = [...SERVER_FLAGS, "bench/servers/cluster-proxy.ts"]
const GATEWAY_ARGS = [...TS_FLAGS, ...SERVER_FLAGS, "scratchpad/gateway-cluster/replica.ts"]

/**
 * The gateway replicas' `mcp.json` (one server, `echo`: the stdio echo server
 * of `stdio.ts`, a child of each replica), written once into a temporary
 * directory removed at exit.
 */
let gatewayConfig: string | undefined
const gatewayConfigFile = (): string => {
  if (gatewayConfig !== undefined) return gatewayConfig
  const dir = mkdtempSync(join(tmpdir(), "bench-cluster-gateway-"))
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, "mcp.json")
  const echo = fileURLToPath(new URL("servers/stdio-ours.ts", import.meta.url))
  writeFileSync(
    file,
    JSON.stringify({ mcpServers: { echo: { command: NODE, args: [...TS_FLAGS, ...SERVER_FLAGS, echo] } } }, null, 2)
  )
  gatewayConfig = file
  return file
}

interface Deployment {
  readonly url: string
  readonly servers: ReadonlyArray<number>
  readonly proxy: number | undefined
  readonly stop: () => Promise<void>
}

let deployments = 0

/** Starts the processes of `impl`; on a failure, stops those already started. */
const deploy = async (impl: Impl, redis: RedisServer.RedisServer): Promise<Deployment> => {
  const shape = shapes[impl]
  const children: Array<Child> = []
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((child) => child.stop()))
  }
  try {
    const prefix = `bench-${process.pid}-${deployments++}:`
    const started = await Promise.allSettled(
      Array.from({ length: shape.servers }, (_, index) => {
        const name = String.fromCharCode(97 + index)
        if (shape.gateway === true) {
          return startChild(GATEWAY_ARGS, {
            GATEWAY_CONFIG: gatewayConfigFile(),
            REDIS_URL: redis.url,
            REPLICA: name,
            PREFIX: prefix,
            HEARTBEAT_MS: "1000",
            DIRECT: shape.direct === true ? "1" : "0"
          })
        }
        return shape.redis
          ? startChild(REPLICA_ARGS, {
            REDIS_URL: redis.url,
            REPLICA: name,
            PREFIX: prefix,
            HEARTBEAT_MS: "1000",
            ...(shape.direct === true ? { DIRECT: "1" } : {})
          })
          : startChild(PLAIN_ARGS, { REPLICA: name })
      })
    )
    for (const result of started) if (result.status === "fulfilled") children.push(result.value)
    const failed = started.find((result) => result.status === "rejected")
    if (failed !== undefined) throw failed.reason
    const servers = children.map((child) => child.pid)
    if (!shape.proxy) return { url: `http://127.0.0.1:${children[0]!.port}/mcp`, servers, proxy: undefined, stop }
    const proxy = await startChild([...PROXY_ARGS, children.map((child) => child.port).join(",")])
    children.push(proxy)
    return { url: `http://127.0.0.1:${proxy.port}/mcp`, servers, proxy: proxy.pid, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

// -----------------------------------------------------------------------------
// Measurement
// -----------------------------------------------------------------------------

/** CPU µs per call of each side of one measurement, and what Redis did per call. */
interface Breakdown {
  readonly client: number
  readonly servers: number
  /** the busiest MCP server process (a legacy session's owner) */
  readonly busiest: number
  readonly proxy: number
  readonly redis: number
  /** the replicas' stdio children (the gateway rows' upstreams), together */
  readonly upstream: number
  /** Redis commands per call, by command (lower case) */
  readonly commands: Readonly<Record<string, number>>
  /** bytes per call into and out of redis-server (commands in; replies and pub/sub messages out) */
  readonly redisIn: number
  readonly redisOut: number
}

const breakdowns = new Map<string, Array<Breakdown>>()
let warnings = 0
process.on("warning", () => {
  warnings++
})

const cpuOf = (pids: ReadonlyArray<number>): number => pids.reduce((sum, pid) => sum + processCpuMicros(pid), 0)

const text = (
  result: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }
): string => {
  const first = result.content[0]
  if (first?.type !== "text" || first.text === undefined || first.text === "") {
    throw new Error(`unexpected whoami result: ${JSON.stringify(result.content)}`)
  }
  return first.text
}

const measure = (
  impl: Impl,
  concurrency: number,
  deployment: Deployment,
  redis: RedisServer.RedisServer
): Promise<Sample> =>
  Effect.gen(function*() {
    const shape = shapes[impl]
    // a pinned session is opened on replica a (its owner); its calls then go to a, or to b
    let upstream = 0
    const headers = shape.pin === undefined ? {} : { headers: Effect.sync(() => ({ "x-upstream": String(upstream) })) }
    const context = yield* Layer.build(
      McpClient.layer({ clientInfo, era: shape.era }).pipe(
        Layer.provide(NodeMcpHttpClient.layer({ url: deployment.url, ...headers }))
      )
    )
    const client = Context.get(context, McpClient.McpClient)
    if (shape.pin === "other") upstream = 1
    noteProtocol(impl, client.protocolVersion)
    const heard = new Set<string>()
    const call = shape.gateway === true
      ? Effect.map(client.callTool("echo", { text: TEXT }), (result) => checkEcho(result.content))
      : Effect.map(client.callTool("whoami", {}), (result) => {
        heard.add(text(result))
      })
    // every server process gets the warm-up of a single one
    yield* effectPhase(call, concurrency, WARMUP * shape.servers, undefined)
    if (gc !== undefined) gc()
    heard.clear()
    const proxy = deployment.proxy === undefined ? [] : [deployment.proxy]
    const redisPids = shape.redis ? [redis.pid] : []
    const stats = () => (shape.redis ? Effect.promise(() => redisStats(redis.port)) : Effect.succeed(NO_STATS))
    const stats0 = yield* stats()
    // the stdio children of each replica (the gateway rows), and their CPU now
    const children0 = processDescendants(deployment.servers)
    for (const pid of children0.flat()) track(pid)
    const childCpu0 = new Map(children0.flat().map((pid) => [pid, processCpuOr0(pid)]))
    const latencies = new Float64Array(CALLS)
    const cpu0 = process.cpuUsage()
    const perServer0 = deployment.servers.map(processCpuMicros)
    const proxy0 = cpuOf(proxy)
    const redis0 = cpuOf(redisPids)
    const warnings0 = warnings
    const t0 = performance.now()
    yield* effectPhase(call, concurrency, CALLS, latencies)
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const perServer = deployment.servers.map((pid, index) => (processCpuMicros(pid) - perServer0[index]!) / CALLS)
    const proxy1 = cpuOf(proxy)
    const redis1 = cpuOf(redisPids)
    const children1 = processDescendants(deployment.servers)
    const perChildren = children1.map((pids) => {
      for (const pid of pids) track(pid)
      return pids.reduce((sum, pid) => sum + processCpuOr0(pid) - (childCpu0.get(pid) ?? 0), 0) / CALLS
    })
    const stats1 = yield* stats()
    const breakdown: Breakdown = {
      client: (cpu.user + cpu.system) / CALLS,
      servers: perServer.reduce((sum, cpu) => sum + cpu, 0),
      busiest: Math.max(...perServer),
      proxy: (proxy1 - proxy0) / CALLS,
      redis: (redis1 - redis0) / CALLS,
      upstream: perChildren.reduce((sum, cpu) => sum + cpu, 0),
      ...perCall(stats0, stats1, CALLS)
    }
    // a legacy session is served by its owner wherever the request lands; modern requests where they land
    const expected = shape.era === "legacy" ? 1 : shape.servers
    if (shape.gateway === true) {
      // no replica's name in an echo: the owner's (a's) stdio child did the upstream work, and b
      // worked as much as the forwarding needs (pinned to b) or idled (pinned to a)
      const [a = 0, ...others] = perChildren
      const [ownerCpu = 0, otherCpu = 0] = perServer
      if (children1[0]!.length === 0 || a <= others.reduce((sum, cpu) => sum + cpu, 0)) {
        throw new Error(
          `${impl}: the upstream work was not done on replica a (stdio children µs/call: ${perChildren.join(", ")})`
        )
      }
      if (shape.pin === "other" ? otherCpu < 0.2 * ownerCpu : otherCpu > 0.2 * ownerCpu) {
        throw new Error(
          `${impl}: replica b ${shape.pin === "other" ? "idled" : "worked"} (µs/call: ${perServer.join(", ")})`
        )
      }
    } else if (heard.size !== expected || (shape.pin !== undefined && !heard.has("a"))) {
      throw new Error(`${impl}: whoami answered by ${[...heard].join(", ")}; expected ${expected} replica(s)`)
    }
    const key = `${impl} ${concurrency}`
    breakdowns.set(key, [...(breakdowns.get(key) ?? []), breakdown])
    latencies.sort()
    const serverCpu = breakdown.servers + breakdown.proxy + breakdown.redis + breakdown.upstream
    return {
      rps: CALLS / (wall / 1000),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      cpuPerCall: breakdown.client + serverCpu,
      clientCpu: breakdown.client,
      serverCpu,
      warnings: warnings - warnings0
    } satisfies Sample
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({
      duration: `${MEASUREMENT_TIMEOUT_S} seconds`,
      orElse: () => Effect.fail(new Error(`${impl} c=${concurrency}: no result within ${MEASUREMENT_TIMEOUT_S} s`))
    }),
    Effect.runPromise
  )

const run = (redis: RedisServer.RedisServer) => async (impl: Impl, concurrency: number): Promise<Sample> => {
  const deployment = await deploy(impl, redis)
  try {
    return await measure(impl, concurrency, deployment, redis)
  } finally {
    await deployment.stop()
  }
}

// -----------------------------------------------------------------------------
// Report
// -----------------------------------------------------------------------------

const printBreakdown = (): Array<Record<string, number | string>> => {
  console.log("### CPU µs per call by process, and Redis's work per call (medians)")
  console.log()
  console.log(
    "| impl | c | client | MCP server(s) | busiest server | proxy | redis-server | stdio upstream(s) | total | Redis commands / call | " +
      "Redis bytes in / out per call |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
  const out: Array<Record<string, number | string>> = []
  for (const concurrency of CONCURRENCY) {
    for (const impl of IMPLS) {
      const list = breakdowns.get(`${impl} ${concurrency}`) ?? []
      const med = (f: (b: Breakdown) => number) => median(list.map(f))
      const names = [...new Set(list.flatMap((b) => Object.keys(b.commands)))]
      const commands = Object.fromEntries(names.map((name) => [name, med((b) => b.commands[name] ?? 0)]))
      const row = {
        impl,
        concurrency,
        client: med((b) => b.client),
        servers: med((b) => b.servers),
        busiest: med((b) => b.busiest),
        proxy: med((b) => b.proxy),
        redis: med((b) => b.redis),
        upstream: med((b) => b.upstream),
        total: med((b) => b.client + b.servers + b.proxy + b.redis + b.upstream),
        redisCommands: Object.values(commands).reduce((sum, n) => sum + n, 0),
        redisIn: med((b) => b.redisIn),
        redisOut: med((b) => b.redisOut)
      }
      out.push({ ...row, ...Object.fromEntries(names.map((name) => [`redis:${name}`, commands[name]!])) })
      const listed = names
        .filter((name) => commands[name]! >= 0.005)
        .sort((a, b) => commands[b]! - commands[a]!)
        .map((name) => `${name} ${commands[name]!.toFixed(2)}`)
      console.log(
        `| ${impl} | ${concurrency} | ${row.client.toFixed(1)} | ${row.servers.toFixed(1)} | ${
          row.busiest.toFixed(1)
        } | ` +
          `${row.proxy.toFixed(1)} | ` +
          `${row.redis.toFixed(1)} | ${shapes[impl].gateway === true ? row.upstream.toFixed(1) : ""} | ${
            row.total.toFixed(1)
          } | ` +
          `${
            names.length === 0
              ? ""
              : `${row.redisCommands.toFixed(2)}${listed.length === 0 ? "" : ` (${listed.join(", ")})`}`
          } | ` +
          `${
            row.redisIn === 0 && row.redisOut === 0 ? "" : `${Math.round(row.redisIn)} / ${Math.round(row.redisOut)}`
          } |`
      )
    }
  }
  console.log()
  return out
}

/**
 * What Redis adds: paired per-round differences (a round runs both rows
 * back to back), medians over rounds. Mean latency = 1 / rps at c = 1.
 */
const comparisons: ReadonlyArray<
  { readonly label: string; readonly impl: Impl; readonly base: Impl; readonly forwarded: number }
> = [
  { label: "registry, session owner (redis-1 − plain)", impl: "redis-1", base: "plain", forwarded: 0 },
  {
    label: "forwarding, 2 of 3 requests (redis-3 − plain-proxy)",
    impl: "redis-3",
    base: "plain-proxy",
    forwarded: 2 / 3
  },
  {
    label: "forwarding on the direct hop, 2 of 3 requests (redis-3-direct − plain-proxy)",
    impl: "redis-3-direct",
    base: "plain-proxy",
    forwarded: 2 / 3
  },
  {
    label: "modern, 3 replicas (redis-3-modern − plain-proxy)",
    impl: "redis-3-modern",
    base: "plain-proxy",
    forwarded: 0
  },
  {
    label: "modern, 3 replicas (redis-3-modern − plain-proxy-modern)",
    impl: "redis-3-modern",
    base: "plain-proxy-modern",
    forwarded: 0
  },
  { label: "proxy alone (plain-proxy − plain)", impl: "plain-proxy", base: "plain", forwarded: 0 },
  { label: "whole cluster, legacy (redis-3 − plain)", impl: "redis-3", base: "plain", forwarded: 2 / 3 },
  { label: "whole cluster, modern (redis-3-modern − plain)", impl: "redis-3-modern", base: "plain", forwarded: 0 }
]

const printCosts = (rows: ReadonlyArray<ThroughputRow>): Array<Record<string, number | string>> => {
  const find = (impl: Impl, concurrency: number) =>
    rows.find((row) => row.impl === impl && row.concurrency === concurrency)
  const paired = (a: ThroughputRow, b: ThroughputRow, f: (s: ThroughputRow["rounds"][number]) => number) =>
    median(a.rounds.map((s, i) => f(s) - f(b.rounds[i]!)))
  const ratio = (a: ThroughputRow, b: ThroughputRow) => median(a.rounds.map((s, i) => s.rps / b.rounds[i]!.rps))
  const out: Array<Record<string, number | string>> = []
  console.log("### What each layer adds (median of per-round differences)")
  console.log()
  console.log(
    "| comparison | c | rps ratio | Δ mean latency (1/rps × c) | Δ p50 | Δ p99 | Δ CPU µs/call (all processes) | Δ mean latency per forwarded request |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|")
  for (const concurrency of CONCURRENCY) {
    for (const { base, forwarded, impl, label } of comparisons) {
      const a = find(impl, concurrency)
      const b = find(base, concurrency)
      if (a === undefined || b === undefined) continue
      const mean = paired(a, b, (s) => (1000 * concurrency) / s.rps)
      const row = {
        comparison: label,
        concurrency,
        rpsRatio: ratio(a, b),
        meanLatency: mean,
        p50: paired(a, b, (s) => s.p50),
        p99: paired(a, b, (s) => s.p99),
        cpuPerCall: paired(a, b, (s) => s.cpuPerCall),
        perForwarded: forwarded === 0 ? NaN : mean / forwarded
      }
      out.push(row)
      const signed = (ms: number) => (ms < 0 ? `−${formatMicros(-ms)}` : `+${formatMicros(ms)}`)
      console.log(
        `| ${label} | ${concurrency} | ${row.rpsRatio.toFixed(2)}× | ${signed(row.meanLatency)} | ${
          signed(row.p50)
        } | ` +
          `${signed(row.p99)} | ${row.cpuPerCall >= 0 ? "+" : "−"}${Math.abs(row.cpuPerCall).toFixed(1)} | ` +
          `${forwarded === 0 ? "" : signed(row.perForwarded)} |`
      )
    }
  }
  console.log()
  return out
}

/** Every call forwarded against every call served where it lands, for each relay. */
const pinned: ReadonlyArray<{ readonly relay: string; readonly forwarded: Impl; readonly local: Impl }> = [
  { relay: "pub/sub", forwarded: "pin-forwarded", local: "pin-local" },
  { relay: "direct hop", forwarded: "pin-forwarded-direct", local: "pin-local-direct" },
  { relay: "gateway, pub/sub", forwarded: "gw-pin-forwarded", local: "gw-pin-local" },
  { relay: "gateway, direct hop", forwarded: "gw-pin-forwarded-direct", local: "gw-pin-local-direct" }
]

const printPinned = (rows: ReadonlyArray<ThroughputRow>): Array<Record<string, number | string>> => {
  const find = (impl: Impl, concurrency: number) =>
    rows.find((row) => row.impl === impl && row.concurrency === concurrency)
  const ratio = (a: ThroughputRow, b: ThroughputRow, f: (s: ThroughputRow["rounds"][number]) => number) =>
    median(a.rounds.map((s, i) => f(s) / f(b.rounds[i]!)))
  const out: Array<Record<string, number | string>> = []
  console.log(
    "### Forwarded / local: every call to a non-owner against every call to the owner (medians of per-round ratios)"
  )
  console.log()
  console.log(
    "| relay | c | local p50 | forwarded p50 | p50 ratio | local p99 | forwarded p99 | p99 ratio | mean latency ratio | " +
      "local CPU µs/call | forwarded CPU µs/call | CPU ratio |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const concurrency of CONCURRENCY) {
    for (const { forwarded, local, relay } of pinned) {
      const f = find(forwarded, concurrency)
      const l = find(local, concurrency)
      if (f === undefined || l === undefined) continue
      const row = {
        relay,
        concurrency,
        localP50: l.p50,
        forwardedP50: f.p50,
        p50Ratio: ratio(f, l, (s) => s.p50),
        localP99: l.p99,
        forwardedP99: f.p99,
        p99Ratio: ratio(f, l, (s) => s.p99),
        meanLatencyRatio: ratio(l, f, (s) => s.rps),
        localCpu: l.cpuPerCall,
        forwardedCpu: f.cpuPerCall,
        cpuRatio: ratio(f, l, (s) => s.cpuPerCall)
      }
      out.push(row)
      console.log(
        `| ${relay} | ${concurrency} | ${formatMicros(row.localP50)} | ${formatMicros(row.forwardedP50)} | ` +
          `**${row.p50Ratio.toFixed(2)}×** | ${formatMicros(row.localP99)} | ${formatMicros(row.forwardedP99)} | ` +
          `${row.p99Ratio.toFixed(2)}× | ${row.meanLatencyRatio.toFixed(2)}× | ${row.localCpu.toFixed(0)} | ` +
          `${row.forwardedCpu.toFixed(0)} | ${row.cpuRatio.toFixed(2)}× |`
      )
    }
  }
  console.log()
  return out
}

// -----------------------------------------------------------------------------

const main = async (): Promise<void> => {
  if (!RedisServer.available) throw new Error("redis-server is not on PATH (set REDIS_SERVER)")
  console.log(
    `cluster tools/call whoami (gw-* rows: echo, through the gateway to its stdio child; ` +
      `legacy = 2025-11-25 with a session, modern = 2026-07-28): ${CALLS} calls (+${WARMUP} warm-up per server process) × ${ROUNDS} rounds, ` +
      `concurrency ${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}; servers from ` +
      (OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)")
  )
  const started = performance.now()
  const scope = Effect.runSync(Scope.make())
  try {
    const redis = await Effect.runPromise(Scope.provide(scope)(RedisServer.start))
    track(redis.pid)
    console.log(`redis-server ${redis.url} (pid ${redis.pid})`)
    const throughput = await runRounds({
      title: `cluster, ${CALLS} calls (CPU = client + every server-side process, µs/call)`,
      impls: IMPLS,
      baseline: "plain",
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      run: run(redis)
    })
    const cpu = printBreakdown()
    const costs = printCosts(throughput)
    const forwarding = printPinned(throughput)
    if (!isAlive(redis.pid)) throw new Error("redis-server died during the run")
    writeJson("cluster", {
      calls: CALLS,
      warmup: WARMUP,
      rounds: ROUNDS,
      oursFrom: OURS_DIST ? "dist" : "src",
      throughput,
      cpu,
      costs,
      forwarding
    })
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
