/**
 * The HTTP transport's bad input (`utils/probes.ts`) on Bun's and Deno's own
 * servers: `scratchpad/runtimes/probe-server.ts` (a server with no tools
 * through `McpHttpServer.toWebHandler` on `Bun.serve` / `Deno.serve`, started
 * with `PROBE_OPTIONS`) answers every probe as our Node server
 * (`NodeMcpHttpServer.layer(PROBE_OPTIONS)` serving the same empty server, in
 * this process) answers it, and the answers hold what `EXPECTED` says. Each runtime's binary
 * comes from node_modules (`utils/runtimes.ts`); a missing one fails the test.
 */
import { McpServer } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { type Answer, EXPECTED, probe, PROBE_OPTIONS, PROBES } from "./utils/probes.ts"
import { runtimes, serveOn } from "./utils/runtimes.ts"

const SERVER = "scratchpad/runtimes/probe-server.ts"

/** The server of probe-server.ts: no tools (the probes never reach one). */
const Server = McpServer.layer({ name: "probes", version: "1.0.0" })

/** Our Node server with `PROBE_OPTIONS`, for the scope: its URL. */
const nodeServer = Layer.build(NodeMcpHttpServer.layer(PROBE_OPTIONS).pipe(Layer.provide(Server))).pipe(
  Effect.flatMap((context) => NodeMcpHttpServer.url().pipe(Effect.provideContext(context)))
)

for (const runtime of runtimes) {
  describe(`the web handler on ${runtime.name}'s own server: bad input`, () => {
    it.live(
      "each probe gets the answer our Node server gives (-32700, 415, -32601, 413, 403, ...)",
      () =>
        Effect.gen(function*() {
          const served = yield* serveOn(runtime, SERVER, { MCP_PROBE_OPTIONS: JSON.stringify(PROBE_OPTIONS) })
          const node = yield* nodeServer
          const answers = new Map<string, Answer>()
          for (const [name, init] of PROBES) {
            const [fromRuntime, fromNode] = [yield* probe(served.url, init), yield* probe(node, init)]
            assert.deepStrictEqual(fromRuntime, fromNode, `${name} (${runtime.name} stderr: ${served.stderr()})`)
            answers.set(name, fromRuntime)
          }
          for (const [name, expected] of EXPECTED) {
            assert.isTrue(expected(answers.get(name)!), `${name}: ${answers.get(name)}`)
          }
          assert.deepStrictEqual(yield* served.stop, { code: 0, signal: null }, served.stderr())
          assert.strictEqual(served.stderr(), "")
        }).pipe(Effect.scoped),
      60_000
    )
  })
}
