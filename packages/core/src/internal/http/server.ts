/**
 * The Streamable HTTP server: sessions, the POST / GET / DELETE handlers, and
 * the routing of outgoing frames.
 *
 * Routing is the one place this transport looks at request ids, and it is
 * kept to this:
 *
 * - a POST carrying requests registers their ids in the session's `inflight`
 *   map, pointing at the POST's exchange (its JSON answer or SSE stream);
 * - an outgoing response goes to the exchange of its own `id`; when the last
 *   of an exchange's requests is answered, its JSON body is sent or its SSE
 *   stream ends;
 * - an outgoing request or notification goes to the exchange of
 *   `McpTransport.RequestOrigin` (the request whose handler sends it) while
 *   that exchange is open, else to the session's GET stream; an origin counts
 *   only when the sending fiber belongs to this session (a handler of another
 *   session may notify this one);
 * - an incoming `notifications/cancelled` counts its request as answered
 *   (the engine sends no response for it).
 *
 * @internal
 */
import * as Guard from "./guard.ts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ByteSize from "effect/ByteSize"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NetAddress from "effect/net/NetAddress"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpAuth from "../../McpAuth.ts"
import { canonicalResource } from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpHttpServer from "../../McpHttpServer.ts"
import * as McpSchema from "../../McpSchema.ts"
import { McpServer } from "../../McpServer.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import { McpTransport, RequestOrigin } from "../../McpTransport.ts"
import { addMetadataRoutes } from "../../McpResourceServer.ts"
import * as Bearer from "../auth/bearer.ts"
import { acceptsBatches } from "../era/stateful.ts"
import * as EventStore from "./eventStore.ts"
import * as SseStream from "./sseStream.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/** One MCP session served over HTTP. @internal */
export interface Session {
  /** The `Mcp-Session-Id`; `undefined` in stateless mode. */
  readonly id: string | undefined
  /** The key in the live sessions map. */
  readonly key: string
  readonly scope: Scope.Closeable
  readonly inbox: Queue.Queue<unknown, Cause.Done>
  /** Requests in flight, by id: the exchange their answer goes to. */
  readonly inflight: Map<JsonRpc.RequestId, Exchange>
  /** Streams that may still be resumed, by stream id (the GET stream among them). */
  readonly streams: Map<string, SseStream.SseStream>
  /** Finished POST streams whose events are kept a little for a late resumption. */
  readonly finished: Array<string>
  readonly store: McpHttpServer.EventStoreShape | undefined
  server: McpServerSession.ServerSession | undefined
  /** The negotiated protocol version, once known. */
  version: string | undefined
  get: SseStream.SseStream | undefined
  nextStream: number
  lastActivity: number
  closed: boolean
  /** With `auth`: whom the session belongs to (see `Bearer.principal`). */
  readonly principal: string | undefined
}

/** The answer to one POST that carried requests. @internal */
interface Exchange {
  readonly session: Session
  readonly batch: boolean
  /** Requests not answered yet. */
  pending: number
  /** JSON mode: the responses so far. */
  responses: Array<JsonRpc.Message> | undefined
  /** The SSE stream, once the answer is one. */
  stream: SseStream.SseStream | undefined
  /** JSON mode: completed with the HTTP response (JSON, or SSE when upgraded). */
  readonly reply: Deferred.Deferred<HttpServerResponse.HttpServerResponse> | undefined
  /** JSON mode: the POST is gone before its answer. */
  abandoned: boolean
  /** With `auth`: the verified token of the POST. */
  readonly auth: McpAuth.AuthInfo | undefined
}

const CurrentSession = Context.Reference<Session | undefined>("@effect-mcp/core/McpHttpServer/CurrentSession", {
  defaultValue: () => undefined
})

const SESSION_ID = "mcp-session-id"
const PROTOCOL_VERSION = "mcp-protocol-version"
const LAST_EVENT_ID = "last-event-id"
const FINISHED_KEPT = 4
const STATELESS_INIT_ID = "effect-mcp/stateless-initialize"

// -----------------------------------------------------------------------------
// Responses
// -----------------------------------------------------------------------------

