/**
 * An MCP server as an OAuth 2.1 resource server (MCP authorization,
 * 2025-06-18 and later): the {@link Options} of a protected endpoint (the
 * `auth` of `McpHttpServer.layerRoute`, `McpSseServer.layerRoute` and their
 * `NodeMcp*Server.layer` wrappers), its Protected Resource Metadata document
 * (RFC 9728), and an introspection verifier. The guide "Authorization"
 * (`docs/guides/authorization.md`) lists the challenges, scopes and session
 * binding.
 *
 * ```ts
 * NodeMcpHttpServer.layer({ port: 3000, auth: {
 *   authorizationServers: ["https://auth.example.com"], requiredScopes: ["mcp:read"],
 *   verify: McpResourceServer.introspection({ endpoint, clientId, clientSecret })
 * } })
 * ```
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import * as ResourceMetadata from "./internal/auth/resourceMetadata.ts"
import * as McpAuth from "./McpAuth.ts"
import * as McpError from "./McpError.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Verifies a bearer token: its auth info, or a failure. Fail with an
 * `AuthError` (`McpError.auth("Unauthorized", …)`) for a token that is not
 * valid (the client gets `401 invalid_token`), with any other error when the
 * token could not be checked: the client gets a bare `500` (no detail), the
 * cause goes to the server log (`Effect.logError`).
 *
 * The resource server checks expiry, audience and scopes itself, from the
 * `AuthInfo`: a verifier need not. It refuses (`401 invalid_token`) a token
 * whose `AuthInfo` names neither a subject nor a client: sessions and
 * `requestState` are bound to that principal, which such tokens would share. It runs for every request (a client sends
 * its token with each message), so a verifier that asks a remote server
 * should cache what it accepted, as {@link introspection} and
 * `NodeMcpJwtVerifier` do (least recently used, never past the token's `exp`,
 * rejections and failures never cached).
 *
 * @category models
 * @since 0.1.0
 */
export type Verify = (token: string) => Effect.Effect<McpAuth.AuthInfo, McpError.McpError>

/**
 * A protected MCP endpoint.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /**
   * The canonical URL of the MCP endpoint (what clients connect to, and the
   * `resource` of their tokens). Default: the address the `HttpServer` in
   * context is bound to plus the route's path (right for a server on
   * loopback; set it behind a proxy or on a wildcard address).
   */
  readonly resource?: string | URL | undefined
  /** The issuers of the authorization servers clients may get tokens from. */
  readonly authorizationServers: ReadonlyArray<string>
  /** Checks a token (see {@link Verify}). */
  readonly verify: Verify
  /** The scopes the metadata document lists (`scopes_supported`). */
  readonly scopesSupported?: ReadonlyArray<string> | undefined
  /** Scopes every request needs (and the `scope` of the `401` challenge). */
  readonly requiredScopes?: ReadonlyArray<string> | undefined
  /** Scopes a JSON-RPC request method needs, e.g. `{ "resources/read": ["files:read"] }`. */
  readonly methodScopes?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  /** Scopes a `tools/call` of a tool needs, by tool name. */
  readonly toolScopes?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  /** `resource_name` of the metadata document. */
  readonly resourceName?: string | undefined
  /** `resource_documentation` of the metadata document (a URL). */
  readonly resourceDocumentation?: string | undefined
  /** More fields of the metadata document (the ones above win). */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
  /**
   * Audiences accepted besides the resource itself (a token's `aud` must
   * name one of them). Compared in canonical form, trailing slash aside.
   */
  readonly audiences?: ReadonlyArray<string> | undefined
  /**
   * Refuse tokens that name no audience (MCP servers must only accept tokens
   * issued for them). Default `true`; set `false` only when `verify` checks
   * the audience itself and does not report it (an opaque token whose
   * introspection answer has no `aud`).
   */
  readonly requireAudience?: boolean | undefined
  /** Also serve the metadata at the root `/.well-known/oauth-protected-resource`. Default `true`. */
  readonly rootMetadata?: boolean | undefined
  /**
   * DPoP (RFC 9449). Tokens presented as `Authorization: DPoP` are always
   * checked against their proof (signature by its `jwk`, `typ`, `htm`,
   * `htu`, `iat`, `ath`, a `jti` not seen before, and the token's `cnf.jkt`
   * equal to the key's thumbprint), and a DPoP-bound token (`cnf.jkt`) is
   * refused as `Bearer`; these options add to that: `required` refuses
   * bearer tokens (`dpop_bound_access_tokens_required`), `nonce` asks every
   * proof for a nonce of the server's (one per server lifetime, sent in
   * `DPoP-Nonce`), `maxAgeSeconds` bounds `iat` (default 300). Setting it
   * also lists `dpop_signing_alg_values_supported` in the metadata.
   */
  readonly dpop?: {
    readonly required?: boolean | undefined
    readonly nonce?: boolean | undefined
    readonly maxAgeSeconds?: number | undefined
  } | undefined
}

