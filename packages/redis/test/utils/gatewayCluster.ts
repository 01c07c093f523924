/**
 * A clustered gateway for end-to-end tests: a real redis-server, the modern
 * upstream (`scratchpad/gateway-cluster/modern-upstream.ts`, one process
 * every replica connects to), N gateway replicas
 * (`scratchpad/gateway-cluster/replica.ts`, each with stdio children of its
 * own running `legacy-upstream.ts`) and the round-robin proxy in front
 * (`utils/cluster.ts` starts Redis, the replicas and the proxy).
 *
 * Every process it starts carries a marker in its environment (the legacy
 * children get it, and their replica's name, through the `mcp.json`), so a
 * test can find them all in `/proc` and check that none is left: a new one,
 * or the `EFFECT_MCP_GATEWAY_MARK` of this process's environment (a test
 * running the demo sets it to find the demo's processes). The legacy
 * children count their runs in one file (`runs`). Everything is stopped when
 * the scope closes: the replicas with SIGTERM (each closes its group), then
 * SIGKILL for what is left.
 */
import { Effect, Schedule, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Cluster from "./cluster.ts"

const DIR = new URL("../../../../scratchpad/gateway-cluster/", import.meta.url)
const REPLICA = fileURLToPath(new URL("replica.ts", DIR))
const LEGACY = fileURLToPath(new URL("legacy-upstream.ts", DIR))
const MODERN = fileURLToPath(new URL("modern-upstream.ts", DIR))

/** The name of the environment variable every process of a gateway cluster carries. */
export const MARK = "EFFECT_MCP_GATEWAY_MARK"

export interface GatewayCluster extends Cluster.Cluster {
  /** The value of {@link MARK} in this cluster's processes. */
  readonly marker: string
  readonly modern: { readonly port: number; readonly url: string; readonly pid: number }
  /** The lines `<tool> <id>` the legacy children wrote so far, every replica's. */
  readonly runs: Effect.Effect<ReadonlyArray<string>>
  /** The pids of the live processes of this cluster (replicas, their children, the modern upstream; not Redis). */
  readonly processes: Effect.Effect<ReadonlyArray<number>>
  /** The pids of the live legacy children of replica `name`. */
  readonly childrenOf: (name: string) => Effect.Effect<ReadonlyArray<number>>
  /** Waits (at most `within`, default 10 s) until `pids` is empty; what is left then. */
  readonly gone: (pids: Effect.Effect<ReadonlyArray<number>>, within?: number) => Effect.Effect<ReadonlyArray<number>>
  /** Filled when the scope closes: the processes still running 5 s after the rest was stopped (then killed). */
  readonly leftAtClose: ReadonlyArray<number>
}

export interface Options {
  /** Environment of every replica, laid over the defaults (`HEARTBEAT_MS=200`, ...). */
  readonly env?: Record<string, string> | undefined
  /** A Redis this process did not start (keys under a prefix of their own). */
  readonly redisUrl?: string | undefined
  /**
   * Adds the server `quiet`: the legacy upstream again, declaring no
   * `logging` capability (`LEGACY_LOGGING=0`, the official SDK's default).
   */
  readonly quiet?: boolean | undefined
  /**
   * Another replica program (default `scratchpad/gateway-cluster/replica.ts`),
   * given the same environment; `silent`: see `Cluster.StartOptions`.
   */
  readonly script?: string | undefined
  readonly silent?: boolean | undefined
}

// this process and its ancestors (the demo, the `npm run` and shell above it, which may carry the marker)
const lineage = (): Set<number> => {
  const pids = new Set<number>()
  let pid = process.pid
  while (pid > 1 && !pids.has(pid)) {
    pids.add(pid)
    try {
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, the last ")" ends it
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    } catch {
      break
    }
  }
  return pids
}

/**
 * The live processes (this one and its ancestors aside) whose environment
 * holds every entry of `needles` (`NAME=value`).
 */
export const marked = (...needles: ReadonlyArray<string>): Array<number> => {
  const own = lineage()
  return readdirSync("/proc").filter((name) => /^\d+$/.test(name) && !own.has(Number(name))).filter((pid) => {
    try {
      const environ = `\0${readFileSync(`/proc/${pid}/environ`, "utf8")}`
      if (!needles.every((needle) => environ.includes(`\0${needle}\0`))) return false
      // a zombie (exited, not yet reaped) is not running
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
    } catch {
      return false
    }
  }).map(Number)
}

const exited = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

// the modern upstream, for the scope: killed (SIGKILL) when it closes
const startModern = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly child: ChildProcess; readonly port: number }, Error>((resume) => {
      const child = spawn(process.execPath, ["--conditions=development", MODERN], {
        env: { ...process.env, ...env, PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      let stderr = ""
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const match = /listening (\d+)/.exec(output)
        if (match !== null) {
          child.stdout!.off("data", onData)
          child.stdout!.resume()
          resume(Effect.succeed({ child, port: Number(match[1]) }))
        }
      }
      child.stdout!.on("data", onData)
      child.once("exit", (code) => resume(Effect.fail(new Error(`the modern upstream exited (${code}): ${stderr}`))))
    }).pipe(Effect.timeout("30 seconds")),
    ({ child }) =>
      Effect.suspend(() => {
        child.kill("SIGKILL")
        return exited(child)
      })
  )

/**
 * Starts Redis (or uses `options.redisUrl`), the modern upstream, `count`
 * gateway replicas and the proxy, for the scope.
 */
export const start = (count: number, options: Options = {}): Effect.Effect<GatewayCluster, Error, Scope.Scope> =>
  Effect.gen(function*() {
    // a marker in this process's environment (a test running the demo) is the cluster's too
    const marker = process.env[MARK] || globalThis.crypto.randomUUID()
    // closed last: a process of the cluster still running 5 s after the rest stopped is killed, and
    // reported in `leftAtClose`
    const leftAtClose: Array<number> = []
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => marked(`${MARK}=${marker}`)).pipe(
        Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (left) => left.length === 0, times: 100 }),
        Effect.flatMap((left) =>
          Effect.sync(() => {
            leftAtClose.push(...left)
            for (const pid of left) {
              try {
                process.kill(pid, "SIGKILL")
              } catch {
                // gone meanwhile
              }
            }
          })
        ),
        Effect.ignore
      )
    )
    const dir = mkdtempSync(join(tmpdir(), "effect-mcp-gateway-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    const runsFile = join(dir, "runs.txt")
    writeFileSync(runsFile, "")

    const modern = yield* startModern({ [MARK]: marker })
    const config = join(dir, "mcp.json")
    const legacy = (env: Record<string, string> = {}) => ({
      command: process.execPath,
      args: [LEGACY],
      // the children carry the marker and their replica's name (from the replica's own environment)
      env: { RUNS_FILE: runsFile, [MARK]: `\${${MARK}}`, GATEWAY_REPLICA: "${REPLICA}", ...env },
      era: "legacy"
    })
    writeFileSync(
      config,
      JSON.stringify(
        {
          mcpServers: {
            legacy: legacy(),
            modern: { url: `http://127.0.0.1:${modern.port}/mcp`, era: "modern" },
            ...(options.quiet === true ? { quiet: legacy({ LEGACY_LOGGING: "0" }) } : {})
          }
        },
        null,
        2
      )
    )

    const cluster = yield* Cluster.start(
      count,
      { GATEWAY_CONFIG: config, [MARK]: marker, ...options.env },
      options.redisUrl,
      { script: options.script ?? REPLICA, silent: options.silent }
    )
    const processes = Effect.sync(() => marked(`${MARK}=${marker}`))
    const gone = (pids: Effect.Effect<ReadonlyArray<number>>, within = 10_000) =>
      pids.pipe(Effect.repeat({
        schedule: Schedule.spaced("50 millis"),
        until: (left) => left.length === 0,
        times: Math.ceil(within / 50)
      }))
    // closed before the cluster's SIGKILLs: each replica stops its group (its children) itself
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        cluster.replicas,
        (replica) => replica.stop("SIGTERM").pipe(Effect.timeout("5 seconds"), Effect.ignore),
        {
          concurrency: "unbounded"
        }
      )
    )
    return {
      ...cluster,
      marker,
      modern: { port: modern.port, url: `http://127.0.0.1:${modern.port}/mcp`, pid: modern.child.pid! },
      runs: Effect.sync(() => readFileSync(runsFile, "utf8").split("\n").filter((line) => line !== "")),
      processes,
      childrenOf: (name) => Effect.sync(() => marked(`${MARK}=${marker}`, `GATEWAY_REPLICA=${name}`)),
      gone,
      leftAtClose
    } satisfies GatewayCluster
  })
