/**
 * The no-Redis twin of `scratchpad/cluster/replica.ts` for `bench/cluster.ts`:
 * the same `McpServer` (same name, capabilities and tools: `whoami`,
 * `add_tool`, `ask`, `sleep`) on `NodeMcpHttpServer.layer({ port: 0, host:
 * "127.0.0.1" })`, with every store in memory (no `McpRedisCluster`, so no
 * session registry, no request relay, no shared `requestState` secret).
 * `whoami` answers `REPLICA` (default `plain`).
 *
 * Prints `{"url":…}` on stdout once listening, answers `mem` on stdin (see
 * `control.mjs`) and exits when stdin ends.
 *
 *   node --conditions=development bench/servers/cluster-plain.ts
 */
import * as NodeMcpHttpServer from "@effect-mcp/platform-node/NodeMcpHttpServer"
import * as NodeMcpRuntime from "@effect-mcp/platform-node/NodeMcpRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tools from "../../scratchpad/cluster/tools.ts"
import { control } from "./control.mjs"

const replica = process.env.REPLICA ?? "plain"

const Http = NodeMcpHttpServer.layer({ port: 0, host: "127.0.0.1" }).pipe(Layer.provide(Tools.server(replica)))

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    yield* Effect.sync(() => control(url))
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
