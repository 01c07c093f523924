// The "floor" of the Streamable HTTP benchmark (PERF-BASELINE.md): a bare
// node:http server on 127.0.0.1 and an ephemeral port that parses each POST
// and answers with one JSON body, plus a minimal session map (`initialize`
// creates a session; other requests need a known `Mcp-Session-Id`). No GET
// stream (405). Prints `{"url":…}` on stdout, answers `mem` on stdin (see
// control.mjs) and exits when stdin ends.
//
//   node --expose-gc bench/servers/http-floor.mjs
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { control } from "./control.mjs"

const sessions = new Map()

const json = (res, status, body, headers) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
  res.end(text)
}

const http = createServer((req, res) => {
  if (req.url !== "/mcp") return res.writeHead(404).end()
  if (req.method === "DELETE") {
    sessions.delete(req.headers["mcp-session-id"])
    return res.writeHead(200).end()
  }
  if (req.method !== "POST") return res.writeHead(405, { allow: "POST, DELETE" }).end()
  const chunks = []
  req.on("data", (chunk) => chunks.push(chunk))
  req.on("end", () => {
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    if (message.method === "initialize") {
      const id = randomUUID()
      sessions.set(id, { protocolVersion: message.params.protocolVersion })
      return json(res, 200, {
        jsonrpc: "2.0",
        id: message.id,
        result: {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "bench-server", version: "0.0.0" }
        }
      }, { "mcp-session-id": id })
    }
    if (!sessions.has(req.headers["mcp-session-id"])) {
      return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } })
    }
    if (message.id === undefined) return res.writeHead(202).end()
    if (message.method === "tools/call") {
      return json(res, 200, {
        jsonrpc: "2.0",
        id: message.id,
        result: { content: [{ type: "text", text: message.params.arguments.text }] }
      })
    }
    json(res, 200, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
  })
})

http.listen(0, "127.0.0.1", () => control(`http://127.0.0.1:${http.address().port}/mcp`))
