/**
 * The limits of a Node HTTP server (`NodeMcpHttpServer`, `NodeMcpSseServer`):
 * how long a client may take to send its headers and its request, how long
 * an idle keep-alive connection stays open, and how many connections are
 * served at once; and a `503` for a request that comes while no route
 * serves (between listening and serving, and while shutting down).
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import type * as Http from "node:http"
import type * as NodeMcpHttpServer from "../NodeMcpHttpServer.ts"

const millis = (input: Duration.Input | undefined, fallback: Duration.Input): number =>
  Duration.toMillis(Duration.fromInputUnsafe(input ?? fallback))

/** Makes a Node HTTP server with the limits. @internal */
export const createServer = (
  Http: typeof import("node:http"),
  limits: NodeMcpHttpServer.ServerLimits | undefined
): Http.Server => {
  const requestTimeout = millis(limits?.requestTimeout, Duration.minutes(1))
  const headersTimeout = Math.min(millis(limits?.headersTimeout, Duration.seconds(30)), requestTimeout || Infinity)
  // Node looks for expired requests every `connectionsCheckingInterval` (30 s by default)
  const shortest = Math.min(headersTimeout || Infinity, requestTimeout || Infinity)
  const server = Http.createServer({
    requestTimeout,
    headersTimeout,
    connectionsCheckingInterval: Number.isFinite(shortest)
      ? Math.min(30_000, Math.max(25, Math.floor(shortest / 4)))
      : 30_000
  })
  server.keepAliveTimeout = millis(limits?.keepAliveTimeout, Duration.seconds(5))
  server.maxConnections = Math.max(1, limits?.maxConnections ?? 20_000)
  // the server listens before its route is served (and after, while it shuts down): a request
  // then is told to come back, never left unanswered
  server.on("request", (_request, response) => {
    if (server.listenerCount("request") > 1) return
    response.writeHead(503, { "content-type": "application/json", "retry-after": "1", connection: "close" })
    response.end(NOT_SERVING)
  })
  return server
}

const NOT_SERVING = JSON.stringify({
  jsonrpc: "2.0",
  id: null,
  error: { code: -32000, message: "Service Unavailable: the server is not serving requests yet (or any more)" }
})
