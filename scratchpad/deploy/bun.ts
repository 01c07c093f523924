/**
 * Bun: the notes server on `Bun.serve` through the web handler (127.0.0.1, $PORT).
 *
 *   PORT=3000 bun bun.ts
 */
import { McpHttpServer } from "@effect-mcp/core"
import { Notes } from "./notes.ts"

const { dispose, handler } = McpHttpServer.toWebHandler(Notes, {
  path: "/mcp",
  allowedHosts: ["127.0.0.1", "localhost"]
})

const server = Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.PORT ?? 3000), fetch: handler })
console.log(`listening on ${new URL("/mcp", server.url)}`)

process.on("SIGTERM", () => void dispose().then(() => server.stop()).then(() => process.exit(0)))
