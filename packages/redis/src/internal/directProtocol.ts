/**
 * The wire of the direct hop between replicas (`directServer.ts`,
 * `directClient.ts`): one HTTP `POST ${PATH}` per forwarded request, to the
 * address the owner advertises as the value of its heartbeat key.
 *
 * - Request: the forwarded request's headers as they are (hop-by-hop ones
 *   dropped; its `host` as `x-mcp-relay-host`), its method and path+query in
 *   `x-mcp-relay-method` / `x-mcp-relay-url`, its body raw; plus the shared
 *   secret (`x-mcp-relay-secret`), the owner meant (`x-mcp-relay-to`) and the
 *   forwarder (`x-mcp-relay-from`).
 * - Response: the forwarded response's status, headers and body, marked
 *   `x-mcp-relay-body: whole` (a body known at once, with its length) or
 *   `stream` (written as it comes). A response without the mark is the hop's
 *   own refusal: `401` (secret), `404` (not the hop), `421` (another
 *   replica), `503` (not serving).
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Option from "effect/Option"
import type * as Redis from "effect/persistence/Redis"
import * as Errors from "./errors.ts"

/** The hop's only path. @internal */
export const PATH = "/.mcp-relay/v1"

/** @internal */
export const SECRET = "x-mcp-relay-secret"
/** @internal */
export const TO = "x-mcp-relay-to"
/** @internal */
export const FROM = "x-mcp-relay-from"
/** @internal */
export const METHOD = "x-mcp-relay-method"
/** @internal */
export const URL_HEADER = "x-mcp-relay-url"
/** @internal */
export const HOST = "x-mcp-relay-host"
/** The mark of a relayed response: `whole` or `stream`. @internal */
export const BODY = "x-mcp-relay-body"

const OURS = "x-mcp-relay-"

// what belongs to one connection, not to the request it carries; `date` is the server's own
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "content-length",
  "upgrade",
  "te",
  "trailer",
  "host",
  "date"
])

const carried = (name: string): boolean => !HOP_BY_HOP.has(name) && !name.startsWith(OURS)

type Incoming = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const copy = (headers: Incoming, into: Record<string, string>): Record<string, string> => {
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined || !carried(name)) continue
    into[name] = typeof value === "string" ? value : value.join(", ")
  }
  return into
}

/** The headers of the hop request carrying `request`. @internal */
export const requestHeaders = (
  request: McpSessionRegistry.ForwardedRequest,
  hop: { readonly secret: string; readonly from: string; readonly to: string }
): Record<string, string> => {
  const headers = copy(request.headers, {})
  const host = request.headers.host
  if (host !== undefined) headers[HOST] = host
  headers[METHOD] = request.method
  headers[URL_HEADER] = request.url
  headers[SECRET] = hop.secret
  headers[FROM] = hop.from
  headers[TO] = hop.to
  return headers
}

/** The forwarded request a hop request carries. @internal */
export const forwardedRequest = (headers: Incoming, body: Uint8Array): McpSessionRegistry.ForwardedRequest => {
  const carriedHeaders = copy(headers, {})
  const host = headers[HOST]
  if (typeof host === "string") carriedHeaders.host = host
  return {
    method: typeof headers[METHOD] === "string" ? headers[METHOD] : "POST",
    url: typeof headers[URL_HEADER] === "string" ? headers[URL_HEADER] : "/",
    headers: carriedHeaders,
    body
  }
}

/** The headers of a relayed response, marked. @internal */
export const responseHeaders = (
  response: McpSessionRegistry.ForwardedResponse,
  body: "whole" | "stream"
): Record<string, string> => {
  const headers = copy(response.headers, {})
  headers[BODY] = body
  return headers
}

/** The forwarded response's headers from a relayed one. @internal */
export const forwardedHeaders = (headers: Incoming): Record<string, string> => copy(headers, {})

/**
 * Whether `given` is the secret, in a time that depends on the secret's
 * length only.
 *
 * @internal
 */
export const sameSecret = (given: string | undefined, secret: string): boolean => {
  if (given === undefined) return false
  let diff = given.length ^ secret.length
  for (let i = 0; i < secret.length; i++) diff |= (given.charCodeAt(i) | 0) ^ secret.charCodeAt(i)
  return diff === 0
}

/**
 * The secret the replicas share: `configured`, else `MCP_RELAY_SECRET`, else
 * the one the first replica kept in Redis (`${prefix}secret:relay`, 32
 * random bytes). The last is read when first needed and kept once read; a
 * Redis that cannot be reached fails this read only (the hop is then
 * refused, and pub/sub carries the request).
 *
 * @internal
 */
export const secret = (
  redis: Redis.Redis["Service"],
  prefix: string,
  configured: string | undefined
): Effect.Effect<Effect.Effect<string, McpError.McpError>> =>
  Effect.gen(function*() {
    const fromEnv = configured ?? Option.getOrUndefined(
      yield* Config.option(Config.String("MCP_RELAY_SECRET")).pipe(Effect.orElseSucceed(Option.none))
    )
    if (fromEnv !== undefined && fromEnv !== "") return Effect.succeed(fromEnv)
    const key = `${prefix}secret:relay`
    let known: string | undefined
    return Effect.suspend(() => {
      if (known !== undefined) return Effect.succeed(known)
      const candidate = Base64Url.encode(globalThis.crypto.getRandomValues(new Uint8Array(32)))
      // the first replica's secret wins; the others read it
      return redis.send("SET", key, candidate, "NX").pipe(
        Effect.andThen(redis.send<string | null>("GET", key)),
        Errors.mapRedis("read of the relay secret"),
        Effect.map((stored) => (known = stored ?? candidate))
      )
    })
  })

/** A host that is no address to reach (it binds every interface). @internal */
export const isWildcard = (host: string): boolean => host === "0.0.0.0" || host === "::" || host === ""

/** The address advertised for a listener bound to `host:port` (not a wildcard). @internal */
export const address = (host: string, port: number, advertise: string | undefined): string =>
  advertise !== undefined
    ? advertise.replace(/\/+$/, "")
    : `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/** Whether a heartbeat's value is an address (else the replica has no hop). @internal */
export const isAddress = (value: string): boolean => value.startsWith("http://") || value.startsWith("https://")
