/**
 * Cloudflare Workers: `McpWorker.make` is the web handler as a Worker's
 * `fetch`, built in the first request from its `env`. A Worker keeps no
 * process: 2026-07-28 requests, the legacy era without sessions; the key that
 * seals input-required rounds is the same in every isolate (a Worker secret).
 *
 *   npx wrangler secret put REQUEST_STATE_SECRET && npx wrangler deploy worker.ts
 */
import { McpServer, McpWorker } from "@effect-mcp/core"
import { addNote, askTitle } from "./notes.ts"

interface Env {
  readonly REQUEST_STATE_SECRET: string
}

export default McpWorker.make(
  (env: Env) =>
    McpServer.layer(
      { name: "notes", version: "1.0.0", requestState: { secret: env.REQUEST_STATE_SECRET } },
      addNote,
      askTitle
    ),
  { path: "/mcp" }
)
