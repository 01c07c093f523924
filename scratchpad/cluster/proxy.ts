/**
 * A round-robin HTTP proxy on 127.0.0.1, as a load balancer in front of a
 * server's replicas would be, without sticky sessions: each request goes to
 * the next upstream port, whole (SSE responses streamed through). Used by
 * the cluster demo, its end-to-end test and its benchmark.
 *
 * An upstream that refuses the connection (a killed replica) is skipped: the
 * request goes to the next one, as a load balancer's health check would
 * arrange. `hits` says which upstream served each request. A test may pin a
 * request to upstream `i` with the header `x-upstream: i`.
 */
import * as Http from "node:http"

export interface Proxy {
  readonly port: number
  /** The upstream port of each request, in order. */
  readonly hits: Array<number>
  /** The `Mcp-Method` header of each request of `hits` (2026-07-28 requests carry one). */
  readonly methods: Array<string | undefined>
  /** Replaces the upstreams (a replica restarted on another port). */
  readonly setUpstreams: (ports: ReadonlyArray<number>) => void
  readonly close: () => Promise<void>
}

export const startProxy = (upstreams: ReadonlyArray<number>): Promise<Proxy> => {
  let ports = [...upstreams]
  let next = 0
  const hits: Array<number> = []
  const methods: Array<string | undefined> = []
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 256 })

  const forward = (request: Http.IncomingMessage, response: Http.ServerResponse, body: Buffer, tries: number) => {
    const pinned = request.headers["x-upstream"]
    const port = typeof pinned === "string" && tries === 1
      ? ports[Number(pinned) % ports.length]!
      : ports[next++ % ports.length]!
    const { "x-upstream": _, ...headers } = request.headers
    const upstream = Http.request({
      host: "127.0.0.1",
      port,
      method: request.method,
      path: request.url,
      headers: { ...headers, host: `127.0.0.1:${port}` },
      agent
    }, (answer) => {
      hits.push(port)
      const method = request.headers["mcp-method"]
      methods.push(typeof method === "string" ? method : undefined)
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
      answer.on("error", () => response.destroy())
    })
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      if (response.headersSent) return response.destroy()
      // a replica that is down: the next one takes the request
      if (error.code === "ECONNREFUSED" && tries < ports.length) return forward(request, response, body, tries + 1)
      response.writeHead(502).end()
    })
    // the client went away: so does the upstream request (an SSE stream ends there too)
    response.on("close", () => upstream.destroy())
    upstream.end(body)
  }

  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => forward(request, response, Buffer.concat(chunks), 1))
  })
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({
        port: typeof address === "object" && address !== null ? address.port : 0,
        hits,
        methods,
        setUpstreams: (next) => {
          ports = [...next]
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            agent.destroy()
            server.close(() => done())
          })
      })
    })
  })
}
