/**
 * An OAuth 2.1 client for MCP servers that are OAuth resource servers (MCP
 * 2025-06-18 / 2025-11-25 authorization, with the 2025-03-26 fallbacks and
 * the client credentials and cross-app access extensions). {@link make}
 * gives an `McpAuth.ClientAuth` for the `auth` option of the HTTP client
 * transports (`NodeMcpHttpClient.layer`, `layerSse`): requests carry the
 * stored bearer token, and a `401` or `403 insufficient_scope` runs the flow
 * (the calling code only sees a delay, or a typed `AuthError`):
 *
 * 1. **Discovery.** Protected resource metadata (RFC 9728) from the
 *    challenge's `resource_metadata`, else
 *    `/.well-known/oauth-protected-resource/<path>`, else the root one. Its
 *    `resource` must be the server URL (or a parent of it on the same
 *    origin), or the flow is refused; tokens are then asked for that
 *    `resource`, as written (the identifier the server checks audiences
 *    against). Authorization server metadata in the MCP order: RFC 8414 with
 *    the path inserted, OpenID Connect with the path inserted, OpenID Connect
 *    appended (for an issuer without a path: RFC 8414, then OpenID Connect).
 *    Without protected resource metadata (MCP 2025-03-26): RFC 8414 metadata
 *    at the server's origin, else `/authorize`, `/token`, `/register` there.
 *
 *    **A pre-configured authorization server** (`authorizationServer`) skips
 *    the choice: an issuer (`"https://auth.example.com"`) is used whatever
 *    the protected resource metadata lists, its metadata still fetched from
 *    its well-known URLs (in the order above, `issuer` checked); metadata
 *    (`{ metadata: { issuer, authorization_endpoint, token_endpoint, ... } }`)
 *    is used as it is, with no request. Either way the well-known protected
 *    resource metadata URLs are not probed: only a document the challenge
 *    names (`resource_metadata`) is read, for its `resource` (checked as
 *    above, and then the `resource` tokens are asked for) and its
 *    `scopes_supported`; without one, tokens are asked for the server URL.
 * 2. **Client identity**, in order: `client` (pre-registered); a
 *    registration stored for the authorization server's issuer;
 *    `clientMetadataUrl` as `client_id` when the server advertises
 *    `client_id_metadata_document_supported`; dynamic client registration
 *    (RFC 7591, with `application_type`), stored per issuer, so that another
 *    authorization server means another registration.
 * 3. **Scope**: `scope`, else the challenge's `scope`, else the protected
 *    resource metadata's `scopes_supported`, else none; `offline_access`
 *    added when the authorization server lists it. On `403
 *    insufficient_scope` the granted scopes are kept and the new ones added
 *    (step-up), at most `maxStepUps` times, and never for scopes already
 *    granted.
 * 4. **Tokens**: a stored refresh token is tried before a new authorization
 *    (and before a request, when the access token is about to expire). Else
 *    the authorization code grant with PKCE S256 (an authorization server
 *    whose metadata does not list S256 is refused), `state` and RFC 9207
 *    `iss` checked, the `resource` parameter (RFC 8707) in the authorization
 *    and token requests; the token endpoint authentication method
 *    (`client_secret_basic`, `client_secret_post`, `none`) is the registered
 *    one or the one the server lists. With `grant`: the client credentials
 *    grant (`client_secret_basic` / `client_secret_post`, or `private_key_jwt`
 *    with a PEM or JWK key), or cross-app access (SEP-990: RFC 8693 token
 *    exchange of an ID token for an identity assertion grant at the IdP, then
 *    the RFC 7523 JWT bearer grant at the authorization server).
 *
 * Concurrent challenges run one flow: a semaphore, and a challenge whose
 * refused token is no longer the stored one just retries. Tokens are stored
 * in `McpAuth.McpAuthStore` under `McpAuth.canonicalResource(serverUrl)`;
 * the user's step goes through `McpAuth.McpAuthorizer` (`NodeMcpAuthorizer`),
 * needed only for the authorization code grant.
 *
 * Built on `oauth4webapi` (PKCE, authorization response validation, the
 * token / refresh / client credentials / generic grant and registration
 * requests and their response checks, client authentication) and `jose`
 * (private keys). OAuth requests use undici's `fetch` with a dispatcher of
 * the client's own, closed with the scope {@link make} runs in (so a closed
 * client leaves no connection open). They go to `https:`
 * URLs, or `http:` ones on a loopback host (`localhost`, `127.0.0.0/8`,
 * `::1`: local development and tests); `allowInsecureRequests` lifts that.
 *
 * ```ts
 * const transport = Layer.unwrap(Effect.map(
 *   NodeMcpOAuth.make({ serverUrl: "https://example.com/mcp" }),
 *   (auth) => NodeMcpHttpClient.layer({ url: "https://example.com/mcp", auth })
 * )).pipe(Layer.provide([NodeMcpAuthorizer.layerLoopback(), NodeMcpAuthStore.layer()]))
 * ```
 *
 * @since 0.1.0
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import type * as McpError from "@effect-mcp/core/McpError"
import * as McpHttpClient from "@effect-mcp/core/McpHttpClient"
import type * as McpTransport from "@effect-mcp/core/McpTransport"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as jose from "jose"
import * as Client from "./internal/oauth/client.ts"
import * as NodeMcpHttpClient from "./NodeMcpHttpClient.ts"

/**
 * What describes the client in a dynamic client registration.
 *
 * @category models
 * @since 0.1.0
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
 * @since 0.1.0
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
 * @since 0.1.0
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
 * @since 0.1.0
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
 * @since 0.1.0
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
 * itself and which grant it uses (see the module description for the order
 * in which the client identity and the scope are chosen).
 *
 * @category models
 * @since 0.1.0
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
   * module description.
   */
  readonly authorizationServer?: string | URL | { readonly metadata: AuthorizationServerMetadata } | undefined
  /** A pre-registered client: no registration. */
  readonly client?: PreRegisteredClient | undefined
  /** The scope to ask for, instead of the scope selection. */
  readonly scope?: string | undefined
  /** Another grant than the authorization code grant. */
  readonly grant?: ClientCredentialsGrant | CrossAppAccessGrant | undefined
  /** How many step-up authorizations (`403 insufficient_scope`) in a row (default 3). */
  readonly maxStepUps?: number | undefined
  /** How many times the transport resends one refused request (default: the transport's, 3). */
  readonly maxAttempts?: number | undefined
  /** Allow `http:` OAuth URLs on non-loopback hosts (default `false`). */
  readonly allowInsecureRequests?: boolean | undefined
  /** Refresh an access token this many seconds before it expires (default 60). */
  readonly refreshBeforeExpirySeconds?: number | undefined
  /** Bound of every OAuth HTTP request, in seconds (default 30). */
  readonly requestTimeoutSeconds?: number | undefined
}

/**
 * An OAuth client for one MCP server, as the `auth` of an HTTP client
 * transport, for the lifetime of the scope (its HTTP connections close
 * with it). The authorizer is needed only for the authorization code grant
 * (not with `grant`); without one, a flow that needs the user fails with an
 * `AuthError` of kind `"Authorization"`.
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
    const store = yield* McpAuth.McpAuthStore
    const authorizer = yield* Effect.serviceOption(McpAuth.McpAuthorizer)
    return yield* Client.make(options, store, Option.getOrUndefined(authorizer))
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
  Layer.unwrap(Effect.map(make(options), (auth) =>
    NodeMcpHttpClient.layer({ ...http, url: String(options.serverUrl), auth })))
