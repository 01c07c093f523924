/**
 * What the HTTP client transports share: headers, status errors, reading
 * JSON-RPC values out of JSON bodies and SSE streams, and the little they
 * know about frames.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Sse from "effect/encoding/Sse"
import type * as Headers from "effect/http/Headers"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import { HttpStatusError } from "./clientModels.ts"

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

/** @internal */
export { HttpStatusError }

/** The transport error of an HTTP response with an unexpected status, carrying it (the body is read for the message). */
export const statusError = (
  response: HttpClientResponse.HttpClientResponse,
  context?: string
): Effect.Effect<McpError.McpError> =>
  Effect.map(
    response.text.pipe(Effect.orElseSucceed(() => "")),
    (body) => statusErrorWithBody(response, body, context)
  )

/** @internal */
export const statusErrorWithBody = (
  response: HttpClientResponse.HttpClientResponse,
  body: string,
  context?: string
): McpError.McpError => {
  const cause = new HttpStatusError({
    method: response.request.method,
    url: response.request.url,
    status: response.status,
    body
  })
  return McpError.transport(context === undefined ? cause.message : `${context}: ${cause.message}`, {
    status: response.status,
    cause
  })
}

/**
 * The transport error of a request that got no response at all (or whose body
 * could not be read): the client's message, then what went wrong on the wire,
 * e.g. `Transport error (POST http://127.0.0.1:1/mcp): connect ECONNREFUSED 127.0.0.1:1`.
 */
export const requestError = (error: HttpClientError.HttpClientError | McpError.McpError): McpError.McpError => {
  if (McpError.isMcpError(error)) return error
  const wire = rootMessage(error.reason.cause, 0)
  return McpError.transport(wire === "" || error.message.includes(wire) ? error.message : `${error.message}: ${wire}`, {
    cause: error
  })
}

/**
 * The message of the innermost cause: undici's own error (`connect
 * ECONNREFUSED ...`) is the reason's cause, fetch's is under a `fetch failed`.
 */
const rootMessage = (cause: unknown, depth: number): string => {
  if (cause === undefined || cause === null) return ""
  const inner = depth < 4 && Predicate.hasProperty(cause, "cause") ? rootMessage(cause.cause, depth + 1) : ""
  return inner !== "" ? inner : McpError.messageOf(cause)
}

// -----------------------------------------------------------------------------
// Requests
// -----------------------------------------------------------------------------

/** An absolute URL, normalised; anything else is a transport error. */
export const parseUrl = (url: string | URL): Effect.Effect<string, McpError.McpError> => {
  const parsed = Result.try(() => new URL(url))
  return Result.isSuccess(parsed)
    ? Effect.succeed(parsed.success.href)
    : Effect.fail(McpError.transport(`invalid MCP endpoint URL: ${String(url)}`))
}

/** Custom headers: fixed, or computed for each request (a token that is refreshed, ...). */
export type HeadersOption =
  | Readonly<Record<string, string>>
  | Effect.Effect<Readonly<Record<string, string>>, McpError.McpError>

/** @internal */
export const resolveHeaders = (
  headers: HeadersOption | undefined
): Effect.Effect<Readonly<Record<string, string>>, McpError.McpError> =>
  headers === undefined ? Effect.succeed({}) : Effect.isEffect(headers) ? headers : Effect.succeed(headers)

/** A request with the custom headers first, so that the protocol's own headers win. */
export const withHeaders = (
  request: HttpClientRequest.HttpClientRequest,
  custom: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string | undefined>>
): HttpClientRequest.HttpClientRequest => {
  let out = HttpClientRequest.setHeaders(request, custom)
  for (const [name, value] of Object.entries(own)) {
    if (value !== undefined) out = HttpClientRequest.setHeader(out, name, value)
  }
  return out
}

/**
 * A POST to `url` without a body, with the custom headers first, so that
 * the protocol's own (lower-case names) win: the headers are built once,
 * not copied for each one.
 */
