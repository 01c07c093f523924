/**
 * Sessions shared with other replicas through an `McpSessionRegistry`: a
 * request naming a session this replica does not hold is forwarded to the
 * replica that does, or takes the session over when that replica is gone;
 * requests forwarded here are served like any other. Without a registry
 * nothing here runs.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import * as McpError from "../../../McpError.ts"
import * as McpSchema from "../../../McpSchema.ts"
import type * as McpSessionRegistry from "../../../McpSessionRegistry.ts"
import * as Bearer from "../../auth/bearer.ts"
import * as Exchange from "./exchange.ts"
import * as Responses from "./responses.ts"
import * as Sessions from "./sessions.ts"
import type * as State from "./state.ts"

const RESTORE_INIT_ID = "effect-mcp/restore-initialize"
const RESTORE_PING_ID = "effect-mcp/restore-ping"

/** The answer when the registry cannot be reached. @internal */
export const unavailable = () =>
  Responses.error(503, JsonRpc.ErrorCode.ServerError, "Service Unavailable: the session registry cannot be reached")

type Registry = McpSessionRegistry.Service

const isUnavailable = (error: unknown): boolean =>
  McpError.isMcpError(error) && error.reason._tag === "ServerUnavailableError"

/**
 * Where a request naming a session is served: `undefined` when here (the
 * session is local, or was just taken over); else the response of the
 * replica that holds it (or an error). A session the registry does not know,
 * or knows for another user, is left to the usual `404`.
 *
 * @internal
 */
export const locate = (
  state: State.State,
  request: HttpServerRequest.HttpServerRequest,
  auth: McpAuth.AuthInfo | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined, never, Scope.Scope> => {
  const registry = state.registry
  const id = request.headers[Sessions.SESSION_ID]
  if (registry === undefined || id === undefined) return Effect.succeed(undefined)
  const local = state.sessions.get(id)
  if (local !== undefined) return Effect.as(touch(state, registry, local), undefined)
  return registry.lookup(id).pipe(
    Effect.flatMap((found) => {
      if (Option.isNone(found)) return Effect.succeed(undefined)
      const { live, record } = found.value
      if (state.bearer !== undefined && record.principal !== Bearer.principal(auth)) return Effect.succeed(undefined)
      if (!live || record.owner === registry.replicaId) return takeOver(state, registry, record, request)
      // an owner that is not there to take it (its heartbeat not lapsed yet) is gone all the same
      return forward(state, registry, record.owner, request).pipe(
        Effect.catchIf(isUnavailable, () => takeOver(state, registry, record, request))
      )
    }),
    Effect.catch(() => Effect.succeed(unavailable()))
  )
}

// a session's record lives while it is used: touched at most every quarter of the idle timeout
const touch = (state: State.State, registry: Registry, session: State.Session): Effect.Effect<void> => {
  const now = state.clock.currentTimeMillisUnsafe()
  if (now - session.touched < state.idleMillis / 4) return Effect.void
  session.touched = now
  return Effect.ignore(registry.touch(session.id!))
}

// the owner is gone: claim the session and open it here again; a replica that
// claimed it first serves it (forwarded there)
const takeOver = (
  state: State.State,
  registry: Registry,
  record: McpSessionRegistry.SessionRecord,
  request: HttpServerRequest.HttpServerRequest
) =>
  Effect.flatMap(registry.claim(record.id, record.owner), (claimed) => {
    if (claimed) return Effect.as(restore(state, record), undefined)
    return Effect.flatMap(registry.lookup(record.id), (found) =>
      Option.isSome(found) && found.value.live && found.value.record.owner !== registry.replicaId
        ? forward(state, registry, found.value.record.owner, request)
        : Effect.succeed(undefined))
  })

/**
 * Opens a session of another replica here again, from its record: its
 * engine gets the client's `initialize` (the answer goes nowhere) and
 * `notifications/initialized`, as when it began.
 *
 * @internal
 */
export const restore = (state: State.State, record: McpSessionRegistry.SessionRecord): Effect.Effect<State.Session> =>
  Effect.suspend(() => {
    const existing = state.sessions.get(record.id)
    if (existing !== undefined) return Effect.succeed(existing)
    const base = `${globalThis.crypto.randomUUID().slice(0, 8)}.`
    return Effect.flatMap(Sessions.open(state, record.id, record.principal, Exchange.send, false, base), (session) => {
      session.version = record.protocolVersion
      session.record = { ...record, owner: state.registry?.replicaId ?? record.owner }
      Queue.offerUnsafe(session.inbox, JsonRpc.request(RESTORE_INIT_ID, McpSchema.Initialize.name, record.initialize))
      Queue.offerUnsafe(session.inbox, JsonRpc.notification(McpSchema.Initialized.name, {}))
      // what the client set since, in order (the answers go nowhere)
      record.replay?.forEach((request, i) =>
        Queue.offerUnsafe(session.inbox, JsonRpc.request(`${RESTORE_INIT_ID}/${i}`, request.method, request.params))
      )
      // its engine takes them in order on its own fiber: once it answers a
      // `ping` sent after them, the session is initialized and is served
      const ready = Exchange.make(session, false, 1, Deferred.makeUnsafe(), undefined)
      session.inflight.set(RESTORE_PING_ID, ready)
      Queue.offerUnsafe(session.inbox, JsonRpc.request(RESTORE_PING_ID, McpSchema.Ping.name, {}))
      return Effect.as(Deferred.await(ready.reply!), session)
    })
  })

/** Records a session this replica just opened. @internal */
export const register = (
  state: State.State,
  session: State.Session,
  initialize: JsonRpc.Request
): Effect.Effect<void> =>
  state.registry === undefined || session.id === undefined ? Effect.void : Effect.flatMap(
    Sessions.versionOf(session),
    (version) => {
      session.record = {
        id: session.id!,
        owner: state.registry!.replicaId,
        principal: session.principal,
        initialize: (initialize.params ?? {}) as Readonly<Record<string, unknown>>,
        protocolVersion: version ?? McpSchema.LATEST_PROTOCOL_VERSION
      }
      return Effect.ignore(state.registry!.register(session.record))
    }
  )

const SET_LEVEL = McpSchema.SetLevel.name
const SUBSCRIBE = McpSchema.Subscribe.name
const UNSUBSCRIBE = McpSchema.Unsubscribe.name
const MAX_SUBSCRIPTIONS = 1000
const MAX_VALUE = 2048

/**
 * Keeps in the session's record what a request sets for the rest of the
 * session (the logging level, the resource subscriptions), so that a replica
 * taking it over sets it again.
 *
 * @internal
 */
export const remember = (state: State.State, session: State.Session, message: JsonRpc.Message): Effect.Effect<void> => {
  const record = session.record
  if (state.registry === undefined || record === undefined || !("method" in message)) return Effect.void
  const method = message.method
  if (method !== SET_LEVEL && method !== SUBSCRIBE && method !== UNSUBSCRIBE) return Effect.void
  const params = (message.params ?? {}) as Readonly<Record<string, unknown>>
  // what a client sends is kept within bounds: it is written to every replica's registry
  const value = method === SET_LEVEL ? params.level : params.uri
  if (typeof value !== "string" || value.length > MAX_VALUE) return Effect.void
  const replay = (record.replay ?? []).filter((request) =>
    method === SET_LEVEL ? request.method !== SET_LEVEL : request.params.uri !== params.uri
  )
  if (method !== UNSUBSCRIBE) {
    replay.push({ method, params: method === SET_LEVEL ? { level: params.level } : { uri: params.uri } })
  }
  if (replay.length > MAX_SUBSCRIPTIONS) return Effect.void
  session.record = { ...record, replay }
  return Effect.ignore(state.registry.register(session.record))
}

// -----------------------------------------------------------------------------
// Forwarding
// -----------------------------------------------------------------------------

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "upgrade",
  "te",
  "trailer"
])

