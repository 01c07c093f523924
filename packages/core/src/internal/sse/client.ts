/**
 * The client side of the HTTP+SSE transport of protocol revision 2024-11-05:
 * a GET opens an SSE stream whose first event, `endpoint`, names the URL to
 * POST messages to; every server message arrives on that stream as a
 * `message` event. The session lives as long as the stream: when it ends,
 * the connection is over (there is nothing to resume).
 *
 * Used on its own by `McpSseClient` (`makeTransport`, loaded when a transport
 * is made) and as the fallback of `McpHttpClient`.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Sse from "effect/encoding/Sse"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../JsonRpc.ts"
import type * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpSseClient from "../../McpSseClient.ts"
import { McpTransport } from "../../McpTransport.ts"
import * as ClientCommon from "../http/clientCommon.ts"

/** @internal */
export interface Options {
  readonly url: string
  readonly headers?: ClientCommon.HeadersOption | undefined
  readonly auth?: McpAuth.ClientAuth | undefined
  /** How long to wait for the `endpoint` event. Default 30 s. */
  readonly endpointTimeout?: Duration.Input | undefined
  readonly maxEventSize?: number | undefined
}

/** Where the connection delivers what it receives. */
export interface Sink {
  readonly offer: (value: unknown) => Effect.Effect<void>
  /** The stream ended: the server closed the session. */
  readonly end: Effect.Effect<void>
  readonly fail: (error: McpError.McpError) => Effect.Effect<void>
}

/** @internal */
export interface Connection {
  /** The URL messages are POSTed to, from the `endpoint` event. */
  readonly endpoint: string
  readonly send: (frame: JsonRpc.Frame) => Effect.Effect<void, McpError.McpError>
  /** The protocol version read from the `initialize` exchange, once there was one. */
  readonly protocolVersion: () => string | undefined
}

/** @internal */
export const DEFAULT_ENDPOINT_TIMEOUT: Duration.Input = "30 seconds"

/**
 * Opens the stream and waits for the `endpoint` event. The reading fiber is
 * started with `fork`, so that it lives where the caller wants it to.
 *
 * @internal
 */
