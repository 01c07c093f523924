/**
 * Exchanges (the answer to one POST: its JSON body, or an SSE stream) and
 * the routing of frames: outgoing ones to the exchange or stream they
 * belong to, incoming ones to the engine. Routing is the one place this
 * transport looks at request ids; its rules are below.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Queue from "effect/Queue"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import * as McpError from "../../../McpError.ts"
import * as McpSchema from "../../../McpSchema.ts"
import { RequestOrigin } from "../../../McpTransport.ts"
import * as Modern from "./modern.ts"
import * as Responses from "./responses.ts"
import * as SessionStreams from "./sessionStreams.ts"
import * as SseStream from "./sseStream.ts"
import * as State from "./state.ts"

// Routing is kept to this:
//
// - a POST carrying requests registers their ids in the session's `inflight`
//   map, pointing at the POST's exchange (its JSON answer or SSE stream);
// - an outgoing response goes to the exchange of its own `id`; when the last
//   of an exchange's requests is answered, its JSON body is sent or its SSE
//   stream ends;
// - an outgoing request or notification goes to the exchange of
//   `McpTransport.RequestOrigin` (the request whose handler sends it) while
//   that exchange is open, else to the session's GET stream; an origin counts
//   only when the sending fiber belongs to this session (a handler of another
//   session may notify this one); a request with neither fails its sender
//   (`ClosedError`) instead of waiting for an answer that cannot come;
// - an incoming `notifications/cancelled` counts its request as answered
//   (the engine sends no response for it).

/** An exchange for `pending` requests; `reply` in JSON mode. @internal */
export const make = (
  session: State.Session,
  batch: boolean,
  pending: number,
  reply: Deferred.Deferred<HttpServerResponse.HttpServerResponse> | undefined,
  auth: McpAuth.AuthInfo | undefined,
  modern = false,
  peerId?: JsonRpc.RequestId
): State.Exchange => ({
  session,
  batch,
  pending,
  responses: undefined,
  stream: undefined,
  reply,
  abandoned: false,
  auth,
  modern,
  peerId
})

// -----------------------------------------------------------------------------
// Outgoing frames
// -----------------------------------------------------------------------------

/** Routes a frame the engine sends (the session transport's `send`). @internal */
export const send = (
  state: State.State,
  session: State.Session,
  frame: JsonRpc.Frame
): Effect.Effect<void, McpError.McpError> =>
  Effect.withFiber((fiber) => {
    if (session.closed) return Effect.fail(McpError.closed("HTTP session closed"))
    // an origin counts only from this session's own fibers: a handler of
    // another session may notify this one (a resource update, a list change)
    const origin = fiber.getRef(State.CurrentSession) === session ? fiber.getRef(RequestOrigin) : undefined
    let delivered = true
    if (Array.isArray(frame)) {
      for (const message of frame) delivered = route(state, session, message, origin) && delivered
    } else delivered = route(state, session, frame as JsonRpc.Message, origin)
    return delivered ? Effect.void : Effect.fail(McpError.closed(UNDELIVERABLE))
  })

const UNDELIVERABLE =
  "No stream to send this request on: the request it belongs to was answered and no GET stream is open"

// whether the message went somewhere; a request that cannot (no exchange, no
// GET stream) fails its sender rather than wait for an answer that never comes
const route = (
  state: State.State,
  session: State.Session,
  message: JsonRpc.Message,
  origin: JsonRpc.RequestId | undefined
): boolean => {
  if ("method" in message) {
    const exchange = origin === undefined ? undefined : session.inflight.get(origin)
    if (exchange !== undefined) related(state, exchange, message)
    else if (session.get !== undefined) SseStream.write(session.get, message)
    else return !("id" in message)
    return true
  }
  const id = message.id
  const exchange = id === null ? undefined : session.inflight.get(id)
  if (exchange === undefined) return true
  session.inflight.delete(id!)
  answered(exchange, message)
  return true
}

const related = (state: State.State, exchange: State.Exchange, message: JsonRpc.Message) => {
  if (exchange.abandoned) return
  if (exchange.stream !== undefined) return SseStream.write(exchange.stream, message)
  // JSON mode: the handler streams, so the answer becomes an SSE stream
  const stream = SessionStreams.make(exchange.session, "post")
  exchange.stream = stream
  const body = exchange.peerId === undefined
    ? SessionStreams.connect(state, exchange.session, stream, exchange.auth, undefined, exchange.modern)
    : SessionStreams.connect(state, exchange.session, stream, exchange.auth, undefined, true, cancel(exchange))
  for (const response of exchange.responses ?? []) SseStream.write(stream, response)
  exchange.responses = undefined
  SseStream.write(stream, message)
  Deferred.doneUnsafe(exchange.reply!, Effect.succeed(Responses.sse(body)))
}

const answered = (exchange: State.Exchange, response: JsonRpc.Message) => {
  // the client's own id goes back on the response of a renamed request
  const message = exchange.peerId === undefined ? response : { ...response, id: exchange.peerId } as JsonRpc.Message
  exchange.pending--
  if (exchange.abandoned) return
  if (exchange.stream !== undefined) {
    SseStream.write(exchange.stream, message)
    if (exchange.pending === 0) SseStream.end(exchange.stream)
    return
  }
  ;(exchange.responses ??= []).push(message)
  if (exchange.pending === 0) {
    const status = exchange.modern ? Modern.statusOf(exchange.responses[0]) : 200
    Deferred.doneUnsafe(exchange.reply!, Effect.succeed(Responses.json(exchange.batch, exchange.responses, status)))
  }
}

