/**
 * An MCP server mounted at /mcp in an existing HttpRouter app (here just
 * `GET /health`), served on 127.0.0.1; SIGTERM or SIGINT ends the open MCP
 * streams and exits at once.
 *
 *   PORT=3000 node --conditions=development scratchpad/http-mount.ts
 */
import { McpHttpServer, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import { NodeHttpServer } from "@effect/platform-node"
import { Console, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"

const add = McpTool.make("add", {
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Mcp = McpServer.register(add).pipe(Layer.provideMerge(McpServer.layer({ name: "adder", version: "1.0.0" })))

// the existing app
const Health = HttpRouter.add("GET", "/health", HttpServerResponse.text("ok"))

const App = HttpRouter.serve(Layer.mergeAll(Health, McpHttpServer.layerRoute({ path: "/mcp" })), {
  disableListenLog: true
}).pipe(
  McpHttpServer.withGracefulShutdown, // on shutdown, MCP streams end before the server waits for its connections
  Layer.provide(Mcp),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: Number(process.env.PORT ?? 0), host: "127.0.0.1" }))
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    yield* Console.log(`listening on ${HttpServer.formatAddress(server.address)}`)
    return yield* Effect.never
  }).pipe(Effect.provide(App))
)
