/**
 * What the pieces of the Streamable HTTP server share: the settings read
 * from its options, the engine, the scope every session's scope is forked
 * from, and the live sessions; plus the models of a session and of an
 * exchange (the answer to one POST). Made once by `addRoute` (`route.ts`)
 * and passed to the functions of `sessions.ts`, `sessionStreams.ts`,
 * `exchange.ts` and the method handlers.
 *
 * Also what `McpHttpServer` needs before the route is built, kept here
 * because this module is light (the route and its handlers, which load
 * `effect/http`, are loaded when the layer is built): what a handler may ask
 * of its HTTP session (`closeSseStream`, `currentSessionId`), and the
 * `Drains` of `withGracefulShutdown`.
 *
 * @internal
 */
import * as ByteSize from "effect/ByteSize"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import type * as McpHttpServer from "../../../McpHttpServer.ts"
import { McpServer } from "../../../McpServer.ts"
import type * as McpServerSession from "../../../McpServerSession.ts"
import { McpSessionRegistry, type SessionRecord } from "../../../McpSessionRegistry.ts"
import { RequestOrigin } from "../../../McpTransport.ts"
import type * as Bearer from "../../auth/bearer.ts"
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
  /** What the ids of its POST streams start with after the session id: a session taken over from another replica must not reuse that replica's ids. */
  readonly streamBase: string
  lastActivity: number
  /** With a registry: when its record was last touched. */
  touched: number
  /** With a registry: its record, as this replica last wrote it. */
  record: SessionRecord | undefined
  closed: boolean
  /** With `auth`: whom the session belongs to (see `Bearer.principal`). */
  readonly principal: string | undefined
}

/** The answer to one POST that carried requests. @internal */
export interface Exchange {
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
  /** A 2026-07-28 request: its JSON error answer takes the HTTP status of its code. */
  readonly modern: boolean
  /** A modern request's id as its client sent it (the shared session knows it by another). */
  readonly peerId: JsonRpc.RequestId | undefined
}

/** The session whose engine runs the current fiber. @internal */
export const CurrentSession = Context.Reference<Session | undefined>("@effect-mcp/core/McpHttpServer/CurrentSession", {
  defaultValue: () => undefined
})

// -----------------------------------------------------------------------------
// State
// -----------------------------------------------------------------------------

/** The shared state of one endpoint. @internal */
export interface State {
  /** The engine every session serves. */
  readonly server: McpServer["Service"]
  /** The layer's services: a session runs with these, not with its first request's. */
  readonly context: Context.Context<McpServer>
  /** The parent of every session's scope. */
  readonly scope: Scope.Scope
  readonly clock: Clock.Clock
  readonly stateless: boolean
  /** POST answers are SSE streams; otherwise JSON, upgraded when a handler streams. */
  readonly sseMode: boolean
  readonly idleMillis: number
  readonly maxSessions: number
  readonly maxBody: ByteSize.ByteSize
  /** How long a POST stream whose connection dropped is kept for a resumption. */
  readonly abandonedStream: Duration.Duration
  /** The most POST streams a session keeps open (resumable or still written). */
  readonly maxStreamsPerSession: number
  /** The most requests a session has in flight. */
  readonly maxRequestsPerSession: number
  /** The most 2026-07-28 requests in flight, all together. */
  readonly maxModernRequests: number
  /** The interval of keep-alive comments on modern answer streams. */
  readonly keepAlive: Duration.Duration
  /** The `retry` directive, as SSE text. */
  readonly retry: string | undefined
  /** Where stateful sessions store their events, if anywhere. */
  readonly store: McpHttpServer.EventStoreShape | undefined
  /** With `auth`: the bearer check. */
  readonly bearer: Bearer.Guard | undefined
  /** Sessions shared with other replicas, when a registry is in context. */
  readonly registry: McpSessionRegistry["Service"] | undefined
  /** The live sessions, by key. */
  readonly sessions: Map<string, Session>
  /** The one session that serves every 2026-07-28 request, opened with the route. */
  modern: Session | undefined
  /** The last id given to a modern request in that session. */
  modernIds: number
  /** How long shutting down waits for the last answers to be written. */
  readonly shutdownTimeout: Duration.Duration
  /** Shutting down: the sessions are ending, new requests get `503`. */
  closing: boolean
  /** Requests of the endpoint whose response is not written yet. */
  active: number
  /** Completed when `active` drops to 0; made only when someone waits for it. */
  idle: Deferred.Deferred<void> | undefined
}