export const connect = Effect.fnUntraced(function*(
  options: Options,
  sink: Sink,
  fork: (effect: Effect.Effect<void>) => Effect.Effect<Fiber.Fiber<void>>
): Effect.fn.Return<Connection, McpError.McpError, HttpClient.HttpClient> {
  const http = yield* HttpClient.HttpClient
  const execute = ClientCommon.authorized(
    (request) => Effect.mapError(http.execute(request), ClientCommon.requestError),
    options.auth
  )
  const base = options.url
  const custom = yield* ClientCommon.resolveHeaders(options.headers)
  const response = yield* execute(
    ClientCommon.withHeaders(HttpClientRequest.get(base), custom, { accept: "text/event-stream" })
  )
  if (response.status < 200 || response.status >= 300) {
    return yield* Effect.flatMap(ClientCommon.statusError(response, "opening the SSE stream"), Effect.fail)
  }
  if (ClientCommon.mediaType(response) !== "text/event-stream") {
    yield* ClientCommon.discard(response)
    return yield* McpError.transport(
      `GET ${base} answered ${response.headers["content-type"] ?? "no content type"}, not an SSE stream`
    )
  }

  const origin = Result.getOrUndefined(Result.try(() => new URL(base).origin))
  const endpoint = yield* Deferred.make<string, McpError.McpError>()
  // the id of the initialize request in flight, then the version it settled
  let initializeId: JsonRpc.RequestId | undefined
  let protocolVersion: string | undefined

  const onEvent = (event: Sse.Event): Effect.Effect<void> => {
    if (event.event === "endpoint") {
      if (Deferred.isDoneUnsafe(endpoint)) return Effect.logWarning("a second SSE endpoint event was ignored")
      const resolved = Result.try(() => new URL(event.data.trim(), base))
      if (Result.isFailure(resolved)) {
        return Deferred.fail(endpoint, McpError.transport(`the SSE endpoint event named an invalid URL: ${event.data}`))
      }
      if (resolved.success.origin !== origin) {
        return Deferred.fail(
          endpoint,
          McpError.transport(`the SSE endpoint ${resolved.success.origin} is not on the origin of ${base}; refused`)
        )
      }
      return Deferred.succeed(endpoint, resolved.success.href).pipe(Effect.asVoid)
    }
    if (!ClientCommon.isMessageEvent(event)) return Effect.void
    return Effect.forEach(ClientCommon.parseJson(event.data), (value) => {
      if (initializeId !== undefined && ClientCommon.isResponse(value) && value.id === initializeId) {
        protocolVersion = ClientCommon.protocolVersionOf(value) ?? protocolVersion
        initializeId = undefined
      }
      return sink.offer(value)
    }, { discard: true })
  }

  const read = ClientCommon.decodeSse(response.stream, options.maxEventSize).pipe(
    Stream.mapError(ClientCommon.requestError),
    Stream.runForEach((item) => {
      switch (item._tag) {
        case "Event":
          return onEvent(item)
        case "TooLarge":
          return Effect.logWarning("an SSE event over the size limit was dropped")
        case "Retry":
          return Effect.void
      }
    }),
    Effect.matchEffect({
      onSuccess: () =>
        Deferred.fail(endpoint, McpError.transport("the SSE stream ended before its endpoint event")).pipe(
          Effect.andThen(sink.end)
        ),
      onFailure: (error) => {
        const failed = McpError.transport(`the SSE stream failed: ${error.message}`, { cause: error })
        return Deferred.fail(endpoint, failed).pipe(Effect.andThen(sink.fail(failed)))
      }
    })
  )
  const reader = yield* fork(read)

  const url = yield* Deferred.await(endpoint).pipe(
    Effect.timeoutOrElse({
      duration: options.endpointTimeout ?? DEFAULT_ENDPOINT_TIMEOUT,
      orElse: () =>
        Effect.fail(McpError.transport(
          `GET ${base} opened an SSE stream but sent no endpoint event within ${
            Duration.format(Duration.fromInputUnsafe(options.endpointTimeout ?? DEFAULT_ENDPOINT_TIMEOUT))
          }`
        ))
    }),
    // a connection that never was must not end the sink later
    Effect.onError(() => Fiber.interrupt(reader))
  )

  const send = (frame: JsonRpc.Frame): Effect.Effect<void, McpError.McpError> =>
    Effect.gen(function*() {
      if (ClientCommon.isInitialize(frame)) initializeId = frame.id
      const headers = yield* ClientCommon.resolveHeaders(options.headers)
      const answer = yield* execute(ClientCommon.postFrame(url, frame, headers, {
        "mcp-protocol-version": protocolVersion
      }))
      if (answer.status >= 200 && answer.status < 300) return yield* ClientCommon.discard(answer)
      return yield* Effect.flatMap(ClientCommon.statusError(answer), Effect.fail)
    })

  return { endpoint: url, send, protocolVersion: () => protocolVersion }
})

/** `McpSseClient.make`. @internal */
export const makeTransport = Effect.fnUntraced(function*(
  options: McpSseClient.Options
): Effect.fn.Return<McpTransport["Service"], McpError.McpError, HttpClient.HttpClient | Scope.Scope> {
  const url = yield* ClientCommon.parseUrl(options.url)
  const incoming = yield* Queue.unbounded<unknown, McpError.McpError | Cause.Done>()
  const fibers = yield* FiberSet.make<void>()
  let closed = false
  const connection = yield* connect(
    { ...options, url },
    {
      offer: (value) => Effect.asVoid(Queue.offer(incoming, value)),
      end: Effect.asVoid(Queue.end(incoming)),
      fail: (error) => Effect.asVoid(Queue.fail(incoming, error))
    },
    (effect) => FiberSet.run(fibers)(Effect.provideService(effect, Logger.LogToStderr, true))
  )
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      closed = true
      return Effect.andThen(FiberSet.clear(fibers), Queue.end(incoming))
    })
  )
  return McpTransport.of({
    incoming: Stream.fromQueue(incoming),
    send: (frame) => closed ? Effect.fail(McpError.closed("transport closed")) : connection.send(frame),
    blockingSend: true,
    // HTTP+SSE exists only in the stateful era: no server/discover probe
    statefulOnly: true
  })
})
