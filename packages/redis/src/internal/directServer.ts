/**
 * The owner's end of the direct hop (`directProtocol.ts`): a Node HTTP
 * server, for the life of the scope, that serves the requests other replicas
 * send straight here with the handler of the latest `serve` (the one the
 * pub/sub relay uses too).
 *
 * A request is served only on the hop's path, with the shared secret
 * (compared in constant time), meant for this replica, while a `serve` runs;
 * it runs in the request's fiber, which the server interrupts when the
 * forwarder's connection closes (its scope closed, or its process gone). A
 * streamed body also ends when the forwarder's heartbeat stops (a host that
 * vanished without closing its connections). When the scope closes, the
 * requests in flight are interrupted, every connection is closed, and
 * nothing listens any more.
 *
 * @internal
 */
import * as McpError from "@effect-mcp/core/McpError"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createServer, type Server, type ServerResponse } from "node:http"
import * as Protocol from "./directProtocol.ts"
import type * as Relay from "./relay.ts"

/** @internal */
export interface ServerOptions {
  readonly host: string
  readonly port: number
  readonly replicaId: string
  readonly secret: Effect.Effect<string, McpError.McpError>
  readonly handlers: Relay.Handlers
  readonly heartbeatIntervalMillis: number
  /** Whether a replica keeps its heartbeat. */
  readonly isLive: (replicaId: string) => Effect.Effect<boolean, McpError.McpError>
}

const refusal = (status: number) => HttpServerResponse.empty({ status })
const NOT_FOUND = refusal(404)
const UNAUTHORIZED = refusal(401)
const MISDIRECTED = refusal(421)
const UNAVAILABLE = refusal(503)
const TOO_LARGE = refusal(413)

/** The largest body the hop takes: above any endpoint's own bound (4 MiB by default). */
const MAX_BODY = ByteSize.mebibytes(64)

/**
 * Listens on `host:port` (port 0: any) and serves the hop there, for the
 * life of the scope; answers with the port bound.
 *
 * @internal
 */
export const listen = (options: ServerOptions): Effect.Effect<number, never, Scope.Scope> =>
  Effect.gen(function*() {
    let node: Server | undefined
    // idle connections are kept longer than the forwarders keep them (60 s): the forwarder closes
    // them, so that no request goes out on a connection this end is closing
    const server = yield* NodeHttpServer.make(() => (node = createServer({ keepAliveTimeout: 65_000 })), {
      host: options.host,
      port: options.port,
      // closing waits for nothing: the requests in flight are interrupted, then every connection closed
      disablePreemptiveShutdown: true
    }).pipe(Effect.orDie)
    yield* Effect.addFinalizer(() => Effect.sync(() => node?.closeAllConnections()))

    // a streamed body fails once the forwarder's heartbeat stops (the connection is then cut, not
    // ended as if whole); when Redis cannot tell, the forwarder is taken to be alive
    const forwarderGone = (from: string) =>
      Effect.sleep(options.heartbeatIntervalMillis).pipe(
        Effect.andThen(options.isLive(from)),
        Effect.orElseSucceed(() => true),
        Effect.repeat({ until: (live) => !live }),
        Effect.andThen(Effect.failSync(() => McpError.closed(`replica ${from} is gone`)))
      )

    // interruptible: the server interrupts a request whose connection closes, which the app must allow
    const app = Effect.interruptible(Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (request.method !== "POST" || request.url !== Protocol.PATH) return NOT_FOUND
      const headers = request.headers
      const secret = yield* Effect.option(options.secret)
      if (secret._tag === "None") return UNAVAILABLE
      if (!Protocol.sameSecret(headers[Protocol.SECRET], secret.value)) return UNAUTHORIZED
      if (headers[Protocol.TO] !== options.replicaId) return MISDIRECTED
      const handle = options.handlers.current()
      if (handle === undefined) return UNAVAILABLE
      // the forwarder read it within its endpoint's bound; a peer with the secret is still held to one
      const read = yield* Effect.option(
        Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, MAX_BODY)
      )
      if (read._tag === "None") return TOO_LARGE
      const body = new Uint8Array(read.value)
      const response = yield* handle(Protocol.forwardedRequest(headers, body))
      if (response.whole !== undefined) {
        return HttpServerResponse.uint8Array(response.whole, {
          status: response.status,
          headers: Protocol.responseHeaders(response, "whole")
        })
      }
      const from = headers[Protocol.FROM]
      const written = from === undefined ? response.body : Stream.interruptWhen(response.body, forwarderGone(from))
      // the head goes at once, not with the first chunk (an SSE stream may be quiet for long)
      const nodeResponse = NodeHttpServerRequest.toServerResponse(request) as ServerResponse
      return HttpServerResponse.stream(Stream.onStart(written, Effect.sync(() => nodeResponse.flushHeaders())), {
        status: response.status,
        headers: Protocol.responseHeaders(response, "stream")
      })
    }))
    yield* server.serve(app)
    const address = server.address
    return "port" in address ? address.port : 0
  })
