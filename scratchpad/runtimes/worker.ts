/**
 * The notes server as a Cloudflare Worker: `export default { fetch }` serving
 * `McpHttpServer.toWebHandler` with the legacy era stateless (a Worker keeps
 * no process between requests; 2026-07-28 requests are stateless anyway),
 * Host and Origin limited to loopback. Nothing from `node:`, no
 * `nodejs_compat` flag.
 *
 *   wrangler dev worker.ts     (wrangler is not a dependency of this repository)
 *
 * (in this repository: bundled and served on workerd by miniflare,
 * packages/platform-node/test/utils/workerd.ts, runtimes.workerd.test.ts).
 * `McpWorker.make` builds the handler in the first `fetch`, from `env`, and
 * runs every fiber on effect's sync scheduler.
 */
import { McpServer, McpWorker } from "@effect-mcp/core"
import type * as Layer from "effect/Layer"
import { notes } from "./notes.ts"

/** The Worker's variables (`[vars]` and secrets in wrangler.toml; miniflare's `bindings`). */
export interface Env {
  /**
   * The key that seals the `requestState` of input-required results: the
   * same in every isolate, so that a client's retry may land on any (without
   * it each isolate draws its own, and a retry served by another one is refused).
   */
  readonly MCP_REQUEST_STATE_SECRET?: string | undefined
}

/** The notes server: three tools (one elicits) and a resource template. */
export const notesServer = (env: Env): Layer.Layer<McpServer.McpServer> =>
  McpServer.layer(
    { name: "notes", version: "1.0.0", requestState: { secret: env.MCP_REQUEST_STATE_SECRET } },
    ...notes
  )

export default McpWorker.make(notesServer, {
  path: "/mcp",
  // a server on loopback: only loopback Host and Origin headers (against DNS rebinding)
  allowedHosts: ["127.0.0.1", "localhost"],
  allowedOrigins: ["127.0.0.1", "localhost"]
})
