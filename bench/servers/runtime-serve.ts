/**
 * How the servers of `bench/runtimes.ts` serve a web-standard fetch handler
 * on the runtime that runs them, on 127.0.0.1 and an ephemeral port, at
 * `/mcp`: `Bun.serve` under Bun, `Deno.serve` under Deno, and under Node a
 * bare `node:http` server with the adapter below (the same for every server
 * kind). Prints `{"url":…,"runtime":…}` as its first stdout line and exits
 * when stdin ends (after `dispose`, at most 2 s).
 *
 * The Node adapter does what `fixtures/webHandlerHttp.ts` of the tests and
 * `toNodeHandler` of `@modelcontextprotocol/node` do: the Node request becomes
 * a web `Request` (headers copied, the body's bytes as they came, a `signal`
 * that aborts when the response closes before it finished), the handler's
 * `Response` is written back (status, headers, body chunks). Unlike the test
 * fixture it adds no listener to the keep-alive socket per request.
 */
import { createServer } from "node:http"
import process from "node:process"

// the runtimes' globals, as little of them as this file uses
declare const Bun:
  | {
    readonly version: string
    serve(options: {
      readonly fetch: (request: Request) => Promise<Response>
      readonly port: number
      readonly hostname: string
    }): { readonly port: number; stop(closeActiveConnections?: boolean): Promise<void> | void }
  }
  | undefined
declare const Deno:
  | {
    readonly version: { readonly deno: string }
    serve(
      options: {
        readonly port: number
        readonly hostname: string
        readonly onListen?: (addr: { readonly port: number }) => void
      },
      handler: (request: Request) => Promise<Response>
    ): { shutdown(): Promise<void> }
  }
  | undefined

/** A web-standard handler. */
export type Fetch = (request: Request) => Promise<Response>

const hostname = "127.0.0.1"

/** The runtime running this file and its version, e.g. `bun 1.4.5`. */
export const runtime: string = typeof Bun !== "undefined"
  ? `bun ${Bun.version}`
  : typeof Deno !== "undefined"
  ? `deno ${Deno.version.deno}`
  : `node ${process.version}`

/** A Node request as a web `Request`: headers, the body's bytes, a signal for a response closed early. */
const toWebRequest = (req: import("node:http").IncomingMessage, body: Buffer, signal: AbortSignal): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) { for (const item of value) headers.append(name, item) }
    else headers.set(name, value)
  }
  const method = req.method ?? "GET"
  return new Request(`http://${req.headers.host ?? hostname}${req.url ?? "/"}`, {
    method,
    headers,
    signal,
    ...(body.length > 0 && method !== "GET" && method !== "HEAD" && { body })
  })
}

const writeWebResponse = async (response: Response, res: import("node:http").ServerResponse): Promise<void> => {
  const headers: Record<string, string> = {}
  for (const [name, value] of response.headers) headers[name] = value
  res.writeHead(response.status, headers)
  if (response.body === null) return void res.end()
  for await (const chunk of response.body) res.write(chunk)
  res.end()
}

/** `fetch` on node:http at 127.0.0.1:0; resolves with the port once listening. */
const serveNode = (fetch: Fetch): Promise<{ readonly port: number; readonly stop: () => Promise<void> }> => {
  const server = createServer((req, res) => {
    if (req.url !== "/mcp") return void res.writeHead(404).end()
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const controller = new AbortController()
      res.once("close", () => {
        if (!res.writableFinished) controller.abort()
      })
      fetch(toWebRequest(req, Buffer.concat(chunks), controller.signal))
        .then((response) => writeWebResponse(response, res))
        .catch((error: unknown) => {
          process.stderr.write(`runtime-serve: ${error instanceof Error ? error.stack : String(error)}\n`)
          if (!res.headersSent) res.writeHead(500)
          res.end()
        })
    })
  })
  return new Promise((resolve) =>
    server.listen(0, hostname, () => {
      const address = server.address()
      resolve({
        port: typeof address === "object" && address !== null ? address.port : 0,
        stop: () => {
          server.closeAllConnections()
          return new Promise((done) => server.close(() => done()))
        }
      })
    })
  )
}

/**
 * Serves `fetch` on this runtime's own server (node:http under Node) at
 * 127.0.0.1, an ephemeral port; prints `{"url":"http://127.0.0.1:PORT/mcp","runtime":…}`;
 * when stdin ends, runs `dispose`, stops the server and exits 0.
 */
export const serve = async (fetch: Fetch, dispose: () => Promise<void> = () => Promise.resolve()): Promise<void> => {
  let stop: () => Promise<void> | void
  let port: number
  if (typeof Bun !== "undefined") {
    const server = Bun.serve({ fetch, port: 0, hostname })
    port = server.port
    stop = () => server.stop(true)
  } else if (typeof Deno !== "undefined") {
    let listening!: (port: number) => void
    const listened = new Promise<number>((resolve) => (listening = resolve))
    const server = Deno.serve({ port: 0, hostname, onListen: (addr) => listening(addr.port) }, fetch)
    port = await listened
    stop = () => server.shutdown()
  } else {
    const server = await serveNode(fetch)
    port = server.port
    stop = server.stop
  }
  process.stdout.write(`${JSON.stringify({ url: `http://${hostname}:${port}/mcp`, runtime })}\n`)
  process.stdin.on("data", () => undefined)
  process.stdin.on("end", () => {
    setTimeout(() => process.exit(0), 2000).unref?.()
    void Promise.resolve()
      .then(dispose)
      .then(() => stop())
      .finally(() => process.exit(0))
  })
}
