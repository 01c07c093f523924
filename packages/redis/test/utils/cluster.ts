/**
 * A cluster for end-to-end tests: a real redis-server, N replica processes
 * (`scratchpad/cluster/replica.ts`) on loopback ports, and the round-robin
 * proxy in front of them. Everything is stopped when the scope closes, and
 * the test can check that no replica process is left.
 */
import { Effect, Fiber, Schedule, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Http from "node:http"
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

// answers `GET /readyz` on 127.0.0.1:`port` with 200 now (as a load balancer's health check asks)
const ready = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const request = Http.get({ host: "127.0.0.1", port, path: "/readyz", agent: false }, (response) => {
      response.resume()
      resume(Effect.succeed(response.statusCode === 200))
    })
    request.once("error", () => resume(Effect.succeed(false)))
  })

const launch = (
  name: string,
  port: number,
  env: Record<string, string>,
  stderr: Array<string>,
  options: StartOptions = {}
) =>
  Effect.gen(function*() {
    // a silent program is given a free port and is ready once its `/readyz` says so
    const chosen = options.silent === true && port === 0 ? yield* RedisServer.freePort : port
    return yield* Effect.callback<{ readonly child: ChildProcess; readonly port: number }, Error>((resume) => {
      const child = spawn(process.execPath, ["--conditions=development", options.script ?? REPLICA], {
        env: { ...process.env, ...env, REPLICA: name, PORT: String(chosen) },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      let gone = false
      child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()))
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        const match = options.silent === true ? null : /listening (\d+)/.exec(output)
        if (match !== null) resume(Effect.succeed({ child, port: Number(match[1]) }))
      })
      child.once("exit", (code) => {
        gone = true
        resume(Effect.fail(new Error(`replica ${name} exited (${code}): ${stderr.join("")}`)))
      })
      if (options.silent !== true) return
      const poll = Effect.runFork(
        ready(chosen).pipe(
          Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (up) => up || gone, times: 600 }),
          Effect.map((up) => {
            if (up) resume(Effect.succeed({ child, port: chosen }))
          })
        )
      )
      // the poll stops with the wait (its timeout)
      return Fiber.interrupt(poll)
    })
  }).pipe(Effect.timeout("30 seconds"), Effect.orDie)

/** How {@link start} runs its replicas. */
export interface StartOptions {
  /** The replica program (default `scratchpad/cluster/replica.ts`). */
  readonly script?: string | undefined
  /**
   * The program prints nothing: it is given a free port (`PORT`) and counts
   * as listening once its `GET /readyz` answers 200. Default: it prints
   * `listening <port>` (given `PORT=0`).
   */
  readonly silent?: boolean | undefined
}

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
  options?: StartOptions
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
          const first = yield* launch(name, 0, replicaEnv, stderr, options)
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
            restart: Effect.map(launch(name, first.port, replicaEnv, stderr, options), ({ child }) => {
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
