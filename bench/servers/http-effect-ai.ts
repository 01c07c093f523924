/**
 * effect's own MCP server (`effect/ai` `McpServer`, effect 4.1.0) over
 * Streamable HTTP, for the `effect-ai` rows of `http.ts`:
 * `McpServer.layerHttp` (`path: "/mcp"`, 2025-11-25 only, sessions ended by
 * `DELETE`) with the echo toolkit of `effect-ai-echo.ts`, served by
 * `HttpRouter.serve` on `NodeHttpServer.layer` (a `node:http` server on
 * 127.0.0.1 and an ephemeral port), as effect's documentation and the interop
 * tests do. `layerHttp` picks the framing itself: JSON for a single answer
 * (SSE only for streams), with no option to force SSE, so there is no
 * `effect-ai-sse` row.
 *
 * `HttpRouter.serve` logs every response by default (`HttpMiddleware.logger`,
 * on stdout); the bench servers log nothing per request and stdout is the
 * control channel, so the logger and the listen log are off
 * (`disableLogger`, `disableListenLog`).
 *
 * Prints `{"url":…}` on stdout once listening, answers `mem` on stdin (see
 * `control.mjs`) and exits when stdin ends.
 *
 *   node --expose-gc bench/servers/http-effect-ai.ts
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as McpServer from "effect/ai/McpServer"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { control } from "./control.mjs"
import { effectAiInfo, effectAiProtocols, effectAiRegistrations } from "./effect-ai-echo.ts"

const Mcp = McpServer.layerHttp({
  ...effectAiInfo,
  path: "/mcp",
  protocols: effectAiProtocols,
  allowSessionTermination: true,
  registrations: effectAiRegistrations
})

const Served = HttpRouter.serve(Mcp, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
)

const Control = Layer.effectDiscard(
  HttpServer.addressFormattedWith((address) => Effect.sync(() => control(`${address}/mcp`)))
)

NodeRuntime.runMain(Layer.launch(Control.pipe(Layer.provide(Served))))
