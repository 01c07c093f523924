/**
 * Who the client is at an authorization server, and how it authenticates at
 * its token endpoint: a pre-registered client, a registration stored for
 * the issuer, a Client ID Metadata Document URL, or a dynamic client
 * registration (RFC 7591); `client_secret_basic`, `client_secret_post`,
 * `none` or `private_key_jwt` (RFC 7523).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as jose from "jose"
import * as oauth from "oauth4webapi"
import type * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpOAuth from "../../McpOAuth.ts"
import * as McpOAuthPolicy from "../../McpOAuthPolicy.ts"
import type { Discovered } from "./discovery.ts"
import type { Http } from "./http.ts"
import { nowSeconds } from "./tokens.ts"

/** A client identity at one authorization server, and where it came from. */
export interface Identity {
  readonly info: McpAuth.ClientInformation
  readonly source: "pre-registered" | "stored" | "metadata-document" | "registered"
}

/** `true` for an identity the client registered (now or before): one to forget when the server no longer knows it. */
export const isRegistration = (identity: Identity | undefined): boolean =>
  identity?.source === "stored" || identity?.source === "registered"

/** Client identities and client authentication. */
export interface Identities {
  /**
   * Who the client is at this authorization server: pre-registered; else a
   * registration stored for its issuer; else the client ID metadata
   * document URL when the server supports them; else (when `canRegister`)
   * a dynamic registration.
   */
  readonly identify: (
    discovered: Discovered,
    canRegister: boolean
  ) => Effect.Effect<Identity | undefined, McpError.McpError>
  /** Client authentication of an identified client: a pre-registered client's private key, else by the method. */
  readonly identityAuth: (
    identity: Identity,
    server: oauth.AuthorizationServer
  ) => Effect.Effect<oauth.ClientAuth, McpError.McpError>
  /** Client authentication of the client credentials / cross-app grants: a private key JWT, or the secret. */
  readonly grantAuth: (
    spec: McpOAuth.ClientCredentialsGrant | McpOAuth.CrossAppAccessGrant,
    server: oauth.AuthorizationServer
  ) => Effect.Effect<oauth.ClientAuth, McpError.McpError>
}

/** @internal */
export const make = (
  http: Http,
  options: McpOAuth.Options,
  store: McpAuth.McpAuthStore["Service"],
  authorizer: McpAuth.McpAuthorizer["Service"] | undefined
): Identities => {
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
        stored.redirectUris.some((uri) => McpOAuthPolicy.redirectCovers(uri, authorizer.redirectUri))
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
      yield* http.checkUrl(new URL(endpoint), "Registration", "the registration endpoint")
      const meta = options.clientMetadata ?? {}
      const method = McpOAuthPolicy.registrationAuthMethod(server.token_endpoint_auth_methods_supported)
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
      const registered = yield* http.call("Registration", `dynamic client registration at ${endpoint}`, (signal) =>
        oauth.dynamicClientRegistrationRequest(server, request, http.requestOptions(endpoint, signal)).then(
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
          ? (registered.redirect_uris as Array<unknown>).filter((uri): uri is string =>
            typeof uri === "string"
          )
          : [redirectUri],
        tokenEndpointAuthMethod: registeredMethod,
        metadata: registered as Record<string, unknown>
      }
      yield* store.setClient(server.issuer, info)
      return info
    })

  const identify: Identities["identify"] = (discovered, canRegister) =>
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
    return http.call(
      "Token",
      "the client's private key",
      () => typeof privateKey === "string" ? jose.importPKCS8(privateKey, alg) : jose.importJWK(privateKey, alg)
    ).pipe(
      Effect.flatMap((key) =>
        key instanceof Uint8Array
          ? Effect.fail(McpError.auth("Token", "the client's private key is a symmetric key"))
          : Effect.succeed(oauth.PrivateKeyJwt(key))
      )
    )
  }

  const identityAuth: Identities["identityAuth"] = (identity, server) =>
    identity.source === "pre-registered" && options.client?.privateKey !== undefined
      ? privateKeyAuth(options.client.privateKey, options.client.algorithm, server)
      : Effect.succeed(secretAuth(identity.info, server))

  const grantAuth: Identities["grantAuth"] = (spec, server) =>
    spec.type === "client_credentials" && spec.privateKey !== undefined
      ? privateKeyAuth(spec.privateKey, spec.algorithm, server)
      : Effect.succeed(secretAuth({ clientId: spec.clientId, clientSecret: spec.clientSecret }, server))

  return { identify, identityAuth, grantAuth }
}

/** Client authentication by the registered method, else the one the server lists (see `McpOAuthPolicy.tokenAuthMethod`). */
const secretAuth = (info: McpAuth.ClientInformation, server: oauth.AuthorizationServer): oauth.ClientAuth => {
  const method = McpOAuthPolicy.tokenAuthMethod(info, server.token_endpoint_auth_methods_supported)
  const secret = info.clientSecret ?? ""
  return method === "client_secret_basic"
    ? clientSecretBasic(secret)
    : method === "client_secret_post"
    ? oauth.ClientSecretPost(secret)
    : oauth.None()
}

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
export const clientSecretBasic = (secret: string): oauth.ClientAuth => (_server, client, _body, headers) => {
  const credentials = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`
  headers.set("authorization", `Basic ${base64(credentials)}`)
}

/** Standard base64 of a string's UTF-8 bytes (`btoa` takes one byte per character). */
const base64 = (text: string): string =>
  btoa(Array.from(new TextEncoder().encode(text), (byte) => String.fromCharCode(byte)).join(""))

interface RegistrationResponse {
  readonly client_id: string
  readonly client_secret?: string
  readonly [key: string]: unknown
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
    const body: Record<string, unknown> | undefined = Predicate.isObject(parsed) ? parsed : undefined
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

const isLoopbackUrl = (url: string): boolean => URL.canParse(url) && McpOAuthPolicy.isLoopback(new URL(url))