export const postRequest = (
  url: string,
  custom: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string | undefined>>
): HttpClientRequest.HttpClientRequest => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(custom)) headers[name.toLowerCase()] = value
  for (const [name, value] of Object.entries(own)) {
    if (value !== undefined) headers[name] = value
  }
  return HttpClientRequest.post(url, { headers })
}

/** `request` with one frame as its JSON body. */
export const withFrame = (
  request: HttpClientRequest.HttpClientRequest,
  frame: JsonRpc.Frame
): HttpClientRequest.HttpClientRequest => HttpClientRequest.bodyText(request, JSON.stringify(frame), "application/json")

/** A POST of one frame as JSON. */
export const postFrame = (
  url: string,
  frame: JsonRpc.Frame,
  custom: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string | undefined>>
): HttpClientRequest.HttpClientRequest => withFrame(postRequest(url, custom, own), frame)

/** How a transport executes one request. */
export type Execute = (
  request: HttpClientRequest.HttpClientRequest
) => Effect.Effect<HttpClientResponse.HttpClientResponse, McpError.McpError>

/**
 * Executes requests with the `Authorization` header of `auth`. A refusal that
 * `auth` may answer (`401`, `403 insufficient_scope`) is passed to its
 * `challenge`, and the request is sent again with the new credentials, at
 * most `maxAttempts` times; the last refusal then fails as an `AuthError`.
 * Without `auth`, requests go out as they are.
 */
export const authorized = (execute: Execute, auth: McpAuth.ClientAuth | undefined): Execute => {
  if (auth === undefined) return execute
  const maxAttempts = auth.maxAttempts ?? 3
  const attempt = (
    request: HttpClientRequest.HttpClientRequest,
    retries: number
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, McpError.McpError> =>
    Effect.flatMap(auth.authorization(request.url), (authorization) => {
      const withAuthorization = authorization === undefined
        ? request
        : HttpClientRequest.setHeader(request, "authorization", authorization)
      const sending = auth.headers === undefined
        ? Effect.succeed(withAuthorization)
        : Effect.map(
          auth.headers({ method: request.method, url: request.url, authorization }),
          (headers) => HttpClientRequest.setHeaders(withAuthorization, headers)
        )
      return Effect.flatMap(Effect.flatMap(sending, execute), (response) => {
        if (response.status !== 401 && response.status !== 403) return Effect.succeed(response)
        const header = response.headers["www-authenticate"]
        const bearer = McpAuth.bearerChallenge(header)
        const dpop = McpAuth.dpopChallenge(header)
        if (!McpAuth.isChallenge(response.status, bearer ?? dpop)) return Effect.succeed(response)
        const challenge: McpAuth.Challenge = dpop === undefined
          ? { status: response.status, url: request.url, authorization, bearer }
          : {
            status: response.status,
            url: request.url,
            authorization,
            bearer,
            dpop,
            dpopNonce: response.headers["dpop-nonce"]
          }
        return Effect.andThen(
          discard(response),
          retries >= maxAttempts
            ? Effect.fail(McpAuth.unauthorizedError(challenge))
            : Effect.andThen(auth.challenge(challenge), attempt(request, retries + 1))
        )
      })
    })
  return (request) => attempt(request, 0)
}

// -----------------------------------------------------------------------------
// Responses
// -----------------------------------------------------------------------------

/** The media type of a response, lower case, without parameters. */
export const mediaType = (response: HttpClientResponse.HttpClientResponse): string => mediaTypeOf(response.headers)

/** The media type of a response's headers (read once: each read of `response.headers` may copy them). */
export const mediaTypeOf = (headers: Headers.Headers): string =>
  (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

/** Reads and discards a body that nobody wants. */
export const discard = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<void> =>
  Effect.ignore(response.text)

/** The default bound of a JSON answer's body, in bytes (64 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024

/**
 * The body of a JSON answer as text, read up to `maxBytes`: a larger one
 * (by its `Content-Length`, or as it arrives) fails the request with a
 * `TransportError` saying so, without reading the rest.
 */
export const readText = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number = DEFAULT_MAX_RESPONSE_BYTES,
  headers: Headers.Headers = response.headers
): Effect.Effect<string, McpError.McpError> => {
  const tooLarge = () =>
    McpError.transport(
      `the ${response.request.method} ${response.request.url} answer is larger than ${maxBytes} bytes (maxResponseBytes)`
    )
  const length = headers["content-length"]
  const declared = Number(length)
  if (Number.isFinite(declared) && declared > maxBytes) return Effect.fail(tooLarge())
  // a declared length bounds the body: read it whole (reading it as a stream
  // aborts the request at the end, which costs an error object per answer)
  if (length !== undefined && Number.isSafeInteger(declared) && declared >= 0) {
    return Effect.mapError(response.text, requestError)
  }
  return Effect.suspend(() => {
    const decoder = new TextDecoder()
    let size = 0
    let text = ""
    return response.stream.pipe(
      Stream.mapError(requestError),
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > maxBytes) return Effect.fail(tooLarge())
        text += decoder.decode(chunk, { stream: true })
        return Effect.void
      }),
      Effect.map(() => text + decoder.decode())
    )
  })
}

