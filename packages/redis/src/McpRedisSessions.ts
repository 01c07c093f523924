/**
 * `McpSessionRegistry` on Redis: legacy Streamable HTTP sessions shared by
 * the replicas of a server behind a load balancer without sticky sessions.
 *
 * ```ts
 * const Sessions = McpRedisSessions.layer().pipe(Layer.provide(McpRedis.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * - Records: a hash per session (`${prefix}sessions:${id}`) that expires
 *   `sessionTtl` after it was last touched. `claim` is a compare-and-set in
 *   a Lua script: of two replicas taking a session over, exactly one wins.
 *   `release` gives a session up only while this replica owns it. A record
 *   that cannot be read (not written by this module) is no session.
 * - Liveness: each replica sets `${prefix}replicas:${replicaId}` every
 *   `heartbeatInterval`, expiring after `heartbeatTtl`; closing the layer
 *   deletes it, so a drained replica is gone at once, and a killed one
 *   within `heartbeatTtl`.
 * - Relay: requests are forwarded on pub/sub, to the owner's channel
 *   `${prefix}relay:${replicaId}`; the response comes back, head then body
 *   chunks, on the forwarder's `${prefix}relay-replies:${replicaId}`. Each
 *   replica holds one subscription per channel (the replies one for the
 *   life of the layer, the requests one while any `serve` runs; the latest
 *   `serve` handles). A forwarded body fails when the owner's heartbeat
 *   stops, or when a chunk is lost; the owner stops serving when the
 *   forwarder's heartbeat stops or nobody listens to the response any
 *   more. There is no flow control: a body is buffered on the forwarder as
 *   fast as the owner writes it, up to 16 MiB not yet read by the client;
 *   beyond, the client's connection ends (a resumable stream is resumed).
 *   A JSON answer travels in one message.
 * - Direct hop (`direct`, off by default): the replica also listens on an
 *   HTTP port (`host`, default `127.0.0.1`; bind a private interface) and
 *   advertises `advertise` (default `http://host:port`) as the value of its
 *   heartbeat key. A request for its sessions is then sent straight to that
 *   address (`POST /.mcp-relay/v1`, keep-alive connections), the address read
 *   once per `heartbeatTtl`; its answer streams back with HTTP's flow
 *   control. The hop serves only requests carrying the replicas' shared
 *   secret (`direct.secret`, else `MCP_RELAY_SECRET`, else one kept in Redis
 *   at `${prefix}secret:relay`), answering `401` otherwise. Pub/sub stays the
 *   fallback: for a replica that advertises no address, whose address
 *   refuses connections, that does not serve yet (`503`) or has another
 *   secret (a connection lost once the request went out fails it instead:
 *   it may have run). Closing the forwarder's scope closes the connection, which
 *   interrupts the request on the owner; the owner's death (its connections
 *   closed) fails the body at once.
 *
 * Each replica needs its own `replicaId` (the default is a random UUID) and
 * all of them the same `prefix`.
 *
 * @since 0.1.0
 */
import * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/sessions.ts"

/**
 * The options of the Redis session registry.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** Prefix of every key and channel. Default `"mcp:"`. */
  readonly prefix?: string | undefined
  /** This replica's id, unique among live replicas. Default a random UUID. */
  readonly replicaId?: string | undefined
  /** How often the heartbeat is written. Default 1 second. */
  readonly heartbeatInterval?: Duration.Input | undefined
  /** How long a heartbeat lasts: a replica that stops writing it is gone after this. Default 3 seconds. */
  readonly heartbeatTtl?: Duration.Input | undefined
  /**
   * How long an untouched session record lives. Default 35 minutes: keep it
   * above the route's `idleTimeout` (default 30 minutes), as a session in
   * use touches its record every quarter of that.
   */
  readonly sessionTtl?: Duration.Input | undefined
  /**
   * How long `forward` waits for the head of the response. Default none: a
   * JSON answer comes when the handler is done, however long it runs, and
   * the owner's heartbeat tells when it died. A timeout fails the request
   * (it may have run).
   */
  readonly forwardTimeout?: Duration.Input | undefined
  /**
   * The direct hop: forwarded requests go straight to their owner over HTTP
   * instead of pub/sub (see the module's header). Off by default.
   */
  readonly direct?: DirectOptions | undefined
}

/**
 * Where this replica listens for the requests other replicas send it
 * straight, what it tells them, and the secret they share.
 *
 * @category models
 * @since 0.1.0
 */
export interface DirectOptions {
  /** The interface to listen on. Default `"127.0.0.1"`; bind a private one. */
  readonly host?: string | undefined
  /** Default 0: any free port. */
  readonly port?: number | undefined
  /**
   * The base URL the others reach this listener at, e.g. the pod's address
   * (`http://10.0.3.7:7070`). Default `http://${host}:${port}` with the port
   * bound; required when `host` is a wildcard (`0.0.0.0`, `::`).
   */
  readonly advertise?: string | undefined
  /**
   * The secret every replica's hop requests carry. Default the environment's
   * `MCP_RELAY_SECRET`, else one the first replica keeps in Redis
   * (`${prefix}secret:relay`).
   */
  readonly secret?: string | undefined
}

/**
 * The registry of one replica, with its heartbeat, its replies subscription
 * and, with `direct`, its HTTP listener and connection pool kept for the
 * life of the scope.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (
  options?: Options
) => Effect.Effect<McpSessionRegistry.Service, never, Redis.Redis | Scope.Scope> = internal.make

/**
 * {@link make} as the `McpSessionRegistry` layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options?: Options
): Layer.Layer<McpSessionRegistry.McpSessionRegistry, never, Redis.Redis> =>
  Layer.effect(McpSessionRegistry.McpSessionRegistry, internal.make(options))
