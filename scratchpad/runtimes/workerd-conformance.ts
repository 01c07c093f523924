/**
 * The conformance server (scratchpad/conformance/fixture.ts) as a Cloudflare
 * Worker, as conformance-server.ts serves it on Bun and Deno: SSE responses,
 * `test_reconnection` ending its own POST's SSE stream, Host and Origin
 * limited to loopback; the legacy era stateless (`McpWorker.make`).
 *
 *   node --conditions=development scratchpad/runtimes/workerd-serve.ts
 *
 * (bundles this file and serves it on workerd; `npm run conformance -- --only server-workerd`).
 */
import { McpHttpServer, McpWorker } from "@effect-mcp/core"
import * as Fixture from "../conformance/fixture.ts"

export default McpWorker.make(Fixture.layer({ closeStream: () => McpHttpServer.closeSseStream }), {
  path: "/mcp",
  responseMode: "sse",
  allowedHosts: ["127.0.0.1", "localhost"],
  allowedOrigins: ["127.0.0.1", "localhost"]
})
