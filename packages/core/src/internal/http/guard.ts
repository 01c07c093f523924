/**
 * DNS-rebinding protection for every server transport on HTTP (Streamable
 * HTTP, HTTP+SSE, the WebSocket handshake): checks a request's `Host` and
 * `Origin` headers.
 *
 * - `allowedHosts`: a hostname (any port) or `host:port`, or `"any"`. Default:
 *   on a loopback bind `localhost`, `127.0.0.1` and `[::1]`; otherwise
 *   `"any"`. A request without `Host` is not a browser's, and passes.
 * - `allowedOrigins`: a full origin (`http://localhost:3000`) or a hostname
 *   (any scheme and port), or `"any"`. Default: on a loopback bind the
 *   loopback hostnames; otherwise none, so every browser origin is refused.
 *   A request without `Origin` (not from a browser) passes.
 *
 * And CORS for browser clients ({@link makeCors}): the origins of the
 * `cors` option pass the Origin check too, and get the CORS headers. Plus
 * the Streamable HTTP server's checks of `Accept` and `Content-Type` (that
 * of `MCP-Protocol-Version`, which answers with an HTTP response, is
 * `checkVersion` in `server/responses.ts`: this module loads no
 * `effect/http` module, for the WebSocket and HTTP+SSE servers).
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import type * as HttpServer from "effect/http/HttpServer"
import * as NetAddress from "effect/net/NetAddress"
import * as Result from "effect/Result"
import type * as McpHttpServer from "../../McpHttpServer.ts"

/** @internal */
export interface GuardOptions {
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
}

const LOOPBACK_NAMES: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

const hostnameOf = (host: string): string => {
  if (host.startsWith("[")) {
    const close = host.indexOf("]")
    return close === -1 ? host : host.slice(0, close + 1)
  }
  const colon = host.indexOf(":")
  return colon === -1 ? host : host.slice(0, colon)
}

// a full origin, or a hostname (any scheme and port)
const originIn = (list: ReadonlyArray<string>, origin: string): boolean => {
  if (list.includes(origin)) return true
  const url = Result.try(() => new URL(origin))
  return Result.isSuccess(url) && list.includes(url.success.hostname)
}

/** Whether the server is bound to a loopback address. @internal */
export const isLoopback = (address: HttpServer.HttpServer["Service"]["address"]): boolean =>
  address._tag !== "UnixPathAddress" && NetAddress.isLoopback(address.address)

/**
 * The reason a request is refused (answer 403), or `undefined` when it
 * passes. `extraOrigins` (the origins of a `cors` option) pass the Origin
 * check as well.
 *
 * @internal
 */
export const check = (
  header: (name: "host" | "origin") => string | undefined,
  options: GuardOptions,
  loopback: boolean,
  extraOrigins?: ReadonlyArray<string>
): string | undefined => {
  const hosts = options.allowedHosts ?? (loopback ? LOOPBACK_NAMES : "any")
  const origins = options.allowedOrigins ?? (loopback ? LOOPBACK_NAMES : [])
  const host = header("host")?.toLowerCase()
  if (hosts !== "any" && host !== undefined && !hosts.includes(host) && !hosts.includes(hostnameOf(host))) {
    return `Invalid Host header: ${host}`
  }
  const origin = header("origin")
  if (origin === undefined || origins === "any" || originIn(origins, origin)) return undefined
  if (extraOrigins !== undefined && originIn(extraOrigins, origin)) return undefined
  return `Invalid Origin header: ${origin}`
}

// -----------------------------------------------------------------------------
// CORS
// -----------------------------------------------------------------------------

/** The CORS answers of one endpoint. @internal */
export interface Cors {
  /** The origins that pass the Origin check because CORS names them (none for `"*"`). */
  readonly extraOrigins: ReadonlyArray<string>
  /**
   * The headers of an actual response to a request that passed the guard:
   * `Vary: Origin` always; the allow/expose headers when the origin is
   * allowed.
   */
  readonly headers: (origin: string | undefined) => Record<string, string>
  /** The headers of the `204` answer to a preflight that passed the guard. */
  readonly preflight: (
    origin: string | undefined,
    header: (name: string) => string | undefined
  ) => Record<string, string>
}

const ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id"
]

/**
 * The 2026-07-28 standard headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`,
 * the latter named by the tool) a preflight asks for, lower-case: allowed
 * as asked, since a browser refuses a modern request without them.
 */
