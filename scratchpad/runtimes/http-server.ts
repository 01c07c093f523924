/**
 * The notes server over Streamable HTTP on the runtime's own server, through
 * the web-standard handler (`McpHttpServer.toWebHandler`): `Bun.serve` under
 * Bun, `Deno.serve` under Deno. Both eras: 2026-07-28 requests (stateless) and
 * legacy sessions (the process lives on).
 *
 *   bun --conditions=development scratchpad/runtimes/http-server.ts
 *   deno run --allow-net=127.0.0.1 --node-modules-dir=manual --conditions=development scratchpad/runtimes/http-server.ts
 *
 * Listens on 127.0.0.1, an ephemeral port; prints
 * `listening on http://127.0.0.1:PORT/mcp` on stdout once it does. SIGTERM or
 * SIGINT disposes the handler (sessions ended), stops the server and exits 0.
 * `serveWeb` does that for any web handler (conformance-server.ts uses it).
 */
import { McpHttpServer, McpServer } from "@effect-mcp/core"
import { notes } from "./notes.ts"

// the runtimes' globals, as little of them as this file uses
interface ServedAt {
  readonly port: number
}
declare const Bun:
  | {
    serve(options: {
      readonly fetch: (request: Request) => Promise<Response>
      readonly port: number
      readonly hostname: string
    }): ServedAt & { stop(closeActiveConnections?: boolean): Promise<void> | void }
  }
  | undefined
declare const Deno:
  | {
    serve(
      options: { readonly port: number; readonly hostname: string; readonly onListen?: (addr: ServedAt) => void },
      handler: (request: Request) => Promise<Response>
    ): { readonly addr: ServedAt; shutdown(): Promise<void> }
    addSignalListener(signal: "SIGTERM" | "SIGINT", listener: () => void): void
    exit(code: number): never
  }
  | undefined
declare const process: {
  on(signal: "SIGTERM" | "SIGINT", listener: () => void): void
  exit(code: number): never
}

const hostname = "127.0.0.1"

const exit = (code: number): never => typeof Deno !== "undefined" ? Deno.exit(code) : process.exit(code)

/**
 * Serves `web` on the runtime's own server (Bun's or Deno's) on 127.0.0.1, an
 * ephemeral port; prints `listening on http://127.0.0.1:PORT<path>`; on
 * SIGTERM or SIGINT (once) disposes the handler, then stops the server, and
 * exits 0 (1 if either failed).
 */
export const serveWeb = ({ dispose, handler }: McpHttpServer.WebHandler, path = "/mcp"): void => {
  let stopping = false
  const stopWith = (stopServer: () => Promise<void> | void) => () => {
    if (stopping) return
    stopping = true
    // the handler first: its sessions and open SSE streams end, so the server's stop does not wait on them
    void dispose()
      .then(() => stopServer())
      .then(
        () => exit(0),
        (error) => {
          console.error("stopping failed:", error)
          exit(1)
        }
      )
  }
  if (typeof Bun !== "undefined") {
    const server = Bun.serve({ fetch: handler, port: 0, hostname })
    const stop = stopWith(() => server.stop(true))
    process.on("SIGTERM", stop)
    process.on("SIGINT", stop)
    console.log(`listening on http://${hostname}:${server.port}${path}`)
  } else if (typeof Deno !== "undefined") {
    const server = Deno.serve({
      port: 0,
      hostname,
      onListen: ({ port }) => console.log(`listening on http://${hostname}:${port}${path}`)
    }, handler)
    const stop = stopWith(() => server.shutdown())
    Deno.addSignalListener("SIGTERM", stop)
    Deno.addSignalListener("SIGINT", stop)
  } else {
    console.error("runs under Bun or Deno (under Node: scratchpad/http-server.ts)")
    exit(1)
  }
}

// run, not imported (Bun and Deno set `import.meta.main` on the entry module)
if (import.meta.main) {
  serveWeb(McpHttpServer.toWebHandler(
    McpServer.layer({ name: "notes", version: "1.0.0" }, ...notes),
    // a server on loopback: only loopback Host headers (against DNS rebinding)
    { path: "/mcp", allowedHosts: ["127.0.0.1", "localhost"] }
  ))
}
