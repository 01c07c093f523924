/**
 * effect's own MCP server (`effect/ai` `McpServer`, effect 4.1.0) over stdio,
 * for the `effect-ai` row of `stdio.ts`: `McpServer.layerStdio` with the echo
 * toolkit of `effect-ai-echo.ts` (2025-11-25 only), on `NodeStdio.layer`,
 * launched with `NodeRuntime.runMain`. It exits when the client closes stdin.
 * Deep imports throughout (the `@effect/platform-node` barrel alone costs
 * about a second of start-up, PERF-BASELINE.md).
 *
 *   node bench/servers/stdio-effect-ai.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as McpServer from "effect/ai/McpServer"
import * as Layer from "effect/Layer"
import { effectAiInfo, effectAiProtocols, effectAiRegistrations } from "./effect-ai-echo.ts"

const Main = McpServer.layerStdio({
  ...effectAiInfo,
  protocols: effectAiProtocols,
  registrations: effectAiRegistrations
}).pipe(Layer.provide(NodeStdio.layer))

NodeRuntime.runMain(Layer.launch(Main))
