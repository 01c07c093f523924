/**
 * A real `redis-server` for tests: started on a free loopback port with a
 * temporary directory and no persistence, stopped (SIGKILL, then the
 * directory removed) when the test's scope closes.
 *
 * When `redis-server` is not on PATH the Redis tests are skipped with a loud
 * message, unless `MCP_REQUIRE_REDIS=1` (set by `.ci/run`), which turns the
 * absence into a failure.
 */
import { Effect, Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const BINARY = process.env.REDIS_SERVER ?? "redis-server"

/** `redis-server` can be run here. */
export const available: boolean = spawnSync(BINARY, ["--version"], { stdio: "ignore" }).status === 0

if (!available) {
  const message = `\n!!! redis-server not found (${BINARY}): the Redis tests are SKIPPED. ` +
    "Install it (apt-get install -y redis-server) or set REDIS_SERVER.\n"
  if (process.env.MCP_REQUIRE_REDIS === "1") throw new Error(message)
  console.warn(message)
}

/** A free loopback port (the kernel's pick, released for the caller). */
export const freePort: Effect.Effect<number> = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A running Redis. */
export interface RedisServer {
  readonly port: number
  readonly url: string
  readonly pid: number
  /** Kills the server (SIGKILL) and waits for it to exit. */
  readonly kill: Effect.Effect<void>
  /** Starts it again on the same port (after `kill`). */
  readonly restart: Effect.Effect<void>
}

const READY = /Ready to accept connections/

const launch = (port: number, dir: string) =>
  Effect.callback<import("node:child_process").ChildProcess, Error>((resume) => {
    const child = spawn(BINARY, [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--loglevel",
      "notice",
      "--daemonize",
      "no"
    ], { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    let done = false
    const timer = setTimeout(() => finish(new Error(`redis-server did not start in 10 s:\n${output}`)), 10_000)
    const finish = (error: Error | undefined) => {
      if (done) return
      done = true
      clearTimeout(timer)
      child.stdout!.removeAllListeners("data")
      child.stdout!.resume()
      child.stderr!.resume()
      if (error === undefined) resume(Effect.succeed(child))
      else {
        child.kill("SIGKILL")
        resume(Effect.fail(error))
      }
    }
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (READY.test(output)) finish(undefined)
    })
    child.on("exit", (code) => finish(new Error(`redis-server exited (${code}):\n${output}`)))
  })

const stop = (child: import("node:child_process").ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

/** Starts a Redis for the current scope. */
export const start: Effect.Effect<RedisServer, Error, Scope.Scope> = Effect.gen(function*() {
  const dir = mkdtempSync(join(tmpdir(), "effect-mcp-redis-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  // a port freed by another process may be taken again before redis binds it: try a few
  let port = 0
  let child: import("node:child_process").ChildProcess | undefined
  for (let attempt = 0; attempt < 5 && child === undefined; attempt++) {
    port = yield* freePort
    child = yield* Effect.option(launch(port, dir)).pipe(
      Effect.map((option) => option._tag === "Some" ? option.value : undefined)
    )
  }
  if (child === undefined) return yield* Effect.fail(new Error("redis-server could not be started"))
  let current = child
  yield* Effect.addFinalizer(() => stop(current))
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return current.pid ?? 0
    },
    kill: Effect.suspend(() => stop(current)),
    restart: Effect.map(launch(port, dir), (next) => {
      current = next
    }).pipe(Effect.orDie)
  }
})
