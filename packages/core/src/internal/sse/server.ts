/**
 * The HTTP+SSE server transport (MCP 2024-11-05): a GET opens an event
 * stream whose first event, `endpoint`, names the URL (with `?sessionId=`) the
 * client POSTs its messages to; every message of the server goes out as a
 * `message` event on that stream. One GET is one connection is one MCP
 * session, served by `McpServer.serve` over a transport whose `incoming` is
 * fed by the POSTs and whose `send` writes events.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpAuth from "../../McpAuth.ts"
import { canonicalResource } from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import * as McpResourceServer from "../../McpResourceServer.ts"
import { McpServer, type Server } from "../../McpServer.ts"
import type * as McpSseServer from "../../McpSseServer.ts"
import { McpTransport } from "../../McpTransport.ts"
import * as Bearer from "../auth/bearer.ts"
import * as Defects from "../http/defects.ts"
import * as Guard from "../http/guard.ts"

/** @internal */
export interface Options extends Guard.GuardOptions {
  readonly messagesPath: string
  readonly maxMessageBytes: number
  /** The most open streams (sessions); a GET beyond it gets `503`. */
  readonly maxSessions?: number | undefined
  /** The server is bound to a loopback address: guard Host and Origin by default. */
  readonly loopback: boolean
  /** The bearer check of a protected server. */
  readonly bearer?: Bearer.Guard | undefined
  /** CORS for browser clients. */
  readonly cors?: Guard.Cors | undefined
  /** With `bearer`: the clock a stream's token expires by. */
  readonly clock?: Clock.Clock | undefined
}

interface Connection {
  readonly inbox: Queue.Queue<unknown, Cause.Done>
  /** With auth: whom the session belongs to. */
  readonly principal: string | undefined
  /** With auth: the token of each request posted and not yet read by the session (taken once). */
  readonly auths: Map<JsonRpc.RequestId, McpAuth.AuthInfo>
}

/** @internal */
export interface Handlers {
  readonly get: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /** The answer to an `OPTIONS` request (a CORS preflight) on either path. */
  readonly options: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  readonly post: Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    never,
    HttpServerRequest.HttpServerRequest | HttpServerRequest.ParsedSearchParams
  >
}

const encoder = new TextEncoder()

// one SSE event; `data` never contains a line break here (JSON.stringify
// escapes them, and a path has none)
const event = (name: string, data: string): Uint8Array => encoder.encode(`event: ${name}\ndata: ${data}\n\n`)

const plain = (status: number, body: string) => HttpServerResponse.text(body, { status })

const refusedResponse = (refusal: Bearer.Refusal) =>
  HttpServerResponse.text(refusal.message, {
    status: refusal.status,
    headers: {
      ...refusal.headers,
      ...(refusal.challenge === undefined ? {} : { "www-authenticate": refusal.challenge })
    }
  })

const parseError = (reason: string) =>
  HttpServerResponse.jsonUnsafe(
    JsonRpc.failure(null, { code: JsonRpc.ErrorCode.ParseError, message: `Parse error: ${reason}` }),
    { status: 400 }
  )

class BodyTooLarge {
  readonly _tag = "BodyTooLarge"
}

const readBody = (request: HttpServerRequest.HttpServerRequest, max: number) =>
  Effect.suspend(() => {
    const parts: Array<Uint8Array> = []
    let size = 0
    return request.stream.pipe(
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > max) return Effect.fail(new BodyTooLarge())
        parts.push(chunk)
        return Effect.void
      }),
      Effect.map(() => {
        const body = new Uint8Array(size)
        let offset = 0
        for (const part of parts) {
          body.set(part, offset)
          offset += part.length
        }
        return body
      })
    )
  })

const decodeJson = (body: Uint8Array): Result.Result<unknown, string> => {
  const text = Result.try({
    try: () => new TextDecoder("utf-8", { fatal: true }).decode(body),
    catch: () => "not valid UTF-8"
  })
  if (Result.isFailure(text)) return text
  return Result.try({ try: () => JSON.parse(text.success) as unknown, catch: (e) => `not valid JSON: ${e}` })
}

const isJsonContentType = (value: string | undefined): boolean =>
  value !== undefined && value.split(";")[0]!.trim().toLowerCase() === "application/json"

/**
 * The GET and POST handlers of one SSE server, and the connections they
 * share. Closing the scope ends every open stream (after the events already
 * queued) and refuses new connections.
 *
 * @internal
 */
