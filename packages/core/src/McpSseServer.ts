/**
 * The HTTP+SSE server transport of MCP 2024-11-05 (superseded by Streamable
 * HTTP, still spoken by older clients) as routes of your `HttpRouter`: `GET
 * {ssePath}` opens a session's event stream (its first event, `endpoint`,
 * names the URL to POST to), and `POST {messagesPath}?sessionId=…` feeds it
 * (`202`; the reply arrives on the stream). Host/Origin checks, `cors` and
 * `auth` follow `McpHttpServer`'s rules.
 *
 * ```ts
 * const Sse = McpSseServer.layerRoute({ ssePath: "/sse", messagesPath: "/messages" })
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import type * as McpHttpServer from "./McpHttpServer.ts"
import type * as McpResourceServer from "./McpResourceServer.ts"
import type { McpServer } from "./McpServer.ts"

/**
 * Where the routes are and what they accept.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The path of the event stream (GET). Default `/sse`. */
  readonly ssePath?: HttpRouter.PathInput | undefined
  /**
   * The path messages are POSTed to, announced in the `endpoint` event as
   * given (an absolute path: mount the routes without a prefix, or include
   * it). Default `/messages`.
   */
  readonly messagesPath?: HttpRouter.PathInput | undefined
  /**
   * Accepted `Origin` values: a full origin (`http://localhost:5173`) or a
   * hostname (any scheme and port), or `"any"`. A request without `Origin`
   * (not from a browser) is accepted. Default: the loopback hostnames when
   * the server is bound to a loopback address; otherwise none.
   */
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  /**
   * Accepted `Host` values: a hostname (any port) or `host:port`, or `"any"`.
   * Default: `localhost`, `127.0.0.1` and `[::1]` when the server is bound
   * to a loopback address; otherwise `"any"`.
   */
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  /** The largest accepted POST body, in bytes. Default 4 MiB. */
  readonly maxMessageBytes?: number | undefined
  /** The most open streams (one session each); a GET beyond it gets `503`. Default 10 000. */
  readonly maxSessions?: number | undefined
  /**
   * Protects both routes with OAuth bearer tokens (see `McpResourceServer`):
   * the GET and every POST need a valid token, the POST's requests the
   * scopes of their method or tool, and a stream stays with the user who
   * opened it (a POST with another user's token gets `404`). The resource
   * defaults to the bound address plus `ssePath`; its metadata document is
   * served at `/.well-known/oauth-protected-resource{ssePath}` and the root
   * form.
   */
  readonly auth?: McpResourceServer.Options | undefined
  /**
   * CORS for browser clients, on both routes: see
   * `McpHttpServer.CorsOptions` (allowed methods `GET, POST, OPTIONS`).
   * Default none.
   */
  readonly cors?: McpHttpServer.CorsOptions | undefined
}

/**
 * The two routes, added to the `HttpRouter` in context, serving the
 * `McpServer` in context: each stream is one session (`McpServer.serve`),
 * which ends when the client goes away. A POST for an unknown session is
 * `404`, a body that is not JSON `400` (a JSON-RPC parse error), one over
 * `maxMessageBytes` `413`, another content type `415`. With `auth`, a stream
 * ends when the token it was opened with expires (by the `Clock`): the
 * client connects again with a fresh token, in a new session (this transport
 * cannot resume). Closing the layer's scope ends the open streams.
 *
 * With `HttpRouter.serve`, the HTTP server stops before the routes are
 * released, and waits for open responses first (`NodeHttpServer`'s
 * `gracefulShutdownTimeout`, 20 s by default) before cutting them: pass
 * `disablePreemptiveShutdown: true` to `NodeHttpServer.layer` to cut the
 * streams at once. Node's `server.close()` also waits for connections whose
 * client aborted a stream without closing them (undici's `fetch` keeps them
 * for seconds). `NodeMcpSseServer.layer` handles both.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerRoute = (options?: Options): Layer.Layer<never, never, McpServer | HttpRouter.HttpRouter> =>
  // the routes (`effect/http`) are loaded when the layer is built, not with this module
  Layer.unwrap(
    Effect.map(Effect.promise(() => import("./internal/sse/server.ts")), (Internal) => Internal.layerRoute(options))
  )
