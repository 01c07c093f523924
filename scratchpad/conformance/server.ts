/**
 * The conformance server: every tool, resource and prompt the server
 * scenarios of `@modelcontextprotocol/conformance` call (see fixture.ts).
 *
 *   node --conditions=development scratchpad/conformance/server.ts --stdio
 *   node --conditions=development scratchpad/conformance/server.ts --port 3001   (http://127.0.0.1:3001/mcp)
 *
 * (`npm run conformance:server -- --port N`; for stdio, `npm run --silent conformance:server -- --stdio`,
 * as npm's banner would otherwise land on stdout.) Logs go to stderr.
 */
import { McpHttpServer, McpServer } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpRuntime, NodeMcpStdio } from "@effect-mcp/platform-node"
import { Console, Effect, Layer } from "effect"
import * as Fixture from "./fixture.ts"

const args = process.argv.slice(2)
const valueOf = (flag: string): string | undefined => {
  const index = args.indexOf(flag)
  return index >= 0 ? args[index + 1] : undefined
}

const stdio = Effect.gen(function*() {
  const session = yield* McpServer.serve
  yield* session.awaitClose
}).pipe(
  Effect.scoped,
  Effect.provide(Layer.mergeAll(Fixture.layer(), NodeMcpStdio.layer))
)

// Streamable HTTP on 127.0.0.1 (Host and Origin checked against loopback names);
// `test_reconnection` ends its own POST's SSE connection (SEP-1699). The URL is
// printed on stdout once listening (`npm run conformance` waits for it; with
// `--port 0` it names the port picked).
const http = (port: number, host: string) =>
  Effect.gen(function*() {
    yield* Console.log(`listening on ${yield* NodeMcpHttpServer.url()}`)
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      NodeMcpHttpServer.layer({ port, host, responseMode: "sse" }).pipe(
        Layer.provide(Fixture.layer({ closeStream: () => McpHttpServer.closeSseStream }))
      )
    )
  )

const usage = Effect.die(new Error("usage: server.ts --stdio | --port N [--host 127.0.0.1]"))

const port = Number(valueOf("--port"))

const main = args.includes("--stdio")
  ? stdio
  : Number.isInteger(port) && port >= 0 && port < 65536
  ? http(port, valueOf("--host") ?? "127.0.0.1")
  : usage

NodeMcpRuntime.runMain(main)
