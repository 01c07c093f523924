/**
 * Running MCP programs on Node.js.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

/**
 * Runs a program as the process's main fiber (signals, exit code, keep-alive)
 * with every log line on stderr: stdout may carry the stdio transport, and one
 * stray line there corrupts the JSON-RPC stream.
 *
 * `SIGINT` and `SIGTERM` interrupt the program: its layers close (an HTTP
 * server serving MCP ends its sessions first, see
 * `McpHttpServer.withGracefulShutdown`), then the process exits with `130`.
 *
 * @category running
 * @since 0.1.0
 */
export const runMain = <A, E>(effect: Effect.Effect<A, E>): void =>
  NodeRuntime.runMain(Effect.provideService(effect, Logger.LogToStderr, true))
