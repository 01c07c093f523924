/**
 * An OAuth 2.1 client for MCP servers that are OAuth resource servers (MCP
 * 2025-06-18 / 2025-11-25 authorization, the 2025-03-26 fallbacks, client
 * credentials, cross-app access, the workload JWT bearer grant), on any
 * platform: {@link make} is the `auth` of the HTTP client transports; a
 * `401` or `403 insufficient_scope` runs the flow the guide "Authorization"
 * describes (`docs/guides/authorization.md`), on `oauth4webapi` and `jose` (loaded with
 * the first client, not with this module). The platform gives the `fetch`
 * of its requests and, where it can, the name check at connection time
 * ({@link Platform}): `NodeMcpOAuth` (platform-node) passes undici and the
 * DNS egress guard; elsewhere the global `fetch` is used, with the URLs
 * checked as written.
 *
 * ```ts
 * // a browser page: see McpOAuthRedirect for its authorizer and store
 * const Transport = McpOAuth.layerTransport({ serverUrl: "https://example.com/mcp" }).pipe(
 *   Layer.provide([FetchHttpClient.layer, McpAuth.layerMemoryStore, authorizer])
 * )
 * ```
 *
 * @since 0.3.0
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as jose from "jose"
import * as internal from "./internal/oauth/egress.ts"
import * as McpAuth from "./McpAuth.ts"
import type * as McpError from "./McpError.ts"
import * as McpHttpClient from "./McpHttpClient.ts"
import type * as McpTransport from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * What describes the client in a dynamic client registration.
 *
 * @category models
 * @since 0.3.0
 */
export interface ClientMetadata {
  readonly clientName?: string | undefined
  readonly clientUri?: string | undefined
  readonly logoUri?: string | undefined
  readonly softwareId?: string | undefined
  readonly softwareVersion?: string | undefined
  /** Default: `native` for a loopback redirect URI, else `web`. */
  readonly applicationType?: "native" | "web" | undefined
  readonly scope?: string | undefined
}

/**
 * A client registered with the authorization server beforehand.
 *
 * @category models
 * @since 0.3.0
 */
export interface PreRegisteredClient {
  readonly clientId: string
  readonly clientSecret?: string | undefined
  /** Default: from the authorization server's metadata (`client_secret_basic` first) with a secret, else `none`. */
  readonly tokenEndpointAuthMethod?: "client_secret_basic" | "client_secret_post" | "none" | undefined
  /**
   * Authenticate with `private_key_jwt` instead (RFC 7523): a PKCS#8 PEM string or a
   * private JWK; `algorithm` as for {@link ClientCredentialsGrant}.
   */
  readonly privateKey?: string | jose.JWK | undefined
  readonly algorithm?: string | undefined
}

/**
 * The client credentials grant (machine to machine, no user): the client
 * authenticates with `privateKey` (`private_key_jwt`, RFC 7523: a PKCS#8 PEM
 * string or a private JWK; `algorithm` defaults to the JWK's `alg`, else the
 * first of the server's `token_endpoint_auth_signing_alg_values_supported`,
 * else `RS256`) or with `clientSecret` (`client_secret_basic`, or
 * `client_secret_post` when the server lists only that).
 *
 * @category models
 * @since 0.3.0
 */
export interface ClientCredentialsGrant {
  readonly type: "client_credentials"
  readonly clientId: string
  readonly clientSecret?: string | undefined
  readonly privateKey?: string | jose.JWK | undefined
  readonly algorithm?: string | undefined
  readonly scope?: string | undefined
}

/**
 * Cross-app access (SEP-990, enterprise-managed authorization): the user's
 * ID token from the enterprise IdP is exchanged at the IdP (RFC 8693,
 * `requested_token_type` `urn:ietf:params:oauth:token-type:id-jag`,
 * `audience` the authorization server's issuer, `resource` the MCP server)
 * for an identity assertion grant, which the client presents to the MCP
 * server's authorization server in a JWT bearer grant (RFC 7523),
 * authenticated as `clientId` / `clientSecret`. The IdP is given by its
 * token endpoint, or by its issuer (then discovered).
 *
 * @category models
 * @since 0.3.0
 */
