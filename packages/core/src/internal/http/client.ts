/**
 * The Streamable HTTP client transport (MCP 2025-03-26 and later): every
 * frame is a POST; its answer (202, a JSON body or an SSE stream) is merged
 * into `incoming`, and so is the session's GET stream. SSE streams are
 * resumed with `Last-Event-ID` after the server's `retry` (or the reconnect
 * schedule); a session that the server forgot (404) is re-initialized
 * transparently; the HTTP+SSE transport is the fallback of a server
 * that refuses the first POST.
 *
 * The transport looks at one exchange only: `initialize`, for the session id,
 * the negotiated protocol version and the replay. A 2026-07-28 request (its
 * `_meta` names the version) is sent by `modernClient.ts`.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import { constTrue } from "effect/Function"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpHttpClient from "../../McpHttpClient.ts"
import * as McpSchema from "../../McpSchema.ts"
import type { McpTransport } from "../../McpTransport.ts"
import * as Stateless from "../era/stateless.ts"
import * as SseClient from "../sse/client.ts"
import * as ClientCommon from "./clientCommon.ts"
import * as ClientHooks from "./clientHooks.ts"
import * as ClientModels from "./clientModels.ts"
import * as ClientPost from "./clientPost.ts"
import * as ClientStream from "./clientStream.ts"
import * as ModernClient from "./modernClient.ts"

/** @internal */
export type Options = McpHttpClient.Options

/** @internal */
export const defaultReconnect: Schedule.Schedule<unknown, unknown> = ClientModels.defaultReconnect

/** Statuses that send a refused first `initialize` to the sse transport. */
const LEGACY_STATUSES: ReadonlySet<number> = new Set([400, 404, 405])

const isOk = (response: HttpClientResponse.HttpClientResponse) => response.status >= 200 && response.status < 300

const untraced = Context.make(HttpClient.TracerDisabledWhen, constTrue).pipe(
  Context.add(HttpClient.TracerPropagationEnabled, false)
)

