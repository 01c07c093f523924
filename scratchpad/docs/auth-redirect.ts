/**
 * Signing in from a web page: the page navigates to the authorization server
 * and its redirect page completes the flow. Compiled against the DOM
 * (`scratchpad/runtimes/tsconfig.browser.json`).
 *
 * Run by `packages/platform-node/test/runtimes.browser-oauth.test.ts`: bundled
 * for the browser (the server's URL below replaced by the test server's, as
 * an app's bundler would set it), served at `/` and `/callback`, and opened in
 * Chromium, where it signs in and calls `whoami`.
 */
// #region page
import { McpClient, McpOAuth, McpOAuthRedirect } from "@effect-mcp/core"
import { Effect, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"

const serverUrl = "https://mcp.example.com/mcp"
const Storage = McpOAuthRedirect.layerWebStorage(() => sessionStorage)

// the app: the first 401 sends the page to the authorization server
const Client = McpClient.layer({ clientInfo: { name: "my-page", version: "1.0.0" } }).pipe(
  Layer.provide(McpOAuth.layerTransport({ serverUrl })),
  Layer.provide(FetchHttpClient.layer),
  Layer.provide(
    McpOAuthRedirect.layerAuthorizer({ redirectUri: `${location.origin}/callback` }).pipe(Layer.provideMerge(Storage))
  )
)

// the redirect page (/callback): complete, then use the client as above
const signedIn = McpOAuthRedirect.complete(location.href, { serverUrl }).pipe(Effect.provide(Storage))
// #endregion page

import { McpContent } from "@effect-mcp/core"
import * as Cause from "effect/Cause"

// What the page does with them: on `/callback` it completes the sign-in and
// takes the code out of the address bar; then it calls `whoami`. The outcome
// is written into `window.results` (`page`, `whoami`, `done` or `error`).
const results: { page: string; whoami?: string; done?: boolean; error?: string } = {
  page: McpOAuthRedirect.isAuthorizationResponse(location.href) ? "callback" : "app"
}
Object.assign(window, { results })

const whoami = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  results.whoami = McpContent.textOf(yield* client.callTool("whoami", {}))
}).pipe(Effect.provide(Client))

const program = results.page === "callback"
  ? Effect.andThen(signedIn, Effect.sync(() => history.replaceState(null, "", "/"))).pipe(Effect.andThen(whoami))
  : whoami

Effect.runFork(
  Effect.scoped(program).pipe(
    Effect.matchCause({
      onSuccess: () => (results.done = true),
      onFailure: (cause) => (results.error = Cause.pretty(cause))
    })
  )
)
