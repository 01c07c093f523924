/**
 * Deno: the notes server on `Deno.serve` through the web handler (127.0.0.1, $PORT).
 *
 *   PORT=3000 deno run --allow-env=PORT --allow-net=127.0.0.1 --unstable-no-legacy-abort deno.ts
 */
import { McpHttpServer } from "@effect-mcp/core"
import { Notes } from "./notes.ts"

const { dispose, handler } = McpHttpServer.toWebHandler(Notes, {
  path: "/mcp",
  allowedHosts: ["127.0.0.1", "localhost"]
})

const server = Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.env.get("PORT") ?? 3000),
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}/mcp`)
}, handler)

Deno.addSignalListener("SIGTERM", () => void dispose().then(() => server.shutdown()).then(() => Deno.exit(0)))
