/**
 * The decisions of the OAuth client that do not touch the network: where to
 * look for metadata, in which order; whether a protected resource metadata
 * document describes the server; which scope to ask for; which token
 * endpoint authentication method to use. Pure functions, unit tested.
 *
 * @internal
 */

// -----------------------------------------------------------------------------
// Discovery URLs
// -----------------------------------------------------------------------------

const trimSlash = (path: string): string => path.replace(/\/+$/, "")

/**
 * Where to look for the protected resource metadata (RFC 9728) of an MCP
 * server, in order: the `resource_metadata` URL of the `WWW-Authenticate`
 * challenge, the path-aware well-known URL (`/.well-known/oauth-protected-resource/<path>`),
 * then the root one. Duplicates are dropped.
 */
export const protectedResourceMetadataUrls = (serverUrl: URL, fromChallenge?: string | undefined): ReadonlyArray<URL> => {
  const out: Array<URL> = []
  const push = (url: URL | undefined) => {
    if (url !== undefined && !out.some((seen) => seen.href === url.href)) out.push(url)
  }
  push(challengeResourceMetadataUrl(serverUrl, fromChallenge))
  const path = trimSlash(serverUrl.pathname)
  if (path !== "") push(new URL(`/.well-known/oauth-protected-resource${path}`, serverUrl.origin))
  push(new URL("/.well-known/oauth-protected-resource", serverUrl.origin))
  return out
}

/**
 * The protected resource metadata URL a `WWW-Authenticate` challenge names
 * (`resource_metadata`, resolved against the server URL), if any.
 */
export const challengeResourceMetadataUrl = (serverUrl: URL, fromChallenge: string | undefined): URL | undefined =>
  fromChallenge === undefined || fromChallenge === "" ? undefined : parse(fromChallenge, serverUrl)

/**
 * Where to look for the metadata of an authorization server, in the order of
 * the MCP authorization spec (2025-11-25): for an issuer with a path
 * component, RFC 8414 with the well-known segment inserted before the path,
 * OpenID Connect discovery inserted, then OpenID Connect appended; for an
 * issuer without one, RFC 8414 then OpenID Connect at the root.
 */
