/**
 * A cluster for end-to-end tests: a real redis-server, N replica processes
 * (`scratchpad/cluster/replica.ts`) on loopback ports, and the round-robin
 * proxy in front of them. Everything is stopped when the scope closes, and
 * the test can check that no replica process is left.
 */
import { Effect, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { type Proxy, startProxy } from "../../../../scratchpad/cluster/proxy.ts"
import * as RedisServer from "./redisServer.ts"

const REPLICA = fileURLToPath(new URL("../../../../scratchpad/cluster/replica.ts", import.meta.url))

export interface Replica {
  readonly name: string
  readonly port: number
  /** The process now (a restart makes a new one). */
  readonly process: () => ChildProcess
  /** What it wrote on stderr so far. */
  readonly stderr: () => string
  /** Sends `signal` and waits for the process to exit. */
  readonly stop: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Starts it again on the same port. */
  readonly restart: Effect.Effect<void>
}

export interface Cluster {
  readonly redis: RedisServer.RedisServer
  readonly replicas: ReadonlyArray<Replica>
  readonly proxy: Proxy
  /** The MCP endpoint through the proxy. */
  readonly url: string
  /** The MCP endpoint of replica `index`, bypassing the proxy. */
  readonly direct: (index: number) => string
}

// a Redis this process did not start: it is neither killed nor restarted
const external = (url: string): RedisServer.RedisServer => ({
  port: Number(URL.parse(url)?.port ?? 6379),
  url,
  pid: 0,
  kill: Effect.die(new Error("an external Redis is not killed")),
  restart: Effect.die(new Error("an external Redis is not restarted"))
})

const exited = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

const launch = (name: string, port: number, env: Record<string, string>, stderr: Array<string>, script = REPLICA) =>
  Effect.callback<{ readonly child: ChildProcess; readonly port: number }, Error>((resume) => {
    const child = spawn(process.execPath, ["--conditions=development", script], {
      env: { ...process.env, ...env, REPLICA: name, PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()))
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening (\d+)/.exec(output)
      if (match !== null) resume(Effect.succeed({ child, port: Number(match[1]) }))
    })
    child.once("exit", (code) => resume(Effect.fail(new Error(`replica ${name} exited (${code}): ${stderr.join("")}`))))
  }).pipe(Effect.timeout("30 seconds"), Effect.orDie)

/**
 * Starts Redis (or uses `redisUrl`, with keys under a prefix of their own),
 * `count` replicas and the proxy, for the scope. `options.script` runs
 * another replica program (default `scratchpad/cluster/replica.ts`), given
 * the same environment (`REDIS_URL`, `REPLICA`, `PORT`, `HEARTBEAT_MS`, ...).
 */
export const start = (
  count: number,
  env: Record<string, string> = {},
  redisUrl?: string,
  options?: { readonly script?: string | undefined }
): Effect.Effect<Cluster, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const redis = redisUrl === undefined ? yield* RedisServer.start : external(redisUrl)
    if (redisUrl !== undefined) env = { PREFIX: `mcp-cluster-${process.pid}:`, ...env }
    const replicaEnv = { REDIS_URL: redis.url, HEARTBEAT_MS: "200", ...env }
    const replicas = yield* Effect.forEach(
      Array.from({ length: count }, (_, index) => String.fromCharCode(97 + index)),
      (name) =>
        Effect.gen(function*() {
          const stderr: Array<string> = []
          const first = yield* launch(name, 0, replicaEnv, stderr, options?.script)
          let current = first.child
          yield* Effect.addFinalizer(() =>
            Effect.suspend(() => {
              current.kill("SIGKILL")
              return exited(current)
            })
          )
          return {
            name,
            port: first.port,
            process: () => current,
            stderr: () => stderr.join(""),
            stop: (signal) =>
              Effect.suspend(() => {
                current.kill(signal)
                return exited(current)
              }),
            restart: Effect.map(launch(name, first.port, replicaEnv, stderr, options?.script), ({ child }) => {
              current = child
            })
          } satisfies Replica
        }),
      { concurrency: "unbounded" }
    )
    const proxy = yield* Effect.acquireRelease(
      Effect.promise(() => startProxy(replicas.map((replica) => replica.port))),
      (proxy) => Effect.promise(() => proxy.close())
    )
    return {
      redis,
      replicas,
      proxy,
      url: `http://127.0.0.1:${proxy.port}/mcp`,
      direct: (index: number) => `http://127.0.0.1:${replicas[index]!.port}/mcp`
    }
  })
