/**
 * The decisions of the OAuth client (`McpOAuth`) that do not touch the
 * network: where to look for metadata, in which order; whether a protected
 * resource metadata document describes the server; which scope to ask for;
 * which token endpoint authentication method to use; where a URL may send
 * the client or a browser (`isBrowsable`, the classes of hosts). Pure
 * functions on any platform, for authorizers and platform bindings.
 *
 * ```ts
 * McpOAuthPolicy.isBrowsable(new URL("https://auth.example.com/authorize")) // true
 * McpOAuthPolicy.literalHostClass("169.254.169.254") // "link-local"
 * ```
 *
 * @since 0.3.0
 */
import * as NetAddress from "effect/net/NetAddress"
import * as Result from "effect/Result"

// -----------------------------------------------------------------------------
// Discovery URLs
// -----------------------------------------------------------------------------

const trimSlash = (path: string): string => path.replace(/\/+$/, "")

/**
 * Where to look for the protected resource metadata (RFC 9728) of an MCP
 * server, in order: the `resource_metadata` URL of the `WWW-Authenticate`
 * challenge, the path-aware well-known URL (`/.well-known/oauth-protected-resource/<path>`),
 * then the root one. Duplicates are dropped.
 *
 * @category discovery
 * @since 0.3.0
 */
export const protectedResourceMetadataUrls = (
  serverUrl: URL,
  fromChallenge?: string | undefined
): ReadonlyArray<URL> => {
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
 *
 * @category discovery
 * @since 0.3.0
 */
export const challengeResourceMetadataUrl = (serverUrl: URL, fromChallenge: string | undefined): URL | undefined =>
  fromChallenge === undefined || fromChallenge === "" ? undefined : parse(fromChallenge, serverUrl)

/**
 * Where to look for the metadata of an authorization server, in the order of
 * the MCP authorization spec (2025-11-25): for an issuer with a path
 * component, RFC 8414 with the well-known segment inserted before the path,
 * OpenID Connect discovery inserted, then OpenID Connect appended; for an
 * issuer without one, RFC 8414 then OpenID Connect at the root.
 *
 * @category discovery
 * @since 0.3.0
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
 *
 * @category discovery
 * @since 0.3.0
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
 * @category discovery
 * @since 0.3.0
 */
export const legacyMetadataUrls = (serverUrl: URL): ReadonlyArray<URL> => [
  legacyMetadataUrl(serverUrl),
  new URL("/.well-known/openid-configuration", serverUrl.origin)
]

/**
 * `true` when the `issuer` of the metadata a 2025-03-26 client found at the
 * MCP server's origin is one of that origin (RFC 8414 §3.3 wants the origin
 * itself; a path is tolerated): a URL without query or fragment.
 *
 * @category guards
 * @since 0.3.0
 */
export const legacyIssuerMatches = (serverUrl: URL, issuer: string): boolean => {
  const parsed = parse(issuer)
  return parsed !== undefined && parsed.origin === serverUrl.origin && parsed.search === "" && parsed.hash === ""
}

/**
 * The 2025-03-26 default endpoints of the authorization server at the MCP server's origin (no metadata).
 *
 * @category discovery
 * @since 0.3.0
 */
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
 *
 * @category guards
 * @since 0.3.0
 */
export const resourceMatches = (serverUrl: URL, resource: string): boolean => {
  const parsed = parse(resource)
  if (parsed === undefined || parsed.hash !== "") return false
  if (parsed.origin !== serverUrl.origin) return false
  const want = trimSlash(parsed.pathname)
  const have = trimSlash(serverUrl.pathname)
  return want === "" || have === want || have.startsWith(`${want}/`)
}

/**
 * `true` for URLs whose host is a loopback address (however written) or `localhost`.
 *
 * @category guards
 * @since 0.3.0
 */
export const isLoopback = (url: URL): boolean => literalHostClass(url.hostname) === "loopback"

/**
 * `true` when a registered redirect URI covers `redirectUri`: equal, or both
 * `http:` loopback URIs on the same host and path, whatever the ports (RFC
 * 8252 §7.3: the authorization server allows any port for a loopback
 * redirect, so a CLI with an ephemeral callback port keeps its registration).
 *
 * @category guards
 * @since 0.3.0
 */
export const redirectCovers = (registered: string, redirectUri: string): boolean => {
  if (registered === redirectUri) return true
  const a = parse(registered)
  const b = parse(redirectUri)
  return a !== undefined && b !== undefined && a.protocol === "http:" && b.protocol === "http:" && isLoopback(a) &&
    a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search
}

/**
 * `true` when a request to `url` may go out: https, or http to a loopback host (or `allowInsecure`).
 *
 * @category guards
 * @since 0.3.0
 */
export const allowedUrl = (url: URL, allowInsecure: boolean): boolean =>
  url.protocol === "https:" || (url.protocol === "http:" && (allowInsecure || isLoopback(url)))

/**
 * `true` for a URL that may be handed to a browser (or followed in its
 * place): `https:`, or `http:` on a loopback host. Any other scheme
 * (`file:`, `javascript:`, `data:`, a custom protocol handler) would reach
 * the OS or the browser's privileged handlers, not an authorization server.
 *
 * @category guards
 * @since 0.3.0
 */
export const isBrowsable = (url: URL): boolean =>
  url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url))

