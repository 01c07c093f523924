/**
 * The live sessions of the Streamable HTTP server: opening one (an engine
 * served over a transport of its own), closing one (its streams, its
 * pending answers, its stored events), finding the one a request names,
 * and the reaper that closes idle ones.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import type * as McpError from "../../../McpError.ts"
import { McpTransport } from "../../../McpTransport.ts"
import * as Bearer from "../../auth/bearer.ts"
import * as Responses from "./responses.ts"
import * as SseStream from "./sseStream.ts"
import * as State from "./state.ts"

/** The `Mcp-Session-Id` header (lower-case). @internal */
export const SESSION_ID = "mcp-session-id"

/**
 * Opens a session and serves the engine on it. `send` routes the session's
 * outgoing frames: `Exchange.send`, passed in, as the routing depends on
 * this file.
 *
 * @internal
 */
export const open = (
  state: State.State,
  id: string | undefined,
  principal: string | undefined,
  send: (state: State.State, session: State.Session, frame: JsonRpc.Frame) => Effect.Effect<void, McpError.McpError>,
  shared = false,
  streamBase = ""
): Effect.Effect<State.Session> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(state.scope)
    const session: State.Session = {
      id,
      key: id ?? globalThis.crypto.randomUUID(),
      scope,
      inbox: yield* Queue.unbounded<unknown, Cause.Done>(),
      inflight: new Map(),
      streams: new Map(),
      finished: [],
      store: id === undefined ? undefined : state.store,
      server: undefined,
      version: undefined,
      get: undefined,
      nextStream: 1,
      streamBase,
      lastActivity: state.clock.currentTimeMillisUnsafe(),
      touched: 0,
      record: undefined,
      closed: false,
      principal
    }
    // the shared session of modern requests is not one of the live sessions
    // (no id names it, no reaper closes it); its requests' ids are renamed
    if (!shared) state.sessions.set(session.key, session)
    const transport = McpTransport.of({
      incoming: Stream.fromQueue(session.inbox),
      send: (frame) => send(state, session, frame),
      routesByOrigin: true,
      ...(state.bearer === undefined ? {} : { authOf: (id: JsonRpc.RequestId) => session.inflight.get(id)?.auth }),
      ...(shared ? { peerIdOf: (id: JsonRpc.RequestId) => session.inflight.get(id)?.peerId ?? id } : {})
    })
    const served = yield* (shared ? state.server.serveRequests : state.server.serve).pipe(
      Effect.provideService(McpTransport, transport),
      Effect.provideService(State.CurrentSession, session),
      Scope.provide(scope)
    )
    session.server = served
    // the engine may end the session itself (keep-alive failure)
    yield* served.awaitClose.pipe(
      Effect.andThen(Effect.forkDetach(close(state, session))),
      Effect.forkIn(scope)
    )
    return session
    // the layer's services, in place of (not merged into) the request's: a
    // session must not keep the initialize request's objects alive
  }).pipe(Effect.updateContext(() => state.context))

/**
 * Takes a session out of service: it is no longer live, nothing more reaches
 * its engine, its streams `finish` (`SseStream.close`: at once;
 * `SseStream.end`: after what they hold) and a POST still waiting for its
 * answer gets `404`. The ids of its streams are returned, for {@link forget}.
 *
 * @internal
 */
export const detach = (
  state: State.State,
  session: State.Session,
  finish: (stream: SseStream.SseStream) => void
): ReadonlyArray<string> => {
  session.closed = true
  state.sessions.delete(session.key)
  Queue.endUnsafe(session.inbox)
  for (const stream of session.streams.values()) finish(stream)
  if (session.get !== undefined) finish(session.get)
  for (const exchange of new Set(session.inflight.values())) {
    if (exchange.stream !== undefined) finish(exchange.stream)
    if (exchange.reply !== undefined) {
      Deferred.doneUnsafe(
        exchange.reply,
        Effect.succeed(Responses.error(404, JsonRpc.ErrorCode.SessionNotFound, "Session closed"))
      )
    }
  }
  session.inflight.clear()
  const streamIds = [...session.streams.keys(), ...session.finished]
  session.streams.clear()
  session.finished.length = 0
  return streamIds
}

/** Removes the stored events of a closed session's streams. @internal */
export const forget = (session: State.Session, streamIds: ReadonlyArray<string>): Effect.Effect<void> =>
  session.store === undefined
    ? Effect.void
    : Effect.forEach(streamIds, (id) => session.store!.remove(id), { discard: true })

/**
 * Closes a session: its streams end, its pending answers fail, its stored
 * events go, and with a registry its record. A replica shutting down with a
 * registry hands its sessions over instead (see {@link handOver}).
 *
 * @internal
 */
