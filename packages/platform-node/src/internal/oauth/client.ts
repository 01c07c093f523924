/**
 * The OAuth 2.1 client behind `NodeMcpOAuth`: discovery, client identity,
 * the grants, refresh, step-up, and the `McpAuth.ClientAuth` the HTTP client
 * transports use.
 *
 * Protocol mechanics come from `oauth4webapi` (PKCE, the authorization
 * response check with `state` and RFC 9207 `iss`, the token, refresh,
 * client credentials, generic grant and registration requests and their
 * response checks, client authentication) and keys from `jose`. Written
 * here: the discovery order of the MCP spec (oauth4webapi derives one
 * well-known URL per issuer, MCP asks for three in order and for the
 * protected resource metadata with fallbacks), the protected resource
 * metadata `resource` check (MCP allows a parent of the server URL, RFC 9728
 * processing in oauth4webapi wants an exact match), and the 2025-03-26
 * fallback (metadata at the server's origin whose `issuer` need not match).
 *
 * @internal
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as jose from "jose"
import * as oauth from "oauth4webapi"
import type * as NodeMcpOAuth from "../../NodeMcpOAuth.ts"
import * as Policy from "./policy.ts"

type Options = NodeMcpOAuth.Options
type ClientCredentialsGrant = NodeMcpOAuth.ClientCredentialsGrant
type CrossAppAccessGrant = NodeMcpOAuth.CrossAppAccessGrant

// -----------------------------------------------------------------------------
// Discovery results
// -----------------------------------------------------------------------------

/** What the protected resource metadata says (RFC 9728), as far as the client cares. */
export interface ResourceMetadata {
  readonly resource: string
  readonly authorization_servers?: ReadonlyArray<string>
  readonly scopes_supported?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/** The authorization server of an MCP server, as discovered. */
export interface Discovered {
  /**
   * The `resource` parameter: the protected resource metadata's `resource`
   * as written (the identifier the server checks audiences against; it may
   * name a parent of the MCP URL), else the canonical MCP server URL.
   */
  readonly resource: string
  readonly resourceMetadata: ResourceMetadata | undefined
  readonly server: oauth.AuthorizationServer
  /** Whether `server` came from a metadata document (else: 2025-03-26 default endpoints). */
  readonly hasMetadata: boolean
  /** 2025-03-26 mode: no protected resource metadata. */
  readonly legacy: boolean
}

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
const ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

const describe = (cause: unknown): string => {
  if (cause instanceof oauth.ResponseBodyError) {
    return `HTTP ${cause.status}, ${cause.error}${cause.error_description === undefined ? "" : `: ${cause.error_description}`}`
  }
  if (cause instanceof oauth.WWWAuthenticateChallengeError) {
    const params = cause.cause[0]?.parameters
    const error = params?.error
    return `HTTP ${cause.status}${error === undefined ? "" : `, ${error}`}${
      params?.error_description === undefined ? "" : `: ${params.error_description}`
    }`
  }
  if (cause instanceof oauth.AuthorizationResponseError) {
    return `${cause.error}${cause.error_description === undefined ? "" : `: ${cause.error_description}`}`
  }
  return McpError.messageOf(cause)
}

/**
 * A token endpoint error that came with a `WWW-Authenticate` challenge (a `401` to a
 * client that authenticated with a header): oauth4webapi reports the challenge and
 * leaves the body unread; the RFC 6749 §5.2 error is in the body.
 */
class ChallengedError extends Error {
  readonly status: number
  readonly error: string | undefined
  constructor(status: number, error: string | undefined, description: string | undefined, cause: unknown) {
    super(`HTTP ${status}${error === undefined ? "" : `, ${error}`}${description === undefined ? "" : `: ${description}`}`, {
      cause
    })
    this.status = status
    this.error = error
  }
}

const withErrorBody = (cause: unknown): Effect.Effect<unknown> => {
  if (!(cause instanceof oauth.WWWAuthenticateChallengeError)) return Effect.succeed(cause)
  const params = cause.cause[0]?.parameters
  return Effect.promise(() =>
    cause.response.json().then(
      (body: unknown) => {
        const fields = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
        const error = typeof fields.error === "string" ? fields.error : params?.error
        const description = typeof fields.error_description === "string"
          ? fields.error_description
          : params?.error_description
        return new ChallengedError(cause.status, error, description, cause)
      },
      () => new ChallengedError(cause.status, params?.error, params?.error_description, cause)
    )
  )
}

const statusOf = (cause: unknown): number | undefined =>
  cause instanceof oauth.ResponseBodyError || cause instanceof oauth.WWWAuthenticateChallengeError ||
    cause instanceof ChallengedError
    ? cause.status
    : undefined

/** The OAuth `error` code of a failed token or registration request, if it said one. */
const oauthErrorCode = (cause: unknown): string | undefined =>
  cause instanceof oauth.ResponseBodyError
    ? cause.error
    : cause instanceof ChallengedError
    ? cause.error
    : cause instanceof oauth.WWWAuthenticateChallengeError
    ? cause.cause[0]?.parameters.error
    : undefined

const authError = (kind: McpError.AuthError["kind"], what: string) => (cause: unknown): McpError.McpError =>
  McpError.isMcpError(cause) ? cause : McpError.auth(kind, `${what}: ${describe(cause)}`, { cause, status: statusOf(cause) })

// -----------------------------------------------------------------------------
// The client
// -----------------------------------------------------------------------------

/** @internal */
export const make = (
  options: Options,
  store: McpAuth.McpAuthStore["Service"],
  authorizer: McpAuth.McpAuthorizer["Service"] | undefined
): Effect.Effect<McpAuth.ClientAuth, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const parsedServer = Result.try(() => new URL(options.serverUrl))
    if (Result.isFailure(parsedServer)) {
      return yield* Effect.fail(McpError.auth("Discovery", `invalid MCP server URL: ${String(options.serverUrl)}`))
    }
    const serverUrl = parsedServer.success
    const resource = McpAuth.canonicalResource(serverUrl)
    const allowInsecure = options.allowInsecureRequests === true
    const timeout = (options.requestTimeoutSeconds ?? 30) * 1000
    const skew = options.refreshBeforeExpirySeconds ?? 60
    const maxStepUps = options.maxStepUps ?? 3
    const grant = options.grant
    const lock = yield* Semaphore.make(1)
    const withLock = Semaphore.withPermits(lock, 1)
    const lastDiscovered = yield* Ref.make<Discovered | undefined>(undefined)
    const stepUps = yield* Ref.make(0)
    /**
     * The access token last obtained by a refresh, and how many requests it was given to:
     * refused at its first use, it is not refreshed again (an authorization server whose
     * refreshed tokens the MCP server refuses would loop) but replaced by a new grant.
     */
    const refreshed = yield* Ref.make<{ readonly token: string; readonly uses: number } | undefined>(undefined)

