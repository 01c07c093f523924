/**
 * The Streamable HTTP server transport (MCP 2025-03-26 to 2025-11-25) on
 * `effect/http`: a route you mount in your own `HttpRouter` at a path,
 * serving the `McpServer` in context, one MCP session per `Mcp-Session-Id`.
 * Platform-free: `NodeMcpHttpServer` wraps it in a standalone Node server,
 * and {@link toWebHandler} makes it a `fetch` handler (Bun, Deno, Workers,
 * Hono, Next.js).
 * The guide "Transports" (`docs/guides/transports.md`) lists what it answers
 * and when.
 *
 * ```ts
 * const Mcp = McpHttpServer.layerRoute({ path: "/mcp", responseMode: "sse" })
 * // HttpRouter.serve(Layer.mergeAll(MyRoutes, Mcp)).pipe(McpHttpServer.withGracefulShutdown)
 * // under NodeHttpServer.layer(...), with an McpServer layer
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as InternalState from "./internal/http/server/state.ts"
import type * as JsonRpc from "./JsonRpc.ts"
import type * as McpError from "./McpError.ts"
import type * as McpResourceServer from "./McpResourceServer.ts"
import type * as McpServer from "./McpServer.ts"

// -----------------------------------------------------------------------------
// Event store
// -----------------------------------------------------------------------------

/**
 * One stored SSE event.
 *
 * @category models
 * @since 0.1.0
 */
export interface StoredEvent {
  readonly id: string
  readonly message: JsonRpc.Message
}

/**
 * Where SSE events are kept for resumption. Event ids are the store's own and
 * must name their stream, so that `Last-Event-ID` alone finds it. Appends to
 * one stream never overlap (one writer per stream at a time), so a store need
 * not order them itself.
 *
 * @category models
 * @since 0.1.0
 */
export interface EventStoreShape {
  /** Stores a message (or, with `undefined`, a priming event) at the end of a stream; returns its event id. */
  readonly append: (streamId: string, message: JsonRpc.Message | undefined) => Effect.Effect<string, McpError.McpError>
  /**
   * The stream an event id belongs to and the messages stored after it, in
   * order (priming events left out). `None` when the id is unknown, or older
   * than what is kept, so that replaying could miss events.
   */
  readonly replayAfter: (lastEventId: string) => Effect.Effect<
    Option.Option<{ readonly streamId: string; readonly events: ReadonlyArray<StoredEvent> }>,
    McpError.McpError
  >
  /** Forgets a stream (its session ended, or it is old). */
  readonly remove: (streamId: string) => Effect.Effect<void>
}

/**
 * The event store used for resumability. When one is in context,
 * {@link layerRoute} uses it (unless its `eventStore` option says otherwise).
 *
 * @category services
 * @since 0.1.0
 */
export class EventStore extends Context.Service<EventStore, EventStoreShape>()(
  "@effect-mcp/core/McpHttpServer/EventStore"
) {}

/**
 * Limits of the in-memory event store.
 *
 * @category models
 * @since 0.1.0
 */
export interface EventStoreMemoryOptions {
  /** Events kept per stream; older ones are dropped (and ids that old can no longer be resumed). Default 1000. */
  readonly maxEventsPerStream?: number | undefined
  /** Streams kept in all; the oldest are dropped first. Default 10 000. */
  readonly maxStreams?: number | undefined
  /**
   * Bytes kept per stream (the JSON text of its events); its oldest events
   * are dropped beyond it. Default 16 MiB.
   */
  readonly maxBytesPerStream?: number | undefined
  /** Bytes kept in all; the oldest events of the oldest streams are dropped beyond it. Default 128 MiB. */
  readonly maxBytes?: number | undefined
}