export interface CrossAppAccessGrant {
  readonly type: "cross_app_access"
  readonly clientId: string
  readonly clientSecret?: string | undefined
  readonly idp: {
    readonly tokenEndpoint?: string | undefined
    readonly issuer?: string | undefined
    readonly clientId: string
    readonly clientSecret?: string | undefined
    /** The user's ID token from the IdP (or how to get it, run at each exchange). */
    readonly idToken: string | Effect.Effect<string, McpError.McpError>
  }
  readonly scope?: string | undefined
}

/**
 * The JWT bearer grant of a workload (RFC 7523, workload identity
 * federation, SEP-1933): the workload presents a JWT its platform issued
 * for the authorization server (`aud` its issuer) as `assertion` in one
 * token request; no registration and no client authentication (`clientId`,
 * when given, is sent as the `client_id` of a public client). A refusal
 * (`invalid_grant`, `invalid_scope`, `unauthorized_client`, ...) fails as an
 * `AuthError` of kind `"Token"` with its status: it is not retried, no other
 * grant is tried, and an assertion once refused is not presented again.
 *
 * @category models
 * @since 0.3.0
 */
export interface JwtBearerGrant {
  readonly type: "jwt_bearer"
  /** The workload's JWT (or how to get it, e.g. read a projected token file: run at each grant). */
  readonly assertion: string | Effect.Effect<string, McpError.McpError>
  readonly clientId?: string | undefined
  readonly scope?: string | undefined
}

/**
 * An authorization server's metadata (RFC 8414, or OpenID Connect
 * discovery), as published: snake_case fields. The client reads `issuer`
 * (required), `authorization_endpoint`, `token_endpoint`,
 * `registration_endpoint`, `scopes_supported`,
 * `code_challenge_methods_supported` (must list `S256` for the
 * authorization code grant), `token_endpoint_auth_methods_supported`,
 * `token_endpoint_auth_signing_alg_values_supported` and
 * `client_id_metadata_document_supported`.
 *
 * @category models
 * @since 0.3.0
 */
export interface AuthorizationServerMetadata {
  readonly issuer: string
  readonly authorization_endpoint?: string | undefined
  readonly token_endpoint?: string | undefined
  readonly registration_endpoint?: string | undefined
  readonly scopes_supported?: ReadonlyArray<string> | undefined
  readonly code_challenge_methods_supported?: ReadonlyArray<string> | undefined
  readonly token_endpoint_auth_methods_supported?: ReadonlyArray<string> | undefined
  readonly token_endpoint_auth_signing_alg_values_supported?: ReadonlyArray<string> | undefined
  readonly client_id_metadata_document_supported?: boolean | undefined
  readonly [field: string]: unknown
}

