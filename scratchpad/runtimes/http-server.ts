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
import { McpHttpServer, McpResource, McpServer, McpTool } from "@effect-mcp/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

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

const notes = new Map<string, string>()

const addNote = McpTool.make("add_note", {
  description: "Saves a note under a title",
  input: Schema.Struct({ title: Schema.String, body: Schema.String }),
  handler: ({ body, title }) => Effect.sync(() => notes.set(title, body)).pipe(Effect.as(`saved ${title}`))
})

const listNotes = McpTool.make("list_notes", {
  description: "The titles of every note",
  handler: () => Effect.succeed([...notes.keys()].join("\n"))
})

const askTitle = McpTool.make("ask_title", {
  description: "Asks the user for a title (elicitation), then saves an empty note under it",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Which title?", schema: Schema.Struct({ title: Schema.String }) }),
      (answer) => {
        if (answer.action !== "accept") return `no note [${context.era}]`
        notes.set(answer.content.title, "")
        return `saved ${answer.content.title} [${context.era}]`
      }
    )
})

const note = McpResource.template({
  uriTemplate: "note://{title}",
  name: "note",
  mimeType: "text/plain",
  read: ({ title }) => Effect.succeed(notes.get(title) ?? "")
})

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
    McpServer.layer({ name: "notes", version: "1.0.0" }, addNote, listNotes, askTitle, note),
    // a server on loopback: only loopback Host headers (against DNS rebinding)
    { path: "/mcp", allowedHosts: ["127.0.0.1", "localhost"] }
  ))
}