/**
 * An event store in memory, bounded by {@link EventStoreMemoryOptions}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeEventStoreMemory: (options?: EventStoreMemoryOptions) => Effect.Effect<EventStoreShape> = (options) =>
  // loaded with the first store (its SSE encoder and effect's `Sse` too), not with the barrel
  Effect.map(Effect.promise(() => import("./internal/http/server/eventStore.ts")), (InternalEventStore) =>
    InternalEventStore.makeMemory(options))

/**
 * The in-memory event store as a layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerEventStoreMemory = (options?: EventStoreMemoryOptions): Layer.Layer<EventStore> =>
  Layer.effect(EventStore, makeEventStoreMemory(options))

// -----------------------------------------------------------------------------
// CORS
// -----------------------------------------------------------------------------

/**
 * CORS for browser clients on another origin (a web app on
 * `http://localhost:5173` talking to the server on `http://127.0.0.1:3000`
 * is one too).
 *
 * With it, the endpoint answers `OPTIONS` preflights (`204`, no token
 * needed) with `Access-Control-Allow-Origin` (the request's origin),
 * `-Allow-Methods` (`GET, POST, DELETE, OPTIONS`; `POST, OPTIONS` when
 * stateless), `-Allow-Headers` (`authorization, content-type, accept,
 * mcp-session-id, mcp-protocol-version, last-event-id` and `allowHeaders`,
 * plus the 2026-07-28 `mcp-method`, `mcp-name` and `mcp-param-*` the
 * preflight asks for),
 * `-Max-Age`, and `-Allow-Private-Network` when asked for; and every other
 * response of the endpoint (`401` / `403` challenges, `404`, errors and SSE
 * streams included) carries `Access-Control-Allow-Origin` and
 * `Access-Control-Expose-Headers: mcp-session-id, mcp-protocol-version,
 * www-authenticate`. Every response of the endpoint carries `Vary: Origin`.
 *
 * **With the Host/Origin guard.** The guard runs first: a request it refuses
 * gets its `403` without CORS headers. Origins listed in `origins` pass the
 * guard's Origin check (no need to repeat them in `allowedOrigins`); `"*"`
 * adds none, and allows every origin the guard lets through (on a loopback
 * bind by default the loopback hostnames, any port; elsewhere none unless
 * `allowedOrigins` says so, e.g. `"any"`). The `Host` check is unchanged.
 *
 * Without the option nothing changes: no CORS headers, and `OPTIONS` gets
 * `405`. Do not combine it with a CORS middleware on the same router.
 *
 * @category models
 * @since 0.1.0
 */
export interface CorsOptions {
  /**
   * The origins allowed to read responses: full origins
   * (`https://app.example.com`) or hostnames (any scheme and port), or `"*"`
   * for every origin the Host/Origin guard accepts. The allowed origin is
   * echoed, never `*`.
   */
  readonly origins: ReadonlyArray<string> | "*"
  /** Send `Access-Control-Allow-Credentials: true` (cookies, HTTP auth). Default `false`. */
  readonly credentials?: boolean | undefined
  /** How long a browser may cache a preflight answer (`Access-Control-Max-Age`, whole seconds). Default 2 hours. */
  readonly maxAge?: Duration.Input | undefined
  /** Request headers to allow besides the MCP ones. */
  readonly allowHeaders?: ReadonlyArray<string> | undefined
}

// -----------------------------------------------------------------------------
// Route
// -----------------------------------------------------------------------------