/** The JSON value of one SSE event, an array kept whole (the session decides whether batches are allowed), or `Malformed`. */
export const parseFrame = (text: string): unknown => {
  const parsed = Result.try({ try: () => JSON.parse(text) as unknown, catch: (error) => McpError.messageOf(error) })
  return Result.isFailure(parsed) ? new JsonRpc.Malformed(parsed.failure) : parsed.success
}

/** The JSON-RPC values of one JSON text (an array is split into its elements), or `Malformed`. */
export const parseJson = (text: string): ReadonlyArray<unknown> => {
  const parsed = Result.try({ try: () => JSON.parse(text) as unknown, catch: (error) => McpError.messageOf(error) })
  if (Result.isFailure(parsed)) return [new JsonRpc.Malformed(parsed.failure)]
  return Array.isArray(parsed.success) ? parsed.success : [parsed.success]
}

/**
 * `true` when a body is a JSON-RPC error response: how a modern Streamable
 * HTTP server explains a refusal (a legacy server's 404/405 is not one).
 */
export const isJsonRpcErrorBody = (text: string): boolean => {
  const parsed = Result.try(() => JSON.parse(text) as unknown)
  if (Result.isFailure(parsed)) return false
  const value = parsed.success
  return Predicate.isObject(value) && value.jsonrpc === "2.0" && "error" in value
}

// -----------------------------------------------------------------------------
// SSE
// -----------------------------------------------------------------------------

/** One item of an SSE stream: an event, a `retry` directive, or an event over the size limit. */
export type SseItem = Sse.Event | Sse.Retry | { readonly _tag: "TooLarge" }

/**
 * The events of an SSE body. Built on `Sse.makeParser` rather than
 * `Sse.decode()`: the channel of `Sse.decode()` fails with `Retry` at the
 * first `retry:` field, so the stream would end at the priming event that MCP
 * servers send first. Here a `retry:` is one more item and the stream goes on.
 */
export const decodeSse = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxEventSize?: number
): Stream.Stream<SseItem, E> =>
  bytes.pipe(
    Stream.decodeText(),
    Stream.mapAccum(
      () => {
        let out: Array<SseItem> = []
        const parser = Sse.makeParser((item) => out.push(item), { maxEventSize })
        return {
          feed: (chunk: string): ReadonlyArray<SseItem> => {
            const error = parser.feed(chunk)
            if (error !== undefined) out.push({ _tag: "TooLarge" })
            const items = out
            out = []
            return items
          }
        }
      },
      (state, chunk) => [state, state.feed(chunk)] as const
    )
  )

/** The events of a whole SSE body (see {@link decodeSse}). */
export const parseSse = (text: string, maxEventSize?: number): ReadonlyArray<SseItem> => {
  const out: Array<SseItem> = []
  const parser = Sse.makeParser((item) => out.push(item), { maxEventSize })
  if (parser.feed(text) !== undefined) out.push({ _tag: "TooLarge" })
  return out
}

