// The official TypeScript SDK v2's modern (2026-07-28, stateless) Streamable
// HTTP server of `bench/modern.ts`: `createMcpHandler(factory)` from
// `@modelcontextprotocol/server` 2.4.0 with its default `responseMode: "auto"`
// (one JSON body unless the handler sends something before its result, as
// effect-mcp's `responseMode: "json"`), the factory building
// one `McpServer` with one `echo` tool (zod 4 input) per request, as the SDK
// documents. It is served on a bare `node:http` server on 127.0.0.1 and an
// ephemeral port through `toNode` below, which does what `toNodeHandler` of
// `@modelcontextprotocol/node` (the SDK's Node adapter, not installed here)
// does: the Node request becomes a web `Request` (headers copied, the body
// read as text), `handler.fetch` answers with a web `Response`, and its
// status, headers and body are written back. Unlike `toNodeHandler` it passes
// the parsed body as `parsedBody` (as behind `express.json()`), which spares
// the handler a second read of the body; and it wires no abort signal.
// Prints `{"url":…}` on stdout, answers `mem` on stdin (see control.mjs) and
// exits when stdin ends.
//
//   node --expose-gc bench/servers/modern-official.mjs
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { createServer } from "node:http"
import { z } from "zod"
import { control } from "./control.mjs"

const inputSchema = z.object({ text: z.string() })

const factory = () => {
  const server = new McpServer({ name: "bench-server", version: "0.0.0" })
  server.registerTool("echo", { inputSchema }, async ({ text }) => ({ content: [{ type: "text", text }] }))
  return server
}

const handler = createMcpHandler(factory, {
  onerror: (error) => process.stderr.write(`modern-official: ${error?.stack ?? error}\n`)
})

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const toNode = async (req, res) => {
  const method = req.method ?? "GET"
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) { for (const item of value) headers.append(name, item) }
    else headers.set(name, value)
  }
  const text = method === "GET" || method === "HEAD" ? undefined : await readBody(req)
  let parsedBody
  if (text !== undefined && text.length > 0) {
    try {
      parsedBody = JSON.parse(text)
    } catch {
      parsedBody = undefined
    }
  }
  const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method,
    headers,
    ...(text !== undefined && text.length > 0 && { body: text })
  })
  const response = await handler.fetch(request, parsedBody === undefined ? undefined : { parsedBody })
  const out = {}
  for (const [name, value] of response.headers) out[name] = value
  res.writeHead(response.status, out)
  if (response.body === null) return void res.end()
  for await (const chunk of response.body) res.write(chunk)
  res.end()
}

const http = createServer((req, res) => {
  if (req.url !== "/mcp") return void res.writeHead(404).end()
  toNode(req, res).catch((error) => {
    process.stderr.write(`modern-official: ${error?.stack ?? error}\n`)
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null }))
  })
})

http.listen(0, "127.0.0.1", () => control(`http://127.0.0.1:${http.address().port}/mcp`))