/**
 * How the route serves.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The MCP endpoint. Default `"/mcp"`. */
  readonly path?: HttpRouter.PathInput | undefined
  /**
   * How requests are answered: `"json"` (default) sends one JSON body unless
   * the handler sends notifications or requests before its response, which
   * turns the answer into an SSE stream; `"sse"` always streams.
   */
  readonly responseMode?: "json" | "sse" | undefined
  /** No sessions: each POST is served by a fresh session (no GET stream, no DELETE, no server→client requests). */
  readonly stateless?: boolean | undefined
  /**
   * Accepted `Host` header values: a hostname (any port) or `host:port`, or
   * `"any"`. Default: when the `HttpServer` in context is bound to a loopback
   * address, `localhost`, `127.0.0.1` and `[::1]`; otherwise `"any"`.
   */
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  /**
   * Accepted `Origin` header values: a full origin (`http://localhost:3000`)
   * or a hostname (any scheme and port), or `"any"`. A request without
   * `Origin` (not from a browser) is always accepted. Default: the loopback
   * hostnames when bound to loopback; otherwise none (every browser origin
   * gets `403`).
   */
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  /**
   * The event store behind resumability; `false` turns resumability off (no
   * event ids, no priming events, no `Last-Event-ID`). Default: the
   * `EventStore` in context, else a new in-memory store.
   */
  readonly eventStore?: EventStoreShape | false | undefined
  /** The `retry` sent with priming events and before the server closes a connection early. Default none (1 s when closing early). */
  readonly retry?: Duration.Input | undefined
  /** The interval of SSE keep-alive comments on a 2026-07-28 answer stream (`subscriptions/listen`). Default 15 seconds. */
  readonly sseKeepAlive?: Duration.Input | undefined
  /** A session with no request in flight and no open GET stream for this long is closed. Default 30 minutes. */
  readonly idleTimeout?: Duration.Input | undefined
  /** The most live sessions (in stateless mode: requests in progress); beyond it `initialize` gets `503`. Default 10 000. */
  readonly maxSessions?: number | undefined
  /** The largest accepted POST body (`413` beyond). Default 4 MiB. */
  readonly maxBodyBytes?: number | undefined
  /**
   * A POST's SSE stream whose connection dropped before its end (and that no
   * `GET` with `Last-Event-ID` took over) is kept this long for a
   * resumption; then it is dropped: what it buffered and stored is
   * forgotten, and its requests still in flight are cancelled. Measured
   * with the `Clock`. Default 1 minute.
   */
  readonly abandonedStreamTimeout?: Duration.Input | undefined
  /**
   * The most POST streams one session keeps (still written, or waiting for a
   * resumption); a POST carrying requests beyond it gets `429`. Default 100.
   */
  readonly maxStreamsPerSession?: number | undefined
  /** The most requests one session has in flight; a POST carrying more gets `429`. Default 1000. */
  readonly maxRequestsPerSession?: number | undefined
  /**
   * The most 2026-07-28 requests in flight at once (they share no session,
   * so this caps them all together); one beyond it gets `429`. Default 10,000.
   */
  readonly maxModernRequests?: number | undefined
  /**
   * Protects the endpoint with OAuth bearer tokens (see `McpResourceServer`):
   * every request needs a valid token, handlers read it with
   * `McpAuth.CurrentAuth`, sessions stay with the user who opened them, and
   * the Protected Resource Metadata document is served at
   * `/.well-known/oauth-protected-resource{path}` and the root form.
   *
   * Open SSE connections are checked too: a connection (the GET stream, a
   * POST's stream, a resumption) ends when the token it was opened with
   * reaches its `expiresAt` (by the `Clock`; a token without `expiresAt` is
   * never cut). The stream itself is kept: with resumability the client
   * reconnects with `Last-Event-ID` and a fresh token (getting `401` with
   * the old one) and misses nothing, the responses a POST's stream still
   * owes included. Without resumability what the POST's stream still owes is
   * lost, as when a connection drops. A request answered with one JSON body
   * is not cut.
   */
  readonly auth?: McpResourceServer.Options | undefined
  /** CORS for browser clients; see {@link CorsOptions}. Default none. */
  readonly cors?: CorsOptions | undefined
  /**
   * Shutdown ends every session at once (see {@link withGracefulShutdown});
   * this bounds how long it then waits for the last answers (the end of each
   * open stream, the errors of interrupted requests) to be written before it
   * lets the HTTP server close anyway. Default 1 second.
   */
  readonly shutdownTimeout?: Duration.Input | undefined
}

/**
 * The MCP endpoint as a route of the `HttpRouter` in context, serving the
 * `McpServer` in context: mount it next to your own routes, serve them with
 * `HttpRouter.serve`, and wrap that with {@link withGracefulShutdown}.
 *
 * ```ts
 * const App = HttpRouter.serve(Layer.mergeAll(MyRoutes, McpHttpServer.layerRoute({ path: "/mcp" }))).pipe(
 *   McpHttpServer.withGracefulShutdown,
 *   Layer.provide(Server),                 // McpServer.layer(...) + registrations
 *   Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 3000, host: "127.0.0.1" }))
 * )
 * ```
 *
 * Closing the layer ends every session: open streams end (clients may
 * reconnect), requests in flight are interrupted and answered with an error,
 * and requests that arrive meanwhile get `503`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerRoute = (options?: Options): Layer.Layer<never, never, McpServer.McpServer | HttpRouter.HttpRouter> =>
  // the route (`effect/http`) is loaded when the layer is built, not with this module
  Layer.effectDiscard(Effect.flatMap(
    Effect.promise(() => import("./internal/http/server/route.ts")),
    (InternalRoute) => InternalRoute.addRoute(options ?? {}, EventStore)
  ))

// -----------------------------------------------------------------------------
// Web handler
// -----------------------------------------------------------------------------

/**
 * The health routes of {@link toWebHandler}, answered next to the MCP
 * endpoint (no auth, no Host or Origin check), with `Cache-Control:
 * no-store`: `GET /healthz` (liveness) answers `200` while the handler
 * serves; `GET /readyz` (readiness) `200` when ready, `503` once `dispose`
 * began, or when `readiness` fails, dies or takes longer than
 * `readinessTimeout`. As `NodeMcpHttpServer`'s.
 *
 * @category models
 * @since 0.3.0
 */
