// The official TypeScript SDK v2's server of `bench/runtimes.ts`:
// `createMcpHandler(factory)` of `@modelcontextprotocol/server` 2.4.0, a
// web-standard handler, with the factory of `modern-official.mjs` (a fresh
// `McpServer` with one `echo` tool, zod 4 input, per request, as the SDK
// documents; default `responseMode: "auto"`), served by `runtime-serve.ts` on
// the runtime that runs this file: `Bun.serve`, `Deno.serve`, or node:http
// through the same adapter as our web handler (no `parsedBody`: every runtime
// hands the handler a `Request` only). Prints `{"url":…}` and exits when
// stdin ends.
//
//   node bench/servers/runtime-official-web.mjs
//   bun --no-install bench/servers/runtime-official-web.mjs
//   deno run --allow-net=127.0.0.1 --unstable-no-legacy-abort --node-modules-dir=manual bench/servers/runtime-official-web.mjs
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { z } from "zod"
import { serve } from "./runtime-serve.ts"

const inputSchema = z.object({ text: z.string() })

const factory = () => {
  const server = new McpServer({ name: "bench-server", version: "0.0.0" })
  server.registerTool("echo", { inputSchema }, async ({ text }) => ({ content: [{ type: "text", text }] }))
  return server
}

const handler = createMcpHandler(factory, {
  onerror: (error) => process.stderr.write(`runtime-official-web: ${error?.stack ?? error}\n`)
})

void serve((request) => handler.fetch(request))
