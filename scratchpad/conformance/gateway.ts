/**
 * The conformance server behind a gateway: `server.ts --stdio` as the one
 * server of a gateway's group (its era pinned with `--era modern|legacy`, or
 * probed with `--era auto`), served by `NodeMcpGateway` over Streamable HTTP
 * on 127.0.0.1. `npm run conformance` runs the server suites against it three
 * ways; the URL is printed on stdout once listening.
 *
 *   node --conditions=development scratchpad/conformance/gateway.ts --port 0 --era legacy
 */
import { McpGroup } from "@effect-mcp/core"
import { NodeMcpGateway, NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"

const args = process.argv.slice(2)
const valueOf = (flag: string): string | undefined => {
  const index = args.indexOf(flag)
  return index >= 0 ? args[index + 1] : undefined
}

const era = valueOf("--era") ?? "auto"
if (era !== "auto" && era !== "modern" && era !== "legacy") throw new Error(`--era: auto, modern or legacy, not ${era}`)
const port = Number(valueOf("--port") ?? 0)

const server = fileURLToPath(new URL("./server.ts", import.meta.url))

const Gateway = NodeMcpGateway.layer({
  servers: { conformance: McpGroup.stdio(process.execPath, ["--conditions=development", server, "--stdio"], { era }) },
  name: "effect-mcp-conformance-gateway",
  version: "0.1.0",
  tasks: { pollInterval: "100 millis" },
  // the suites leave rounds unanswered and minute-long tasks running: behind a
  // legacy server, each keeps a session of the gateway's own until it ends
  upstreams: { conformance: { sessions: 16 } }
})

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    yield* Console.log(`listening on ${yield* NodeMcpHttpServer.url()}`)
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      NodeMcpHttpServer.layer({ port, host: valueOf("--host") ?? "127.0.0.1", responseMode: "sse" }).pipe(
        Layer.provide(Gateway)
      )
    )
  )
)