/** What answers one HTTP method of the endpoint (`post.ts`, `get.ts`, `delete.ts`). @internal */
export type Handler = (
  state: State,
  request: HttpServerRequest.HttpServerRequest,
  auth: McpAuth.AuthInfo | undefined
) => Effect.Effect<HttpServerResponse.HttpServerResponse>

/** Makes the state, in the layer's scope and with its services. @internal */
export const make = Effect.fnUntraced(function*(
  options: McpHttpServer.Options,
  storeTag: Context.Key<McpHttpServer.EventStore, McpHttpServer.EventStoreShape>,
  bearer: Bearer.Guard | undefined
): Effect.fn.Return<State, never, McpServer | Scope.Scope> {
  const context = yield* Effect.context<McpServer>()
  const stateless = options.stateless === true
  return {
    server: Context.get(context, McpServer),
    context,
    scope: yield* Effect.scope,
    clock: yield* Clock.clockWith(Effect.succeed),
    stateless,
    sseMode: options.responseMode === "sse",
    idleMillis: Duration.toMillis(Duration.fromInputUnsafe(options.idleTimeout ?? Duration.minutes(30))),
    maxSessions: options.maxSessions ?? 10_000,
    maxBody: ByteSize.bytes(options.maxBodyBytes ?? 4 * 1024 * 1024),
    abandonedStream: Duration.fromInputUnsafe(options.abandonedStreamTimeout ?? Duration.minutes(1)),
    maxStreamsPerSession: Math.max(1, options.maxStreamsPerSession ?? 100),
    maxRequestsPerSession: Math.max(1, options.maxRequestsPerSession ?? 1000),
    maxModernRequests: Math.max(1, options.maxModernRequests ?? 10_000),
    keepAlive: Duration.fromInputUnsafe(options.sseKeepAlive ?? Duration.seconds(15)),
    retry: options.retry === undefined ? undefined : SseStream.encodeRetry(Duration.fromInputUnsafe(options.retry)),
    store: stateless || options.eventStore === false
      ? undefined
      : options.eventStore ?? Option.getOrUndefined(yield* Effect.serviceOption(storeTag)) ?? EventStore.makeMemory(),
    bearer,
    registry: stateless ? undefined : Option.getOrUndefined(yield* Effect.serviceOption(McpSessionRegistry)),
    sessions: new Map(),
    modern: undefined,
    modernIds: 0,
    shutdownTimeout: Duration.fromInputUnsafe(options.shutdownTimeout ?? Duration.seconds(1)),
    closing: false,
    active: 0,
    idle: undefined
  }
})

// -----------------------------------------------------------------------------
// Inside handlers
// -----------------------------------------------------------------------------

/** Ends the connection carrying the current request's SSE stream (SEP-1699 polling). @internal */
export const closeSseStream: Effect.Effect<void> = Effect.withFiber((fiber) => {
  const session = fiber.getRef(CurrentSession)
  const origin = fiber.getRef(RequestOrigin)
  if (session === undefined || origin === undefined) return Effect.void
  const stream = session.inflight.get(origin)?.stream
  if (stream !== undefined) SseStream.kick(stream)
  return Effect.void
})

/** The `Mcp-Session-Id` of the current session, if any. @internal */
export const currentSessionId: Effect.Effect<Option.Option<string>> = Effect.withFiber((fiber) =>
  Effect.succeed(Option.fromUndefinedOr(fiber.getRef(CurrentSession)?.id))
)

// -----------------------------------------------------------------------------
// Shutdown
// -----------------------------------------------------------------------------

/**
 * The drains of the endpoints served by a layer wrapped with
 * `withGracefulShutdown` (see `shutdown.ts`).
 *
 * @internal
 */
export class Drains extends Context.Service<Drains, Set<Effect.Effect<void>>>()(
  "@effect-mcp/core/McpHttpServer/Drains"
) {}