export const make = Effect.fnUntraced(function*(
  server: Server,
  options: Options
): Effect.fn.Return<Handlers, never, Scope.Scope> {
  const random = yield* SecureRandom.SecureRandom.pipe(Effect.provide(SecureRandom.layerWebCrypto))
  const connections = new Map<string, Connection>()
  // the outboxes of the open streams, ended when the server stops
  const streams = new Set<Queue.Queue<Uint8Array, Cause.Done>>()
  let open = true
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      open = false
      return Effect.forEach(Array.from(streams), (outbox) => Queue.end(outbox), { discard: true })
    })
  )

  const refused = (request: HttpServerRequest.HttpServerRequest) =>
    Guard.check(Guard.headerOf(request.headers), options, options.loopback, options.cors?.extraOrigins)

  // Runs as the response body: the session lives exactly as long as the
  // stream, which ends when the client goes away (the server interrupts it),
  // when the session ends on its own, or when the server stops.
  const connect = (sessionId: string, auth: McpAuth.AuthInfo | undefined) =>
    Effect.gen(function*() {
      const inbox = yield* Effect.acquireRelease(Queue.unbounded<unknown, Cause.Done>(), (queue) => Queue.end(queue))
      const outbox = yield* Effect.acquireRelease(
        Queue.unbounded<Uint8Array, Cause.Done>(),
        (queue) => Effect.andThen(Effect.sync(() => streams.delete(queue)), Queue.end(queue))
      )
      streams.add(outbox)
      if (!open) yield* Queue.end(outbox)
      const auths = new Map<JsonRpc.RequestId, McpAuth.AuthInfo>()
      const transport = McpTransport.of({
        incoming: Stream.fromQueue(inbox),
        send: (frame) =>
          Effect.flatMap(
            Queue.offer(outbox, event("message", JSON.stringify(frame))),
            (accepted) => accepted ? Effect.void : Effect.fail(McpError.closed("the SSE stream is closed"))
          ),
        ...(options.bearer === undefined ? {} : {
          authOf: (id: JsonRpc.RequestId) => {
            const found = auths.get(id)
            auths.delete(id)
            return found
          }
        })
      })
      const session = yield* Effect.provideService(server.serve, McpTransport, transport)
      connections.set(sessionId, { inbox, principal: Bearer.principal(auth), auths })
      yield* Effect.addFinalizer(() => Effect.sync(() => connections.delete(sessionId)))
      // a session that ends on its own (keep-alive failure) ends its stream
      yield* Effect.andThen(session.awaitClose, Queue.end(outbox)).pipe(Effect.forkScoped)
      // so does the token it was opened with, when it expires: the client
      // connects again with a fresh one (a new session: nothing resumes here)
      const expiresAt = auth?.expiresAt
      const clock = options.clock
      if (expiresAt !== undefined && clock !== undefined) {
        const left = expiresAt * 1000 - clock.currentTimeMillisUnsafe()
        yield* (left > 0 ? clock.sleep(Duration.millis(left)) : Effect.void).pipe(
          Effect.andThen(Queue.end(outbox)),
          Effect.forkScoped
        )
      }
      const endpoint = `${options.messagesPath}?sessionId=${encodeURIComponent(sessionId)}`
      return Stream.concat(Stream.succeed(event("endpoint", endpoint)), Stream.fromQueue(outbox))
    })

  // CORS headers on every answer of a request that passed the guard, a defect's bare 500 included
  const answering = <R>(
    handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const answered = Defects.answerDefects(
        handler,
        request,
        "McpSseServer: the request failed",
        () => plain(500, "Internal Server Error")
      )
      const cors = options.cors
      if (cors === undefined) return answered
      const headers = refused(request) === undefined ? cors.headers(request.headers["origin"]) : { vary: "Origin" }
      return Effect.map(answered, (response) => HttpServerResponse.setHeaders(response, headers))
    })

  const preflight = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const reason = refused(request)
    const cors = options.cors
    if (cors === undefined) return HttpServerResponse.empty({ status: 405 })
    if (reason !== undefined) return HttpServerResponse.setHeader(plain(403, reason), "vary", "Origin")
    return HttpServerResponse.empty({
      status: 204,
      headers: {
        ...cors.preflight(request.headers["origin"], Guard.headerOf(request.headers)),
        allow: "GET, POST, OPTIONS"
      }
    })
  })

  const get = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const reason = refused(request)
    if (reason !== undefined) return plain(403, reason)
    if (!open) return plain(503, "The server is shutting down")
    if (streams.size >= (options.maxSessions ?? 10_000)) return plain(503, "Service Unavailable: too many sessions")
    let auth: McpAuth.AuthInfo | undefined
    if (options.bearer !== undefined) {
      const checked = yield* options.bearer.authenticate(request.headers["authorization"], {
        method: request.method,
        url: request.url,
        proof: request.headers["dpop"]
      })
      if (Bearer.isRefusal(checked)) return refusedResponse(checked)
      auth = checked
    }
    const sessionId = yield* random.uuidV4()
    return HttpServerResponse.stream(Stream.unwrap(connect(sessionId, auth)), {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" }
    })
  })

  const post = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const reason = refused(request)
    if (reason !== undefined) return plain(403, reason)
    let auth: McpAuth.AuthInfo | undefined
    if (options.bearer !== undefined) {
      const checked = yield* options.bearer.authenticate(request.headers["authorization"], {
        method: request.method,
        url: request.url,
        proof: request.headers["dpop"]
      })
      if (Bearer.isRefusal(checked)) return refusedResponse(checked)
      auth = checked
    }
    const sessionId = (yield* HttpServerRequest.ParsedSearchParams)["sessionId"]
    if (typeof sessionId !== "string" || sessionId === "") return plain(400, "Missing sessionId")
    const connection = connections.get(sessionId)
    // another user's token: as if the session did not exist
    if (connection === undefined || (options.bearer !== undefined && connection.principal !== Bearer.principal(auth))) {
      return plain(404, "Session not found")
    }
    if (!isJsonContentType(request.headers["content-type"])) {
      return plain(415, "Content-Type must be application/json")
    }
    const declared = Number(request.headers["content-length"])
    if (Number.isFinite(declared) && declared > options.maxMessageBytes) {
      return plain(413, `Message larger than ${options.maxMessageBytes} bytes`)
    }
    const body = yield* Effect.result(readBody(request, options.maxMessageBytes))
    if (Result.isFailure(body)) {
      return body.failure instanceof BodyTooLarge
        ? plain(413, `Message larger than ${options.maxMessageBytes} bytes`)
        : plain(400, "Could not read the request body")
    }
    const value = decodeJson(body.success)
    if (Result.isFailure(value)) return parseError(value.failure)
    if (auth !== undefined) {
      const messages: ReadonlyArray<unknown> = Array.isArray(value.success) ? value.success : [value.success]
      const refusal = options.bearer!.authorize(auth, messages)
      if (refusal !== undefined) return refusedResponse(refusal)
      for (const message of messages) {
        const classified = JsonRpc.classify(message)
        if (classified._tag === "Request") connection.auths.set(classified.message.id, auth)
      }
    }
    const accepted = yield* Queue.offer(connection.inbox, value.success)
    return accepted ? plain(202, "Accepted") : plain(404, "Session not found")
  })

  return { get: answering(get), post: answering(post), options: preflight }
})