export const close = (state: State.State, session: State.Session): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (session.closed) return Effect.void
    const streamIds = detach(state, session, SseStream.close)
    const closed = Scope.close(session.scope, Exit.void)
    if (handsOver(state, session)) return Effect.andThen(closed, handOver(state, session))
    return Effect.andThen(closed, Effect.andThen(forget(session, streamIds), unregister(state, session)))
  })

/** A replica shutting down with a registry leaves its sessions (records and stored events) to the others. @internal */
export const handsOver = (state: State.State, session: State.Session): boolean =>
  state.closing && state.registry !== undefined && session.id !== undefined

/** Gives the session up: the next request for it, on any replica, takes it over. @internal */
export const handOver = (state: State.State, session: State.Session): Effect.Effect<void> =>
  state.registry === undefined || session.id === undefined
    ? Effect.void
    : Effect.ignore(state.registry.release(session.id))

const unregister = (state: State.State, session: State.Session): Effect.Effect<void> =>
  state.registry === undefined || session.id === undefined
    ? Effect.void
    : Effect.ignore(state.registry.remove(session.id))

/** Every session, the shared one of modern requests first. @internal */
export const all = (state: State.State): ReadonlyArray<State.Session> =>
  state.modern === undefined ? Array.from(state.sessions.values()) : [state.modern, ...state.sessions.values()]

/** Closes every session, the shared one of modern requests too (the layer is closing). @internal */
export const closeAll = (state: State.State): Effect.Effect<void> =>
  Effect.forEach(all(state), (session) => close(state, session), { discard: true })

/** No session may be opened: there are `maxSessions` already. @internal */
export const isFull = (state: State.State): boolean => state.sessions.size >= state.maxSessions

const notFound = () => Responses.error(404, JsonRpc.ErrorCode.SessionNotFound, "Session not found")

/**
 * The session named by the `Mcp-Session-Id` header, or the error answer;
 * then the `MCP-Protocol-Version` header is checked. With auth, a session
 * exists only for the user who opened it: another user's token gets the
 * answer of an unknown id (nothing tells it apart).
 *
 * @internal
 */
export const find = (
  state: State.State,
  headers: Readonly<Record<string, string | undefined>>,
  auth: McpAuth.AuthInfo | undefined
): Result.Result<State.Session, HttpServerResponse.HttpServerResponse> => {
  const id = headers[SESSION_ID]
  if (id === undefined) {
    return Result.fail(
      Responses.error(400, JsonRpc.ErrorCode.ServerError, "Bad Request: the Mcp-Session-Id header is required")
    )
  }
  const session = state.sessions.get(id)
  if (session === undefined || session.id === undefined) return Result.fail(notFound())
  if (state.bearer !== undefined && session.principal !== Bearer.principal(auth)) return Result.fail(notFound())
  const versionError = Responses.checkVersion(headers)
  return versionError === undefined ? Result.succeed(session) : Result.fail(versionError)
}

/** Marks the session active now. @internal */
export const touch = (state: State.State, session: State.Session): void => {
  session.lastActivity = state.clock.currentTimeMillisUnsafe()
}

/** The negotiated protocol version, read from the engine once it is known. @internal */
export const versionOf = (session: State.Session): Effect.Effect<string | undefined> =>
  session.version !== undefined || session.server === undefined
    ? Effect.succeed(session.version)
    : Effect.map(session.server.state, (state) => {
      if (state._tag !== "NotInitialized") session.version = state.protocolVersion
      return session.version
    })

// -----------------------------------------------------------------------------
// Reaping idle sessions
// -----------------------------------------------------------------------------

// requests in flight, or a client listening on the GET stream (a POST
// stream with nothing in flight is only writing out its end)
const busy = (session: State.Session) => session.inflight.size > 0 || session.get?.owner !== undefined

/**
 * Closes the sessions idle for `idleMillis`, forever. It sleeps until the
 * earliest deadline (deadlines only move later, and a new session's is
 * later than any computed before it), a second at least, so that sessions
 * expiring close together are closed in one pass.
 *
 * @internal
 */
export const reap = (state: State.State): Effect.Effect<never> =>
  Effect.suspend(() => {
    const at = state.clock.currentTimeMillisUnsafe()
    let next = at + state.idleMillis
    const idle: Array<State.Session> = []
    for (const session of state.sessions.values()) {
      if (busy(session)) continue
      const deadline = session.lastActivity + state.idleMillis
      if (deadline <= at) idle.push(session)
      else if (deadline < next) next = deadline
    }
    return Effect.forEach(idle, (session) => close(state, session), { discard: true }).pipe(
      Effect.andThen(Effect.sleep(Math.max(next - at, Math.min(1000, state.idleMillis)))),
      Effect.andThen(reap(state))
    )
  })