/**
 * Sends `request` to replica `owner` and answers with its response; fails
 * with `ServerUnavailableError` when the owner is not there to take it.
 * `undefined` when the body is refused here (served here, as without a
 * registry).
 *
 * @internal
 */
export const forward = (
  state: State.State,
  registry: Registry,
  owner: string,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    // the body within the endpoint's bound; one it refuses is answered here, as without a registry
    const read = request.method === "POST"
      ? yield* Effect.option(Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, state.maxBody))
      : Option.some(new ArrayBuffer(0))
    if (Option.isNone(read)) return undefined
    const body = new Uint8Array(read.value)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && !HOP_BY_HOP.has(name)) headers[name] = value
    }
    const response = yield* registry.forward(owner, { method: request.method, url: request.url, headers, body })
    if (response.whole !== undefined) {
      return HttpServerResponse.uint8Array(response.whole, { status: response.status, headers: response.headers })
    }
    return HttpServerResponse.stream(
      // the client's connection ends when the owner's answer does, or fails
      Stream.catchCause(response.body, () => Stream.empty),
      { status: response.status, headers: response.headers }
    )
  })

/**
 * Serves the requests other replicas forward here with `handle` (the route's
 * own handler), for the life of the scope.
 *
 * @internal
 */
export const serve = (
  registry: Registry,
  handle: (
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope>
): Effect.Effect<void, never, Scope.Scope> =>
  registry.serve((forwarded) =>
    Effect.map(handle(toRequest(forwarded)), (response): McpSessionRegistry.ForwardedResponse => {
      const contentType = "contentType" in response.body ? response.body.contentType : undefined
      return {
        status: response.status,
        headers: contentType === undefined
          ? { ...response.headers }
          : { ...response.headers, "content-type": contentType },
        body: bodyOf(response),
        whole: response.body._tag === "Uint8Array" ? response.body.body : undefined
      }
    })
  )

const toRequest = (forwarded: McpSessionRegistry.ForwardedRequest): HttpServerRequest.HttpServerRequest => {
  const host = forwarded.headers["host"] ?? "localhost"
  const hasBody = forwarded.method !== "GET" && forwarded.method !== "HEAD"
  return HttpServerRequest.fromWeb(
    new Request(`http://${host}${forwarded.url}`, {
      method: forwarded.method,
      headers: forwarded.headers,
      ...(hasBody ? { body: forwarded.body as Uint8Array<ArrayBuffer> } : {})
    })
  )
}

const encoder = new TextEncoder()

const bodyOf = (response: HttpServerResponse.HttpServerResponse): Stream.Stream<Uint8Array> => {
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      return Stream.make(body.body)
    case "Stream":
      return Stream.catchCause(body.stream, () => Stream.empty)
    case "Raw":
      return typeof body.body === "string" ? Stream.make(encoder.encode(body.body)) : Stream.empty
    default:
      return Stream.empty
  }
}
