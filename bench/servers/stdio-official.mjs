// The official SDK's stdio server of the benchmarks: `McpServer` with one
// `echo` tool (zod input) over `StdioServerTransport`.
//
//   node bench/servers/stdio-official.mjs
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const server = new McpServer({ name: "bench-server", version: "0.0.0" })
server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: "text", text }]
}))
await server.connect(new StdioServerTransport())
