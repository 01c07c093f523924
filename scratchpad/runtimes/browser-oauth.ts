/**
 * An MCP client in a web page that signs in with OAuth by redirecting the
 * page, as an app author writes it: `McpOAuth.layerTransport` (Streamable
 * HTTP on the browser's `fetch`) with core's redirect authorizer and its
 * Web Storage store (`McpOAuthRedirect`), nothing from Node.
 *
 * - On the app page (`/?server=<MCP endpoint>`), the server's URL is kept in
 *   `sessionStorage` and the client connects: the server answers `401`, the
 *   client discovers its authorization server, registers, keeps the pending
 *   authorization (state, PKCE verifier) in `sessionStorage` and navigates
 *   the page to the authorization server.
 * - The authorization server redirects back to `/callback?code=…&state=…`:
 *   the page completes the authorization (`McpOAuthRedirect.complete`: the
 *   tokens go to `sessionStorage`, the pending authorization is forgotten),
 *   takes the code out of the address bar, connects again with the stored
 *   tokens and calls `whoami`.
 *
 * Each step is written into `window.results` (read by
 * `packages/platform-node/test/runtimes.browser-oauth.test.ts`) and the page's
 * `#log`; a failure lands in `results.error` and `#error`. Bundled for the
 * browser with rolldown by `packages/platform-node/test/utils/browser.ts`.
 */
/// <reference lib="dom" />
import { McpClient, McpContent, McpOAuth, McpOAuthRedirect } from "@effect-mcp/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"

/** What the page did, for whoever looks at `window.results`. */
export interface Results {
  /** `app` (before the sign-in) or `callback` (back from the authorization server). */
  page?: string
  /** The authorization server's authorization endpoint the page was sent to (`app`). */
  navigatedTo?: string
  /** The MCP server URL the tokens were stored under (`callback`). */
  completed?: string
  scope?: string | undefined
  /** What `whoami` answered once signed in. */
  whoami?: string
  /** The address bar once the code was taken out of it. */
  location?: string
  done?: boolean
  error?: string
}

declare global {
  interface Window {
    results: Results
  }
}

const results: Results = {}
window.results = results

const SERVER_KEY = "app:mcp-server"
const onCallback = location.pathname === "/callback"
const query = new URLSearchParams(location.search).get("server")
if (query !== null) sessionStorage.setItem(SERVER_KEY, query)
const serverUrl = sessionStorage.getItem(SERVER_KEY) ?? `${location.origin}/mcp`

const log = (line: string) =>
  Effect.sync(() => {
    const item = document.createElement("li")
    item.textContent = line
    document.getElementById("log")?.append(item)
  })

/** Tokens and pending authorizations in this tab's `sessionStorage`. */
const Storage = McpOAuthRedirect.layerWebStorage(() => sessionStorage)

/** The redirect authorizer: the page goes to the authorization server and comes back to /callback. */
const Authorizer = McpOAuthRedirect.layerAuthorizer({
  redirectUri: `${location.origin}/callback`,
  navigate: (url) =>
    Effect.andThen(
      log(`signing in at ${url.origin}`),
      Effect.sync(() => {
        results.navigatedTo = `${url.origin}${url.pathname}`
        location.assign(url.href)
      })
    )
})

const Client = McpClient.layer({ clientInfo: { name: "browser-oauth-page", version: "1.0.0" } }).pipe(
  Layer.provide(McpOAuth.layerTransport({ serverUrl, clientMetadata: { clientName: "browser-oauth-page" } })),
  Layer.provide(FetchHttpClient.layer),
  Layer.provide(Authorizer.pipe(Layer.provideMerge(Storage)))
)

/** Connected (signed in first when there are no tokens yet): `whoami`. */
const callWhoami = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  yield* log(`connected to ${client.serverInfo.name}`)
  results.whoami = McpContent.textOf(yield* client.callTool("whoami", {}))
  yield* log(`whoami: ${results.whoami}`)
}).pipe(Effect.provide(Client))

/** Back from the authorization server: complete, clean the address bar, then call. */
const callback = Effect.gen(function*() {
  if (!McpOAuthRedirect.isAuthorizationResponse(location.href)) {
    return yield* Effect.die(new Error("the callback page was opened without an authorization response"))
  }
  const completed = yield* McpOAuthRedirect.complete(location.href, { serverUrl }).pipe(Effect.provide(Storage))
  results.completed = completed.serverUrl
  results.scope = completed.scope
  yield* log(`signed in to ${completed.serverUrl}`)
  // the code and state are spent: out of the address bar and the history
  history.replaceState(null, "", "/")
  results.location = location.href
  yield* callWhoami
})

results.page = onCallback ? "callback" : "app"

Effect.runFork(
  Effect.scoped(onCallback ? callback : callWhoami).pipe(
    Effect.matchCause({
      onSuccess: () => {
        results.done = true
        document.getElementById("status")!.textContent = "done"
      },
      onFailure: (cause) => {
        results.error = Cause.pretty(cause)
        document.getElementById("error")!.textContent = results.error
        document.getElementById("status")!.textContent = "failed"
      }
    })
  )
)
