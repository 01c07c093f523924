/**
 * DNS-rebinding protection for every server transport on HTTP (Streamable
 * HTTP, legacy SSE, the WebSocket handshake): checks a request's `Host` and
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
 * @internal
 */
import * as Result from "effect/Result"

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

/**
 * The reason a request is refused (answer 403), or `undefined` when it
 * passes.
 *
 * @internal
 */
export const check = (
  header: (name: "host" | "origin") => string | undefined,
  options: GuardOptions,
  loopback: boolean
): string | undefined => {
  const hosts = options.allowedHosts ?? (loopback ? LOOPBACK_NAMES : "any")
  const origins = options.allowedOrigins ?? (loopback ? LOOPBACK_NAMES : [])
  const host = header("host")?.toLowerCase()
  if (hosts !== "any" && host !== undefined && !hosts.includes(host) && !hosts.includes(hostnameOf(host))) {
    return `Invalid Host header: ${host}`
  }
  const origin = header("origin")
  if (origin === undefined || origins === "any" || origins.includes(origin)) return undefined
  const url = Result.try(() => new URL(origin))
  if (Result.isSuccess(url) && origins.includes(url.success.hostname)) return undefined
  return `Invalid Origin header: ${origin}`
}

/**
 * Reads one header from a Node-style or Effect headers record (lower-case
 * keys); a repeated header counts as its first value.
 *
 * @internal
 */
export const headerOf = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) =>
(name: string): string | undefined => {
  const value = headers[name]
  return typeof value === "string" ? value : value?.[0]
}