// -----------------------------------------------------------------------------
// Metadata
// -----------------------------------------------------------------------------

/**
 * The Protected Resource Metadata document (RFC 9728 §2) of a resource:
 * `resource`, `authorization_servers`, `scopes_supported`,
 * `bearer_methods_supported: ["header"]`, `resource_name`,
 * `resource_documentation`, and the extra `metadata`.
 *
 * @category metadata
 * @since 0.1.0
 */
export const metadata = (options: Options, resource: string | URL): Record<string, unknown> =>
  ResourceMetadata.metadataDocument(options, McpAuth.canonicalResource(resource))

/**
 * The path-aware URL of a resource's metadata document (RFC 9728 §3.1): for
 * `https://host/mcp`, `https://host/.well-known/oauth-protected-resource/mcp`.
 * This is the `resource_metadata` of the challenges.
 *
 * @category metadata
 * @since 0.1.0
 */
export const metadataUrl = (resource: string | URL): string =>
  ResourceMetadata.metadataUrl(McpAuth.canonicalResource(resource))

/**
 * The metadata document as routes of the `HttpRouter` in context, for an
 * MCP endpoint served some other way (`McpHttpServer.layerRoute({ auth })`
 * adds them itself). `resource` is required here.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMetadata = (
  options: Options & { readonly resource: string | URL }
): Layer.Layer<never, never, HttpRouter.HttpRouter> =>
  Layer.effectDiscard(Effect.gen(function*() {
    // `effect/http` is loaded by the servers that use it, not with this module
    const { HttpRouter } = yield* Effect.promise(() => import("effect/http/HttpRouter"))
    const router = yield* HttpRouter
    yield* addMetadataRoutes(router, options, McpAuth.canonicalResource(options.resource))
  }))

/** @internal */
export const addMetadataRoutes = (
  router: HttpRouter.HttpRouter,
  options: Options,
  resource: string
): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.promise(() => import("./internal/auth/metadata.ts")),
    (Metadata) => Metadata.addRoutes(router, options, resource)
  )

// -----------------------------------------------------------------------------
// Introspection
// -----------------------------------------------------------------------------

/**
 * How to reach an RFC 7662 introspection endpoint.
 *
 * @category models
 * @since 0.1.0
 */
export interface IntrospectionOptions {
  /** The introspection endpoint URL. */
  readonly endpoint: string | URL
  /** The resource server's client id at the authorization server. */
  readonly clientId?: string | undefined
  readonly clientSecret?: string | undefined
  /** How the credentials are sent. Default `"client_secret_basic"` (`"none"` without a client id). */
  readonly authMethod?: "client_secret_basic" | "client_secret_post" | "none" | undefined
  /** Extra request headers (an `Authorization` of its own, for instance). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The HTTP client. Default: effect's `fetch` client. */
  readonly httpClient?: HttpClient.HttpClient | undefined
  /**
   * The cache of active answers (see {@link introspection}); `false` asks
   * the endpoint about every verification. Default: on, 30 seconds.
   */
  readonly cache?: IntrospectionCacheOptions | false | undefined
}