/**
 * What {@link make} needs: the MCP server, and how the client identifies
 * itself and which grant it uses. The client identity is, in order: `client`,
 * a registration stored for the authorization server's issuer,
 * `clientMetadataUrl` where the server advertises
 * `client_id_metadata_document_supported`, dynamic registration (RFC 7591,
 * stored per issuer). The scope: `scope`, else the challenge's, else
 * `scopes_supported`, plus `offline_access` when the server lists it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  /** The MCP endpoint. */
  readonly serverUrl: string | URL
  /** Describes the client in a dynamic client registration. */
  readonly clientMetadata?: ClientMetadata | undefined
  /** A Client ID Metadata Document URL (https), the `client_id` where the authorization server supports them. */
  readonly clientMetadataUrl?: string | undefined
  /**
   * A pre-configured authorization server, instead of the one the protected
   * resource metadata names: its issuer (its metadata is fetched from the
   * issuer's well-known URLs, in the MCP order, and its `issuer` checked), or
   * its metadata (`{ metadata }`: no discovery request at all). See the
   * guide "Authorization". Either way the well-known protected resource metadata URLs are
   * not probed: only a document a challenge names (`resource_metadata`) is
   * read, for its `resource` (checked, then asked for) and its
   * `scopes_supported`; without one, tokens are asked for the server URL.
   */
  readonly authorizationServer?: string | URL | { readonly metadata: AuthorizationServerMetadata } | undefined
  /** A pre-registered client: no registration. */
  readonly client?: PreRegisteredClient | undefined
  /** The scope to ask for, instead of the scope selection. */
  readonly scope?: string | undefined
  /** Another grant than the authorization code grant. */
  readonly grant?: ClientCredentialsGrant | CrossAppAccessGrant | JwtBearerGrant | undefined
  /** How many step-up authorizations (`403 insufficient_scope`) in a row (default 3). */
  readonly maxStepUps?: number | undefined
  /** How many times the transport resends one refused request (default: the transport's, 3). */
  readonly maxAttempts?: number | undefined
  /**
   * Allow `http:` OAuth URLs on non-loopback hosts (default `false`: OAuth
   * requests go to `https:` URLs, or `http:` on `localhost`, `127.0.0.0/8`
   * or `::1`). It does not widen where a server may send the client (see
   * {@link make}), and a browser is never sent to an `http:` URL on a
   * non-loopback host.
   */
  readonly allowInsecureRequests?: boolean | undefined
  /** Refresh an access token this many seconds before it expires (default 60). */
  readonly refreshBeforeExpirySeconds?: number | undefined
  /** Bound of every OAuth HTTP request, in seconds (default 30). */
  readonly requestTimeoutSeconds?: number | undefined
}

// -----------------------------------------------------------------------------
// The platform
// -----------------------------------------------------------------------------

/**
 * The `fetch` the OAuth requests go through.
 *
 * @category models
 * @since 0.3.0
 */
export type Fetch = (url: string | URL, init: RequestInit) => Promise<Response>

/**
 * One address a name resolved to.
 *
 * @category models
 * @since 0.3.0
 */
export interface Resolved extends internal.Resolved {}

/**
 * How names resolve and which hosts count as what. `resolve` is the
 * platform's resolver (Node: `dns.lookup`); without one (a browser, a
 * worker) a name is never resolved: URLs are checked as written, and the
 * platform's `fetch` connects where it likes. `hostClass` declares a host's
 * class instead of what it is written as or resolves to (tests: a "remote"
 * host on 127.0.0.1).
 *
 * @category models
 * @since 0.3.0
 */
export interface Network extends internal.Network {}

/**
 * Where the OAuth client of one MCP server may be sent on a server's word
 * (SSRF; see {@link make}): `check` a URL as written before any request,
 * `trust` the hosts the user named, and `lookup`, the name resolution its
 * connections must use (an {@link EgressRefused} for a name that resolves
 * further inside the network than the user's own hosts).
 *
 * @category models
 * @since 0.3.0
 */
export interface Egress extends internal.Egress {}

/**
 * What a platform gives the OAuth client. `fetch` makes the `fetch` of one
 * client's requests, for its scope, from the client's {@link Egress} (Node:
 * undici with a dispatcher of the client's own whose connections resolve
 * names through `egress.lookup`, closed with the scope); default: the global
 * `fetch`. `network`: see {@link Network}.
 *
 * @category models
 * @since 0.3.0
 */
export interface Platform {
  readonly fetch?: ((egress: Egress) => Effect.Effect<Fetch, never, Scope.Scope>) | undefined
  readonly network?: Network | undefined
}

/**
 * A connection refused by {@link Egress} `lookup` (a request failing with
 * it, somewhere in its causes, fails the flow with an `AuthError` of kind
 * `"Refused"`: {@link refusalOf}).
 *
 * @category errors
 * @since 0.3.0
 */
export const EgressRefused: typeof internal.EgressRefused = internal.EgressRefused