const standardHeadersAsked = (asked: string | undefined): ReadonlyArray<string> =>
  asked === undefined ?
    [] :
    asked.split(",").map((name) => name.trim().toLowerCase()).filter((name) =>
      name === "mcp-method" || name === "mcp-name" || (name.startsWith("mcp-param-") && name.length > 10)
    )

const EXPOSE_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate"
const DEFAULT_MAX_AGE = Duration.hours(2)

/**
 * The CORS answers for `options`; `methods` is the `Access-Control-Allow-Methods`
 * value. An origin is allowed when it passed the guard and `options.origins`
 * is `"*"` or names it (a full origin, or a hostname).
 *
 * @internal
 */
export const makeCors = (options: McpHttpServer.CorsOptions, methods: string): Cors => {
  const list = options.origins === "*" ? undefined : options.origins
  const allowed = (origin: string | undefined): origin is string =>
    origin !== undefined && (list === undefined || originIn(list, origin))
  const credentials: Record<string, string> = options.credentials === true
    ? { "access-control-allow-credentials": "true" }
    : {}
  const allowHeaderList = [
    ...new Set([...ALLOW_HEADERS, ...(options.allowHeaders ?? []).map((name) => name.toLowerCase())])
  ]
  const allowHeaders = (asked: string | undefined) =>
    [...new Set([...allowHeaderList, ...standardHeadersAsked(asked)])].join(", ")
  const maxAge = String(
    Math.floor(Duration.toMillis(Duration.fromInputUnsafe(options.maxAge ?? DEFAULT_MAX_AGE)) / 1000)
  )
  return {
    extraOrigins: list ?? [],
    headers: (origin) =>
      allowed(origin)
        ? {
          vary: "Origin",
          "access-control-allow-origin": origin,
          "access-control-expose-headers": EXPOSE_HEADERS,
          ...credentials
        }
        : { vary: "Origin" },
    preflight: (origin, header) =>
      allowed(origin)
        ? {
          // the allowed headers depend on the ones asked for (the modern standard headers)
          vary: "Origin, Access-Control-Request-Headers",
          "access-control-allow-origin": origin,
          "access-control-allow-methods": methods,
          "access-control-allow-headers": allowHeaders(header("access-control-request-headers")),
          "access-control-max-age": maxAge,
          ...credentials,
          // Private Network Access: a public page asking for a server on a private address
          ...(header("access-control-request-private-network") === "true"
            ? { "access-control-allow-private-network": "true" }
            : {})
        }
        : { vary: "Origin" }
  }
}

/**
 * Reads one header from a Node-style or Effect headers record (lower-case
 * keys); a repeated header counts as its first value.
 *
 * @internal
 */
export const headerOf =
  (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) =>
  (name: string): string | undefined => {
    const value = headers[name]
    return typeof value === "string" ? value : value?.[0]
  }

// -----------------------------------------------------------------------------
// Streamable HTTP headers
// -----------------------------------------------------------------------------

/** The `MCP-Protocol-Version` header (lower-case). @internal */
export const PROTOCOL_VERSION = "mcp-protocol-version"

/** The media types of an `Accept` or `Content-Type` header, lower-case, without parameters. @internal */
export const mediaTypes = (header: string | undefined): Array<string> =>
  header === undefined ? [] : header.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase())

// a client sends the same `Accept` with every POST: the last answer is kept
let lastAccept: string | undefined
let lastAccepted = false

/** A POST must accept both JSON and SSE answers. @internal */
export const acceptsPost = (header: string | undefined) => {
  if (header !== undefined && header === lastAccept) return lastAccepted
  const types = mediaTypes(header)
  const accepted = types.includes("*/*") || (types.includes("application/json") && types.includes("text/event-stream"))
  if (header !== undefined) {
    lastAccept = header
    lastAccepted = accepted
  }
  return accepted
}

/** The media type of a `Content-Type` header, lower-case, without parameters (`""` when absent). @internal */
export const contentType = (header: string | undefined): string => {
  if (header === undefined) return ""
  // the usual header, as it is
  if (header === "application/json") return header
  return mediaTypes(header)[0]!
}

/** A GET must accept SSE. @internal */
export const acceptsSse = (header: string | undefined) => {
  const types = mediaTypes(header)
  return types.includes("*/*") || types.includes("text/event-stream")
}
