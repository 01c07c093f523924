/**
 * `McpAuth.McpAuthorizer` on Node, the user-facing step of the OAuth
 * authorization code flow: {@link layerLoopback} (RFC 8252 §7.3: a listener
 * on `127.0.0.1` takes the redirect; the browser is opened on the
 * authorization URL, which is also printed to stderr) and {@link layerHeadless}
 * (follows the authorization URL itself: tests, servers that authorize
 * without a user). Both go only to `https:` URLs, or `http:` on a loopback
 * host: a URL of another scheme (`file:`, `javascript:`, a custom protocol
 * handler) is refused before it reaches the browser or the OS.
 *
 * ```ts
 * const auth = NodeMcpOAuth.make({ serverUrl: "https://example.com/mcp" }).pipe(
 *   Effect.provide([NodeMcpAuthorizer.layerLoopback(), NodeMcpAuthStore.layer()])
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpOAuthPolicy from "@effect-mcp/core/McpOAuthPolicy"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as ChildProcess from "node:child_process"
import type * as Http from "node:http"
import type { AddressInfo, LookupFunction } from "node:net"
// the egress rule (`node:dns`), `node:child_process` and `node:http` load when an authorizer first needs them
import type * as Egress from "./internal/oauth/egress.ts"

const loadEgress = Effect.promise(() => import("./internal/oauth/egress.ts"))

/**
 * `true` for a URL the authorizers send a user (or themselves) to: `https:`,
 * or `http:` on a loopback host (`localhost`, `127.0.0.0/8`, `::1`).
 *
 * @category guards
 * @since 0.1.0
 */
export const isBrowsableUrl = (url: URL): boolean => McpOAuthPolicy.isBrowsable(url)

/** The `Refused` error of a URL that is not {@link isBrowsableUrl}: its scheme (and host), not the whole URL. */
const notBrowsable = (url: URL, what: string): McpError.McpError =>
  McpError.auth(
    "Refused",
    `${what} is ${
      url.protocol === "http:" ? `http on ${url.host}` : `a ${url.protocol} URL`
    }: only an https URL (or http on a loopback host) is opened`
  )

/** Fails with a `Refused` error unless `url` is {@link isBrowsableUrl}. */
const checkBrowsable = (url: URL, what: string): Effect.Effect<void, McpError.McpError> =>
  McpOAuthPolicy.isBrowsable(url) ? Effect.void : Effect.fail(notBrowsable(url, what))

// -----------------------------------------------------------------------------
// Headless
// -----------------------------------------------------------------------------

/**
 * Options of the headless authorizer.
 *
 * @category models
 * @since 0.1.0
 */
export interface HeadlessOptions {
  /** The redirect URI registered and sent. Default `http://127.0.0.1/callback` (nothing listens on it). */
  readonly redirectUri?: string | undefined
  /**
   * Extra headers of the requests to the authorization server (a session
   * cookie, say): sent to the authorization endpoint's origin only, never
   * on a redirect to another origin.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * How many redirects inside the authorization server are followed before
   * the one to the redirect URI (login and consent pages that pass straight
   * through). Default 5.
   */
  readonly maxRedirects?: number | undefined
}

const DEFAULT_HEADLESS_REDIRECT = "http://127.0.0.1/callback"

const excerpt = (text: string): string => {
  const trimmed = text.trim().replace(/\s+/g, " ")
  return trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed
}

const sameTarget = (location: URL, redirectUri: string): boolean => {
  const target = new URL(redirectUri)
  return location.origin === target.origin && location.pathname === target.pathname
}

interface Answer {
  readonly status: number
  readonly location: string | undefined
  /** The start of the body (only read for an answer that is no redirect). */
  readonly body: string
}

/**
 * One GET without following redirects, on a connection of its own (no
 * agent: nothing is left open once it is answered), connecting to the
 * addresses `lookup` allows (a refusal is an `AuthError` of kind `"Refused"`).
 */
const request = (
  egress: Pick<typeof Egress, "refusalOf">,
  url: URL,
  headers: Readonly<Record<string, string>>,
  lookup: LookupFunction,
  what: string
) =>
  // `node:http` / `node:https` are loaded at the first request, not with this module
  Effect.flatMap(
    Effect.promise((): Promise<Pick<typeof Http, "get">> =>
      url.protocol === "https:" ? import("node:https") : import("node:http")
    ),
    (client) => requestWith(egress, client, url, headers, lookup, what)
  )

