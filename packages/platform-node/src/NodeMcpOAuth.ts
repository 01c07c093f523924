/**
 * An OAuth 2.1 client for MCP servers that are OAuth resource servers (MCP
 * 2025-06-18 / 2025-11-25 authorization, the 2025-03-26 fallbacks, client
 * credentials, cross-app access, the workload JWT bearer grant): {@link make}
 * is the `auth` of the HTTP client transports; a `401` or `403
 * insufficient_scope` runs the flow the guide "Authorization" describes
 * (`docs/guides/authorization.md`). The client is core's (`McpOAuth`, on `oauth4webapi` and `jose`);
 * this module gives it Node's side: undici, with the names a server gave
 * checked where the connection is made.
 *
 * ```ts
 * const transport = NodeMcpOAuth.layerTransport({ serverUrl: "https://example.com/mcp" })
 *   .pipe(Layer.provide([NodeMcpAuthorizer.layerLoopback(), NodeMcpAuthStore.layer()]))
 * ```
 *
 * @since 0.1.0
 */
import type * as McpAuth from "@effect-mcp/core/McpAuth"
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpHttpClient from "@effect-mcp/core/McpHttpClient"
import * as McpOAuth from "@effect-mcp/core/McpOAuth"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as NodeMcpHttpClient from "./NodeMcpHttpClient.ts"

/**
 * What describes the client in a dynamic client registration (`McpOAuth.ClientMetadata`).
 *
 * @category models
 * @since 0.1.0
 */
export type ClientMetadata = McpOAuth.ClientMetadata

/**
 * A client registered with the authorization server beforehand (`McpOAuth.PreRegisteredClient`).
 *
 * @category models
 * @since 0.1.0
 */
export type PreRegisteredClient = McpOAuth.PreRegisteredClient

/**
 * The client credentials grant (`McpOAuth.ClientCredentialsGrant`).
 *
 * @category models
 * @since 0.1.0
 */
export type ClientCredentialsGrant = McpOAuth.ClientCredentialsGrant

/**
 * Cross-app access, SEP-990 (`McpOAuth.CrossAppAccessGrant`).
 *
 * @category models
 * @since 0.1.0
 */
export type CrossAppAccessGrant = McpOAuth.CrossAppAccessGrant

/**
 * The JWT bearer grant of a workload, SEP-1933 (`McpOAuth.JwtBearerGrant`).
 *
 * @category models
 * @since 0.1.0
 */
export type JwtBearerGrant = McpOAuth.JwtBearerGrant

/**
 * An authorization server's metadata, as published (`McpOAuth.AuthorizationServerMetadata`).
 *
 * @category models
 * @since 0.1.0
 */
export type AuthorizationServerMetadata = McpOAuth.AuthorizationServerMetadata

/**
 * What {@link make} needs (`McpOAuth.Options`): the MCP server, and how the
 * client identifies itself and which grant it uses.
 *
 * @category models
 * @since 0.1.0
 */
export type Options = McpOAuth.Options

/**
 * An OAuth client for one MCP server, as the `auth` of an HTTP client
 * transport, for the lifetime of the scope (its HTTP connections close
 * with it). The authorizer is needed only for the authorization code grant
 * (not with `grant`); without one, a flow that needs the user fails with an
 * `AuthError` of kind `"Authorization"`. Tokens are stored in
 * `McpAuth.McpAuthStore` under `McpAuth.canonicalResource(serverUrl)`.
 * Concurrent challenges run one flow (a challenge whose refused token is no
 * longer the stored one just retries). OAuth requests use a `fetch`
 * dispatcher of the client's own, closed with the scope.
 *
 * **Where a server may send the client.** The hosts the user named (the
 * MCP server, `authorizationServer`, the IdP of cross-app access) are
 * trusted. A URL the server names instead (a challenge's
 * `resource_metadata`, the protected resource metadata's
 * `authorization_servers`, the endpoints of discovered metadata) may not
 * lead further inside the network than those hosts, as written (IP
 * literals, `localhost`) or as a name resolves when the connection is made:
 * from a public server, no loopback, private or link-local address; from a
 * private one, no loopback or link-local one; a loopback server (a
 * developer's machine) may use any. Such a URL fails with
 * an `AuthError` of kind `"Refused"`, before any request to it. The
 * authorization endpoint must be `https:` (or `http:` on a loopback host):
 * no other scheme reaches the authorizer. Metadata whose `issuer` is not the
 * issuer it was fetched for is not used (RFC 8414 §3.3; on the 2025-03-26
 * fallback, an issuer of the MCP server's origin), so registrations are
 * stored under checked issuers.
 * Discovery failures say what was expected, not what answered.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (
  options: Options
) => Effect.Effect<McpAuth.ClientAuth, McpError.McpError, McpAuth.McpAuthStore | Scope.Scope> = Effect.fn(
  "NodeMcpOAuth.make"
)(
  function*(options: Options) {
    // Node's side (undici, the DNS egress rule) is loaded when a client is made, not with this module
    const Http = yield* Effect.promise(() => import("./internal/oauth/http.ts"))
    return yield* McpOAuth.make(options, Http.platform())
  }
)

/**
 * A Streamable HTTP client transport (`NodeMcpHttpClient.layer`) to
 * `options.serverUrl` that signs in with {@link make}. `http` holds the
 * transport's other options.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerTransport = (
  options: Options,
  http?: Omit<McpHttpClient.Options, "url" | "auth">
): Layer.Layer<McpTransport.McpTransport, McpError.McpError, McpAuth.McpAuthStore> =>
  Layer.unwrap(
    Effect.map(make(options), (auth) => NodeMcpHttpClient.layer({ ...http, url: String(options.serverUrl), auth }))
  )