const errorResponse = (
  status: number,
  code: number,
  message: string,
  options?: { readonly id?: JsonRpc.RequestId | null; readonly headers?: Record<string, string> }
) =>
  HttpServerResponse.text(
    JSON.stringify({ jsonrpc: "2.0", id: options?.id ?? null, error: { code, message } }),
    { status, contentType: "application/json", ...(options?.headers === undefined ? {} : { headers: options.headers }) }
  )

const SSE_HEADERS = { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" }

const sseResponse = (body: Stream.Stream<Uint8Array>, headers?: Record<string, string>) =>
  HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: headers === undefined ? SSE_HEADERS : { ...SSE_HEADERS, ...headers }
  })

const accepted = HttpServerResponse.empty({ status: 202 })
const emptyStream = () => sseResponse(Stream.empty)

const refused = (refusal: Bearer.Refusal) =>
  errorResponse(refusal.status, JsonRpc.ErrorCode.ServerError, refusal.message, {
    headers: refusal.challenge === undefined ? {} : { "www-authenticate": refusal.challenge }
  })

// the bearer check; the resource defaults to the bound address and the path
const makeBearer = (
  auth: NonNullable<McpHttpServer.Options["auth"]>,
  httpServer: Option.Option<HttpServer.HttpServer["Service"]>,
  path: string,
  clock: Clock.Clock
): Effect.Effect<Bearer.Guard> => {
  if (auth.resource !== undefined) return Effect.succeed(Bearer.make(auth, canonicalResource(auth.resource), clock))
  if (Option.isNone(httpServer) || httpServer.value.address._tag === "UnixPathAddress") {
    return Effect.die(new Error("McpHttpServer: auth.resource is required when no TCP HttpServer is in context"))
  }
  return Effect.succeed(Bearer.make(auth, canonicalResource(HttpServer.formatAddress(httpServer.value.address) + path), clock))
}

const jsonBody = (exchange: Exchange) => {
  const responses = exchange.responses ?? []
  const text = exchange.batch ? `[${responses.map(SseStream.stringify).join(",")}]` : SseStream.stringify(responses[0]!)
  return HttpServerResponse.text(text, { contentType: "application/json" })
}

// -----------------------------------------------------------------------------
// Header checks
// -----------------------------------------------------------------------------

const mediaTypes = (header: string | undefined): Array<string> =>
  header === undefined ? [] : header.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase())

const acceptsPost = (header: string | undefined) => {
  const types = mediaTypes(header)
  return types.includes("*/*") || (types.includes("application/json") && types.includes("text/event-stream"))
}

const acceptsSse = (header: string | undefined) => {
  const types = mediaTypes(header)
  return types.includes("*/*") || types.includes("text/event-stream")
}

const isLoopback = (address: HttpServer.HttpServer["Service"]["address"]): boolean =>
  address._tag !== "UnixPathAddress" && NetAddress.isLoopback(address.address)

// -----------------------------------------------------------------------------
// The route
// -----------------------------------------------------------------------------

