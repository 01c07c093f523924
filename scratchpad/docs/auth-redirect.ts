/**
 * Signing in from a web page: the page navigates to the authorization server
 * and its redirect page completes the flow. `scratchpad/runtimes/browser-oauth.ts`
 * is such a page, run in Chromium by a test.
 */
// a page's globals (this file is compiled against Node's types)
declare const location: { readonly origin: string; readonly href: string }

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

export { Client, signedIn }
