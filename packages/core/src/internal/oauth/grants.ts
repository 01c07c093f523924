/**
 * Getting tokens: the authorization code grant with PKCE (the user's step
 * through the `McpAuthorizer`), the client credentials grant, cross-app
 * access (an RFC 8693 token exchange at the IdP, then the RFC 7523 JWT
 * bearer grant), a workload's JWT bearer grant (`jwtBearer.ts`), and the
 * refresh token grant. Every request names the
 * `resource` (RFC 8707).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as oauth from "oauth4webapi"
import type * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpOAuth from "../../McpOAuth.ts"
import * as McpOAuthPolicy from "../../McpOAuthPolicy.ts"
import { type Discovered, type Discovery, sameIssuer } from "./discovery.ts"
import * as Dpop from "./dpop.ts"
import { authError, isInvalidClient } from "./errors.ts"
import type { Http } from "./http.ts"
import { clientSecretBasic, type Identities, type Identity, isRegistration } from "./identity.ts"
import * as JwtBearer from "./jwtBearer.ts"
import * as Tokens from "./tokens.ts"

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
const CLIENT_CREDENTIALS = "client_credentials"
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
const ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

/** The grants of one client. */
export interface Grants {
  /** New tokens by the configured grant (the authorization code grant without `grant`). */
  readonly obtain: (
    discovered: Discovered,
    scope: string | undefined
  ) => Effect.Effect<McpAuth.Tokens, McpError.McpError>
  /**
   * The refresh token grant for stored tokens, by the client that got them;
   * `undefined` when there is nothing to try (no refresh token, another
   * issuer, no client identity).
   */
  readonly refresh: (
    discovered: Discovered,
    tokens: McpAuth.Tokens
  ) => Effect.Effect<McpAuth.Tokens | undefined, McpError.McpError>
}

