/**
 * The HTTP side of the OAuth client: the platform's `fetch` (on Node,
 * undici with a dispatcher of the client's own whose connections resolve
 * names through `Egress.lookup`; elsewhere the global `fetch`), the URL rule
 * (https, or http to a loopback host), and `call`, which runs
 * one promise-returning OAuth step interruptibly, bounded by the request
 * timeout, its failure an `AuthError`. Discovery failures say what was
 * expected, never what answered (a body, a parse error quoting it).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as oauth from "oauth4webapi"
import * as McpError from "../../McpError.ts"
import * as McpOAuthPolicy from "../../McpOAuthPolicy.ts"
import * as Egress from "./egress.ts"
import { authError, withErrorBody } from "./errors.ts"

/** The `fetch` of the OAuth requests. */
export type Fetch = (url: string | URL, init: RequestInit) => Promise<Response>

/** The options of an oauth4webapi request: its signal, the insecure-URL switch, the client's fetch. */
export interface RequestOptions {
  readonly signal: AbortSignal
  readonly [oauth.allowInsecureRequests]: boolean
  readonly [oauth.customFetch]: Fetch
}

/** The OAuth client's HTTP, for the lifetime of the scope it was made in. */
export interface Http {
  /** A promise-returning OAuth step, interruptible (its signal), bounded by the request timeout. */
  readonly call: <A>(
    kind: McpError.AuthError["kind"],
    what: string,
    run: (signal: AbortSignal) => Promise<A>
  ) => Effect.Effect<A, McpError.McpError>
  /** Fails unless a request may go to `url`: https, or http to a loopback host (or `allowInsecureRequests`). */
  readonly checkUrl: (
    url: URL,
    kind: McpError.AuthError["kind"],
    what: string
  ) => Effect.Effect<void, McpError.McpError>
  readonly requestOptions: (url: string | URL | undefined, signal: AbortSignal) => RequestOptions
  /** GET a metadata document: the response when it is 200, `undefined` for any other status. */
  readonly getMetadata: (url: URL, what: string) => Effect.Effect<Response | undefined, McpError.McpError>
  readonly readJson: (response: Response, what: string) => Effect.Effect<Record<string, unknown>, McpError.McpError>
  /** The token endpoint of an authorization server, checked. */
  readonly tokenEndpoint: (server: oauth.AuthorizationServer) => Effect.Effect<string, McpError.McpError>
}

/** @internal */
export const make = (options: {
  readonly allowInsecureRequests?: boolean | undefined
  readonly requestTimeoutSeconds?: number | undefined
}, httpFetch: Fetch): Http => {
  const allowInsecure = options.allowInsecureRequests === true
  const timeout = (options.requestTimeoutSeconds ?? 30) * 1000

  const insecureFor = (url: string | URL | undefined): boolean => {
    if (url === undefined) return false
    const parsed = Result.try(() => new URL(url))
    return Result.isSuccess(parsed) && parsed.success.protocol === "http:" &&
      McpOAuthPolicy.allowedUrl(parsed.success, allowInsecure)
  }

  const checkUrl: Http["checkUrl"] = (url, kind, what) =>
    McpOAuthPolicy.allowedUrl(url, allowInsecure)
      ? Effect.void
      : Effect.fail(McpError.auth(kind, `${what} ${url.href} is neither https nor a loopback http URL`))

  const call: Http["call"] = (kind, what, run) =>
    Effect.tryPromise({ try: run, catch: (cause): unknown => cause }).pipe(
      Effect.catch((cause) =>
        Effect.flatMap(
          withErrorBody(cause),
          (full) => Effect.fail(Egress.refusalOf(full, what) ?? authError(kind, what)(full))
        )
      ),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () => Effect.fail(McpError.auth(kind, `${what}: no answer within ${timeout / 1000} s`))
      })
    )

  const requestOptions: Http["requestOptions"] = (url, signal) => ({
    signal,
    [oauth.allowInsecureRequests]: insecureFor(url),
    [oauth.customFetch]: httpFetch
  })

  const getMetadata: Http["getMetadata"] = (url, what) =>
    Effect.andThen(
      checkUrl(url, "Discovery", what),
      call("Discovery", `${what} ${url.href}`, (signal) =>
        httpFetch(url, {
          headers: { accept: "application/json", "mcp-protocol-version": "2025-11-25" },
          redirect: "manual",
          signal
        }).then((response) => {
          if (response.status === 200) return response
          return response.body?.cancel().then(() => undefined, () => undefined)
        }))
    )

  // a parse error quotes the body: it is not passed on (what answered may be a service the server pointed at)
  const notJson = (what: string) => McpError.auth("Discovery", `${what} is not a JSON object`)
  const readJson: Http["readJson"] = (response, what) =>
    Effect.tryPromise({ try: () => response.json() as Promise<unknown>, catch: () => notJson(what) }).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () => Effect.fail(McpError.auth("Discovery", `${what}: no answer within ${timeout / 1000} s`))
      }),
      Effect.flatMap((json) => Predicate.isObject(json) ? Effect.succeed(json) : Effect.fail(notJson(what)))
    )

  const tokenEndpoint: Http["tokenEndpoint"] = (server) =>
    server.token_endpoint === undefined
      ? Effect.fail(McpError.auth("Discovery", `the authorization server ${server.issuer} has no token endpoint`))
      : Effect.as(checkUrl(new URL(server.token_endpoint), "Token", "the token endpoint"), server.token_endpoint)

  return { call, checkUrl, requestOptions, getMetadata, readJson, tokenEndpoint }
}