// -----------------------------------------------------------------------------
// The routes (`McpSseServer.layerRoute`)
// -----------------------------------------------------------------------------

const isLoopbackAddress = (address: NetAddress.SocketAddress): boolean =>
  NetAddress.isInetAddress(address) && NetAddress.isLoopback(address.address)

/** `McpSseServer.layerRoute`. @internal */
export const layerRoute = (
  options: McpSseServer.Options | undefined
): Layer.Layer<never, never, McpServer | HttpRouter.HttpRouter> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const server = yield* McpServer
    // the HttpServer is usually in context when the routes are built
    // (`HttpRouter.serve(routes).pipe(Layer.provide(NodeHttpServer.layer(…)))`)
    const httpServer = yield* Effect.serviceOption(HttpServer.HttpServer)
    const loopback = Option.isSome(httpServer) && isLoopbackAddress(httpServer.value.address)
    const ssePath = options?.ssePath ?? "/sse"
    const auth = options?.auth
    const clock = yield* Clock.clockWith(Effect.succeed)
    let bearer: Bearer.Guard | undefined
    if (auth !== undefined) {
      const resource = auth.resource !== undefined
        ? canonicalResource(auth.resource)
        : Option.isSome(httpServer) && httpServer.value.address._tag !== "UnixPathAddress"
        ? canonicalResource(HttpServer.formatAddress(httpServer.value.address) + ssePath)
        : yield* Effect.die(new Error("McpSseServer: auth.resource is required when no TCP HttpServer is in context"))
      bearer = Bearer.make(auth, resource, clock)
      yield* McpResourceServer.addMetadataRoutes(router, auth, resource)
    }
    const handlers = yield* make(server, {
      bearer,
      clock,
      cors: options?.cors === undefined ? undefined : Guard.makeCors(options.cors, "GET, POST, OPTIONS"),
      messagesPath: options?.messagesPath ?? "/messages",
      maxMessageBytes: options?.maxMessageBytes ?? 4 * 1024 * 1024,
      maxSessions: Math.max(1, options?.maxSessions ?? 10_000),
      allowedOrigins: options?.allowedOrigins,
      allowedHosts: options?.allowedHosts,
      loopback
    })
    yield* router.add("GET", ssePath, handlers.get)
    yield* router.add("POST", options?.messagesPath ?? "/messages", handlers.post)
    if (options?.cors !== undefined) {
      yield* router.add("OPTIONS", ssePath, handlers.options)
      const messagesPath = options.messagesPath ?? "/messages"
      if (messagesPath !== ssePath) yield* router.add("OPTIONS", messagesPath, handlers.options)
    }
  }))
