/**
 * Node: the notes server on Node's own HTTP server (127.0.0.1, $PORT).
 *
 *   PORT=3000 node node.js
 */
import { NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Notes } from "./notes.ts"

const Http = NodeMcpHttpServer.layer({ port: Number(process.env.PORT ?? 3000) }).pipe(Layer.provide(Notes))

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    yield* Console.log(`listening on ${yield* NodeMcpHttpServer.url()}`)
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