/** The largest SSE body with a declared length read whole rather than as a stream (1 MiB). */
export const MAX_WHOLE_SSE_BYTES = 1024 * 1024

/**
 * The declared length of an SSE body small enough to be read whole (a
 * server that knew every event before it answered), else `undefined`.
 */
export const wholeSseLength = (
  response: HttpClientResponse.HttpClientResponse,
  headers: Headers.Headers = response.headers
): number | undefined => {
  const header = headers["content-length"]
  if (header === undefined) return undefined
  const length = Number(header)
  return Number.isSafeInteger(length) && length >= 0 && length <= MAX_WHOLE_SSE_BYTES ? length : undefined
}

/** `true` when the data of an SSE event carries a message (events with empty data prime or keep alive). */
export const isMessageEvent = (event: Sse.Event): boolean =>
  (event.event === "message" || event.event === "") && event.data.trim() !== ""

// -----------------------------------------------------------------------------
// Frames
// -----------------------------------------------------------------------------

/** `true` for a JSON-RPC request (it has a method and an id). */
export const isRequest = (u: unknown): u is JsonRpc.Request =>
  Predicate.isObject(u) && typeof u.method === "string" && "id" in u

/** `true` for a JSON-RPC response (a result or an error, no method). */
export const isResponse = (u: unknown): u is JsonRpc.SuccessResponse | JsonRpc.ErrorResponse =>
  Predicate.isObject(u) && u.method === undefined && ("result" in u || "error" in u)

/** How many requests a frame holds: the responses its POST's stream should carry. */
export const requestCount = (frame: JsonRpc.Frame): number =>
  Array.isArray(frame) ? frame.filter(isRequest).length : isRequest(frame) ? 1 : 0

/** `true` when the frame is the `initialize` request. */
export const isInitialize = (frame: JsonRpc.Frame): frame is JsonRpc.Request =>
  !Array.isArray(frame) && isRequest(frame) && frame.method === "initialize"

/** `true` when the frame is the `notifications/initialized` notification. */
export const isInitialized = (frame: JsonRpc.Frame): frame is JsonRpc.Notification =>
  !Array.isArray(frame) && Predicate.isObject(frame) && frame.method === "notifications/initialized" && !("id" in frame)

/** The protocol version of a successful `initialize` response. */
export const protocolVersionOf = (response: JsonRpc.SuccessResponse | JsonRpc.ErrorResponse): string | undefined => {
  if (!JsonRpc.isSuccess(response) || !Predicate.isObject(response.result)) return undefined
  const version = response.result.protocolVersion
  return typeof version === "string" ? version : undefined
}

/** What a POST accepts: both answers a Streamable HTTP server may give. */
export const ACCEPT_POST = "application/json, text/event-stream"

/**
 * Reads the answer to request `id` out of a POST's response (JSON, or an SSE
 * stream read by `readSse` until one response); the other messages on the
 * way go to `offer`. For a request the transport sends on its own (the
 * replayed `initialize`).
 */
export const awaitAnswer = (
  response: HttpClientResponse.HttpClientResponse,
  id: JsonRpc.RequestId,
  readSse: (route: (value: unknown) => Effect.Effect<void>) => Effect.Effect<unknown>,
  offer: (value: unknown) => Effect.Effect<void>,
  maxBytes?: number
): Effect.Effect<JsonRpc.SuccessResponse | JsonRpc.ErrorResponse, McpError.McpError> =>
  Effect.gen(function*() {
    let answer: JsonRpc.SuccessResponse | JsonRpc.ErrorResponse | undefined
    const route = (value: unknown) => {
      if (answer === undefined && isResponse(value) && value.id === id) {
        answer = value
        return Effect.void
      }
      return offer(value)
    }
    const type = mediaType(response)
    if (type === "text/event-stream") {
      yield* readSse(route)
    } else if (type === "application/json") {
      const text = yield* readText(response, maxBytes)
      yield* Effect.forEach(parseJson(text), route, { discard: true })
    } else {
      yield* discard(response)
    }
    if (answer === undefined) return yield* McpError.transport(`the server did not answer request ${id}`)
    return answer
  })