// -----------------------------------------------------------------------------
// Where a server may send the client (SSRF)
// -----------------------------------------------------------------------------

/**
 * How far inside the network an address is: `loopback` (this machine:
 * `127.0.0.0/8`, `0.0.0.0/8`, `::1`, `::`, `localhost`), `link-local`
 * (`169.254.0.0/16` with the cloud metadata services, `fe80::/10`),
 * `private` (RFC 1918, CGNAT, unique local IPv6 and the other ranges not
 * routed on the Internet), else `public`.
 *
 * @category models
 * @since 0.3.0
 */
export type HostClass = "loopback" | "link-local" | "private" | "public"

/** An IP address as its bytes (4 or 16); `undefined` for anything else. */
const bytesOf = (address: string): ReadonlyArray<number> | undefined => {
  const v4 = NetAddress.ipv4FromString(address)
  if (Result.isSuccess(v4)) return NetAddress.ipv4ToOctets(v4.success)
  const v6 = NetAddress.ipv6FromString(address)
  return Result.isSuccess(v6) ? [...NetAddress.ipv6ToOctets(v6.success)] : undefined
}

type Range = readonly [bytes: ReadonlyArray<number>, prefix: number]

/** The ranges of `list` (address, prefix length), parsed at their first use. */
const ranges = (list: ReadonlyArray<readonly [string, number]>): () => ReadonlyArray<Range> => {
  let parsed: ReadonlyArray<Range> | undefined
  return () => parsed ??= list.map(([address, prefix]) => [bytesOf(address) ?? [], prefix] as const)
}

/** `true` when the first `prefix` bits of `bytes` are those of `base` (same family). */
const inRange = (bytes: ReadonlyArray<number>, [base, prefix]: Range): boolean => {
  if (bytes.length !== base.length) return false
  for (let bit = 0; bit < prefix; bit += 8) {
    const mask = (0xff << (8 - Math.min(8, prefix - bit))) & 0xff
    const index = bit / 8
    if (((bytes[index] ?? 0) & mask) !== ((base[index] ?? 0) & mask)) return false
  }
  return true
}

const LOOPBACK = ranges([["127.0.0.0", 8], ["0.0.0.0", 8], ["::1", 128], ["::", 128]])
const LINK_LOCAL = ranges([["169.254.0.0", 16], ["fe80::", 10]])
const PRIVATE = ranges([
  ["10.0.0.0", 8],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["100.64.0.0", 10],
  ["192.0.0.0", 24],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
  ["fc00::", 7],
  ["fec0::", 10],
  ["ff00::", 8],
  ["64:ff9b:1::", 48]
])
/** IPv6 prefixes that carry an IPv4 address: NAT64 (last 32 bits) and 6to4 (bits 16 to 48). */
const NAT64 = ranges([["64:ff9b::", 96]])
const SIX_TO_FOUR = ranges([["2002::", 16]])
const MAPPED = ranges([["::ffff:0:0", 96]])

const within = (bytes: ReadonlyArray<number>, list: () => ReadonlyArray<Range>): boolean =>
  list().some((range) => inRange(bytes, range))

/** The IPv4 address an IPv6 address carries (IPv4-mapped, NAT64, 6to4, IPv4-compatible), if any. */
const embeddedIpv4 = (bytes: ReadonlyArray<number>): ReadonlyArray<number> | undefined => {
  if (bytes.length !== 16) return undefined
  if (within(bytes, MAPPED) || within(bytes, NAT64)) return bytes.slice(12, 16)
  if (within(bytes, SIX_TO_FOUR)) return bytes.slice(2, 6)
  if (bytes.slice(0, 12).every((byte) => byte === 0)) return bytes.slice(12, 16)
  return undefined
}

