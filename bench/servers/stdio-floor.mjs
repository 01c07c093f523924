// The "floor" of the stdio benchmark (PERF-BASELINE.md): hand-written
// newline-delimited JSON-RPC with no SDK: split lines, JSON.parse each, answer
// `initialize` and `tools/call` echo, and write all the answers to one read
// chunk in a single write. Exits when stdin ends.
//
//   node bench/servers/stdio-floor.mjs
let buffer = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  buffer += chunk
  let out = ""
  let newline
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline)
    buffer = buffer.slice(newline + 1)
    if (line.trim() === "") continue
    const message = JSON.parse(line)
    if (message.id === undefined) continue
    out += `${JSON.stringify(answer(message))}\n`
  }
  if (out !== "") process.stdout.write(out)
})
process.stdin.on("end", () => process.exit(0))

const answer = (message) => {
  switch (message.method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id: message.id,
        result: {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "bench-server", version: "0.0.0" }
        }
      }
    case "tools/call":
      return {
        jsonrpc: "2.0",
        id: message.id,
        result: { content: [{ type: "text", text: message.params.arguments.text }] }
      }
    default:
      return { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }
  }
}
