/**
 * Authorization shared by both sides of an HTTP MCP connection (MCP
 * 2025-06-18 and later: OAuth 2.1, the MCP server is a resource server).
 *
 * - Servers: {@link AuthInfo} is what a verified bearer token says; handlers
 *   read the current request's with {@link CurrentAuth}.
 * - Clients: the HTTP client transports take a {@link ClientAuth}, which
 *   gives the `Authorization` header of each request and is told when the
 *   server refuses it (`401`, `403 insufficient_scope`); the transport then
 *   resends the request once the client auth has new credentials. An OAuth
 *   client (`McpOAuth.make`; `NodeMcpOAuth` in `@effect-mcp/platform-node` on Node) is one.
 * - {@link McpAuthStore} keeps tokens (per MCP server) and client
 *   registrations (per authorization server); {@link McpAuthorizer} is the
 *   user-facing step of the authorization code flow.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpError from "./McpError.ts"

// -----------------------------------------------------------------------------
// Server side: what a verified token says
// -----------------------------------------------------------------------------

/**
 * A verified access token: who it was issued to and what it allows.
 *
 * @category models
 * @since 0.1.0
 */
export interface AuthInfo {
  /** The bearer token itself. */
  readonly token: string
  /** The OAuth client the token was issued to (`client_id` / `azp`). */
  readonly clientId?: string | undefined
  /** The resource owner (`sub`). */
  readonly subject?: string | undefined
  /** The granted scopes. */
  readonly scopes: ReadonlyArray<string>
  /** When the token expires, in seconds since the epoch. */
  readonly expiresAt?: number | undefined
  /** The audience / resource the token was issued for. */
  readonly audience?: ReadonlyArray<string> | undefined
  /** Every claim of the token (or of the introspection answer). */
  readonly claims: Readonly<Record<string, unknown>>
}

/**
 * The auth info of the request being handled: set by a protected HTTP
 * transport for each request it passes on, `undefined` elsewhere.
 *
 * @category references
 * @since 0.1.0
 */
export const CurrentAuth = Context.Reference<AuthInfo | undefined>("@effect-mcp/core/McpAuth/CurrentAuth", {
  defaultValue: () => undefined
})

/**
 * The canonical form of an MCP server URL (RFC 8707 §2, as the MCP
 * authorization spec uses it): the `resource` parameter of OAuth requests,
 * what a protected resource metadata `resource` must equal, and the key
 * under which tokens are stored. Scheme and host lower case, no fragment,
 * no trailing slash after a bare host.
 *
 * @category constructors
 * @since 0.1.0
 */
export const canonicalResource = (url: string | URL): string => {
  const parsed = new URL(url)
  parsed.hash = ""
  const href = parsed.href
  return parsed.pathname === "/" && parsed.search === "" ? href.slice(0, -1) : href
}

// -----------------------------------------------------------------------------
// Client side: challenges
// -----------------------------------------------------------------------------

/**
 * One challenge of a `WWW-Authenticate` header: its scheme (lower case) and
 * its parameters (names lower case, quoted values unquoted).
 *
 * @category models
 * @since 0.1.0
 */
export interface WwwAuthenticate {
  readonly scheme: string
  readonly params: Readonly<Record<string, string>>
}

/**
 * A server's refusal of a request, as the client transport saw it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Challenge {
  /** `401`, or `403` with `error="insufficient_scope"`. */
  readonly status: number
  /** The URL of the refused request (the MCP endpoint). */
  readonly url: string
  /** The `Authorization` header value the refused request carried, if any. */
  readonly authorization: string | undefined
  /** The `Bearer` challenge of the `WWW-Authenticate` header, if there was one. */
  readonly bearer: WwwAuthenticate | undefined
  /** The `DPoP` challenge of the `WWW-Authenticate` header (RFC 9449 §7.1), if there was one. */
  readonly dpop?: WwwAuthenticate | undefined
  /** The `DPoP-Nonce` header of the refusal (RFC 9449 §9), if any. */
  readonly dpopNonce?: string | undefined
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/
const TOKEN68 = /^\s+([A-Za-z0-9\-._~+/]+=*)\s*(?=,|$)/
const EQUALS = /^\s*=\s*/

/**
 * Parses a `WWW-Authenticate` header value (RFC 9110 §11.6.1): every
 * challenge with its auth-params. A token68 is kept under the empty name;
 * unquoted values are read up to the next comma or space, so that a bare
 * URL survives. Malformed parts are skipped.
 *
 * @category parsing
 * @since 0.1.0
 */