const bytesClass = (bytes: ReadonlyArray<number>): HostClass => {
  const embedded = embeddedIpv4(bytes)
  if (embedded !== undefined) return bytesClass(embedded)
  if (within(bytes, LOOPBACK)) return "loopback"
  if (within(bytes, LINK_LOCAL)) return "link-local"
  if (within(bytes, PRIVATE)) return "private"
  return "public"
}

/**
 * The class of an IP address (as written, or resolved: a zone index is
 * ignored); `public` for anything else.
 *
 * @category guards
 * @since 0.3.0
 */
export const addressClass = (address: string): HostClass => {
  const bytes = bytesOf(address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, ""))
  return bytes === undefined ? "public" : bytesClass(bytes)
}

/**
 * The class of a URL's host as written: an IP literal's class, `loopback`
 * for `localhost` and `*.localhost`; `undefined` for any other name (what it
 * resolves to decides, at connection time, where the platform resolves names).
 *
 * @category guards
 * @since 0.3.0
 */
export const literalHostClass = (hostname: string): HostClass | undefined => {
  const host = hostname.toLowerCase().replace(/\.$/, "")
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback"
  const bare = host.replace(/^\[(.*)\]$/, "$1")
  return bytesOf(bare.replace(/%.*$/, "")) === undefined ? undefined : addressClass(bare)
}

/**
 * `true` when a server the client was pointed at from hosts of the
 * classes `from` may send it to a host of class `to`: a public host always;
 * an inner one only when the user's own hosts are there too (the same class,
 * or anything from a loopback server: a developer's machine).
 *
 * @category guards
 * @since 0.3.0
 */
export const mayReach = (from: ReadonlySet<HostClass>, to: HostClass): boolean =>
  to === "public" || from.has("loopback") || from.has(to)

// -----------------------------------------------------------------------------
// Scopes
// -----------------------------------------------------------------------------

/**
 * The scopes of a space-separated list, without duplicates or empties.
 *
 * @category scopes
 * @since 0.3.0
 */
export const splitScope = (scope: string | undefined): ReadonlyArray<string> =>
  scope === undefined ? [] : [...new Set(scope.split(/\s+/).filter((part) => part !== ""))]

/**
 * The union of scope lists, in first-seen order; `undefined` when empty.
 *
 * @category scopes
 * @since 0.3.0
 */
export const joinScopes = (...lists: ReadonlyArray<ReadonlyArray<string>>): string | undefined => {
  const all = [...new Set(lists.flat())]
  return all.length === 0 ? undefined : all.join(" ")
}

/**
 * What scope selection looks at.
 *
 * @category models
 * @since 0.3.0
 */
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
 *
 * @category scopes
 * @since 0.3.0
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

/**
 * `true` when every scope of `wanted` is in `granted`.
 *
 * @category scopes
 * @since 0.3.0
 */
export const coversScopes = (granted: ReadonlyArray<string>, wanted: ReadonlyArray<string>): boolean =>
  wanted.every((scope) => granted.includes(scope))

// -----------------------------------------------------------------------------
// Token endpoint authentication
// -----------------------------------------------------------------------------

/**
 * The token endpoint authentication methods this client implements.
 *
 * @category models
 * @since 0.3.0
 */
export type AuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt"

/**
 * The method to authenticate a client at the token endpoint: the one it was
 * registered with; else, with a secret, `client_secret_basic` or
 * `client_secret_post`, whichever the server lists first of the two
 * (`client_secret_basic` when it lists none, its RFC 8414 default); else
 * `none`.
 *
 * @category client authentication
 * @since 0.3.0
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
    if (registered === "none" || client.clientSecret !== undefined || registered === "private_key_jwt") {
      return registered
    }
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
 *
 * @category client authentication
 * @since 0.3.0
 */
export const registrationAuthMethod = (supported: ReadonlyArray<string> | undefined): AuthMethod => {
  if (supported === undefined || supported.length === 0 || supported.includes("none")) return "none"
  if (supported.includes("client_secret_basic")) return "client_secret_basic"
  if (supported.includes("client_secret_post")) return "client_secret_post"
  return "client_secret_basic"
}