/** @internal */
export const make = (deps: {
  readonly http: Http
  readonly discovery: Discovery
  readonly identities: Identities
  readonly grant: McpOAuth.Options["grant"]
  readonly store: McpAuth.McpAuthStore["Service"]
  readonly authorizer: McpAuth.McpAuthorizer["Service"] | undefined
  /** The canonical MCP server URL (where tokens are stored), for a pending authorization. */
  readonly serverUrl: string
  /** DPoP proofs on token requests where the authorization server takes them. */
  readonly dpop?: Dpop.Dpop | undefined
}): Grants => {
  const { authorizer, discovery, grant, http, identities, store } = deps
  const dpopOptions = (server: oauth.AuthorizationServer) =>
    deps.dpop === undefined ? Effect.succeed({}) : deps.dpop.options(server)
  const jwtBearer = JwtBearer.make(http)

  /** Forget a registration the server no longer knows (`invalid_client`): the next authorization registers again. */
  const forgetRefused = (identity: Identity | undefined, issuer: string) => (error: McpError.McpError) =>
    isRegistration(identity) && isInvalidClient(error) ? store.clearClient(issuer) : Effect.void

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
      const identity = yield* identities.identify(discovered, true)
      if (identity === undefined) {
        return yield* Effect.fail(McpError.auth("Registration", `no client identity at ${server.issuer}`))
      }
      const client: oauth.Client = { client_id: identity.info.clientId }
      const clientAuth = yield* identities.identityAuth(identity, server)
      const verifier = oauth.generateRandomCodeVerifier()
      const challenge = yield* http.call("Authorization", "PKCE", () => oauth.calculatePKCECodeChallenge(verifier))
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
      // checked with the metadata too: never hand an authorizer (a browser) another scheme
      if (!McpOAuthPolicy.isBrowsable(url)) {
        return yield* Effect.fail(McpError.auth(
          "Refused",
          `the authorization endpoint of ${server.issuer} is not an https URL (or http on a loopback host)`
        ))
      }
      if (authorizer.remember !== undefined) {
        yield* authorizer.remember({
          state,
          codeVerifier: verifier,
          redirectUri: authorizer.redirectUri,
          serverUrl: deps.serverUrl,
          resource: discovered.resource,
          clientId: client.client_id,
          scope,
          server: server as McpAuth.PendingAuthorization["server"],
          createdAt: yield* Tokens.nowSeconds
        })
      }
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
      const endpoint = yield* http.tokenEndpoint(server)
      const dpop = yield* dpopOptions(server)
      const response = yield* http.call("Token", `code exchange at ${endpoint}`, (signal) =>
        Dpop.retryOnNonce(() =>
          oauth.authorizationCodeGrantRequest(
            server,
            client,
            clientAuth,
            validated.success,
            authorizer.redirectUri,
            verifier,
            {
              ...http.requestOptions(endpoint, signal),
              ...dpop,
              additionalParameters: { resource: discovered.resource }
            }
          ).then((answer) =>
            oauth.processAuthorizationCodeResponse(server, client, answer)
          )
        )).pipe(
          Effect.tapError(forgetRefused(identity, server.issuer))
        )
      return yield* Tokens.fromResponse(response, server.issuer, scope)
    })

  /**
   * A grant of the client of a `grant` spec at the MCP server's authorization
   * server (client credentials, JWT bearer): `parameters`, the `resource`
   * and the `scope`, authenticated as the spec says.
   */
  const specGrant = (
    discovered: Discovered,
    spec: McpOAuth.ClientCredentialsGrant | McpOAuth.CrossAppAccessGrant,
    grantType: string,
    what: string,
    parameters: Record<string, string>,
    scope: string | undefined
  ) =>
    Effect.gen(function*() {
      const server = discovered.server
      const endpoint = yield* http.tokenEndpoint(server)
      const client: oauth.Client = { client_id: spec.clientId }
      const auth = yield* identities.grantAuth(spec, server)
      const body: Record<string, string> = { ...parameters, resource: discovered.resource }
      if (scope !== undefined) body.scope = scope
      const response = yield* http.call("Token", `${what} at ${endpoint}`, (signal) =>
        oauth.genericTokenEndpointRequest(server, client, auth, grantType, body, http.requestOptions(endpoint, signal))
          .then((answer) =>
            oauth.processGenericTokenEndpointResponse(server, client, answer)
          ))
      return yield* Tokens.fromResponse(response, server.issuer, scope)
    })

  const clientCredentials = (
    discovered: Discovered,
    spec: McpOAuth.ClientCredentialsGrant,
    scope: string | undefined
  ) => specGrant(discovered, spec, CLIENT_CREDENTIALS, "client credentials grant", {}, scope)

  const crossAppAccess = (discovered: Discovered, spec: McpOAuth.CrossAppAccessGrant, scope: string | undefined) =>
    Effect.gen(function*() {
      const idToken = typeof spec.idp.idToken === "string" ? spec.idp.idToken : yield* spec.idp.idToken
      // 1. RFC 8693 token exchange at the IdP: ID token → identity assertion grant (ID-JAG)
      const idp: oauth.AuthorizationServer = spec.idp.tokenEndpoint !== undefined
        ? {
          issuer: spec.idp.issuer ?? new URL(spec.idp.tokenEndpoint).origin,
          token_endpoint: spec.idp.tokenEndpoint
        }
        : spec.idp.issuer !== undefined
        ? yield* discovery.serverMetadata(new URL(spec.idp.issuer))
        : yield* Effect.fail(McpError.auth("Token", "cross-app access needs the IdP's tokenEndpoint or issuer"))
      const idpEndpoint = yield* http.tokenEndpoint(idp)
      const idpClient: oauth.Client = { client_id: spec.idp.clientId }
      const exchange: Record<string, string> = {
        subject_token: idToken,
        subject_token_type: ID_TOKEN_TYPE,
        requested_token_type: ID_JAG_TYPE,
        audience: discovered.server.issuer,
        resource: discovered.resource
      }
      if (scope !== undefined) exchange.scope = scope
      const exchanged = yield* http.call(
        "Token",
        `token exchange at ${idpEndpoint}`,
        (signal) =>
          oauth.genericTokenEndpointRequest(
            idp,
            idpClient,
            spec.idp.clientSecret === undefined ? oauth.None() : clientSecretBasic(spec.idp.clientSecret),
            TOKEN_EXCHANGE,
            exchange,
            http.requestOptions(idpEndpoint, signal)
          ).then((answer) =>
            oauth.processGenericTokenEndpointResponse(idp, idpClient, answer, {
              // an ID-JAG is no access token: RFC 8693 says token_type "N_A"
              recognizedTokenTypes: { n_a: () => undefined }
            })
          )
      )
      if (exchanged.issued_token_type !== undefined && exchanged.issued_token_type !== ID_JAG_TYPE) {
        return yield* Effect.fail(McpError.auth(
          "Token",
          `the IdP issued a ${String(exchanged.issued_token_type)}, not an identity assertion grant`
        ))
      }
      // 2. RFC 7523 JWT bearer grant at the MCP server's authorization server
      return yield* specGrant(
        discovered,
        spec,
        JWT_BEARER,
        "JWT bearer grant",
        { assertion: exchanged.access_token },
        scope
      )
    })

  const obtain: Grants["obtain"] = (discovered, scope) =>
    grant === undefined
      ? authorizationCode(discovered, scope)
      : grant.type === "client_credentials"
      ? clientCredentials(discovered, grant, scope)
      : grant.type === "jwt_bearer"
      ? jwtBearer.obtain(discovered, grant, scope)
      : crossAppAccess(discovered, grant, scope)

  const refresh: Grants["refresh"] = (discovered, tokens) =>
    Effect.gen(function*() {
      const refreshToken = tokens.refreshToken
      // a workload presents its assertion again instead
      if (refreshToken === undefined || grant?.type === "jwt_bearer") return undefined
      if (tokens.issuer !== undefined && !sameIssuer(tokens.issuer, discovered.server.issuer)) return undefined
      const server = discovered.server
      // the client that got the refresh token: the grant's, else the one identified at this server
      const identity = grant === undefined ? yield* identities.identify(discovered, false) : undefined
      if (grant === undefined && identity === undefined) return undefined
      const client: oauth.Client = { client_id: grant?.clientId ?? identity!.info.clientId }
      const auth = grant === undefined
        ? yield* identities.identityAuth(identity!, server)
        : yield* identities.grantAuth(grant, server)
      const endpoint = yield* http.tokenEndpoint(server)
      const dpop = yield* dpopOptions(server)
      const response = yield* http.call("Token", `refresh at ${endpoint}`, (signal) =>
        Dpop.retryOnNonce(() =>
          oauth.refreshTokenGrantRequest(server, client, auth, refreshToken, {
            ...http.requestOptions(endpoint, signal),
            ...dpop,
            additionalParameters: { resource: discovered.resource }
          }).then((answer) =>
            oauth.processRefreshTokenResponse(server, client, answer)
          )
        )).pipe(
          Effect.tapError(forgetRefused(identity, server.issuer))
        )
      return yield* Tokens.fromResponse(response, server.issuer, tokens.scope, refreshToken)
    })

  return { obtain, refresh }
}
