/**
 * The conformance server (scratchpad/conformance/fixture.ts, as
 * scratchpad/conformance/server.ts serves it on Node) through the web handler
 * on Bun's or Deno's own server, 127.0.0.1, an ephemeral port: SSE responses,
 * `test_reconnection` ending its own POST's SSE stream.
 *
 *   bun --conditions=development scratchpad/runtimes/conformance-server.ts
 *   deno run --allow-net=127.0.0.1 --unstable-no-legacy-abort --node-modules-dir=manual --conditions=development scratchpad/runtimes/conformance-server.ts
 *
 * Prints `listening on http://127.0.0.1:PORT/mcp` on stdout once listening
 * (`npm run conformance -- --only server-bun | server-deno` waits for it);
 * SIGTERM or SIGINT disposes the handler and exits 0.
 */
import { McpHttpServer } from "@effect-mcp/core"
import * as Fixture from "../conformance/fixture.ts"
import { serveWeb } from "./http-server.ts"

serveWeb(McpHttpServer.toWebHandler(
  Fixture.layer({ closeStream: () => McpHttpServer.closeSseStream }),
  {
    path: "/mcp",
    responseMode: "sse",
    allowedHosts: ["127.0.0.1", "localhost"],
    allowedOrigins: ["127.0.0.1", "localhost"]
  }
))