    // Every OAuth request goes through undici's fetch with a dispatcher of this client's own,
    // destroyed with its scope: a closed client leaves no keep-alive connection behind (the
    // global fetch's pool would keep one to the authorization server and the MCP server).
    const dispatcher = yield* NodeHttpClient.makeDispatcher
    const undici = yield* Effect.promise(() => import("@effect/platform-node/Undici"))
    const httpFetch = (url: string | URL, init: RequestInit): Promise<Response> =>
      undici.fetch(url, { ...init, dispatcher } as never) as unknown as Promise<Response>

    const nowSeconds = Effect.map(Clock.currentTimeMillis, (millis) => Math.floor(millis / 1000))

    // --- HTTP -----------------------------------------------------------------

    const insecureFor = (url: string | URL | undefined): boolean => {
      if (url === undefined) return false
      const parsed = Result.try(() => new URL(url))
      return Result.isSuccess(parsed) && parsed.success.protocol === "http:" &&
        Policy.allowedUrl(parsed.success, allowInsecure)
    }

    const checkUrl = (url: URL, kind: McpError.AuthError["kind"], what: string): Effect.Effect<void, McpError.McpError> =>
      Policy.allowedUrl(url, allowInsecure)
        ? Effect.void
        : Effect.fail(McpError.auth(kind, `${what} ${url.href} is neither https nor a loopback http URL`))