export interface HealthOptions {
  /** The liveness path; `false` for none. Default `"/healthz"`. */
  readonly healthPath?: `/${string}` | false | undefined
  /** The readiness path; `false` for none. Default `"/readyz"`. */
  readonly readyPath?: `/${string}` | false | undefined
  /** Run on each readiness probe: a failure (any error or defect) answers `503`. Default none. */
  readonly readiness?: Effect.Effect<void, unknown> | undefined
  /** How long `readiness` may take before the probe answers `503`. Default 1 second. */
  readonly readinessTimeout?: Duration.Input | undefined
}

/**
 * The options of {@link toWebHandler}: the route's {@link Options} and the
 * {@link HealthOptions}. What differs from a server that knows its address:
 *
 * - `auth.resource` is required (no bound address to default to);
 * - the Host/Origin guard has no loopback default: every `Host` is accepted
 *   and every browser `Origin` refused unless `allowedHosts` /
 *   `allowedOrigins` or `cors` say otherwise (set `allowedHosts` for a
 *   server on localhost, against DNS rebinding);
 * - `stateless: true` is the legacy era's mode for runtimes that do not keep
 *   a process alive between requests (Cloudflare Workers, serverless
 *   functions): no legacy sessions, so no server→client requests in that
 *   era. 2026-07-28 requests are stateless anyway and served either way.
 *
 * @category models
 * @since 0.3.0
 */
export interface WebHandlerOptions extends Options, HealthOptions {
  /** As {@link Options.auth}, with the `resource` (the endpoint's public URL) required. */
  readonly auth?: (McpResourceServer.Options & { readonly resource: string | URL }) | undefined
  /** Log every HTTP request with Effect's logger. Default `false`. */
  readonly logRequests?: boolean | undefined
}

/**
 * A web-standard handler and how it ends.
 *
 * @category models
 * @since 0.3.0
 */
export interface WebHandler {
  /** Answers a request; an unknown path gets `404`. Rejects only when the server's layer failed to build. */
  readonly handler: (request: Request) => Promise<Response>
  /**
   * Ends every MCP session (open streams end, requests in flight are
   * answered with an error, bounded by `shutdownTimeout`), then closes the
   * server's layer. Requests that arrive meanwhile get `503`. Idempotent.
   */
  readonly dispose: () => Promise<void>
}

/**
 * The Streamable HTTP endpoint, its health routes and (with `auth`) its
 * metadata routes as a web-standard `fetch` handler, for Bun, Deno,
 * Cloudflare Workers, Hono, Next.js route handlers, or Node through an
 * adapter. Built on effect's `HttpRouter.toWebHandler`; the server's layer is
 * built at once, and requests that come meanwhile wait for it.
 *
 * Both eras: 2026-07-28 requests always (stateless); legacy sessions live in
 * the handler's memory, so they need a process that lives on between
 * requests (Bun, Deno, Node); elsewhere set `stateless: true`.
 *
 * @example
 * ```ts
 * import { McpHttpServer, McpServer, McpTool } from "@effect-mcp/core"
 * import { Effect, Layer, Schema } from "effect"
 *
 * const Greet = McpTool.make("greet", {
 *   input: Schema.Struct({ name: Schema.String }),
 *   handler: ({ name }) => Effect.succeed(`Hello, ${name}!`)
 * })
 * const Server = McpServer.register(Greet).pipe(Layer.provideMerge(McpServer.layer({ name: "demo", version: "1.0.0" })))
 *
 * const { handler, dispose } = McpHttpServer.toWebHandler(Server, { path: "/mcp" })
 * // Bun.serve({ fetch: handler }) · Deno.serve(handler) · export default { fetch: handler }
 * // app.all("/mcp", (c) => handler(c.req.raw))   (Hono)
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const toWebHandler = <E>(
  serverLayer: Layer.Layer<McpServer.McpServer, E>,
  options?: WebHandlerOptions
): WebHandler => {
  // `effect/http` is loaded with the first handler, not with this module
  let web: WebHandler | undefined
  const loading = Effect.runPromise(Effect.map(
    Effect.promise(() => import("./internal/http/server/web.ts")),
    (Web) => (web = Web.make(serverLayer, options ?? {}, layerRoute))
  ))
  // not an unhandled rejection at start-up: each request rejects with it
  loading.catch(() => undefined)
  return {
    handler: (request) => web !== undefined ? web.handler(request) : loading.then((loaded) => loaded.handler(request)),
    dispose: () => loading.then((loaded) => loaded.dispose())
  }
}

/**
 * The health routes ({@link HealthOptions}) given to `serve`, which mounts
 * them next to its own; readiness answers `503` from the moment the layer
 * returned starts to close. For a platform's HTTP server (`NodeMcpHttpServer`).
 *
 * @category layers
 * @since 0.3.0
 */