export const authorizationServerMetadataUrls = (issuer: URL): ReadonlyArray<URL> => {
  const path = trimSlash(issuer.pathname)
  const at = (path: string) => new URL(path, issuer.origin)
  return path === ""
    ? [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    : [
      at(`/.well-known/oauth-authorization-server${path}`),
      at(`/.well-known/openid-configuration${path}`),
      at(`${path}/.well-known/openid-configuration`)
    ]
}

/**
 * MCP 2025-03-26, for a server without protected resource metadata: the
 * authorization server is the MCP server's origin; its RFC 8414 metadata is
 * at the origin's well-known URL, and without metadata its endpoints are
 * `/authorize`, `/token` and `/register` there.
 */
export const legacyMetadataUrl = (serverUrl: URL): URL =>
  new URL("/.well-known/oauth-authorization-server", serverUrl.origin)

/**
 * Where a 2025-03-26 client looks for the metadata of the authorization
 * server at the MCP server's origin, in order: RFC 8414 (what 2025-03-26
 * requires), then OpenID Connect Discovery (the current revision asks
 * clients to support both for an issuer, and an origin that is an OpenID
 * provider may publish only that one).
 *
 * @internal
 */
export const legacyMetadataUrls = (serverUrl: URL): ReadonlyArray<URL> => [
  legacyMetadataUrl(serverUrl),
  new URL("/.well-known/openid-configuration", serverUrl.origin)
]

/** @internal */
export const legacyEndpoints = (serverUrl: URL) => ({
  issuer: serverUrl.origin,
  authorization_endpoint: new URL("/authorize", serverUrl.origin).href,
  token_endpoint: new URL("/token", serverUrl.origin).href,
  registration_endpoint: new URL("/register", serverUrl.origin).href
})

const parse = (url: string, base?: URL): URL | undefined =>
  URL.canParse(url, base?.href) ? new URL(url, base) : undefined

// -----------------------------------------------------------------------------
// Resource
// -----------------------------------------------------------------------------

/**
 * `true` when the `resource` of a protected resource metadata document
 * identifies the MCP server at `serverUrl`: the same origin, and a path that
 * is the server's or one of its parents (segment-wise), so that a document
 * served at the root may name the whole origin (RFC 9728 §3, RFC 8707 §2).
 */
export const resourceMatches = (serverUrl: URL, resource: string): boolean => {
  const parsed = parse(resource)
  if (parsed === undefined || parsed.hash !== "") return false
  if (parsed.origin !== serverUrl.origin) return false
  const want = trimSlash(parsed.pathname)
  const have = trimSlash(serverUrl.pathname)
  return want === "" || have === want || have.startsWith(`${want}/`)
}

/** `true` for URLs whose host is a loopback address or `localhost`. */
export const isLoopback = (url: URL): boolean => {
  const host = url.hostname.toLowerCase()
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || host === "::1" ||
    /^127(\.\d{1,3}){3}$/.test(host)
}

/**
 * `true` when a registered redirect URI covers `redirectUri`: equal, or both
 * `http:` loopback URIs on the same host and path, whatever the ports (RFC
 * 8252 §7.3: the authorization server allows any port for a loopback
 * redirect, so a CLI with an ephemeral callback port keeps its registration).
 */
export const redirectCovers = (registered: string, redirectUri: string): boolean => {
  if (registered === redirectUri) return true
  const a = parse(registered)
  const b = parse(redirectUri)
  return a !== undefined && b !== undefined && a.protocol === "http:" && b.protocol === "http:" && isLoopback(a) &&
    a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search
}

/** `true` when a request to `url` may go out: https, or http to a loopback host (or `allowInsecure`). */
export const allowedUrl = (url: URL, allowInsecure: boolean): boolean =>
  url.protocol === "https:" || (url.protocol === "http:" && (allowInsecure || isLoopback(url)))

// -----------------------------------------------------------------------------
// Scopes
// -----------------------------------------------------------------------------

/** The scopes of a space-separated list, without duplicates or empties. */
export const splitScope = (scope: string | undefined): ReadonlyArray<string> =>
  scope === undefined ? [] : [...new Set(scope.split(/\s+/).filter((part) => part !== ""))]

/** The union of scope lists, in first-seen order; `undefined` when empty. */
export const joinScopes = (...lists: ReadonlyArray<ReadonlyArray<string>>): string | undefined => {
  const all = [...new Set(lists.flat())]
  return all.length === 0 ? undefined : all.join(" ")
}

/** What scope selection looks at. */
export interface ScopeInput {
  /** The caller's scope (`Options.scope`): used as it is when given. */
  readonly override?: string | undefined
  /** The `scope` of the `WWW-Authenticate` challenge. */
  readonly challenge?: string | undefined
  /** `scopes_supported` of the protected resource metadata. */
  readonly resourceScopes?: ReadonlyArray<string> | undefined
  /** `scopes_supported` of the authorization server metadata. */
  readonly serverScopes?: ReadonlyArray<string> | undefined
  /** Scopes already granted, kept on a step-up. */
  readonly granted?: ReadonlyArray<string> | undefined
  /** Whether the client wants a refresh token (`offline_access`). */
  readonly offlineAccess?: boolean | undefined
}

/**
 * The `scope` of an authorization request (MCP 2025-11-25 "scope selection
 * strategy"): the override; else the challenge's `scope`; else the
 * protected resource metadata's `scopes_supported`; else none. Granted scopes
 * are kept (step-up). `offline_access` is added only when the
 * authorization server lists it (SEP-2207) and some scope is requested.
 */
export const selectScope = (input: ScopeInput): string | undefined => {
  const base = input.override !== undefined
    ? splitScope(input.override)
    : input.challenge !== undefined && splitScope(input.challenge).length > 0
    ? splitScope(input.challenge)
    : input.resourceScopes ?? []
  const scopes = [...(input.granted ?? []), ...base]
  if (
    input.offlineAccess !== false && scopes.length > 0 && input.override === undefined &&
    (input.serverScopes ?? []).includes("offline_access")
  ) {
    scopes.push("offline_access")
  }
  return joinScopes(scopes)
}

/** `true` when every scope of `wanted` is in `granted`. */
export const coversScopes = (granted: ReadonlyArray<string>, wanted: ReadonlyArray<string>): boolean =>
  wanted.every((scope) => granted.includes(scope))

// -----------------------------------------------------------------------------
// Token endpoint authentication
// -----------------------------------------------------------------------------

/** The token endpoint authentication methods this client implements. */
export type AuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt"

/**
 * The method to authenticate a client at the token endpoint: the one it was
 * registered with; else, with a secret, `client_secret_basic` or
 * `client_secret_post`, whichever the server lists first of the two
 * (`client_secret_basic` when it lists none, its RFC 8414 default); else
 * `none`.
 */
export const tokenAuthMethod = (
  client: { readonly clientSecret?: string | undefined; readonly tokenEndpointAuthMethod?: string | undefined },
  supported: ReadonlyArray<string> | undefined
): AuthMethod => {
  const registered = client.tokenEndpointAuthMethod
  if (
    registered === "client_secret_basic" || registered === "client_secret_post" || registered === "none" ||
    registered === "private_key_jwt"
  ) {
    if (registered === "none" || client.clientSecret !== undefined || registered === "private_key_jwt") return registered
  }
  if (client.clientSecret === undefined) return "none"
  if (supported === undefined || supported.length === 0) return "client_secret_basic"
  if (supported.includes("client_secret_basic")) return "client_secret_basic"
  if (supported.includes("client_secret_post")) return "client_secret_post"
  return "client_secret_basic"
}

/**
 * The method to ask for in a dynamic client registration: `none` (a public
 * client, the usual for an MCP client with PKCE) when the server supports it,
 * else a secret method it lists.
 */
export const registrationAuthMethod = (supported: ReadonlyArray<string> | undefined): AuthMethod => {
  if (supported === undefined || supported.length === 0 || supported.includes("none")) return "none"
  if (supported.includes("client_secret_basic")) return "client_secret_basic"
  if (supported.includes("client_secret_post")) return "client_secret_post"
  return "client_secret_basic"
}
