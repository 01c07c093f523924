/**
 * Legacy Streamable HTTP sessions (2025-03-26 to 2025-11-25) shared by
 * several replicas of a server behind a load balancer, without sticky
 * sessions. A session stays in the memory of the replica that opened it (its
 * owner); the registry says which replica that is, and carries the session's
 * requests there:
 *
 * - a request that names a session owned by another live replica is
 *   forwarded to the owner, whole, and its response streamed back
 *   ({@link Service.forward} / {@link Service.serve});
 * - a request that names a session whose owner is gone (stopped, killed,
 *   drained) takes the session over: this replica claims it and opens it
 *   again from its record (the client's `initialize`, then what the client
 *   set since: its logging level, its resource subscriptions), and serves it
 *   from then on. Requests in flight on the old owner are lost; with a shared
 *   event store, a GET stream resumed with `Last-Event-ID` replays what the
 *   client missed and goes on.
 *
 * The same carries a 2026-07-28 retry of a held call (`McpTool.Info.hold`)
 * to the replica holding it, which its sealed `requestState` names (a server
 * takes its replica's id from the registry in its context); when that
 * replica is gone, the retry is told so at once and nothing runs again.
 *
 * `McpHttpServer.layerRoute` uses the registry in context; without one,
 * sessions are this process's own (the default). `@effect-mcp/redis` has one
 * on Redis.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as McpError from "./McpError.ts"

/**
 * What every replica knows of a session.
 *
 * @category models
 * @since 0.2.0
 */
export interface SessionRecord {
  /** The `Mcp-Session-Id`. */
  readonly id: string
  /** The replica that serves it (`Service.replicaId`); `""` once released. */
  readonly owner: string
  /** With auth: whom the session belongs to. */
  readonly principal: string | undefined
  /** The params of the client's `initialize`, to open the session again elsewhere. */
  readonly initialize: Readonly<Record<string, unknown>>
  /** The negotiated protocol version. */
  readonly protocolVersion: string
  /**
   * What the client set since (`logging/setLevel`, `resources/subscribe`),
   * as the requests that set it, sent again in order when the session is
   * opened elsewhere.
   */
  readonly replay?: ReadonlyArray<ReplayedRequest> | undefined
}

/**
 * A request that changed a session's state.
 *
 * @category models
 * @since 0.2.0
 */
export interface ReplayedRequest {
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
}

/**
 * A session and whether its owner still serves it.
 *
 * @category models
 * @since 0.2.0
 */
export interface Lookup {
  readonly record: SessionRecord
  /** The owner is alive (this replica, or one that keeps its heartbeat). */
  readonly live: boolean
}

/**
 * An HTTP request carried to another replica.
 *
 * @category models
 * @since 0.2.0
 */
export interface ForwardedRequest {
  readonly method: string
  /** The path and query, e.g. `/mcp`. */
  readonly url: string
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

/**
 * The response to a forwarded request: its head, then its body as it is
 * written (an SSE stream goes on until it ends).
 *
 * @category models
 * @since 0.2.0
 */
export interface ForwardedResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Stream.Stream<Uint8Array, McpError.McpError>
  /** The whole body, when it is known at once (a JSON answer): carried in one message. */
  readonly whole?: Uint8Array | undefined
}

/**
 * The registry of one replica.
 *
 * @category models
 * @since 0.2.0
 */
export interface Service {
  /** This replica's id, unique among live replicas. */
  readonly replicaId: string
  /** Records a session this replica opened (after its handshake). */
  readonly register: (record: SessionRecord) => Effect.Effect<void, McpError.McpError>
  readonly lookup: (id: string) => Effect.Effect<Option.Option<Lookup>, McpError.McpError>
  /**
   * Whether replica `replicaId` is alive (this one, or one that keeps its
   * heartbeat): a task whose replica is gone is failed. Without it, every
   * replica is taken to be alive.
   */
  readonly isLive?: ((replicaId: string) => Effect.Effect<boolean, McpError.McpError>) | undefined
  /** Makes this replica the owner if `from` still is; whether it did. */
  readonly claim: (id: string, from: string) => Effect.Effect<boolean, McpError.McpError>
  /** The session is in use: its record lives on (records of idle sessions expire). */
  readonly touch: (id: string) => Effect.Effect<void, McpError.McpError>
  /** This replica stops serving the session; the next request anywhere takes it over. */
  readonly release: (id: string) => Effect.Effect<void, McpError.McpError>
  /** The session ended (DELETE, idle, refused handshake). */
  readonly remove: (id: string) => Effect.Effect<void, McpError.McpError>
  /**
   * Sends a request to `owner` and answers with its response; closing the
   * scope before the body ends cancels it there. Fails with the reason
   * `ServerUnavailableError` (`McpError.serverUnavailable(owner, …)`) when
   * the owner is not there to take the request (it does not listen, or the
   * head of its answer does not come in time): the request was not served,
   * and the route takes the session over. The body fails when the owner
   * dies meanwhile.
   */
  readonly forward: (
    owner: string,
    request: ForwardedRequest
  ) => Effect.Effect<ForwardedResponse, McpError.McpError, Scope.Scope>
  /**
   * Serves the requests other replicas forward here with `handle`, for the
   * life of the scope; each request's scope closes when its response is
   * written or cancelled.
   */
  readonly serve: (
    handle: (request: ForwardedRequest) => Effect.Effect<ForwardedResponse, never, Scope.Scope>
  ) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * The session registry that `McpHttpServer.layerRoute` uses when one is in
 * context.
 *
 * @category services
 * @since 0.2.0
 */
export class McpSessionRegistry extends Context.Service<McpSessionRegistry, Service>()(
  "@effect-mcp/core/McpSessionRegistry"
) {}