/**
 * A connection refused by {@link Egress} `lookup` (the type of {@link EgressRefused}).
 *
 * @category errors
 * @since 0.3.0
 */
export type EgressRefused = internal.EgressRefused

/**
 * The refusal a failed request carries somewhere in its causes, as an
 * `AuthError` of kind `"Refused"` about `what`; `undefined` for any other
 * failure.
 *
 * @category errors
 * @since 0.3.0
 */
export const refusalOf: (cause: unknown, what: string) => McpError.McpError | undefined = internal.refusalOf

/**
 * The {@link Egress} of an OAuth client: `serverUrl` and `trusted` are the
 * hosts the user named; `allowInsecure` allows `http:` to non-loopback
 * hosts. For an authorizer that requests URLs itself outside a client.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeEgress: (options: {
  readonly serverUrl: URL
  readonly trusted: ReadonlyArray<string | URL | undefined>
  readonly allowInsecure: boolean
  readonly network?: Network | undefined
}) => Egress = internal.make

/**
 * The {@link Egress} of the OAuth client whose authorizer is running: an
 * authorizer that requests URLs itself (a headless one) requests every hop
 * under it. `undefined` outside a client.
 *
 * @category references
 * @since 0.3.0
 */
export const CurrentEgress: Context.Reference<Egress | undefined> = internal.Current

/**
 * An OAuth client for one MCP server, as the `auth` of an HTTP client
 * transport, for the lifetime of the scope (its HTTP connections close
 * with it). The authorizer is needed only for the authorization code grant
 * (not with `grant`); without one, a flow that needs the user fails with an
 * `AuthError` of kind `"Authorization"`. Tokens are stored in
 * `McpAuth.McpAuthStore` under `McpAuth.canonicalResource(serverUrl)`.
 * Concurrent challenges run one flow (a challenge whose refused token is no
 * longer the stored one just retries). OAuth requests use the `fetch`
 * `platform` makes (default: the global `fetch`).
 *
 * **Where a server may send the client.** The hosts the user named (the
 * MCP server, `authorizationServer`, the IdP of cross-app access) are
 * trusted. A URL the server names instead (a challenge's
 * `resource_metadata`, the protected resource metadata's
 * `authorization_servers`, the endpoints of discovered metadata) may not
 * lead further inside the network than those hosts, as written (IP
 * literals, `localhost`) or, where the platform resolves names
 * ({@link Platform}), as a name resolves when the connection is made:
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
 * @since 0.3.0
 */
export const make: (
  options: Options,
  platform?: Platform | undefined
) => Effect.Effect<McpAuth.ClientAuth, McpError.McpError, McpAuth.McpAuthStore | Scope.Scope> = Effect.fn(
  "McpOAuth.make"
)(
  function*(options: Options, platform?: Platform | undefined) {
    const store = yield* McpAuth.McpAuthStore
    const authorizer = yield* Effect.serviceOption(McpAuth.McpAuthorizer)
    // the client (`oauth4webapi`, `jose`) is loaded when one is made, not with this module
    const Client = yield* Effect.promise(() => import("./internal/oauth/client.ts"))
    return yield* Client.make(options, store, Option.getOrUndefined(authorizer), platform)
  }
)

/**
 * A Streamable HTTP client transport (`McpHttpClient.layer`, on the
 * `HttpClient` provided: `FetchHttpClient.layer` in a browser) to
 * `options.serverUrl` that signs in with {@link make}. `http` holds the
 * transport's other options.
 *
 * @category layers
 * @since 0.3.0
 */
export const layerTransport = (
  options: Options,
  http?: Omit<McpHttpClient.Options, "url" | "auth"> | undefined,
  platform?: Platform | undefined
): Layer.Layer<McpTransport.McpTransport, McpError.McpError, McpAuth.McpAuthStore | HttpClient.HttpClient> =>
  Layer.unwrap(
    Effect.map(
      make(options, platform),
      (auth) => McpHttpClient.layer({ ...http, url: String(options.serverUrl), auth })
    )
  )