export const parseWwwAuthenticate = (header: string): ReadonlyArray<WwwAuthenticate> => {
  const out: Array<{ readonly scheme: string; readonly params: Record<string, string> }> = []
  let rest = header
  // every pass consumes at least one character
  while (rest.length > 0) {
    rest = rest.replace(/^[\s,]+/, "")
    const word = TOKEN.exec(rest)
    if (word === null) {
      rest = rest.slice(1)
      continue
    }
    rest = rest.slice(word[0].length)
    const equals = EQUALS.exec(rest)
    const current = out[out.length - 1]
    if (equals !== null && current !== undefined) {
      rest = rest.slice(equals[0].length)
      let value = ""
      if (rest.startsWith("\"")) {
        let i = 1
        for (; i < rest.length && rest[i] !== "\""; i++) {
          if (rest[i] === "\\" && i + 1 < rest.length) i++
          value += rest[i]
        }
        rest = rest.slice(i + 1)
      } else {
        value = /^[^\s,]*/.exec(rest)![0]
        rest = rest.slice(value.length)
      }
      current.params[word[0].toLowerCase()] = value
      continue
    }
    const challenge = { scheme: word[0].toLowerCase(), params: {} as Record<string, string> }
    out.push(challenge)
    const token68 = TOKEN68.exec(rest)
    if (token68 !== null) {
      challenge.params[""] = token68[1]!
      rest = rest.slice(token68[0].length)
    }
  }
  return out
}

/**
 * The `Bearer` challenge of a `WWW-Authenticate` header value, if any.
 *
 * @category parsing
 * @since 0.1.0
 */
export const bearerChallenge = (header: string | undefined): WwwAuthenticate | undefined =>
  header === undefined ? undefined : parseWwwAuthenticate(header).find((challenge) => challenge.scheme === "bearer")

/**
 * The `DPoP` challenge of a `WWW-Authenticate` header value (RFC 9449
 * §7.1), if any.
 *
 * @category parsing
 * @since 0.1.0
 */
export const dpopChallenge = (header: string | undefined): WwwAuthenticate | undefined =>
  header === undefined ? undefined : parseWwwAuthenticate(header).find((challenge) => challenge.scheme === "dpop")

/**
 * `true` when a response is an authorization refusal the client may answer
 * with new credentials: `401`, or `403` whose bearer challenge says
 * `insufficient_scope`.
 *
 * @category guards
 * @since 0.1.0
 */
export const isChallenge = (status: number, bearer: WwwAuthenticate | undefined): boolean =>
  status === 401 || (status === 403 && bearer?.params.error === "insufficient_scope")

/**
 * What an HTTP client transport asks of its authorization.
 *
 * - `authorization` gives the `Authorization` header value for a request to
 *   `url` (`undefined`: send none). It runs before every request, so it can
 *   refresh a token about to expire.
 * - `challenge` is called when the server refused a request (see
 *   {@link isChallenge}). It succeeds once new credentials are in place (the
 *   transport then resends the request, which may bring a new challenge),
 *   or fails with an `AuthError` that the call fails with. Concurrent
 *   challenges for the same refused credentials should run one flow.
 *
 * - `headers`, if present, gives more headers for a request, from its method,
 *   URL and the `Authorization` value it carries: a DPoP proof (RFC 9449
 *   §7) is made per request.
 *
 * A transport resends one request at most `maxAttempts` times (default 3)
 * before failing with the last challenge as an `AuthError`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClientAuth {
  readonly authorization: (url: string) => Effect.Effect<string | undefined, McpError.McpError>
  readonly headers?: (request: {
    readonly method: string
    readonly url: string
    readonly authorization: string | undefined
  }) => Effect.Effect<Readonly<Record<string, string>>, McpError.McpError>
  readonly challenge: (challenge: Challenge) => Effect.Effect<void, McpError.McpError>
  readonly maxAttempts?: number | undefined
}

/**
 * A fixed bearer token (an API key, a token obtained elsewhere). A challenge
 * cannot be answered: it fails with `AuthError`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const bearer = (token: string): ClientAuth => ({
  authorization: () => Effect.succeed(`Bearer ${token}`),
  challenge: (challenge) => Effect.fail(unauthorizedError(challenge))
})

/**
 * The `AuthError` a challenge that could not be answered fails with.
 *
 * @category constructors
 * @since 0.1.0
 */
export const unauthorizedError = (challenge: Challenge): McpError.McpError => {
  const params = (challenge.bearer ?? challenge.dpop)?.params ?? {}
  const detail = [params.error, params.error_description].filter((part) => part !== undefined).join(": ")
  return McpError.auth(
    challenge.status === 403 ? "InsufficientScope" : "Unauthorized",
    `${challenge.url} refused the request (HTTP ${challenge.status}${detail === "" ? "" : `, ${detail}`})`,
    { status: challenge.status }
  )
}

// -----------------------------------------------------------------------------
// Client side: storage
// -----------------------------------------------------------------------------

/**
 * Tokens from an authorization server's token endpoint, with when they
 * expire (seconds since the epoch) instead of `expires_in`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Tokens {
  readonly accessToken: string
  readonly tokenType: string
  readonly refreshToken?: string | undefined
  readonly expiresAt?: number | undefined
  /** The granted scopes (space separated), when the server said. */
  readonly scope?: string | undefined
  /** The issuer of the authorization server that issued them. */
  readonly issuer?: string | undefined
}