/**
 * Answers, with `error`, every request of the session still in flight (the
 * server is going away): a POST's stream ends after its answers, a waiting
 * POST gets its JSON body.
 *
 * @internal
 */
export const failInflight = (session: State.Session, error: JsonRpc.ErrorObject): void => {
  for (const [id, exchange] of Array.from(session.inflight)) {
    session.inflight.delete(id)
    answered(exchange, JsonRpc.failure(id, error))
  }
}

// -----------------------------------------------------------------------------
// Incoming messages
// -----------------------------------------------------------------------------

// the engine sends nothing for a cancelled request: count it as answered
const cancelled = (session: State.Session, message: JsonRpc.Notification) => {
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
    Effect.succeed(
      exchange.responses === undefined ? Responses.emptyStream() : Responses.json(exchange.batch, exchange.responses)
    )
  )
}

/**
 * Cancels the request of a modern exchange whose client went away (its POST
 * or its answer stream closed): the engine interrupts the handler.
 *
 * @internal
 */
export const cancel = (exchange: State.Exchange): Effect.Effect<void> =>
  Effect.sync(() => {
    const session = exchange.session
    for (const [id, candidate] of session.inflight) {
      if (candidate !== exchange) continue
      exchange.abandoned = true
      offer(
        session,
        JsonRpc.notification(McpSchema.Cancelled.name, { requestId: id, reason: "the client closed the connection" })
      )
      return
    }
  })

/**
 * Serves a modern request on the shared session under a fresh id (the
 * client's goes back on the answer): JSON, upgraded to SSE when the handler
 * streams.
 *
 * @internal
 */
export const openModern = (
  state: State.State,
  session: State.Session,
  message: JsonRpc.Request,
  auth: McpAuth.AuthInfo | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (session.inflight.size >= state.maxModernRequests) {
    return Effect.succeed(
      Responses.error(429, JsonRpc.ErrorCode.ServerError, "Too Many Requests: too many requests in flight", {
        id: message.id
      })
    )
  }
  const exchange = make(session, false, 1, Deferred.makeUnsafe(), auth, true, message.id)
  const id = ++state.modernIds
  session.inflight.set(id, exchange)
  offer(session, { ...message, id })
  return Deferred.await(exchange.reply!).pipe(Effect.onInterrupt(() => cancel(exchange)))
}

/** Hands an incoming message to the engine. @internal */
export const offer = (session: State.Session, message: JsonRpc.Message): void => {
  if ("method" in message && !("id" in message) && message.method === McpSchema.Cancelled.name) {
    cancelled(session, message)
  }
  Queue.offerUnsafe(session.inbox, message)
}

// a session's POST streams (its GET stream left out)
const postStreams = (session: State.Session): number =>
  session.streams.size - (session.get !== undefined && session.streams.has(session.get.id) ? 1 : 0)

// `429` for a POST whose requests would pass the session's caps
const overCap = (
  state: State.State,
  session: State.Session,
  messages: ReadonlyArray<JsonRpc.Message>,
  requests: number
): HttpServerResponse.HttpServerResponse | undefined => {
  if (session.id === undefined) return undefined
  const reason = session.inflight.size + requests > state.maxRequestsPerSession
    ? "too many requests in flight in this session"
    : postStreams(session) >= state.maxStreamsPerSession
    ? "too many open streams in this session"
    : undefined
  if (reason === undefined) return undefined
  const first = messages.length === 1 && "id" in messages[0]! ? messages[0].id : null
  return Responses.error(429, JsonRpc.ErrorCode.ServerError, `Too Many Requests: ${reason}`, { id: first })
}

/**
 * Opens the exchange of a POST carrying `requests` requests, hands its
 * messages to the engine, and answers: at once with the SSE stream in SSE
 * mode, else once the answer is known.
 *
 * @internal
 */
export const open = (
  state: State.State,
  session: State.Session,
  messages: ReadonlyArray<JsonRpc.Message>,
  requests: number,
  batch: boolean,
  auth: McpAuth.AuthInfo | undefined,
  modern = false
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const refused = overCap(state, session, messages, requests)
  if (refused !== undefined) return Effect.succeed(refused)
  // a modern answer starts as JSON (its error status depends on the code) and
  // becomes a stream only when the handler streams
  const sseMode = state.sseMode && !modern
  const exchange = make(session, batch, requests, sseMode ? undefined : Deferred.makeUnsafe(), auth, modern)
  let response: Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined
  if (sseMode) {
    const stream = SessionStreams.make(session, "post")
    exchange.stream = stream
    // attached before the messages go: a stream nobody reads drops what it is sent
    response = SessionStreams.respond(state, session, stream, SseStream.attach(stream), auth)
  }
  for (const message of messages) {
    if ("method" in message && "id" in message) session.inflight.set(message.id, exchange)
  }
  for (const message of messages) offer(session, message)
  if (response !== undefined) return response
  return Deferred.await(exchange.reply!).pipe(
    Effect.onInterrupt(() =>
      Effect.sync(() => {
        exchange.abandoned = true
      })
    )
  )
}