const requestWith = (
  egress: Pick<typeof Egress, "refusalOf">,
  client: Pick<typeof Http, "get">,
  url: URL,
  headers: Readonly<Record<string, string>>,
  lookup: LookupFunction,
  what: string
) =>
  Effect.callback<Answer, McpError.McpError>((resume) => {
    const fail = (cause: unknown) =>
      resume(Effect.fail(
        egress.refusalOf(cause, `${what} ${url.protocol}//${url.host}`) ?? McpError.auth(
          "Authorization",
          `cannot reach the authorization endpoint ${url.origin}${url.pathname}: ${McpError.messageOf(cause)}`,
          { cause }
        )
      ))
    const started = Result.try(() =>
      client.get(url, { headers, agent: false, lookup }, (res) => {
        const status = res.statusCode ?? 0
        const location = res.headers.location
        if (status >= 300 && status < 400 && location !== undefined) {
          res.resume()
          res.destroy()
          resume(Effect.succeed({ status, location, body: "" }))
          return
        }
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          if (body.length < 4096) body += chunk
        })
        res.on("end", () => resume(Effect.succeed({ status, location, body: excerpt(body) })))
        res.on("error", () => resume(Effect.succeed({ status, location, body: excerpt(body) })))
      }).on("error", fail)
    )
    if (Result.isFailure(started)) {
      fail(started.failure)
      return
    }
    const req = started.success
    return Effect.sync(() => void req.destroy())
  })

/**
 * An authorizer that requests the authorization URL itself, without a user
 * (node:http / node:https, a connection per request, closed once answered):
 * it does not follow the redirect to the redirect URI but returns it (the
 * `Location`, resolved against the request URL). Redirects that stay off the
 * redirect URI are followed (up to `maxRedirects`); `headers` go only to
 * the authorization endpoint's origin. An answer that is no redirect fails
 * with an `AuthError` (kind `"Authorization"`) carrying the status and the
 * start of the body; a URL (the first, or a redirect) that is not
 * {@link isBrowsableUrl} with one of kind `"Refused"`, unrequested.
 *
 * Every hop is a URL a server supplied, so it may not lead further inside
 * the network than the hosts the user named (SSRF): those of the OAuth
 * client running it, else the authorization URL's host. A loopback,
 * private or link-local host as written is refused before the request; a
 * name, on the addresses it resolves to when connecting.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeHeadless = (options?: HeadlessOptions): McpAuth.McpAuthorizer["Service"] => {
  const redirectUri = options?.redirectUri ?? DEFAULT_HEADLESS_REDIRECT
  const headers = options?.headers ?? {}
  const maxRedirects = options?.maxRedirects ?? 5
  return McpAuth.McpAuthorizer.of({
    redirectUri,
    authorize: Effect.fn("NodeMcpAuthorizer.authorizeHeadless")(function*(authorizationUrl: URL) {
      const target = authorizationUrl.searchParams.get("redirect_uri") ?? redirectUri
      const origin = authorizationUrl.origin
      const Egress = yield* loadEgress
      const egress = (yield* Egress.Current) ??
        Egress.make({ serverUrl: authorizationUrl, trusted: [], allowInsecure: false })
      let url = authorizationUrl
      // bounded: at most maxRedirects + 1 requests
      for (let hop = 0; hop <= maxRedirects; hop++) {
        const what = hop === 0 ? "the authorization URL" : "a redirect of the authorization endpoint"
        yield* checkBrowsable(url, what)
        yield* egress.check(url, what)
        // a cookie for the authorization server is not given to another origin it redirects to
        const answer = yield* request(Egress, url, url.origin === origin ? headers : {}, Egress.lookupOf(egress), what)
        const location = answer.location
        if (answer.status < 300 || answer.status >= 400 || location === undefined) {
          return yield* McpError.auth(
            "Authorization",
            `the authorization endpoint answered HTTP ${answer.status} instead of a redirect${
              answer.body === "" ? "" : `: ${answer.body}`
            }`,
            { status: answer.status }
          )
        }
        const next = yield* Effect.try({
          try: () => new URL(location, url),
          catch: (cause) =>
            McpError.auth("Authorization", `the authorization endpoint redirected to an invalid URL: ${location}`, {
              status: answer.status,
              cause
            })
        })
        if (sameTarget(next, target)) return next
        url = next
      }
      return yield* McpError.auth(
        "Authorization",
        `the authorization endpoint did not redirect to ${target} within ${maxRedirects} redirects`
      )
    })
  })
}

/**
 * The headless authorizer as a layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerHeadless = (options?: HeadlessOptions): Layer.Layer<McpAuth.McpAuthorizer> =>
  Layer.succeed(McpAuth.McpAuthorizer, makeHeadless(options))

// -----------------------------------------------------------------------------
// Loopback (browser)
// -----------------------------------------------------------------------------

/**
 * Options of the loopback authorizer.
 *
 * @category models
 * @since 0.1.0
 */
