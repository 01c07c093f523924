/**
 * The server of the bad-input probes (`packages/platform-node/test/utils/probes.ts`)
 * on Bun's or Deno's own server: an MCP server with no tools (`probes` 1.0.0;
 * the probes never reach a tool) through the web handler, at `/mcp`, with the
 * options given as JSON in `MCP_PROBE_OPTIONS` (the test passes
 * `PROBE_OPTIONS`), served by `serveWeb` of `http-server.ts` (127.0.0.1, an
 * ephemeral port, `listening on URL`, SIGTERM ends it).
 *
 *   MCP_PROBE_OPTIONS='{"maxBodyBytes":1024}' bun --conditions=development scratchpad/runtimes/probe-server.ts
 *   deno run --allow-env=MCP_PROBE_OPTIONS --allow-net=127.0.0.1 --unstable-no-legacy-abort --node-modules-dir=manual --conditions=development scratchpad/runtimes/probe-server.ts
 */
import { McpHttpServer, McpServer } from "@effect-mcp/core"
import { serveWeb } from "./http-server.ts"

declare const Deno: { readonly env: { get(name: string): string | undefined } } | undefined
declare const process: { readonly env: Record<string, string | undefined> }

const json = typeof Deno !== "undefined" ? Deno.env.get("MCP_PROBE_OPTIONS") : process.env.MCP_PROBE_OPTIONS
const options = JSON.parse(json ?? "{}") as McpHttpServer.WebHandlerOptions

serveWeb(
  McpHttpServer.toWebHandler(McpServer.layer({ name: "probes", version: "1.0.0" }), { ...options, path: "/mcp" })
)
