/**
 * The token introspection verifier of `McpResourceServer.introspection`
 * (RFC 7662): the request, and the cache of active answers. Loaded at the
 * first verification, so that `McpResourceServer` stays free of
 * `effect/http` and `effect/Cache`.
 *
 * @internal
 */
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpResourceServer from "../../McpResourceServer.ts"
import { authInfoFromClaims } from "../../McpResourceServer.ts"

/** The cache's bounds, already checked: `undefined` for no cache. @internal */
export interface CacheBounds {
  readonly maxEntries: number
  /** ms */
  readonly maxAge: number
}

const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+")

interface Answer {
  readonly auth: McpAuth.AuthInfo
  /** ms, `Clock` */
  readonly at: number
}

/** The verifier of `endpoint` (the canonical `options.endpoint`), with the cache of `bounds`. @internal */
export const make = (
  options: McpResourceServer.IntrospectionOptions,
  endpoint: string,
  bounds: CacheBounds | undefined
): McpResourceServer.Verify => {
  const introspect = introspectWith(options, endpoint)
  if (bounds === undefined) return introspect
  const { maxAge, maxEntries } = bounds
  // The answer and when it came: an entry lives until `exp` at the latest.
  const lookup = (token: string): Effect.Effect<Answer, McpError.McpError> =>
    Effect.flatMap(introspect(token), (auth) => Effect.map(Clock.currentTimeMillis, (at) => ({ auth, at })))
  const timeToLive = (exit: Exit.Exit<Answer, McpError.McpError>) =>
    Exit.isFailure(exit)
      ? Duration.zero
      : Duration.millis(Math.max(
        0,
        Math.min(
          maxAge,
          exit.value.auth.expiresAt === undefined ? Infinity : exit.value.auth.expiresAt * 1000 - exit.value.at
        )
      ))
  // made at the first verification (`Cache.makeWith` is an effect); `??=`: one cache even if two race
  let cache: Cache.Cache<string, Answer, McpError.McpError> | undefined
  const getCache = Effect.suspend(() =>
    cache !== undefined
      ? Effect.succeed(cache)
      : Effect.map(Cache.makeWith(lookup, { capacity: maxEntries, timeToLive }), (made) => (cache ??= made))
  )
  return Effect.fn("McpResourceServer.introspection")(function*(token: string) {
    const answers = yield* getCache
    return (yield* Cache.get(answers, token)).auth
  })
}

const introspectWith = (
  options: McpResourceServer.IntrospectionOptions,
  endpoint: string
): McpResourceServer.Verify => {
  const method = options.authMethod ?? (options.clientId === undefined ? "none" : "client_secret_basic")
  let client: HttpClient.HttpClient | undefined = options.httpClient
  const getClient: Effect.Effect<HttpClient.HttpClient> = Effect.suspend(() =>
    client !== undefined
      ? Effect.succeed(client)
      : Effect.map(
        Effect.provide(Effect.service(HttpClient.HttpClient), FetchHttpClient.layer),
        (made) => (client = made)
      )
  )
  const credentials: Record<string, string> = method === "client_secret_post" && options.clientId !== undefined
    ? {
      client_id: options.clientId,
      ...(options.clientSecret === undefined ? {} : { client_secret: options.clientSecret })
    }
    : {}
  const basic = method === "client_secret_basic" && options.clientId !== undefined
    ? "Basic " + globalThis.btoa(`${formEncode(options.clientId)}:${formEncode(options.clientSecret ?? "")}`)
    : undefined
  const failed = (description: string, cause?: unknown) =>
    McpError.transport(`token introspection at ${endpoint}: ${description}`, { cause })

  return Effect.fn("McpResourceServer.introspect")(function*(token: string) {
    const http = yield* getClient
    const request = HttpClientRequest.post(endpoint).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.setHeaders({ ...options.headers, ...(basic === undefined ? {} : { authorization: basic }) }),
      HttpClientRequest.bodyUrlParams({ token, token_type_hint: "access_token", ...credentials })
    )
    const response = yield* Effect.mapError(http.execute(request), (error) => failed("the request failed", error))
    if (response.status !== 200) return yield* failed(`HTTP ${response.status}`)
    const body = yield* Effect.mapError(response.json, (error) => failed("the answer is not JSON", error))
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return yield* failed("the answer is not an object")
    }
    const claims = body as Record<string, unknown>
    if (claims.active !== true) return yield* McpError.auth("Unauthorized", "the token is not active")
    return authInfoFromClaims(token, claims)
  })
}
