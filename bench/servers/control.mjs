// The control channel of the benchmarks' HTTP servers, on stdin/stdout (the
// MCP traffic is on HTTP): the server prints its URL as the first stdout line,
// then answers each `mem` line on stdin with one JSON line of its memory after
// forced GCs (`{"rss":…,"heapUsed":…}`, bytes; start the server with
// `--expose-gc`), writes a heap snapshot for each `snapshot <file>` line
// (answering `{"snapshot":<file>}`), and exits when stdin ends.
import { writeHeapSnapshot } from "node:v8"

export const control = (url) => {
  process.stdout.write(`${JSON.stringify({ url })}\n`)
  let buffer = ""
  process.stdin.setEncoding("utf8")
  process.stdin.on("data", (chunk) => {
    buffer += chunk
    let newline
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim()
      buffer = buffer.slice(newline + 1)
      if (line === "mem") {
        const gc = globalThis.gc
        if (gc !== undefined) { for (let i = 0; i < 3; i++) gc() }
        const { rss, heapUsed } = process.memoryUsage()
        process.stdout.write(`${JSON.stringify({ rss, heapUsed })}\n`)
      } else if (line.startsWith("snapshot ")) {
        const file = writeHeapSnapshot(line.slice("snapshot ".length).trim())
        process.stdout.write(`${JSON.stringify({ snapshot: file })}\n`)
      }
    }
  })
  process.stdin.on("end", () => process.exit(0))
}