    /** A promise-returning OAuth step, interruptible (its signal), bounded by the request timeout. */
    const call = <A>(
      kind: McpError.AuthError["kind"],
      what: string,
      run: (signal: AbortSignal) => Promise<A>
    ): Effect.Effect<A, McpError.McpError> =>
      Effect.tryPromise({ try: run, catch: (cause): unknown => cause }).pipe(
        Effect.catch((cause) => Effect.flatMap(withErrorBody(cause), (full) => Effect.fail(authError(kind, what)(full)))),
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () => Effect.fail(McpError.auth(kind, `${what}: no answer within ${timeout / 1000} s`))
        })
      )

    const requestOptions = (url: string | URL | undefined, signal: AbortSignal) => ({
      signal,
      [oauth.allowInsecureRequests]: insecureFor(url),
      [oauth.customFetch]: httpFetch
    })

    /** GET a metadata document: the response when it is 200, `undefined` for any other status. */
    const getMetadata = (url: URL, what: string): Effect.Effect<Response | undefined, McpError.McpError> =>
      Effect.andThen(
        checkUrl(url, "Discovery", what),
        call("Discovery", `${what} ${url.href}`, (signal) =>
          httpFetch(url, {
            headers: { accept: "application/json", "mcp-protocol-version": "2025-11-25" },
            redirect: "manual",
            signal
          }).then((response) => {
            if (response.status === 200) return response
            return response.body?.cancel().then(() => undefined, () => undefined)
          }))
      )

    const readJson = (response: Response, what: string): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
      call("Discovery", what, () => response.json() as Promise<unknown>).pipe(
        Effect.flatMap((json) =>
          typeof json === "object" && json !== null && !Array.isArray(json)
            ? Effect.succeed(json as Record<string, unknown>)
            : Effect.fail(McpError.auth("Discovery", `${what} is not a JSON object`))
        )
      )

    // --- Discovery ------------------------------------------------------------

    const findResourceMetadata = (fromChallenge: string | undefined) =>
      Effect.gen(function*() {
        for (const url of Policy.protectedResourceMetadataUrls(serverUrl, fromChallenge)) {
          const response = yield* getMetadata(url, "protected resource metadata")
          if (response === undefined) continue
          const json = yield* readJson(response, `protected resource metadata ${url.href}`)
          if (typeof json.resource !== "string") {
            return yield* Effect.fail(McpError.auth("Discovery", `protected resource metadata ${url.href} has no resource`))
          }
          return json as unknown as ResourceMetadata
        }
        return undefined
      })

    const findServerMetadata = (issuer: URL) =>
      Effect.gen(function*() {
        for (const url of Policy.authorizationServerMetadataUrls(issuer)) {
          const response = yield* getMetadata(url, "authorization server metadata")
          if (response === undefined) continue
          return yield* call(
            "Discovery",
            `authorization server metadata ${url.href}`,
            () => oauth.processDiscoveryResponse(issuer, response)
          )
        }
        return yield* Effect.fail(
          McpError.auth("Discovery", `no authorization server metadata for ${issuer.href} (RFC 8414 or OpenID Connect)`)
        )
      })

    const discover = (fromChallenge: string | undefined, preferredIssuer: string | undefined) =>
      Effect.gen(function*() {
        const metadata = yield* findResourceMetadata(fromChallenge)
        if (metadata !== undefined) {
          if (!Policy.resourceMatches(serverUrl, metadata.resource)) {
            return yield* Effect.fail(McpError.auth(
              "Refused",
              `the protected resource metadata names resource ${metadata.resource}, not the MCP server ${resource}`
            ))
          }
          const servers = (metadata.authorization_servers ?? []).filter((server) => typeof server === "string")
          const chosen = servers.find((server) => preferredIssuer !== undefined && sameIssuer(server, preferredIssuer)) ??
            servers[0]
          if (chosen === undefined || !URL.canParse(chosen)) {
            return yield* Effect.fail(
              McpError.auth("Discovery", `the protected resource metadata of ${resource} names no authorization server`)
            )
          }
          const server = yield* findServerMetadata(new URL(chosen))
          const discovered: Discovered = {
            resource: metadata.resource,
            resourceMetadata: metadata,
            server,
            hasMetadata: true,
            legacy: false
          }
          return discovered
        }
        // MCP 2025-03-26: the authorization server is the MCP server's origin
        for (const url of Policy.legacyMetadataUrls(serverUrl)) {
          const response = yield* getMetadata(url, "authorization server metadata")
          if (response === undefined) continue
          const json = yield* readJson(response, `authorization server metadata ${url.href}`)
          const issuer = typeof json.issuer === "string" ? json.issuer : serverUrl.origin
          const discovered: Discovered = {
            resource,
            resourceMetadata: undefined,
            server: { ...json, issuer } as oauth.AuthorizationServer,
            hasMetadata: true,
            legacy: true
          }
          return discovered
        }
        const fallback: Discovered = {
          resource,
          resourceMetadata: undefined,
          server: Policy.legacyEndpoints(serverUrl),
          hasMetadata: false,
          legacy: true
        }
        return fallback
      }).pipe(Effect.tap((discovered) => Ref.set(lastDiscovered, discovered)))

    const context = Effect.flatMap(
      Ref.get(lastDiscovered),
      (known) => known !== undefined ? Effect.succeed(known) : discover(undefined, undefined)
    )

    // --- Client identity ------------------------------------------------------

    interface Identity {
      readonly info: McpAuth.ClientInformation
      readonly source: "pre-registered" | "stored" | "metadata-document" | "registered" | "grant"
    }

    /**
     * The registration stored for an issuer, unless its secret expired or,
     * when it is about to be used for a new authorization (`forRedirect`),
     * it was registered for another redirect URI. A refresh needs no
     * redirect URI.
     */
    const storedClient = (issuer: string, forRedirect: boolean) =>
      Effect.gen(function*() {
        const stored = yield* store.getClient(issuer)
        if (stored === undefined) return undefined
        const now = yield* nowSeconds
        const expired = stored.clientSecretExpiresAt !== undefined && stored.clientSecretExpiresAt !== 0 &&
          stored.clientSecretExpiresAt <= now
        const redirectKnown = !forRedirect || authorizer === undefined || stored.redirectUris === undefined ||
          stored.redirectUris.length === 0 ||
          stored.redirectUris.some((uri) => Policy.redirectCovers(uri, authorizer.redirectUri))
        return expired || !redirectKnown ? undefined : stored
      })

    const register = (discovered: Discovered, redirectUri: string) =>
      Effect.gen(function*() {
        const server = discovered.server
        const endpoint = server.registration_endpoint
        if (endpoint === undefined) {
          return yield* Effect.fail(McpError.auth(
            "Registration",
            `the authorization server ${server.issuer} supports neither dynamic client registration nor client ID metadata documents, and no client is configured`
          ))
        }
        yield* checkUrl(new URL(endpoint), "Registration", "the registration endpoint")
        const meta = options.clientMetadata ?? {}
        const method = Policy.registrationAuthMethod(server.token_endpoint_auth_methods_supported)
        const request: Record<string, oauth.JsonValue> = {
          redirect_uris: [redirectUri],
          client_name: meta.clientName ?? "effect-mcp",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: method,
          application_type: meta.applicationType ?? (isLoopbackUrl(redirectUri) ? "native" : "web"),
          ...(meta.clientUri === undefined ? {} : { client_uri: meta.clientUri }),
          ...(meta.logoUri === undefined ? {} : { logo_uri: meta.logoUri }),
          ...(meta.softwareId === undefined ? {} : { software_id: meta.softwareId }),
          ...(meta.softwareVersion === undefined ? {} : { software_version: meta.softwareVersion }),
          ...(meta.scope === undefined ? {} : { scope: meta.scope })
        }
        const registered = yield* call("Registration", `dynamic client registration at ${endpoint}`, (signal) =>
          oauth.dynamicClientRegistrationRequest(server, request, requestOptions(endpoint, signal)).then(
            registrationResponse
          ))
        const secret = typeof registered.client_secret === "string" ? registered.client_secret : undefined
        const registeredMethod = typeof registered.token_endpoint_auth_method === "string"
          ? registered.token_endpoint_auth_method
          : secret === undefined
          ? "none"
          : undefined
        const info: McpAuth.ClientInformation = {
          clientId: registered.client_id,
          clientSecret: secret,
          clientSecretExpiresAt: typeof registered.client_secret_expires_at === "number"
            ? registered.client_secret_expires_at
            : undefined,
          redirectUris: Array.isArray(registered.redirect_uris)
            ? (registered.redirect_uris as Array<unknown>).filter((uri): uri is string => typeof uri === "string")
            : [redirectUri],
          tokenEndpointAuthMethod: registeredMethod,
          metadata: registered as Record<string, unknown>
        }
        yield* store.setClient(server.issuer, info)
        return info
      })

    /**
     * Who the client is at this authorization server: pre-registered; else a
     * registration stored for its issuer; else the client ID metadata
     * document URL when the server supports them; else (when `canRegister`)
     * a dynamic registration.
     */
    const identify = (discovered: Discovered, canRegister: boolean) =>
      Effect.gen(function*() {
        if (options.client !== undefined) {
          const identity: Identity = { info: options.client, source: "pre-registered" }
          return identity
        }
        const stored = yield* storedClient(discovered.server.issuer, canRegister)
        if (stored !== undefined) {
          const identity: Identity = { info: stored, source: "stored" }
          return identity
        }
        if (
          options.clientMetadataUrl !== undefined &&
          discovered.server.client_id_metadata_document_supported === true
        ) {
          const identity: Identity = {
            info: { clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: "none" },
            source: "metadata-document"
          }
          return identity
        }
        if (!canRegister || authorizer === undefined) return undefined
        const info = yield* register(discovered, authorizer.redirectUri)
        const identity: Identity = { info, source: "registered" }
        return identity
      })

    /** Client authentication of an identified client: a pre-registered client's private key, else by the method. */
    const identityAuth = (identity: Identity, server: oauth.AuthorizationServer) =>
      identity.source === "pre-registered" && options.client?.privateKey !== undefined
        ? privateKeyAuth(options.client.privateKey, options.client.algorithm, server)
        : Effect.succeed(clientAuthFor(identity.info, server))

    const clientAuthFor = (info: McpAuth.ClientInformation, server: oauth.AuthorizationServer): oauth.ClientAuth => {
      const method = Policy.tokenAuthMethod(info, server.token_endpoint_auth_methods_supported)
      const secret = info.clientSecret ?? ""
      return method === "client_secret_basic"
        ? clientSecretBasic(secret)
        : method === "client_secret_post"
        ? oauth.ClientSecretPost(secret)
        : oauth.None()
    }

    // --- Tokens -----------------------------------------------------------------

    const toTokens = (
      response: oauth.TokenEndpointResponse,
      issuer: string,
      requestedScope: string | undefined,
      previousRefreshToken?: string | undefined
    ) =>
      Effect.map(nowSeconds, (now): McpAuth.Tokens => ({
        accessToken: response.access_token,
        tokenType: response.token_type === "bearer" ? "Bearer" : response.token_type,
        refreshToken: response.refresh_token ?? previousRefreshToken,
        expiresAt: response.expires_in === undefined ? undefined : now + response.expires_in,
        scope: response.scope ?? requestedScope,
        issuer
      }))

    const tokenEndpoint = (server: oauth.AuthorizationServer) =>
      server.token_endpoint === undefined
        ? Effect.fail(McpError.auth("Discovery", `the authorization server ${server.issuer} has no token endpoint`))
        : Effect.as(checkUrl(new URL(server.token_endpoint), "Token", "the token endpoint"), server.token_endpoint)

    const header = (tokens: McpAuth.Tokens) => `Bearer ${tokens.accessToken}`

    const isExpired = (tokens: McpAuth.Tokens, now: number) => tokens.expiresAt !== undefined && now >= tokens.expiresAt - skew

    /** The header of the stored tokens while they are fresh. */
    const currentHeader = Effect.gen(function*() {
      const tokens = yield* store.getTokens(resource)
      if (tokens === undefined) return undefined
      return isExpired(tokens, yield* nowSeconds) ? undefined : header(tokens)
    })

    const refresh = (discovered: Discovered, tokens: McpAuth.Tokens) =>
      Effect.gen(function*() {
        const refreshToken = tokens.refreshToken
        if (refreshToken === undefined) return undefined
        if (tokens.issuer !== undefined && !sameIssuer(tokens.issuer, discovered.server.issuer)) return undefined
        const server = discovered.server
        // the client that got the refresh token: the grant's, else the one identified at this server
        const identity = grant === undefined ? yield* identify(discovered, false) : undefined
        if (grant === undefined && identity === undefined) return undefined
        const client: oauth.Client = { client_id: grant?.clientId ?? identity!.info.clientId }
        const auth = grant === undefined ? yield* identityAuth(identity!, server) : yield* grantAuth(grant, server)
        const endpoint = yield* tokenEndpoint(server)
        const response = yield* call("Token", `refresh at ${endpoint}`, (signal) =>
          oauth.refreshTokenGrantRequest(server, client, auth, refreshToken, {
            ...requestOptions(endpoint, signal),
            additionalParameters: { resource: discovered.resource }
          }).then((answer) => oauth.processRefreshTokenResponse(server, client, answer))).pipe(
            Effect.tapError((error) =>
              // a registration the server no longer knows: forget it, the new authorization registers again
              isInvalidClient(error) && (identity?.source === "stored" || identity?.source === "registered")
                ? store.clearClient(server.issuer)
                : Effect.void
            )
          )
        const next = yield* toTokens(response, server.issuer, tokens.scope, refreshToken)
        yield* store.setTokens(resource, next)
        yield* Ref.set(refreshed, { token: next.accessToken, uses: 0 })
        return next
      })

    // --- Grants -----------------------------------------------------------------

    const authorizationCode = (discovered: Discovered, scope: string | undefined) =>
      Effect.gen(function*() {
        if (authorizer === undefined) {
          return yield* Effect.fail(McpError.auth(
            "Authorization",
            "the server needs a user's authorization and no McpAuthorizer was provided"
          ))
        }
        const server = discovered.server
        if (discovered.hasMetadata && !(server.code_challenge_methods_supported ?? []).includes("S256")) {
          return yield* Effect.fail(McpError.auth(
            "Refused",
            `the authorization server ${server.issuer} does not list PKCE S256 in code_challenge_methods_supported`
          ))
        }
        if (server.authorization_endpoint === undefined) {
          return yield* Effect.fail(
            McpError.auth("Discovery", `the authorization server ${server.issuer} has no authorization endpoint`)
          )
        }
        const identity = yield* identify(discovered, true)
        if (identity === undefined) {
          return yield* Effect.fail(McpError.auth("Registration", `no client identity at ${server.issuer}`))
        }
        const client: oauth.Client = { client_id: identity.info.clientId }
        const clientAuth = yield* identityAuth(identity, server)
        const verifier = oauth.generateRandomCodeVerifier()
        const challenge = yield* call("Authorization", "PKCE", () => oauth.calculatePKCECodeChallenge(verifier))
        const state = oauth.generateRandomState()
        const url = new URL(server.authorization_endpoint)
        url.searchParams.set("response_type", "code")
        url.searchParams.set("client_id", client.client_id)
        url.searchParams.set("redirect_uri", authorizer.redirectUri)
        url.searchParams.set("code_challenge", challenge)
        url.searchParams.set("code_challenge_method", "S256")
        url.searchParams.set("state", state)
        if (scope !== undefined) url.searchParams.set("scope", scope)
        url.searchParams.set("resource", discovered.resource)
        const redirected = yield* authorizer.authorize(url)
        const validated = Result.try({
          try: () => oauth.validateAuthResponse(server, client, redirected, state),
          // the server's error (access_denied, ...) vs a response that fails the checks (state, iss)
          catch: (cause) =>
            cause instanceof oauth.AuthorizationResponseError
              ? authError("Authorization", "the authorization server refused")(cause)
              : authError("Refused", "the authorization response (state / iss check)")(cause)
        })
        if (Result.isFailure(validated)) return yield* Effect.fail(validated.failure)
        const endpoint = yield* tokenEndpoint(server)
        const response = yield* call("Token", `code exchange at ${endpoint}`, (signal) =>
          oauth.authorizationCodeGrantRequest(
            server,
            client,
            clientAuth,
            validated.success,
            authorizer.redirectUri,
            verifier,
            { ...requestOptions(endpoint, signal), additionalParameters: { resource: discovered.resource } }
          ).then((answer) => oauth.processAuthorizationCodeResponse(server, client, answer))).pipe(
            Effect.tapError((error) =>
              // a registration the server no longer knows: forget it, the next attempt registers again
              identity.source === "stored" || identity.source === "registered"
                ? (isInvalidClient(error) ? store.clearClient(server.issuer) : Effect.void)
                : Effect.void
            )
          )
        return yield* toTokens(response, server.issuer, scope)
      })

    const clientCredentials = (discovered: Discovered, spec: ClientCredentialsGrant, scope: string | undefined) =>
      Effect.gen(function*() {
        const server = discovered.server
        const endpoint = yield* tokenEndpoint(server)
        const client: oauth.Client = { client_id: spec.clientId }
        const auth = yield* grantAuth(spec, server)
        const parameters: Record<string, string> = { resource: discovered.resource }
        if (scope !== undefined) parameters.scope = scope
        const response = yield* call("Token", `client credentials grant at ${endpoint}`, (signal) =>
          oauth.clientCredentialsGrantRequest(server, client, auth, parameters, requestOptions(endpoint, signal)).then(
            (answer) => oauth.processClientCredentialsResponse(server, client, answer)
          ))
        return yield* toTokens(response, server.issuer, scope)
      })

    const crossAppAccess = (discovered: Discovered, spec: CrossAppAccessGrant, scope: string | undefined) =>
      Effect.gen(function*() {
        const server = discovered.server
        const idToken = typeof spec.idp.idToken === "string" ? spec.idp.idToken : yield* spec.idp.idToken
        // 1. RFC 8693 token exchange at the IdP: ID token → identity assertion grant (ID-JAG)
        const idp: oauth.AuthorizationServer = spec.idp.tokenEndpoint !== undefined
          ? {
            issuer: spec.idp.issuer ?? new URL(spec.idp.tokenEndpoint).origin,
            token_endpoint: spec.idp.tokenEndpoint
          }
          : spec.idp.issuer !== undefined
          ? yield* findServerMetadata(new URL(spec.idp.issuer))
          : yield* Effect.fail(McpError.auth("Token", "cross-app access needs the IdP's tokenEndpoint or issuer"))
        const idpEndpoint = yield* tokenEndpoint(idp)
        const idpClient: oauth.Client = { client_id: spec.idp.clientId }
        const exchange: Record<string, string> = {
          subject_token: idToken,
          subject_token_type: ID_TOKEN_TYPE,
          requested_token_type: ID_JAG_TYPE,
          audience: server.issuer,
          resource: discovered.resource
        }
        if (scope !== undefined) exchange.scope = scope
        const exchanged = yield* call("Token", `token exchange at ${idpEndpoint}`, (signal) =>
          oauth.genericTokenEndpointRequest(
            idp,
            idpClient,
            spec.idp.clientSecret === undefined ? oauth.None() : clientSecretBasic(spec.idp.clientSecret),
            TOKEN_EXCHANGE,
            exchange,
            requestOptions(idpEndpoint, signal)
          ).then((answer) =>
            oauth.processGenericTokenEndpointResponse(idp, idpClient, answer, {
              // an ID-JAG is no access token: RFC 8693 says token_type "N_A"
              recognizedTokenTypes: { n_a: () => undefined }
            })
          ))
        if (exchanged.issued_token_type !== undefined && exchanged.issued_token_type !== ID_JAG_TYPE) {
          return yield* Effect.fail(McpError.auth(
            "Token",
            `the IdP issued a ${String(exchanged.issued_token_type)}, not an identity assertion grant`
          ))
        }
        // 2. RFC 7523 JWT bearer grant at the MCP server's authorization server
        const endpoint = yield* tokenEndpoint(server)
        const client: oauth.Client = { client_id: spec.clientId }
        const auth = yield* grantAuth(spec, server)
        const parameters: Record<string, string> = { assertion: exchanged.access_token, resource: discovered.resource }
        if (scope !== undefined) parameters.scope = scope
        const response = yield* call("Token", `JWT bearer grant at ${endpoint}`, (signal) =>
          oauth.genericTokenEndpointRequest(server, client, auth, JWT_BEARER, parameters, requestOptions(endpoint, signal))
            .then((answer) => oauth.processGenericTokenEndpointResponse(server, client, answer)))
        return yield* toTokens(response, server.issuer, scope)
      })

    /** Client authentication of the client credentials / cross-app grants: a private key JWT, or the secret. */
    const grantAuth = (
      spec: ClientCredentialsGrant | CrossAppAccessGrant,
      server: oauth.AuthorizationServer
    ): Effect.Effect<oauth.ClientAuth, McpError.McpError> => {
      if (spec.type === "client_credentials" && spec.privateKey !== undefined) {
        return privateKeyAuth(spec.privateKey, spec.algorithm, server)
      }
      return Effect.succeed(clientAuthFor({ clientId: spec.clientId, clientSecret: spec.clientSecret }, server))
    }

    /**
     * `private_key_jwt` (RFC 7523 §2.2, oauth4webapi signs the assertion: `iss` = `sub` =
     * the client id, `aud` the issuer, `jti`, `exp`) with a PKCS#8 PEM or private JWK key
     * (jose imports it). The algorithm: given, else the JWK's `alg`, else the server's first
     * `token_endpoint_auth_signing_alg_values_supported`, else RS256.
     */
    const privateKeyAuth = (
      privateKey: string | jose.JWK,
      algorithm: string | undefined,
      server: oauth.AuthorizationServer
    ): Effect.Effect<oauth.ClientAuth, McpError.McpError> => {
      const alg = algorithm ??
        (typeof privateKey === "object" && typeof privateKey.alg === "string" ? privateKey.alg : undefined) ??
        server.token_endpoint_auth_signing_alg_values_supported?.[0] ?? "RS256"
      return call("Token", "the client's private key", () =>
        typeof privateKey === "string" ? jose.importPKCS8(privateKey, alg) : jose.importJWK(privateKey, alg)).pipe(
          Effect.flatMap((key) =>
            key instanceof Uint8Array
              ? Effect.fail(McpError.auth("Token", "the client's private key is a symmetric key"))
              : Effect.succeed(oauth.PrivateKeyJwt(key))
          )
        )
    }

    // --- Challenges ---------------------------------------------------------------

    const obtain = (discovered: Discovered, scope: string | undefined) =>
      grant === undefined
        ? authorizationCode(discovered, scope)
        : grant.type === "client_credentials"
        ? clientCredentials(discovered, grant, scope)
        : crossAppAccess(discovered, grant, scope)

    const answer = (challenge: McpAuth.Challenge) =>
      Effect.gen(function*() {
        const current = yield* currentHeader
        // another fiber already replaced the refused credentials
        if (current !== undefined && current !== challenge.authorization) return
        const params = challenge.bearer?.params ?? {}
        const stored = yield* store.getTokens(resource)
        const stepUp = challenge.status === 403
        const granted = stepUp ? Policy.splitScope(stored?.scope) : []
        if (stepUp) {
          const wanted = Policy.splitScope(params.scope)
          if (wanted.length > 0 && Policy.coversScopes(granted, wanted)) {
            return yield* Effect.fail(McpError.auth(
              "InsufficientScope",
              `${challenge.url} refused scopes already granted (${wanted.join(" ")}); authorizing again would not help`,
              { status: 403 }
            ))
          }
          const count = yield* Ref.updateAndGet(stepUps, (n) => n + 1)
          if (count > maxStepUps) {
            return yield* Effect.fail(McpError.auth(
              "InsufficientScope",
              `${challenge.url} still asks for more scope after ${maxStepUps} step-up authorizations`,
              { status: 403 }
            ))
          }
        }
        const discovered = yield* discover(params.resource_metadata, stored?.issuer)
        // a refresh token before a new authorization (not for a step-up: it cannot widen the scope)
        if (!stepUp && stored?.refreshToken !== undefined) {
          const last = yield* Ref.get(refreshed)
          if (last === undefined || challenge.authorization !== `Bearer ${last.token}` || last.uses > 1) {
            const renewed = yield* Effect.option(refresh(discovered, stored))
            if (Option.isSome(renewed) && renewed.value !== undefined) return
          }
        }
        const scope = Policy.selectScope({
          override: options.scope ?? grant?.scope,
          challenge: params.scope,
          resourceScopes: discovered.resourceMetadata?.scopes_supported,
          serverScopes: discovered.server.scopes_supported,
          granted,
          offlineAccess: grant === undefined
        })
        const tokens = yield* obtain(discovered, scope)
        yield* store.setTokens(resource, tokens)
        yield* Ref.set(refreshed, undefined)
        if (!stepUp) yield* Ref.set(stepUps, 0)
      })

    const authorization = (url: string) =>
      Effect.gen(function*() {
        // the token is for this MCP server only
        if (!URL.canParse(url) || new URL(url).origin !== serverUrl.origin) return undefined
        const tokens = yield* store.getTokens(resource)
        if (tokens === undefined) return undefined
        if (!isExpired(tokens, yield* nowSeconds)) {
          yield* Ref.update(refreshed, (last) =>
            last !== undefined && last.token === tokens.accessToken ? { ...last, uses: last.uses + 1 } : last)
          return header(tokens)
        }
        if (tokens.refreshToken === undefined) return undefined
        // expired: refresh (once, for all the fibers that see it)
        return yield* withLock(Effect.gen(function*() {
          const again = yield* currentHeader
          if (again !== undefined) return again
          const latest = yield* store.getTokens(resource)
          if (latest === undefined) return undefined
          const discovered = yield* Effect.option(context)
          if (Option.isNone(discovered)) return undefined
          const renewed = yield* Effect.option(refresh(discovered.value, latest))
          if (Option.isSome(renewed) && renewed.value !== undefined) {
            yield* Ref.set(refreshed, { token: renewed.value.accessToken, uses: 1 })
            return header(renewed.value)
          }
          yield* store.clearTokens(resource)
          return undefined
        }))
      })

    const clientAuth: McpAuth.ClientAuth = {
      authorization,
      challenge: (challenge) => withLock(answer(challenge)),
      maxAttempts: options.maxAttempts
    }
    return clientAuth
  })

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): the client id and secret, each
 * percent-encoded, in a Basic `Authorization` header. Written here, not
 * `oauth.ClientSecretBasic`: that one also escapes the unreserved `-_.~`
 * (and `!*'()`), which a form decoder reads back the same but servers that
 * compare the raw credentials (the conformance suite's among them) do not —
 * `pre-registered-client` became `pre%2Dregistered%2Dclient`. Here only what
 * `encodeURIComponent` escapes is escaped: the same for a decoding server,
 * and identical for ids and secrets of unreserved characters.
 */
const clientSecretBasic = (secret: string): oauth.ClientAuth => (_server, client, _body, headers) => {
  const credentials = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`
  headers.set("authorization", `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`)
}

/**
 * Checks a dynamic client registration response. Written here, not
 * `oauth.processDynamicClientRegistrationResponse`: that one rejects a
 * response with a `client_secret` but no `client_secret_expires_at` (REQUIRED
 * by RFC 7591 §3.2.1), which authorization servers in the wild omit (the
 * conformance suite's among them); a missing one is read as "never expires".
 * Success is 201 (or 200); an error body is the RFC 7591 §3.2.2 error.
 */
const registrationResponse = (response: Response): Promise<RegistrationResponse> =>
  response.text().then((text) => {
    const parsed: unknown = text === "" ? undefined : JSON.parse(text)
    const body = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? parsed as Record<string, unknown>
      : undefined
    if (response.status !== 201 && response.status !== 200) {
      const error = typeof body?.error === "string" ? body.error : undefined
      const detail = typeof body?.error_description === "string" ? `: ${body.error_description}` : ""
      throw new Error(`HTTP ${response.status}${error === undefined ? "" : `, ${error}${detail}`}`)
    }
    if (body === undefined || typeof body.client_id !== "string" || body.client_id === "") {
      throw new Error("the registration response has no client_id")
    }
    if (body.client_secret !== undefined && typeof body.client_secret !== "string") {
      throw new Error("the registration response's client_secret is not a string")
    }
    return body as RegistrationResponse
  })

interface RegistrationResponse {
  readonly client_id: string
  readonly client_secret?: string
  readonly [key: string]: unknown
}

const sameIssuer = (a: string, b: string): boolean =>
  URL.canParse(a) && URL.canParse(b) ? new URL(a).href === new URL(b).href : a === b

const isLoopbackUrl = (url: string): boolean => URL.canParse(url) && Policy.isLoopback(new URL(url))

const isInvalidClient = (error: McpError.McpError): boolean => {
  const reason = error.reason
  return reason._tag === "AuthError" && oauthErrorCode(reason.cause) === "invalid_client"
}
