// The official TypeScript SDK v2's server of `bench/runtimes.ts` as a
// Cloudflare Worker: `createMcpHandler` with the factory of
// `runtime-official-web.mjs` (a fresh `McpServer` with the zod `echo` tool per
// request), built in the first `fetch` (nothing random or timed at a Worker's
// global scope). Bundled by `bench/runtimes.ts` (rolldown) and served on
// workerd by `runtime-workerd.ts`.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { z } from "zod"

const inputSchema = z.object({ text: z.string() })

const factory = () => {
  const server = new McpServer({ name: "bench-server", version: "0.0.0" })
  server.registerTool("echo", { inputSchema }, async ({ text }) => ({ content: [{ type: "text", text }] }))
  return server
}

let handler

export default {
  fetch: (request) => {
    handler ??= createMcpHandler(factory, {
      onerror: (error) => console.error(`runtime-official-worker: ${error?.stack ?? error}`)
    })
    return handler.fetch(request)
  }
}
