/**
 * This process's stdin and stdout as an MCP transport (newline-delimited JSON),
 * for servers that a client spawns. Nothing else may write to stdout: run the
 * program with `NodeMcpRuntime.runMain`, which sends logs to stderr.
 *
 * @since 0.1.0
 */
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import { McpError, McpTransport } from "@effect-mcp/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"

/**
 * The transport over the `Stdio` service in context.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = Effect.gen(function*() {
  const stdio = yield* Stdio.Stdio
  return yield* McpTransport.makeNdjson({
    input: stdio.stdin.pipe(Stream.mapError((cause) => McpError.transport("stdin failed", { cause }))),
    output: stdio.stdout({ endOnDone: false }).pipe(
      Sink.mapError((cause) => McpError.transport("stdout failed", { cause }))
    )
  })
})

/**
 * The process's stdin/stdout transport.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<McpTransport.McpTransport> = Layer.effect(McpTransport.McpTransport, make).pipe(
  Layer.provide(NodeStdio.layer)
)