/** @internal */
export const addRoute = Effect.fnUntraced(function*(
  options: McpHttpServer.Options,
  storeTag: Context.Key<McpHttpServer.EventStore, McpHttpServer.EventStoreShape>
) {
  const router = yield* HttpRouter.HttpRouter
  const context = yield* Effect.context<McpServer>()
  const server = Context.get(context, McpServer)
  const layerScope = yield* Effect.scope
  const clock = yield* Clock.clockWith(Effect.succeed)
  const stateless = options.stateless === true
  const sseMode = options.responseMode === "sse"
  const idleMillis = Duration.toMillis(Duration.fromInputUnsafe(options.idleTimeout ?? Duration.minutes(30)))
  const maxSessions = options.maxSessions ?? 10_000
  const maxBody = ByteSize.bytes(options.maxBodyBytes ?? 4 * 1024 * 1024)
  const retry = options.retry === undefined ? undefined : SseStream.encodeRetry(Duration.fromInputUnsafe(options.retry))
  const store: McpHttpServer.EventStoreShape | undefined = stateless || options.eventStore === false
    ? undefined
    : options.eventStore ?? Option.getOrUndefined(yield* Effect.serviceOption(storeTag)) ?? EventStore.makeMemory()
  const httpServer = yield* Effect.serviceOption(HttpServer.HttpServer)
  const loopback = Option.isSome(httpServer) && isLoopback(httpServer.value.address)
  const allowed = stateless ? "POST, OPTIONS" : "GET, POST, DELETE, OPTIONS"
  const cors = options.cors === undefined ? undefined : Guard.makeCors(options.cors, allowed)
  const guard = (headers: Readonly<Record<string, string | undefined>>) =>
    Guard.check((name) => headers[name], options, loopback, cors?.extraOrigins)
  const path = options.path ?? "/mcp"
  const bearer = options.auth === undefined ? undefined : yield* makeBearer(options.auth, httpServer, path, clock)
  if (bearer !== undefined) yield* addMetadataRoutes(router, options.auth!, bearer.resource)

  const sessions = new Map<string, Session>()
  const now = () => clock.currentTimeMillisUnsafe()

  // ---------------------------------------------------------------------------
  // sessions
  // ---------------------------------------------------------------------------

  const closeSession = (session: Session): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (session.closed) return Effect.void
      session.closed = true
      sessions.delete(session.key)
      Queue.endUnsafe(session.inbox)
      for (const stream of session.streams.values()) SseStream.close(stream)
      if (session.get !== undefined) SseStream.close(session.get)
      for (const exchange of new Set(session.inflight.values())) {
        if (exchange.stream !== undefined) SseStream.close(exchange.stream)
        if (exchange.reply !== undefined) {
          Deferred.doneUnsafe(exchange.reply, Effect.succeed(errorResponse(404, JsonRpc.ErrorCode.SessionNotFound, "Session closed")))
        }
      }
      session.inflight.clear()
      const streamIds = [...session.streams.keys(), ...session.finished]
      session.streams.clear()
      session.finished.length = 0
      const forget = session.store === undefined
        ? Effect.void
        : Effect.forEach(streamIds, (id) => session.store!.remove(id), { discard: true })
      return Effect.andThen(Scope.close(session.scope, Exit.void), forget)
    })

  const openSession = (id: string | undefined, principal: string | undefined): Effect.Effect<Session> =>
    Effect.gen(function*() {
      const scope = yield* Scope.fork(layerScope)
      const session: Session = {
        id,
        key: id ?? globalThis.crypto.randomUUID(),
        scope,
        inbox: yield* Queue.unbounded<unknown, Cause.Done>(),
        inflight: new Map(),
        streams: new Map(),
        finished: [],
        store: id === undefined ? undefined : store,
        server: undefined,
        version: undefined,
        get: undefined,
        nextStream: 1,
        lastActivity: now(),
        closed: false,
        principal
      }
      sessions.set(session.key, session)
      const transport = McpTransport.of({
        incoming: Stream.fromQueue(session.inbox),
        send: (frame) => send(session, frame),
        routesByOrigin: true,
        ...(bearer === undefined ? {} : { authOf: (id: JsonRpc.RequestId) => session.inflight.get(id)?.auth })
      })
      const served = yield* server.serve.pipe(
        Effect.provideService(McpTransport, transport),
        Effect.provideService(CurrentSession, session),
        Scope.provide(scope)
      )
      session.server = served
      // the engine may end the session itself (keep-alive failure)
      yield* served.awaitClose.pipe(
        Effect.andThen(Effect.forkDetach(closeSession(session))),
        Effect.forkIn(scope)
      )
      return session
      // the layer's services, in place of (not merged into) the request's: a
      // session must not keep the initialize request's objects alive
    }).pipe(Effect.updateContext(() => context))

  const touch = (session: Session) => {
    session.lastActivity = now()
  }

  const versionOf = (session: Session): Effect.Effect<string | undefined> =>
    session.version !== undefined || session.server === undefined
      ? Effect.succeed(session.version)
      : Effect.map(session.server.state, (state) => {
        if (state._tag !== "NotInitialized") session.version = state.protocolVersion
        return session.version
      })

  const primes = (session: Session) =>
    session.store !== undefined && session.version !== undefined && session.version >= "2025-11-25"

  const newStream = (session: Session, kind: "post" | "get"): SseStream.SseStream => {
    const stream = SseStream.make(
      kind === "get" ? `${session.id}/0` : `${session.id}/${session.nextStream++}`,
      kind,
      session.store,
      primes(session)
    )
    if (session.store !== undefined) session.streams.set(stream.id, stream)
    return stream
  }

  // a POST stream written to its end is kept a while for a late resumption
  const streamEnded = (session: Session, stream: SseStream.SseStream) => (completed: boolean) =>
    Effect.suspend(() => {
      touch(session)
      if (session.id === undefined) return closeSession(session)
      if (!completed || stream.kind !== "post" || session.store === undefined || session.closed) return Effect.void
      session.streams.delete(stream.id)
      session.finished.push(stream.id)
      if (session.finished.length <= FINISHED_KEPT) return Effect.void
      return session.store.remove(session.finished.shift()!)
    })

  // with auth, a connection ends when the token it was opened with expires
  // (the stream stays, to be resumed with a fresh token)
  const untilExpiry = (body: Stream.Stream<Uint8Array>, auth: McpAuth.AuthInfo | undefined): Stream.Stream<Uint8Array> => {
    const expiresAt = auth?.expiresAt
    if (expiresAt === undefined) return body
    return Stream.interruptWhen(
      body,
      Effect.suspend(() => {
        const left = expiresAt * 1000 - now()
        return left > 0 ? clock.sleep(Duration.millis(left)) : Effect.void
      })
    )
  }

  const connect = (
    session: Session,
    stream: SseStream.SseStream,
    auth: McpAuth.AuthInfo | undefined,
    prefix?: string
  ) =>
    untilExpiry(
      SseStream.body(stream, SseStream.attach(stream), { prefix, retry, onEnd: streamEnded(session, stream) }),
      auth
    )

  // ---------------------------------------------------------------------------
  // routing outgoing frames
  // ---------------------------------------------------------------------------

  const send = (session: Session, frame: JsonRpc.Frame): Effect.Effect<void, McpError.McpError> =>
    Effect.withFiber((fiber) => {
      if (session.closed) return Effect.fail(McpError.closed("HTTP session closed"))
      // an origin counts only from this session's own fibers: a handler of
      // another session may notify this one (a resource update, a list change)
      const origin = fiber.getRef(CurrentSession) === session ? fiber.getRef(RequestOrigin) : undefined
      if (Array.isArray(frame)) for (const message of frame) route(session, message, origin)
      else route(session, frame as JsonRpc.Message, origin)
      return Effect.void
    })

  const route = (session: Session, message: JsonRpc.Message, origin: JsonRpc.RequestId | undefined) => {
    if ("method" in message) {
      const exchange = origin === undefined ? undefined : session.inflight.get(origin)
      if (exchange !== undefined) related(exchange, message)
      else if (session.get !== undefined) SseStream.write(session.get, message)
      return
    }
    const id = message.id
    const exchange = id === null ? undefined : session.inflight.get(id)
    if (exchange === undefined) return
    session.inflight.delete(id!)
    answered(exchange, message)
  }

  const related = (exchange: Exchange, message: JsonRpc.Message) => {
    if (exchange.abandoned) return
    if (exchange.stream !== undefined) return SseStream.write(exchange.stream, message)
    // JSON mode: the handler streams, so the answer becomes an SSE stream
    const stream = newStream(exchange.session, "post")
    exchange.stream = stream
    const body = connect(exchange.session, stream, exchange.auth)
    for (const response of exchange.responses ?? []) SseStream.write(stream, response)
    exchange.responses = undefined
    SseStream.write(stream, message)
    Deferred.doneUnsafe(exchange.reply!, Effect.succeed(sseResponse(body)))
  }

  const answered = (exchange: Exchange, message: JsonRpc.Message) => {
    exchange.pending--
    if (exchange.abandoned) return
    if (exchange.stream !== undefined) {
      SseStream.write(exchange.stream, message)
      if (exchange.pending === 0) SseStream.end(exchange.stream)
      return
    }
    ;(exchange.responses ??= []).push(message)
    if (exchange.pending === 0) Deferred.doneUnsafe(exchange.reply!, Effect.succeed(jsonBody(exchange)))
  }

  // the engine sends nothing for a cancelled request: count it as answered
  const cancelled = (session: Session, message: JsonRpc.Notification) => {
    const requestId = (message.params as { readonly requestId?: unknown } | undefined)?.requestId
    if (typeof requestId !== "string" && typeof requestId !== "number") return
    const exchange = session.inflight.get(requestId)
    if (exchange === undefined) return
    session.inflight.delete(requestId)
    exchange.pending--
    if (exchange.pending > 0 || exchange.abandoned) return
    if (exchange.stream !== undefined) return SseStream.end(exchange.stream)
    Deferred.doneUnsafe(
      exchange.reply!,
      Effect.succeed(exchange.responses === undefined ? emptyStream() : jsonBody(exchange))
    )
  }

  // ---------------------------------------------------------------------------
  // POST
  // ---------------------------------------------------------------------------

  const readBody = (request: HttpServerRequest.HttpServerRequest) =>
    request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBody),
      Effect.map((text) => {
        const parsed = Result.try(() => JSON.parse(text) as unknown)
        return Result.isSuccess(parsed)
          ? Result.succeed<unknown>(parsed.success)
          : Result.fail(errorResponse(400, JsonRpc.ErrorCode.ParseError, "Parse error: the body is not JSON"))
      }),
      Effect.catch((error) =>
        Effect.succeed(Result.fail(
          error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
            ? errorResponse(413, JsonRpc.ErrorCode.InvalidRequest, "The body is too large")
            : errorResponse(400, JsonRpc.ErrorCode.ParseError, "Parse error: the body could not be read")
        ))
      )
    )

  const post = (request: HttpServerRequest.HttpServerRequest, auth: McpAuth.AuthInfo | undefined) =>
    Effect.gen(function*() {
      const headers = request.headers
      if (!acceptsPost(headers["accept"])) {
        return errorResponse(406, JsonRpc.ErrorCode.ServerError, "Not Acceptable: accept both application/json and text/event-stream")
      }
      if (mediaTypes(headers["content-type"])[0] !== "application/json") {
        return errorResponse(415, JsonRpc.ErrorCode.ServerError, "Unsupported Media Type: the body must be application/json")
      }
      const body = yield* readBody(request)
      if (Result.isFailure(body)) return body.failure
      const batch = Array.isArray(body.success)
      const values: ReadonlyArray<unknown> = batch ? body.success as ReadonlyArray<unknown> : [body.success]
      if (values.length === 0) return errorResponse(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: empty batch")
      const messages: Array<JsonRpc.Request | JsonRpc.Notification | JsonRpc.SuccessResponse | JsonRpc.ErrorResponse> = []
      let requests = 0
      let initialize: JsonRpc.Request | undefined
      for (const value of values) {
        const classified = JsonRpc.classify(value)
        if (classified._tag === "Invalid") {
          return errorResponse(400, JsonRpc.ErrorCode.InvalidRequest, `Invalid Request: ${classified.reason}`, {
            id: classified.id
          })
        }
        messages.push(classified.message)
        if (classified._tag === "Request") {
          requests++
          if (classified.message.method === McpSchema.Initialize.name) initialize = classified.message
        }
      }
      if (initialize !== undefined && batch) {
        return errorResponse(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: initialize must not be batched")
      }
      if (auth !== undefined) {
        const refusal = bearer!.authorize(auth, messages)
        if (refusal !== undefined) return refused(refusal)
      }
      if (stateless) return yield* postStateless(messages, requests, batch, initialize, headers[PROTOCOL_VERSION], auth)
      if (initialize !== undefined) return yield* postInitialize(initialize, auth)

      const session = findSession(headers, auth)
      if (!("inbox" in session)) return session
      const versionError = checkVersion(headers)
      if (versionError !== undefined) return versionError
      touch(session)
      const version = yield* versionOf(session)
      if (batch && !acceptsBatches(version)) {
        return errorResponse(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: JSON-RPC batches are not supported")
      }
      if (requests === 0) {
        for (const message of messages) offer(session, message)
        return accepted
      }
      // each answer is routed by its id: an id must name one request at a time
      const ids = new Set<JsonRpc.RequestId>()
      for (const message of messages) {
        if (!("method" in message && "id" in message)) continue
        if (session.inflight.has(message.id) || ids.has(message.id)) {
          return errorResponse(400, JsonRpc.ErrorCode.InvalidRequest, `Invalid Request: request id ${message.id} is in use`, {
            id: message.id
          })
        }
        ids.add(message.id)
      }
      return yield* openExchange(session, messages, requests, batch, auth)
    })

  const offer = (session: Session, message: JsonRpc.Message) => {
    if ("method" in message && !("id" in message) && message.method === McpSchema.Cancelled.name) {
      cancelled(session, message)
    }
    Queue.offerUnsafe(session.inbox, message)
  }

  const openExchange = (
    session: Session,
    messages: ReadonlyArray<JsonRpc.Message>,
    requests: number,
    batch: boolean,
    auth: McpAuth.AuthInfo | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const exchange: Exchange = {
      session,
      batch,
      pending: requests,
      responses: undefined,
      stream: undefined,
      reply: sseMode ? undefined : Deferred.makeUnsafe(),
      abandoned: false,
      auth
    }
    let response: HttpServerResponse.HttpServerResponse | undefined
    if (sseMode) {
      const stream = newStream(session, "post")
      exchange.stream = stream
      response = sseResponse(connect(session, stream, auth))
    }
    for (const message of messages) {
      if ("method" in message && "id" in message) session.inflight.set(message.id, exchange)
    }
    for (const message of messages) offer(session, message)
    if (response !== undefined) return Effect.succeed(response)
    return Deferred.await(exchange.reply!).pipe(
      Effect.onInterrupt(() => Effect.sync(() => {
        exchange.abandoned = true
      }))
    )
  }

  const postInitialize = (initialize: JsonRpc.Request, auth: McpAuth.AuthInfo | undefined) =>
    Effect.gen(function*() {
      if (sessions.size >= maxSessions) {
        return errorResponse(503, JsonRpc.ErrorCode.ServerError, "Service Unavailable: too many sessions", { id: initialize.id })
      }
      const session = yield* openSession(globalThis.crypto.randomUUID(), Bearer.principal(auth))
      const exchange: Exchange = {
        session,
        batch: false,
        pending: 1,
        responses: undefined,
        stream: undefined,
        reply: Deferred.makeUnsafe(),
        abandoned: false,
        auth
      }
      session.inflight.set(initialize.id, exchange)
      offer(session, initialize)
      const response = yield* Deferred.await(exchange.reply!).pipe(
        Effect.onInterrupt(() => closeSession(session))
      )
      const answer = exchange.responses?.[0]
      if (answer !== undefined && "error" in answer) {
        yield* closeSession(session)
        return response
      }
      return HttpServerResponse.setHeader(response, SESSION_ID, session.id!)
    })

  const postStateless = (
    messages: ReadonlyArray<JsonRpc.Message>,
    requests: number,
    batch: boolean,
    initialize: JsonRpc.Request | undefined,
    versionHeader: string | undefined,
    auth: McpAuth.AuthInfo | undefined
  ) =>
    Effect.gen(function*() {
      if (requests === 0) return accepted
      if (versionHeader !== undefined && !isSupported(versionHeader)) return unsupportedVersion(versionHeader)
      const version = versionHeader ?? "2025-03-26"
      if (batch && !acceptsBatches(version)) {
        return errorResponse(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: JSON-RPC batches are not supported")
      }
      if (sessions.size >= maxSessions) return errorResponse(503, JsonRpc.ErrorCode.ServerError, "Service Unavailable: too many sessions")
      const session = yield* openSession(undefined, undefined)
      if (initialize === undefined) {
        // no session remembers the handshake: each request gets its own
        Queue.offerUnsafe(
          session.inbox,
          JsonRpc.request(STATELESS_INIT_ID, McpSchema.Initialize.name, {
            protocolVersion: version,
            capabilities: {},
            clientInfo: { name: "stateless-http-client", version: "0" }
          })
        )
        Queue.offerUnsafe(session.inbox, JsonRpc.notification(McpSchema.Initialized.name, {}))
      }
      const response = yield* openExchange(session, messages, requests, batch, auth).pipe(
        Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : closeSession(session))
      )
      // an SSE answer closes the session when its stream ends
      return response.body._tag === "Stream" ? response : yield* Effect.as(closeSession(session), response)
    })

  // ---------------------------------------------------------------------------
  // GET, DELETE, checks
  // ---------------------------------------------------------------------------

  // with auth, a session exists only for the user who opened it: another
  // user's token gets the answer of an unknown id (nothing tells it apart)
  const findSession = (headers: Readonly<Record<string, string | undefined>>, auth: McpAuth.AuthInfo | undefined) => {
    const id = headers[SESSION_ID]
    if (id === undefined) return errorResponse(400, JsonRpc.ErrorCode.ServerError, "Bad Request: the Mcp-Session-Id header is required")
    const session = sessions.get(id)
    if (session === undefined || session.id === undefined) return errorResponse(404, JsonRpc.ErrorCode.SessionNotFound, "Session not found")
    if (bearer !== undefined && session.principal !== Bearer.principal(auth)) {
      return errorResponse(404, JsonRpc.ErrorCode.SessionNotFound, "Session not found")
    }
    return session
  }

  const isSupported = (version: string) => (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)

  const unsupportedVersion = (version: string) =>
    errorResponse(
      400,
      JsonRpc.ErrorCode.ServerError,
      `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${McpSchema.SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`
    )

  const checkVersion = (headers: Readonly<Record<string, string | undefined>>) => {
    const version = headers[PROTOCOL_VERSION]
    return version === undefined || isSupported(version) ? undefined : unsupportedVersion(version)
  }

  const get = (request: HttpServerRequest.HttpServerRequest, auth: McpAuth.AuthInfo | undefined) =>
    Effect.gen(function*() {
      const headers = request.headers
      if (!acceptsSse(headers["accept"])) return errorResponse(406, JsonRpc.ErrorCode.ServerError, "Not Acceptable: accept text/event-stream")
      const session = findSession(headers, auth)
      if (!("inbox" in session)) return session
      const versionError = checkVersion(headers)
      if (versionError !== undefined) return versionError
      touch(session)
      yield* versionOf(session)
      const lastEventId = headers[LAST_EVENT_ID]
      if (lastEventId !== undefined && lastEventId !== "") return yield* resume(session, lastEventId, auth)
      if (session.get !== undefined && session.get.owner !== undefined) {
        return errorResponse(409, JsonRpc.ErrorCode.ServerError, "Conflict: the session's GET stream is already open")
      }
      // a GET stream that cannot be resumed ends with its connection
      const stream = session.get !== undefined && !session.get.closed ? session.get : newStream(session, "get")
      session.get = stream
      stream.priming = primes(session)
      return sseResponse(connect(session, stream, auth, SseStream.COMMENT))
    })

  const unknownEvent = () => errorResponse(400, JsonRpc.ErrorCode.ServerError, "Bad Request: unknown Last-Event-ID")

  const resume = (session: Session, lastEventId: string, auth: McpAuth.AuthInfo | undefined) =>
    Effect.gen(function*() {
      const store = session.store
      if (store === undefined) return unknownEvent()
      const found = yield* Effect.option(store.replayAfter(lastEventId))
      if (Option.isNone(found) || Option.isNone(found.value)) return unknownEvent()
      const streamId = found.value.value.streamId
      if (!streamId.startsWith(`${session.id}/`)) return unknownEvent()
      const stream = session.streams.get(streamId)
      if (stream === undefined) {
        // a finished stream: replay what is left, then end
        const text = found.value.value.events.map((event) => SseStream.encodeEvent(event.id, event.message)).join("")
        return sseResponse(Stream.make(new TextEncoder().encode(text === "" ? SseStream.COMMENT : text)))
      }
      // take the stream over, let a write in progress finish, then replay
      const connection = SseStream.attach(stream)
      yield* SseStream.awaitIdle(stream)
      const replay = yield* Effect.option(store.replayAfter(lastEventId))
      const events = Option.isSome(replay) && Option.isSome(replay.value) ? replay.value.value.events : []
      let prefix = SseStream.COMMENT
      for (const event of events) prefix += SseStream.encodeEvent(event.id, event.message)
      stream.priming = false
      return sseResponse(
        untilExpiry(SseStream.body(stream, connection, { prefix, retry, onEnd: streamEnded(session, stream) }), auth)
      )
    })

  const del = (request: HttpServerRequest.HttpServerRequest, auth: McpAuth.AuthInfo | undefined) =>
    Effect.gen(function*() {
      const session = findSession(request.headers, auth)
      if (!("inbox" in session)) return session
      const versionError = checkVersion(request.headers)
      if (versionError !== undefined) return versionError
      yield* closeSession(session)
      return HttpServerResponse.empty({ status: 204 })
    })

  const notAllowed = errorResponse(405, JsonRpc.ErrorCode.ServerError, "Method Not Allowed", {
    headers: { allow: stateless ? "POST" : "GET, POST, DELETE" }
  })

  const dispatch = (
    request: HttpServerRequest.HttpServerRequest,
    auth: McpAuth.AuthInfo | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    switch (request.method) {
      case "POST":
        return post(request, auth)
      case "GET":
        return stateless ? Effect.succeed(notAllowed) : get(request, auth)
      case "DELETE":
        return stateless ? Effect.succeed(notAllowed) : del(request, auth)
      default:
        return Effect.succeed(notAllowed)
    }
  }

  // the guard, then CORS (preflights need no token), then the bearer check
  const handle = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const forbidden = guard(request.headers)
    if (forbidden !== undefined) {
      const response = errorResponse(403, JsonRpc.ErrorCode.ServerError, forbidden)
      return Effect.succeed(cors === undefined ? response : HttpServerResponse.setHeader(response, "vary", "Origin"))
    }
    if (cors === undefined) return authenticated(request)
    const origin = request.headers["origin"]
    if (request.method === "OPTIONS") {
      return Effect.succeed(HttpServerResponse.empty({
        status: 204,
        headers: { ...cors.preflight(origin, (name) => request.headers[name]), allow: allowed }
      }))
    }
    const headers = cors.headers(origin)
    return Effect.map(authenticated(request), (response) => HttpServerResponse.setHeaders(response, headers))
  }

  const authenticated = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    if (bearer === undefined) return dispatch(request, undefined)
    return Effect.flatMap(
      bearer.authenticate(request.headers["authorization"]),
      (auth) => Bearer.isRefusal(auth) ? Effect.succeed(refused(auth)) : dispatch(request, auth)
    )
  }

  // ---------------------------------------------------------------------------
  // reaping idle sessions
  // ---------------------------------------------------------------------------

  // requests in flight, or a client listening on the GET stream (a POST
  // stream with nothing in flight is only writing out its end)
  const busy = (session: Session) => session.inflight.size > 0 || session.get?.owner !== undefined

  // sleeps until the earliest deadline (deadlines only move later, and a new
  // session's is later than any computed before it), a second at least, so
  // that sessions expiring close together are closed in one pass
  const reap: Effect.Effect<never> = Effect.suspend(() => {
    const at = now()
    let next = at + idleMillis
    const idle: Array<Session> = []
    for (const session of sessions.values()) {
      if (busy(session)) continue
      const deadline = session.lastActivity + idleMillis
      if (deadline <= at) idle.push(session)
      else if (deadline < next) next = deadline
    }
    return Effect.forEach(idle, closeSession, { discard: true }).pipe(
      Effect.andThen(Effect.sleep(Math.max(next - at, Math.min(1000, idleMillis)))),
      Effect.andThen(reap)
    )
  })

  yield* Effect.forkScoped(reap)
  yield* Effect.addFinalizer(() => Effect.forEach(Array.from(sessions.values()), closeSession, { discard: true }))
  yield* router.add("*", path, handle)
})

// -----------------------------------------------------------------------------
// Inside handlers
// -----------------------------------------------------------------------------

/** @internal */
export const closeSseStream: Effect.Effect<void> = Effect.withFiber((fiber) => {
  const session = fiber.getRef(CurrentSession)
  const origin = fiber.getRef(RequestOrigin)
  if (session === undefined || origin === undefined) return Effect.void
  const stream = session.inflight.get(origin)?.stream
  if (stream !== undefined) SseStream.kick(stream)
  return Effect.void
})

/** @internal */
export const currentSessionId: Effect.Effect<Option.Option<string>> = Effect.withFiber((fiber) =>
  Effect.succeed(Option.fromUndefinedOr(fiber.getRef(CurrentSession)?.id))
)
