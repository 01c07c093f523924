/**
 * `@modelcontextprotocol/server-everything` (the MCP project's reference
 * server) as a group server: over stdio, or spawned in its Streamable HTTP
 * mode on a free port of 127.0.0.1 and killed with the scope.
 */
import { McpGroup } from "@effect-mcp/core"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { realpathSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../..", import.meta.url))
// the package's bin, resolved to its script so it runs on this Node
export const everything = realpathSync(`${root}node_modules/.bin/mcp-server-everything`)

/** Its gzip tool fetches a URL by default: let it fetch nothing. `INSTANCE` tells instances apart (`get-env`). */
const envOf = (instance: string) => ({ GZIP_ALLOWED_DOMAINS: "127.0.0.1", INSTANCE: instance })

/** server-everything over stdio. */
export const stdio = (instance: string): McpGroup.StdioParams =>
  McpGroup.stdio(process.execPath, [everything, "stdio"], { env: envOf(instance) })

/** A port that was free a moment ago. */
export const freePort: Effect.Effect<number> = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A running HTTP instance: its URL and process. */
export interface HttpInstance {
  readonly url: string
  readonly child: ChildProcess
}

/**
 * server-everything in its Streamable HTTP mode on `port`, once it listens
 * (at most 20 s); killed (SIGKILL) when the scope closes.
 */
export const http = (instance: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<HttpInstance, Error>((resume) => {
      const child = spawn(process.execPath, [everything, "streamableHttp"], {
        env: { ...process.env, ...envOf(instance), PORT: String(port) },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr!.setEncoding("utf8")
      child.stderr!.on("data", (chunk: string) => {
        stderr += chunk
        if (stderr.includes("listening on port")) resume(Effect.succeed({ url: `http://127.0.0.1:${port}/mcp`, child }))
      })
      child.once("exit", (code) => resume(Effect.fail(new Error(`server-everything exited (${code}):\n${stderr}`))))
      // interrupted (the timeout below) before it listened
      return kill(child)
    }).pipe(Effect.timeout("20 seconds"), Effect.orDie),
    ({ child }) => kill(child)
  )

/** Kills the instance and waits until it is gone. */
export const kill = (child: ChildProcess): Effect.Effect<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Effect.void
    : Effect.callback<void>((resume) => {
      child.once("exit", () => resume(Effect.void))
      child.kill("SIGKILL")
    })
