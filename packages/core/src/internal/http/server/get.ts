/**
 * GET: opens the session's GET stream (the one for frames no request is
 * waiting on), or, with a `Last-Event-ID`, resumes the stream that event
 * belongs to: a live stream is taken over and replayed from the store, a
 * finished one replays what is left and ends.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import * as Guard from "../guard.ts"
import * as Responses from "./responses.ts"
import * as Sessions from "./sessions.ts"
import * as SessionStreams from "./sessionStreams.ts"
import * as SseStream from "./sseStream.ts"
import type * as State from "./state.ts"

const LAST_EVENT_ID = "last-event-id"

/** Answers a GET. @internal */
export const handle: State.Handler = (state, request, auth) =>
  Effect.gen(function*() {
    const headers = request.headers
    if (!Guard.acceptsSse(headers["accept"])) {
      return Responses.error(406, JsonRpc.ErrorCode.ServerError, "Not Acceptable: accept text/event-stream")
    }
    const found = Sessions.find(state, headers, auth)
    if (Result.isFailure(found)) return found.failure
    const session = found.success
    Sessions.touch(state, session)
    yield* Sessions.versionOf(session)
    const lastEventId = headers[LAST_EVENT_ID]
    if (lastEventId !== undefined && lastEventId !== "") return yield* resume(state, session, lastEventId, auth)
    if (session.get !== undefined && session.get.owner !== undefined) {
      return Responses.error(409, JsonRpc.ErrorCode.ServerError, "Conflict: the session's GET stream is already open")
    }
    // a GET stream that cannot be resumed ends with its connection
    const stream = session.get !== undefined && !session.get.closed ? session.get : SessionStreams.make(session, "get")
    session.get = stream
    stream.priming = SessionStreams.primes(session)
    return Responses.sse(SessionStreams.connect(state, session, stream, auth, SseStream.COMMENT))
  })

const unknownEvent = () => Responses.error(400, JsonRpc.ErrorCode.ServerError, "Bad Request: unknown Last-Event-ID")

const resume = (
  state: State.State,
  session: State.Session,
  lastEventId: string,
  auth: McpAuth.AuthInfo | undefined
) =>
  Effect.gen(function*() {
    const store = session.store
    if (store === undefined) return unknownEvent()
    const found = yield* Effect.option(store.replayAfter(lastEventId))
    if (Option.isNone(found) || Option.isNone(found.value)) return unknownEvent()
    const streamId = found.value.value.streamId
    if (!streamId.startsWith(`${session.id}/`)) return unknownEvent()
    const stream = session.streams.get(streamId)
    if (stream === undefined && streamId === `${session.id}/0` && (session.get === undefined || session.get.closed)) {
      // the GET stream of a session taken over from another replica: what the
      // client missed, then on as this replica's GET stream (same stream id)
      const live = SessionStreams.make(session, "get")
      live.priming = false
      session.get = live
      let prefix = SseStream.COMMENT
      for (const event of found.value.value.events) prefix += SseStream.encodeEvent(event.id, event.message)
      return Responses.sse(SessionStreams.connect(state, session, live, auth, prefix))
    }
    if (stream === undefined) {
      // a finished stream: replay what is left, then end
      const text = found.value.value.events.map((event) => SseStream.encodeEvent(event.id, event.message)).join("")
      return Responses.sse(Stream.make(new TextEncoder().encode(text === "" ? SseStream.COMMENT : text)))
    }
    // take the stream over, let a write in progress finish, then replay
    const connection = SseStream.attach(stream)
    yield* SseStream.awaitIdle(stream)
    const replay = yield* Effect.option(store.replayAfter(lastEventId))
    const events = Option.isSome(replay) && Option.isSome(replay.value) ? replay.value.value.events : []
    let prefix = SseStream.COMMENT
    for (const event of events) prefix += SseStream.encodeEvent(event.id, event.message)
    stream.priming = false
    return Responses.sse(SessionStreams.body(state, session, stream, connection, auth, prefix))
  })
