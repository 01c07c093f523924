// The official SDK's Streamable HTTP server of the benchmarks, as in
// PERF-BASELINE.md: a bare node:http server on 127.0.0.1 and an ephemeral
// port; stateful, one `McpServer` (with one `echo` tool, zod input) and one
// `StreamableHTTPServerTransport` (`enableJsonResponse: true`) per session,
// the SDK's documented pattern; the POST body is parsed before
// `handleRequest`, as `express.json()` would. With the argument `sse`,
// `enableJsonResponse: false` (each answer as an SSE stream). Prints `{"url":…}` on stdout,
// answers `mem` on stdin (see control.mjs) and exits when stdin ends.
//
//   node --expose-gc bench/servers/http-official.mjs [sse]
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { z } from "zod"
import { control } from "./control.mjs"

const makeServer = () => {
  const server = new McpServer({ name: "bench-server", version: "0.0.0" })
  server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text }]
  }))
  return server
}

const enableJsonResponse = !process.argv.includes("sse")

const transports = new Map()

const sendError = (res, status, message) => {
  res.writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }))
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const handle = async (req, res) => {
  if (req.url !== "/mcp") return res.writeHead(404).end()
  const body = req.method === "POST" ? JSON.parse(await readBody(req)) : undefined
  const sessionId = req.headers["mcp-session-id"]
  if (sessionId !== undefined) {
    const transport = transports.get(sessionId)
    if (transport === undefined) return sendError(res, 404, "Session not found")
    return transport.handleRequest(req, res, body)
  }
  if (req.method !== "POST" || !isInitializeRequest(body)) {
    return sendError(res, 400, "Mcp-Session-Id header is required")
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse,
    onsessioninitialized: (id) => {
      transports.set(id, transport)
    }
  })
  transport.onclose = () => {
    if (transport.sessionId !== undefined) transports.delete(transport.sessionId)
  }
  await makeServer().connect(transport)
  await transport.handleRequest(req, res, body)
}

const http = createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (!res.headersSent) sendError(res, 500, String(error))
  })
})

http.listen(0, "127.0.0.1", () => control(`http://127.0.0.1:${http.address().port}/mcp`))