/**
 * A client's identity at one authorization server: pre-registered,
 * dynamically registered (RFC 7591), or a Client ID Metadata Document URL.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClientInformation {
  readonly clientId: string
  readonly clientSecret?: string | undefined
  /** When the secret expires, in seconds since the epoch (`0`: never). */
  readonly clientSecretExpiresAt?: number | undefined
  /** The redirect URIs it was registered with. */
  readonly redirectUris?: ReadonlyArray<string> | undefined
  /** The token endpoint auth method it was registered with. */
  readonly tokenEndpointAuthMethod?: string | undefined
  /** The whole registration response, for what else it says. */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Where a client keeps what authorization gave it: tokens per MCP server
 * (the canonical server URL) and client registrations per authorization
 * server (its issuer), so that a server moving to another authorization
 * server registers again.
 *
 * @category services
 * @since 0.1.0
 */
export class McpAuthStore extends Context.Service<McpAuthStore, {
  readonly getTokens: (resource: string) => Effect.Effect<Tokens | undefined, McpError.McpError>
  readonly setTokens: (resource: string, tokens: Tokens) => Effect.Effect<void, McpError.McpError>
  readonly getClient: (issuer: string) => Effect.Effect<ClientInformation | undefined, McpError.McpError>
  readonly setClient: (issuer: string, client: ClientInformation) => Effect.Effect<void, McpError.McpError>
  /** Forgets the tokens of a resource (sign out); client registrations stay. */
  readonly clearTokens: (resource: string) => Effect.Effect<void, McpError.McpError>
  /** Forgets a client registration (the authorization server rejected it). */
  readonly clearClient: (issuer: string) => Effect.Effect<void, McpError.McpError>
}>()("@effect-mcp/core/McpAuth/McpAuthStore") {}

/**
 * A store in memory: tokens last as long as the store.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemoryStore = (): McpAuthStore["Service"] => {
  const tokens = new Map<string, Tokens>()
  const clients = new Map<string, ClientInformation>()
  return McpAuthStore.of({
    getTokens: (resource) => Effect.sync(() => tokens.get(resource)),
    setTokens: (resource, value) => Effect.sync(() => void tokens.set(resource, value)),
    getClient: (issuer) => Effect.sync(() => clients.get(issuer)),
    setClient: (issuer, value) => Effect.sync(() => void clients.set(issuer, value)),
    clearTokens: (resource) => Effect.sync(() => void tokens.delete(resource)),
    clearClient: (issuer) => Effect.sync(() => void clients.delete(issuer))
  })
}

/**
 * The in-memory store as a layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemoryStore: Layer.Layer<McpAuthStore> = Layer.sync(McpAuthStore, makeMemoryStore)

// -----------------------------------------------------------------------------
// Client side: the user's authorization
// -----------------------------------------------------------------------------

/**
 * The user-facing step of the authorization code flow: send the user to the
 * authorization URL and receive the redirect back.
 *
 * - `redirectUri` is registered with the authorization server and sent in
 *   the authorization and token requests.
 * - `authorize` takes the full authorization URL and returns the URL the
 *   authorization server redirected to (with `code`, `state` and maybe
 *   `iss`, or `error`); the OAuth client checks it.
 *
 * - `remember`, if present, is given what completing the authorization
 *   needs before `authorize` runs: an authorizer whose `authorize` leaves
 *   the program (a web page navigating to the authorization server) keeps
 *   it for the completion on the redirect page (`McpOAuthRedirect`).
 *
 * `NodeMcpAuthorizer` (platform-node) has a loopback-browser authorizer and a
 * headless one that follows the redirect itself (for tests and for
 * authorization servers that authorize without a user);
 * `McpOAuthRedirect.layerAuthorizer` navigates a web page.
 *
 * @category services
 * @since 0.1.0
 */
export class McpAuthorizer extends Context.Service<McpAuthorizer, {
  readonly redirectUri: string
  readonly authorize: (authorizationUrl: URL) => Effect.Effect<URL, McpError.McpError>
  readonly remember?: ((pending: PendingAuthorization) => Effect.Effect<void, McpError.McpError>) | undefined
}>()("@effect-mcp/core/McpAuth/McpAuthorizer") {}

/**
 * An authorization code flow under way: what its completion needs once the
 * authorization server redirects back (`state` finds it). The PKCE
 * `codeVerifier` is a secret of this flow: keep it where the app's own
 * code alone can read it, and forget it once used.
 *
 * @category models
 * @since 0.3.0
 */
export interface PendingAuthorization {
  /** The `state` of the authorization request. */
  readonly state: string
  /** The PKCE code verifier (S256). */
  readonly codeVerifier: string
  readonly redirectUri: string
  /** The canonical MCP server URL: where the tokens are stored (`canonicalResource`). */
  readonly serverUrl: string
  /** The `resource` parameter of the authorization and token requests. */
  readonly resource: string
  readonly clientId: string
  readonly scope?: string | undefined
  /** The authorization server's metadata, as discovered and checked (its `issuer` among them). */
  readonly server: Readonly<Record<string, unknown>> & { readonly issuer: string }
  /** When the authorization began, in seconds since the epoch. */
  readonly createdAt: number
}
