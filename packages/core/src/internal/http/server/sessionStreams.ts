/**
 * A session's SSE streams (`sseStream.ts`) and the HTTP connections that
 * carry them: a new stream gets its id from the session and is kept for
 * resumption when there is an event store; a connection's body ends when
 * the stream does, or when the token it was opened with expires; a POST
 * stream written to its end is kept a while for a late resumption, one
 * whose connection dropped only for `abandonedStreamTimeout`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import * as McpSchema from "../../../McpSchema.ts"
import * as Responses from "./responses.ts"
import * as Sessions from "./sessions.ts"
import * as SseStream from "./sseStream.ts"
import type * as State from "./state.ts"

const FINISHED_KEPT = 4

/** A priming event opens the session's streams (a resumable stream, from 2025-11-25 on). @internal */
export const primes = (session: State.Session): boolean =>
  session.store !== undefined && session.version !== undefined && session.version >= "2025-11-25"

/** A new stream of the session: its GET stream, or the answer to a POST. @internal */
export const make = (session: State.Session, kind: "post" | "get"): SseStream.SseStream => {
  const stream = SseStream.make(
    kind === "get" ? `${session.id}/0` : `${session.id}/${session.streamBase}${session.nextStream++}`,
    kind,
    session.store,
    primes(session)
  )
  if (session.store !== undefined) session.streams.set(stream.id, stream)
  return stream
}

// A POST stream whose connection dropped, still not taken over by a new one
// (`attached` unchanged) once `abandonedStream` has passed, is dropped: its
// buffer and stored events go, and its requests still in flight are
// cancelled (their answers, should they come, find no exchange).
const dropAbandoned = (state: State.State, session: State.Session, stream: SseStream.SseStream, attached: number) =>
  Effect.suspend(() => {
    if (session.closed || stream.closed || stream.owner !== undefined || stream.attached !== attached) {
      return Effect.void
    }
    SseStream.close(stream)
    session.streams.delete(stream.id)
    for (const [id, exchange] of Array.from(session.inflight)) {
      if (exchange.stream !== stream) continue
      session.inflight.delete(id)
      exchange.abandoned = true
      Queue.offerUnsafe(
        session.inbox,
        JsonRpc.notification(McpSchema.Cancelled.name, {
          requestId: id,
          reason: "the client did not come back for the answer"
        })
      )
    }
    return session.store === undefined ? Effect.void : session.store.remove(stream.id)
  })

const scheduleDrop = (state: State.State, session: State.Session, stream: SseStream.SseStream) => {
  const attached = stream.attached
  return Effect.asVoid(Effect.forkIn(
    Effect.andThen(state.clock.sleep(state.abandonedStream), dropAbandoned(state, session, stream, attached)),
    session.scope
  ))
}

// a POST stream written to its end is kept a while for a late resumption;
// one that ends early cancels what it was answering (`abandoned`, for the
// shared session of modern requests), or closes its session of one request,
// or is kept for a resumption until `abandonedStream` has passed
const ended = (
  state: State.State,
  session: State.Session,
  stream: SseStream.SseStream,
  abandoned: Effect.Effect<void> | undefined
) =>
(completed: boolean) =>
  Effect.suspend(() => {
    Sessions.touch(state, session)
    if (abandoned !== undefined) return completed ? Effect.void : abandoned
    if (session.id === undefined) return Sessions.close(state, session)
    if (stream.kind !== "post" || session.store === undefined || session.closed) return Effect.void
    if (!completed) {
      return stream.closed || stream.owner !== undefined
        ? Effect.void
        : scheduleDrop(state, session, stream)
    }
    session.streams.delete(stream.id)
    session.finished.push(stream.id)
    if (session.finished.length <= FINISHED_KEPT) return Effect.void
    return session.store.remove(session.finished.shift()!)
  })

// with auth, a connection ends when the token it was opened with expires
// (the stream stays, to be resumed with a fresh token)
const untilExpiry = (
  state: State.State,
  body: Stream.Stream<Uint8Array>,
  auth: McpAuth.AuthInfo | undefined
): Stream.Stream<Uint8Array> => {
  const expiresAt = auth?.expiresAt
  if (expiresAt === undefined) return body
  return Stream.interruptWhen(
    body,
    Effect.suspend(() => {
      const left = expiresAt * 1000 - state.clock.currentTimeMillisUnsafe()
      return left > 0 ? state.clock.sleep(Duration.millis(left)) : Effect.void
    })
  )
}

const comment = new TextEncoder().encode(SseStream.COMMENT)

// a long-lived answer (`subscriptions/listen`) says it is alive while quiet
const withKeepAlive = (state: State.State, body: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> =>
  Stream.merge(body, Stream.map(Stream.tick(state.keepAlive), () => comment).pipe(Stream.drop(1)), {
    haltStrategy: "left"
  })

/** The body of a connection already attached to the stream (see `SseStream.attach`). @internal */
export const body = (
  state: State.State,
  session: State.Session,
  stream: SseStream.SseStream,
  connection: SseStream.Connection,
  auth: McpAuth.AuthInfo | undefined,
  prefix?: string,
  keepAlive = false,
  abandoned?: Effect.Effect<void>
): Stream.Stream<Uint8Array> => {
  const events = SseStream.body(stream, connection, {
    prefix,
    retry: state.retry,
    onEnd: ended(state, session, stream, abandoned)
  })
  return untilExpiry(state, keepAlive ? withKeepAlive(state, events) : events, auth)
}

/** Attaches a new connection to the stream, and returns its body. @internal */
export const connect = (
  state: State.State,
  session: State.Session,
  stream: SseStream.SseStream,
  auth: McpAuth.AuthInfo | undefined,
  prefix?: string,
  keepAlive = false,
  abandoned?: Effect.Effect<void>
): Stream.Stream<Uint8Array> =>
  body(state, session, stream, SseStream.attach(stream), auth, prefix, keepAlive, abandoned)

/**
 * The SSE answer to a POST, for a connection already attached: a stream that
 * ends within a few turns of the scheduler (a quick handler) goes out whole,
 * as one body with a length; else the body streams.
 *
 * @internal
 */
export const respond = (
  state: State.State,
  session: State.Session,
  stream: SseStream.SseStream,
  connection: SseStream.Connection,
  auth: McpAuth.AuthInfo | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(
    SseStream.whole(stream, connection, { retry: state.retry, onEnd: ended(state, session, stream, undefined) }),
    (text) =>
      text === undefined ? Responses.sse(body(state, session, stream, connection, auth)) : Responses.sseText(text)
  )
