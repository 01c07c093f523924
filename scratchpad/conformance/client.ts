/**
 * The conformance client, run by the conformance runner once per client
 * scenario as `<command> <server-url>` with `MCP_CONFORMANCE_SCENARIO` set:
 *
 *   MCP_CONFORMANCE_SCENARIO=tools_call node --conditions=development scratchpad/conformance/client.ts http://127.0.0.1:PORT/mcp
 *
 * (`npm run conformance:client -- <url>`.) Connects over Streamable HTTP, does
 * what the scenario asks (scenarios.ts), exits 0 on success and non-zero on
 * failure. Logs go to stderr.
 */
import { NodeMcpHttpClient, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Effect } from "effect"
import * as Scenarios from "./scenarios.ts"

const url = process.argv.slice(2).at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""

const main = url === undefined
  ? Effect.die(new Error("usage: MCP_CONFORMANCE_SCENARIO=<name> client.ts <server-url>"))
  : Effect.gen(function*() {
    yield* Effect.logInfo(`scenario ${scenario} against ${url}`)
    yield* Scenarios.run(scenario, NodeMcpHttpClient.layer({ url }))
    yield* Effect.logInfo(`scenario ${scenario} done`)
  })

NodeMcpRuntime.runMain(main)