export const withHealth = <A, E, R>(
  options: HealthOptions | undefined,
  serve: (health: Layer.Layer<never, never, HttpRouter.HttpRouter>) => Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("./internal/http/server/health.ts")),
      (Health) => Health.withHealth(options, serve)
    )
  )

// the sessions' state (and the SSE encoder it uses) is loaded when first
// needed, not with this module: a program that imports the barrel but serves
// stdio never loads it
let stateModule: typeof InternalState | undefined
const loadState: Effect.Effect<typeof InternalState> = Effect.suspend(() =>
  stateModule !== undefined ? Effect.succeed(stateModule) : Effect.map(
    Effect.promise(() => import("./internal/http/server/state.ts")),
    (module) => (stateModule = module)
  )
)

/**
 * Wraps the layer that serves the MCP routes (`HttpRouter.serve(...)`) so
 * that, when it closes, those routes end their sessions first, and only then
 * does the HTTP server close.
 *
 * **Why.** When a server closes, it first waits for its open connections to
 * end (`@effect/platform-node`'s `NodeHttpServer` up to
 * `gracefulShutdownTimeout`, 20 seconds by default), and only then releases
 * the routes it serves. An MCP endpoint's SSE streams (a session's `GET`
 * stream, a `subscriptions/listen` answer, a tool still running) never end
 * by themselves, so without this wrapper that wait runs out first: a
 * `SIGTERM` takes 20 seconds, and the streams are cut rather than ended.
 * With it the streams end cleanly at once, and closing takes milliseconds
 * (at most the routes' `shutdownTimeout`, plus whatever your other routes
 * keep open).
 *
 * Apply it to the serving layer itself, not to the routes inside it.
 *
 * @category layers
 * @since 0.1.0
 */
export const withGracefulShutdown = <A, E, R>(self: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.unwrap(Effect.map(loadState, (InternalState) => {
    const drains = new Set<Effect.Effect<void>>()
    // built after `self`, so closed before it
    const first = Layer.effectDiscard(
      Effect.addFinalizer(() =>
        Effect.forEach(Array.from(drains), (drain) => drain, { concurrency: "unbounded", discard: true })
      )
    )
    return first.pipe(Layer.provideMerge(Layer.provide(self, Layer.succeed(InternalState.Drains, drains))))
  }))

// -----------------------------------------------------------------------------
// Inside handlers
// -----------------------------------------------------------------------------

/**
 * Ends the connection that carries the current request's SSE stream, without
 * ending the stream (SEP-1699 polling): a `retry` is sent, the client
 * reconnects with `GET` and `Last-Event-ID`, and gets what was sent meanwhile.
 * Does nothing outside a request served over HTTP, in JSON mode while the
 * answer is still a JSON body, or when resumability is off.
 *
 * @category accessors
 * @since 0.1.0
 */
export const closeSseStream: Effect.Effect<void> = Effect.flatMap(
  loadState,
  (InternalState) => InternalState.closeSseStream
)

/**
 * The `Mcp-Session-Id` of the session the current handler serves, if it is
 * served over HTTP with sessions.
 *
 * @category accessors
 * @since 0.1.0
 */
export const sessionId: Effect.Effect<Option.Option<string>> = Effect.flatMap(
  loadState,
  (InternalState) => InternalState.currentSessionId
)