export interface LoopbackOptions {
  /** The port of the listener on `127.0.0.1`. Default `0`: an ephemeral port. */
  readonly port?: number | undefined
  /** The path of the redirect URI. Default `/callback`. */
  readonly path?: string | undefined
  /**
   * Sends the user to the authorization URL. Default {@link openBrowser}
   * (failures ignored: the URL is printed anyway). A custom opener's failure
   * fails the authorization.
   */
  readonly open?: ((url: URL) => Effect.Effect<void, McpError.McpError>) | undefined
  /** Whether the authorization URL is printed to stderr. Default `true`. */
  readonly print?: boolean | undefined
  /** How long to wait for the redirect. Default 5 minutes. */
  readonly timeout?: Duration.Input | undefined
  /** The page shown in the browser once the redirect arrived. */
  readonly successHtml?: string | undefined
}

const page = (title: string, text: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body></html>`

const DEFAULT_SUCCESS_HTML = page("Signed in", "You can close this window and return to the application.")
const ERROR_HTML = page(
  "Authorization failed",
  "The authorization server refused the request. You can close this window."
)
const UNKNOWN_HTML = page("Unknown request", "This authorization request is unknown or has expired.")

const htmlHeaders = { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", connection: "close" }

/**
 * The platform's command that opens a URL in the default browser:
 * `open` (macOS), `rundll32 url.dll,FileProtocolHandler` (Windows: no
 * shell, so `&` in the URL is safe), `xdg-open` (elsewhere).
 *
 * @category constructors
 * @since 0.1.0
 */
export const browserCommand = (url: URL): readonly [command: string, args: ReadonlyArray<string>] => {
  switch (process.platform) {
    case "darwin":
      return ["open", [url.href]]
    case "win32":
      return ["rundll32", ["url.dll,FileProtocolHandler", url.href]]
    default:
      return ["xdg-open", [url.href]]
  }
}

/**
 * Runs `command` with `args` (detached, not waited for, stdin and stdout
 * ignored, stderr inherited). Succeeds once the process started; a command
 * that cannot be started fails with an `AuthError` (kind `"Authorization"`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const spawnDetached = (command: string, args: ReadonlyArray<string>): Effect.Effect<void, McpError.McpError> =>
  // `node:child_process` is loaded when a command is first run, not with this module
  Effect.flatMap(Effect.promise(() => import("node:child_process")), (processes) => spawnWith(processes, command, args))

const spawnWith = (
  processes: Pick<typeof ChildProcess, "spawn">,
  command: string,
  args: ReadonlyArray<string>
): Effect.Effect<void, McpError.McpError> =>
  Effect.callback<void, McpError.McpError>((resume) => {
    const started = Result.try(() =>
      processes.spawn(command, args, { detached: true, stdio: ["ignore", "ignore", "inherit"], windowsHide: true })
    )
    if (Result.isFailure(started)) {
      resume(
        Effect.fail(McpError.auth("Authorization", `cannot run ${command}: ${McpError.messageOf(started.failure)}`, {
          cause: started.failure
        }))
      )
      return
    }
    const child = started.success
    child.once("error", (cause) => {
      resume(Effect.fail(McpError.auth("Authorization", `cannot run ${command}: ${cause.message}`, { cause })))
    })
    child.once("spawn", () => {
      child.unref()
      resume(Effect.void)
    })
  })

/**
 * Opens a URL in the default browser (see {@link browserCommand}). A URL
 * that is not {@link isBrowsableUrl} fails with an `AuthError` of kind
 * `"Refused"`, and nothing is run: the OS opener would hand a `file:` URL
 * or a custom scheme to whatever handles it.
 *
 * @category constructors
 * @since 0.1.0
 */
export const openBrowser = (url: URL): Effect.Effect<void, McpError.McpError> => {
  if (!McpOAuthPolicy.isBrowsable(url)) return Effect.fail(notBrowsable(url, "the URL to open"))
  const [command, args] = browserCommand(url)
  return spawnDetached(command, args)
}

/**
 * An opener that runs a command line with the URL: the words of `commandLine`
 * (split on white space), where a word `%s` is replaced by the URL, or the
 * URL is appended when there is none. For a `BROWSER`-like setting. Like
 * {@link openBrowser}, it runs nothing for a URL that is not
 * {@link isBrowsableUrl}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const openWith = (commandLine: string) => (url: URL): Effect.Effect<void, McpError.McpError> => {
  if (!McpOAuthPolicy.isBrowsable(url)) return Effect.fail(notBrowsable(url, "the URL to open"))
  const words = commandLine.trim().split(/\s+/).filter((word) => word !== "")
  const [command, ...rest] = words
  if (command === undefined) {
    return Effect.fail(McpError.auth("Authorization", "the browser command is empty"))
  }
  const args = rest.includes("%s") ? rest.map((word) => word === "%s" ? url.href : word) : [...rest, url.href]
  return spawnDetached(command, args)
}

const listen = (server: Http.Server, port: number) =>
  Effect.callback<AddressInfo, McpError.McpError>((resume) => {
    const onError = (cause: Error) =>
      resume(
        Effect.fail(McpError.auth("Authorization", `cannot listen on 127.0.0.1:${port}: ${cause.message}`, { cause }))
      )
    server.once("error", onError)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError)
      resume(Effect.succeed(server.address() as AddressInfo))
    })
  })

const close = (server: Http.Server) =>
  Effect.callback<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })

/**
 * The loopback authorizer (RFC 8252 §7.3): a listener on `127.0.0.1` whose
 * address is the redirect URI (`http://127.0.0.1:<port>/callback`), closed
 * with the scope.
 *
 * `authorize` refuses an authorization URL that is not
 * {@link isBrowsableUrl} (an `AuthError` of kind `"Refused"`: nothing is
 * printed or opened, whatever the opener), else prints it to stderr,
 * opens it (see `open`), and waits for the one `GET <path>` whose `state` is the
 * authorization URL's `state`; it answers that one with a small HTML page
 * and returns its URL (with `code`, or `error`). Other requests get `400`
 * (another `state`) or `404` (another path). No redirect within `timeout`
 * fails with an `AuthError` (kind `"Authorization"`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeLoopback: (
  options?: LoopbackOptions
) => Effect.Effect<McpAuth.McpAuthorizer["Service"], McpError.McpError, Scope.Scope> = Effect.fn(
  "NodeMcpAuthorizer.makeLoopback"
)(function*(options?: LoopbackOptions) {
  const path = options?.path ?? "/callback"
  const successHtml = options?.successHtml ?? DEFAULT_SUCCESS_HTML
  const timeout = options?.timeout ?? "5 minutes"
  const print = options?.print ?? true
  const custom = options?.open
  const pending = new Map<string, Deferred.Deferred<URL>>()
  let base = "http://127.0.0.1"

  // `node:http` is loaded when a listener is made, not with this module
  const Http = yield* Effect.promise(() => import("node:http"))
  const server = Http.createServer((req, res) => {
    // a request target that is no URL (`GET http://a:b:c/`) must not throw out of the handler
    const parsed = Result.try(() => new URL(req.url ?? "/", base))
    const url = Result.isSuccess(parsed) ? parsed.success : undefined
    if (url === undefined || req.method !== "GET" || url.pathname !== path) {
      res.writeHead(404, { "content-type": "text/plain", connection: "close" }).end("Not found")
      return
    }
    const state = url.searchParams.get("state") ?? ""
    const waiter = pending.get(state)
    if (waiter === undefined) {
      res.writeHead(400, htmlHeaders).end(UNKNOWN_HTML)
      return
    }
    pending.delete(state)
    res.writeHead(200, htmlHeaders).end(url.searchParams.has("error") ? ERROR_HTML : successHtml)
    Deferred.doneUnsafe(waiter, Effect.succeed(url))
  })
  const address = yield* Effect.acquireRelease(listen(server, options?.port ?? 0), () => close(server))
  base = `http://127.0.0.1:${address.port}`
  const redirectUri = `${base}${path}`

  const open = (url: URL): Effect.Effect<void, McpError.McpError> =>
    custom !== undefined
      ? custom(url)
      : openBrowser(url).pipe(
        Effect.catch((error) => print ? Console.error(`(${error.message}; open the URL yourself)`) : Effect.void)
      )

  return McpAuth.McpAuthorizer.of({
    redirectUri,
    authorize: Effect.fn("NodeMcpAuthorizer.authorizeLoopback")(function*(authorizationUrl: URL) {
      yield* checkBrowsable(authorizationUrl, "the authorization URL")
      const state = authorizationUrl.searchParams.get("state") ?? ""
      const deferred = yield* Deferred.make<URL>()
      return yield* Effect.gen(function*() {
        pending.set(state, deferred)
        if (print) {
          yield* Console.error(`Open this URL in a browser to authorize:\n\n  ${authorizationUrl.href}\n`)
        }
        yield* open(authorizationUrl)
        return yield* Deferred.await(deferred).pipe(
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () =>
              Effect.fail(McpError.auth(
                "Authorization",
                `no authorization redirect reached ${redirectUri} within ${
                  Duration.format(Duration.fromInputUnsafe(timeout))
                }`
              ))
          })
        )
      }).pipe(Effect.ensuring(Effect.sync(() => {
        if (pending.get(state) === deferred) pending.delete(state)
      })))
    })
  })
})

/**
 * The loopback authorizer as a layer (the listener lives as long as the
 * layer).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerLoopback = (options?: LoopbackOptions): Layer.Layer<McpAuth.McpAuthorizer, McpError.McpError> =>
  Layer.effect(McpAuth.McpAuthorizer, makeLoopback(options))