/** @internal */
export const make = Effect.fnUntraced(function*(
  options: Options
): Effect.fn.Return<McpTransport["Service"], McpError.McpError, HttpClient.HttpClient | Scope.Scope> {
  const http = yield* HttpClient.HttpClient
  const scope = yield* Effect.scope
  const url = yield* ClientCommon.parseUrl(options.url)
  const reconnect = options.reconnect ?? defaultReconnect
  const maxReinitializations = options.maxReinitializations ?? 1
  const onListenEnd = yield* ClientHooks.OnListenEnd

  const incoming = yield* Queue.unbounded<unknown, McpError.McpError | Cause.Done>()
  const fibers = yield* FiberSet.make<void>()

  let closed = false
  let sessionId: string | undefined
  let protocolVersion: string | undefined
  // the initialize exchange, remembered for a transparent re-initialize
  let initializeFrame: JsonRpc.Request | undefined
  let initializedFrame: JsonRpc.Notification | undefined
  // after a fallback, every frame goes over the HTTP+SSE connection
  let sse: SseClient.Connection | undefined
  // the re-initialize under way, for the session id that got 404
  let reinit: { readonly stale: string; readonly done: Deferred.Deferred<void, McpError.McpError> } | undefined
  // the GET stream's fiber
  let listener: Fiber.Fiber<void> | undefined

  const offer = (value: unknown): Effect.Effect<void> => Effect.asVoid(Queue.offer(incoming, value))

  const background = (effect: Effect.Effect<void>): Effect.Effect<Fiber.Fiber<void>> =>
    FiberSet.run(fibers)(
      effect.pipe(
        Effect.catchCause((cause) => Effect.logWarning("MCP HTTP client: a background task failed", cause)),
        Effect.provideService(Logger.LogToStderr, true)
      )
    )

  // ---------------------------------------------------------------------------
  // requests
  // ---------------------------------------------------------------------------

  // the transport's own POSTs and GETs are not traced unless asked: a span per
  // message costs more than the message on loopback
  const execute = ClientCommon.authorized((request) => {
    const sent = http.execute(request).pipe(Effect.mapError(ClientCommon.requestError))
    return options.tracing === true ? sent : Effect.provideContext(sent, untraced)
  }, options.auth)

  // the POST without its body is built once per session id, version and headers
  const postFrame = ClientPost.make(url, options.headers, execute)
  const post = (frame: JsonRpc.Frame, session: string | undefined, withVersion: boolean) =>
    postFrame(frame, session, withVersion ? protocolVersion : undefined)

  const get = (lastEventId: string | undefined) =>
    Effect.flatMap(
      ClientCommon.resolveHeaders(options.headers),
      (custom) =>
        execute(ClientCommon.withHeaders(HttpClientRequest.get(url), custom, {
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": protocolVersion,
          "last-event-id": lastEventId
        }))
    )

  const terminate = (session: string) =>
    Effect.flatMap(
      ClientCommon.resolveHeaders(options.headers),
      (custom) =>
        execute(ClientCommon.withHeaders(HttpClientRequest.delete(url), custom, {
          "mcp-session-id": session,
          "mcp-protocol-version": protocolVersion
        }))
    ).pipe(
      Effect.flatMap((response) =>
        Effect.andThen(
          ClientCommon.discard(response),
          isOk(response) || response.status === 405 || response.status === 404
            ? Effect.void
            : Effect.logDebug(`DELETE of the MCP session answered HTTP ${response.status}`)
        )
      )
    )

  // ---------------------------------------------------------------------------
  // SSE streams
  // ---------------------------------------------------------------------------

  // reads one connection of an SSE stream (see `clientStream.ts`)
  const readStream = ClientStream.reader(url, options.maxEventSize)

  // Follows one logical SSE stream across connections: the response of a POST
  // (`first`) or the session's GET stream (`first` undefined). After a
  // connection ends, waits for the server's `retry` or the schedule's delay,
  // then resumes with a GET carrying `Last-Event-ID`. Stops when the stream
  // owed nothing more, when it cannot be resumed, when the server refuses
  // (405, or 404: the session is gone), or when the schedule gives up.
  // `read`: the first connection was read already (a whole body), and this is how it went.
  const follow = (
    kind: "post" | "get",
    first: HttpClientResponse.HttpClientResponse | undefined,
    route: (value: unknown) => Effect.Effect<void>,
    expected: number,
    connected?: Deferred.Deferred<void>,
    read?: { readonly cursor: ClientStream.Cursor; readonly outcome: ClientStream.Outcome }
  ): Effect.Effect<void> =>
    Effect.gen(function*() {
      const cursor: ClientStream.Cursor = read?.cursor ?? { lastEventId: undefined, retry: undefined }
      let step = yield* Schedule.toStep(reconnect)
      let response = first
      let connectNow = first === undefined && read === undefined
      let done = read?.outcome
      // every pass reads a connection or spends a step of the schedule, which is finite
      while (!closed) {
        if (response !== undefined) {
          done = yield* readStream(response, cursor, route, expected)
          response = undefined
          if (kind === "get" && !closed) yield* onListenEnd
        }
        if (done !== undefined) {
          const outcome = done
          done = undefined
          if (outcome.answered || closed) return
          if (outcome.events > 0) step = yield* Schedule.toStep(reconnect)
          if (kind === "post" && cursor.lastEventId === undefined) {
            return yield* Effect.logWarning(
              "the SSE stream of a request ended before its response, without an event id to resume from"
            )
          }
        }
        if (!connectNow) {
          const now = yield* Clock.currentTimeMillis
          const next = yield* Effect.exit(step(now, undefined))
          if (Exit.isFailure(next)) {
            return yield* Effect.logWarning(
              `gave up reconnecting the ${kind === "get" ? "GET" : "request's"} SSE stream of ${url}`
            )
          }
          yield* Effect.sleep(cursor.retry !== undefined ? Duration.millis(cursor.retry) : next.value[1])
          if (closed) return
        }
        connectNow = false
        const session = sessionId
        const attempt = yield* Effect.exit(get(cursor.lastEventId))
        if (connected !== undefined) yield* Deferred.succeed(connected, undefined)
        if (Exit.isFailure(attempt)) continue
        const answer = attempt.value
        if (isOk(answer) && ClientCommon.mediaType(answer) === "text/event-stream") {
          response = answer
          continue
        }
        yield* ClientCommon.discard(answer)
        if (answer.status === 405) {
          return yield* kind === "get"
            ? Effect.logDebug(`${url} offers no GET stream (405)`)
            : Effect.logWarning(`${url} refused to resume a request's SSE stream (405)`)
        }
        if (answer.status === 404 && session !== undefined && initializeFrame !== undefined) {
          // the session is gone: a new one (which opens its own GET stream)
          yield* Effect.logDebug(`the MCP session expired (404 on GET); re-initializing`)
          yield* background(Effect.ignore(reinitialize(session)))
          return
        }
      }
    }).pipe(Effect.ensuring(connected === undefined ? Effect.void : Deferred.succeed(connected, undefined)))

  // Opens the session's GET stream and waits (a little) until its first
  // connection is answered, so that what the server sends right after the
  // handshake has a stream to go to.
  const startListening = Effect.suspend(() => {
    if (options.listen === false || closed) return Effect.void
    const connected = Deferred.makeUnsafe<void>()
    return background(follow("get", undefined, offer, Infinity, connected)).pipe(
      Effect.flatMap((fiber) => {
        listener = fiber
        return Deferred.await(connected)
      }),
      Effect.timeoutOrElse({ duration: options.listenTimeout ?? "2 seconds", orElse: () => Effect.void })
    )
  })

  const stopListening = Effect.suspend(() => {
    const fiber = listener
    listener = undefined
    return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
  })

  // ---------------------------------------------------------------------------
  // answers to POSTs
  // ---------------------------------------------------------------------------

  // Delivers the answer of a POST: nothing for 202 or a frame without
  // requests, the values of a JSON body, or the SSE stream in the background.
  const deliver = (
    response: HttpClientResponse.HttpClientResponse,
    frame: JsonRpc.Frame,
    route: (value: unknown) => Effect.Effect<void>
  ): Effect.Effect<void, McpError.McpError> => {
    const expected = ClientCommon.requestCount(frame)
    if (response.status === 202 || expected === 0) return ClientCommon.discard(response)
    const headers = response.headers
    const type = ClientCommon.mediaTypeOf(headers)
    if (type === "text/event-stream") {
      if (ClientCommon.wholeSseLength(response, headers) === undefined) {
        return Effect.asVoid(background(follow("post", response, route, expected)))
      }
      // a whole body is read here, as a JSON one; only a stream that ended
      // before its answers is followed in the background
      const cursor: ClientStream.Cursor = { lastEventId: undefined, retry: undefined }
      return Effect.flatMap(readStream(response, cursor, route, expected), (outcome) =>
        outcome.answered
          ? Effect.void
          : Effect.asVoid(background(follow("post", undefined, route, expected, undefined, { cursor, outcome }))))
    }
    if (type === "application/json") {
      return ClientCommon.readText(response, options.maxResponseBytes, headers).pipe(
        Effect.flatMap((text) => Effect.forEach(ClientCommon.parseJson(text), route, { discard: true }))
      )
    }
    return Effect.andThen(
      ClientCommon.discard(response),
      Effect.fail(
        McpError.transport(`POST ${url} answered a request with ${headers["content-type"] ?? "no content type"}`)
      )
    )
  }

  // ---------------------------------------------------------------------------
  // transparent re-initialize
  // ---------------------------------------------------------------------------

  // A new session in place of `stale`: replays the remembered initialize
  // (its answer is swallowed) and initialized, then opens the GET stream.
  // Runs once per stale session, in the background; callers wait for it.
  const reinitialize = (stale: string): Effect.Effect<void, McpError.McpError> =>
    Effect.suspend(() => {
      if (sessionId !== stale) return Effect.void
      if (reinit !== undefined && reinit.stale === stale) return Deferred.await(reinit.done)
      const done = Deferred.makeUnsafe<void, McpError.McpError>()
      reinit = { stale, done }
      const run = Effect.gen(function*() {
        const init = initializeFrame!
        yield* stopListening
        const response = yield* post(init, undefined, false)
        if (!isOk(response)) {
          return yield* Effect.flatMap(
            ClientCommon.statusError(response, "re-initializing the expired session"),
            Effect.fail
          )
        }
        const fresh = response.headers["mcp-session-id"]
        const answer = yield* ClientCommon.awaitAnswer(
          response,
          init.id,
          (route) => readStream(response, { lastEventId: undefined, retry: undefined }, route, 1),
          offer,
          options.maxResponseBytes
        )
        if (!JsonRpc.isSuccess(answer)) {
          return yield* McpError.transport(`the server refused the replayed initialize: ${answer.error.message}`)
        }
        const version = ClientCommon.protocolVersionOf(answer)
        if (version !== undefined && version !== protocolVersion) {
          yield* Effect.logWarning(`the new MCP session negotiated ${version}, the old one ${protocolVersion}`)
          protocolVersion = version
        }
        sessionId = fresh
        if (initializedFrame !== undefined) {
          const accepted = yield* post(initializedFrame, fresh, true)
          if (!isOk(accepted)) {
            return yield* Effect.flatMap(
              ClientCommon.statusError(accepted, "re-initializing the expired session"),
              Effect.fail
            )
          }
          yield* ClientCommon.discard(accepted)
        }
        yield* Effect.logDebug(`the MCP session ${stale} expired; continuing in ${fresh}`)
        yield* startListening
      })
      return background(
        Effect.exit(run).pipe(
          Effect.flatMap((exit) => {
            reinit = undefined
            return Deferred.done(done, exit)
          })
        )
      ).pipe(Effect.andThen(Deferred.await(done)))
    })

  // ---------------------------------------------------------------------------
  // sending
  // ---------------------------------------------------------------------------

  const sendFrame = (frame: JsonRpc.Frame, reinitialized: number): Effect.Effect<void, McpError.McpError> =>
    Effect.gen(function*() {
      const pending = reinit
      if (pending !== undefined) yield* Effect.ignore(Deferred.await(pending.done))
      const session = sessionId
      const response = yield* post(frame, session, true)
      if (isOk(response)) {
        yield* deliver(response, frame, offer)
        if (ClientCommon.isInitialized(frame)) yield* startListening
        return
      }
      const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
      if (response.status === 404 && session !== undefined && initializeFrame !== undefined) {
        if (reinitialized >= maxReinitializations) {
          return yield* ClientCommon.statusErrorWithBody(
            response,
            body,
            `the MCP session expired and ${reinitialized} re-initialization(s) did not help`
          )
        }
        yield* reinitialize(session)
        // an answer to a request of the old session means nothing to the new one
        if (ClientCommon.requestCount(frame) === 0 && !Array.isArray(frame) && ClientCommon.isResponse(frame)) {
          return yield* Effect.logDebug(`a response to request ${frame.id} of the expired session was dropped`)
        }
        return yield* sendFrame(frame, reinitialized + 1)
      }
      return yield* ClientCommon.statusErrorWithBody(response, body)
    })

  const sendInitialize = (frame: JsonRpc.Request): Effect.Effect<void, McpError.McpError> =>
    Effect.gen(function*() {
      initializeFrame = frame
      const response = yield* post(frame, undefined, false)
      const route = (value: unknown) => {
        if (ClientCommon.isResponse(value) && value.id === frame.id) {
          protocolVersion = ClientCommon.protocolVersionOf(value)
        }
        return offer(value)
      }
      if (isOk(response)) {
        sessionId = response.headers["mcp-session-id"]
        return yield* deliver(response, frame, route)
      }
      const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
      const refused = ClientCommon.statusErrorWithBody(response, body)
      if (
        options.fallbackToSse === false || !LEGACY_STATUSES.has(response.status) ||
        ClientCommon.isJsonRpcErrorBody(body)
      ) {
        return yield* refused
      }
      yield* Effect.logDebug(
        `${url} refused the initialize POST (HTTP ${response.status}); trying the HTTP+SSE transport`
      )
      const connection = yield* SseClient.connect(
        {
          url,
          headers: options.headers,
          auth: options.auth,
          endpointTimeout: options.endpointTimeout,
          maxEventSize: options.maxEventSize
        },
        {
          offer,
          end: Effect.asVoid(Queue.end(incoming)),
          fail: (error) => Effect.asVoid(Queue.fail(incoming, error))
        },
        background
      ).pipe(
        Effect.provideService(HttpClient.HttpClient, http),
        Scope.provide(scope),
        // a legacy server that asked for authorization the fallback could not get fails with that
        Effect.mapError((error) =>
          error.reason._tag === "AuthError" ? error : McpError.transport(
            `${refused.message}; the HTTP+SSE fallback failed too: ${error.message}`,
            { status: response.status, cause: error }
          )
        )
      )
      sse = connection
      return yield* connection.send(frame)
    })

  // 2026-07-28 requests: no session, the standard headers (modernClient.ts)
  const modern = ModernClient.make({
    url,
    headers: options.headers,
    execute,
    deliver: (response, frame) => deliver(response, frame, offer),
    readStream: (response) => readStream(response, { lastEventId: undefined, retry: undefined }, offer, 1),
    offer,
    background,
    isClosed: () => closed
  })

  const send = (frame: JsonRpc.Frame): Effect.Effect<void, McpError.McpError> =>
    Effect.suspend(() => {
      if (closed) return Effect.fail(McpError.closed("transport closed"))
      if (sse !== undefined) return sse.send(frame)
      if (!Array.isArray(frame) && "method" in frame) {
        const version = Stateless.versionOf(frame.params)
        if (typeof version === "string" && McpSchema.isModernProtocolVersion(version)) {
          return modern.send(frame, version)
        }
        // a connection without a legacy session is a modern one
        if (frame.method === McpSchema.Cancelled.name && initializeFrame === undefined) return modern.cancel(frame)
      }
      if (ClientCommon.isInitialize(frame) && initializeFrame === undefined) return sendInitialize(frame)
      if (ClientCommon.isInitialized(frame)) initializedFrame = frame
      return sendFrame(frame, 0)
    })

  // ---------------------------------------------------------------------------
  // closing
  // ---------------------------------------------------------------------------

  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      closed = true
      yield* FiberSet.clear(fibers)
      const session = sessionId
      if (sse === undefined && session !== undefined) {
        yield* terminate(session).pipe(
          Effect.timeout(options.terminateTimeout ?? "5 seconds"),
          Effect.catchCause((cause) => Effect.logDebug("DELETE of the MCP session failed", cause))
        )
      }
      yield* Queue.end(incoming)
    })
  )

  return {
    incoming: Stream.fromQueue(incoming),
    send,
    blockingSend: true,
    sendsParamHeaders: true
  }
})