/**
 * The bounds of an introspection verifier's cache of active answers.
 *
 * @category models
 * @since 0.1.0
 */
export interface IntrospectionCacheOptions {
  /** The most tokens remembered (at least 1); the least recently used goes first. Default `1000`. */
  readonly maxEntries?: number | undefined
  /**
   * How long after the answer came a token is answered from the cache (never
   * past its `exp`): how long a revoked token may still be accepted. Default
   * 30 seconds.
   */
  readonly maxAge?: Duration.Input | undefined
}

const toStrings = (value: unknown): ReadonlyArray<string> | undefined =>
  typeof value === "string"
    ? value.split(" ").filter((part) => part !== "")
    : Array.isArray(value)
    ? value.filter((part): part is string => typeof part === "string")
    : undefined

/**
 * The auth info of a token from its claims (a JWT payload, an introspection
 * answer): `sub`, `client_id` (or `azp`), `scope` (space separated) or
 * `scp` (a list or a string), `exp`, `aud` (a string or a list).
 *
 * @category constructors
 * @since 0.1.0
 */
export const authInfoFromClaims = (token: string, claims: Readonly<Record<string, unknown>>): McpAuth.AuthInfo => {
  const clientId = typeof claims.client_id === "string"
    ? claims.client_id
    : typeof claims.azp === "string"
    ? claims.azp
    : undefined
  return {
    token,
    clientId,
    subject: typeof claims.sub === "string" ? claims.sub : undefined,
    scopes: toStrings(claims.scope) ?? toStrings(claims.scp) ?? [],
    expiresAt: typeof claims.exp === "number" ? claims.exp : undefined,
    audience: toStrings(claims.aud),
    claims
  }
}

/**
 * A verifier that asks an OAuth 2.0 Token Introspection endpoint (RFC 7662)
 * about a token (`token_type_hint=access_token`). An inactive token is an
 * `AuthError` (`401 invalid_token`); an endpoint that cannot be reached or
 * does not answer `200` with JSON is a `TransportError` (`500`).
 *
 * **Cache.** A client sends its bearer token with every MCP message, so by
 * default the verifier remembers the active answers it got, for 30 seconds:
 * a least-recently-used map of token → `AuthInfo` (1,000 entries), each
 * entry answered until the earlier of the token's `exp` and `cache.maxAge`
 * after the answer came (both read from the `Clock`). Inactive answers and
 * failures are not cached: the next request asks again. Concurrent
 * verifications of a token that is not cached share one introspection call
 * (interrupting one of them does not cancel the call while others wait for
 * it). The cost is revocation: introspection is how a resource server learns
 * that a token was revoked, and a cached token keeps working for up to
 * `maxAge` after its revocation. The 30-second default keeps that window
 * short while the authorization server gets one call per token and 30
 * seconds instead of one per message; set a shorter `maxAge` for a tighter
 * bound, or `cache: false` to ask about every request (no cache, no shared
 * calls).
 *
 * @category verifiers
 * @since 0.1.0
 */
export const introspection = (options: IntrospectionOptions): Verify => {
  const endpoint = new URL(options.endpoint).href
  const bounds = options.cache === false ? undefined : {
    maxEntries: Math.max(1, Math.floor(options.cache?.maxEntries ?? 1000)),
    maxAge: Math.max(0, Duration.toMillis(options.cache?.maxAge ?? Duration.seconds(30)))
  }
  // the request and the cache (`effect/http`, `effect/Cache`) are loaded at
  // the first verification; `??=`: one verifier even if two race
  let verify: Verify | undefined
  const load = Effect.suspend(() =>
    verify !== undefined ? Effect.succeed(verify) : Effect.map(
      Effect.promise(() => import("./internal/auth/introspection.ts")),
      (Introspection) => (verify ??= Introspection.make(options, endpoint, bounds))
    )
  )
  return (token) => Effect.flatMap(load, (verify) => verify(token))
}
