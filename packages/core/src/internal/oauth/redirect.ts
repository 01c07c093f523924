/**
 * The redirect page's half of the authorization code flow
 * (`McpOAuthRedirect.complete`): the pending authorization of the response's
 * `state`, taken (used once); the response checked (`oauth4webapi`:
 * `state`, RFC 9207 `iss`, the authorization server's `error`); the code
 * exchanged with the stored PKCE verifier by the client identified at the
 * issuer (`identity.ts`, no registration: it was registered before the
 * navigation); the tokens stored.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as oauth from "oauth4webapi"
import * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpOAuthRedirect from "../../McpOAuthRedirect.ts"
import { AuthorizationDenied } from "../../McpOAuthRedirect.ts"
import * as Egress from "./egress.ts"
import { authError } from "./errors.ts"
import * as Http from "./http.ts"
import * as Identity from "./identity.ts"
import * as Tokens from "./tokens.ts"

const refused = (description: string) => Effect.fail(McpError.auth("Refused", description))

/** The redirect URI's page: origin and path (its query is the response's). */
const page = (url: URL): string => `${url.origin}${url.pathname}`

/** @internal */
export const complete = (
  input: string | URL,
  options: McpOAuthRedirect.CompleteOptions,
  store: McpAuth.McpAuthStore["Service"],
  pendings: McpOAuthRedirect.PendingAuthorizations["Service"]
) =>
  Effect.gen(function*() {
    const parsed = Result.try(() => new URL(input))
    if (Result.isFailure(parsed)) return yield* refused("the redirect URL is not a URL")
    const url = parsed.success
    const state = url.searchParams.get("state")
    if (state === null || state === "") {
      return yield* refused("the redirect carries no state: it is no authorization response of this client")
    }
    const pending = yield* pendings.take(state)
    if (pending === undefined) {
      return yield* refused(
        "the redirect's state is unknown (never issued here, already used, or forgotten): the authorization response is refused"
      )
    }
    const maxAge = options.maxAgeSeconds ?? 600
    if ((yield* Tokens.nowSeconds) - pending.createdAt > maxAge) {
      return yield* refused(`the authorization began more than ${maxAge} s ago: it has expired, authorize again`)
    }
    if (!URL.canParse(pending.redirectUri) || page(new URL(pending.redirectUri)) !== page(url)) {
      return yield* refused(`the authorization response reached ${page(url)}, not its redirect URI`)
    }
    const serverUrl = McpAuth.canonicalResource(options.serverUrl)
    if (pending.serverUrl !== serverUrl) {
      return yield* refused(`the pending authorization is for ${pending.serverUrl}, not ${serverUrl}`)
    }
    const server = pending.server as unknown as oauth.AuthorizationServer
    const client: oauth.Client = { client_id: pending.clientId }
    const validated = Result.try({
      try: () => oauth.validateAuthResponse(server, client, url, state),
      catch: (cause) =>
        cause instanceof oauth.AuthorizationResponseError
          ? McpError.auth(
            "Authorization",
            `the authorization server refused: ${cause.error}${
              cause.error_description === undefined ? "" : `: ${cause.error_description}`
            }`,
            {
              cause: new AuthorizationDenied({
                error: cause.error,
                description: cause.error_description,
                uri: cause.cause.get("error_uri") ?? undefined
              })
            }
          )
          : authError("Refused", "the authorization response (state / iss check)")(cause)
    })
    if (Result.isFailure(validated)) return yield* Effect.fail(validated.failure)

    const egress = Egress.make({
      serverUrl: new URL(serverUrl),
      trusted: [server.issuer, server.token_endpoint],
      allowInsecure: options.allowInsecureRequests === true,
      network: options.platform?.network
    })
    const fetch = options.platform?.fetch === undefined
      ? ((url, init) => globalThis.fetch(url, init)) satisfies Http.Fetch
      : yield* options.platform.fetch(egress)
    const http = Http.make(options, fetch)
    const identities = Identity.make(http, options, store, undefined)
    const discovered = { resource: pending.resource, resourceMetadata: undefined, server, hasMetadata: true }
    const identity = yield* identities.identify(discovered, false)
    if (identity === undefined || identity.info.clientId !== pending.clientId) {
      return yield* Effect.fail(McpError.auth(
        "Registration",
        `the client ${pending.clientId} that began the authorization is no longer known at ${server.issuer}`
      ))
    }
    const clientAuth = yield* identities.identityAuth(identity, server)
    const endpoint = yield* http.tokenEndpoint(server)
    const response = yield* http.call("Token", `code exchange at ${endpoint}`, (signal) =>
      oauth.authorizationCodeGrantRequest(
        server,
        client,
        clientAuth,
        validated.success,
        pending.redirectUri,
        pending.codeVerifier,
        { ...http.requestOptions(endpoint, signal), additionalParameters: { resource: pending.resource } }
      ).then((answer) =>
        oauth.processAuthorizationCodeResponse(server, client, answer)
      ))
    const tokens = yield* Tokens.fromResponse(response, server.issuer, pending.scope)
    yield* store.setTokens(serverUrl, tokens)
    const completed: McpOAuthRedirect.Completed = { serverUrl, scope: tokens.scope }
    return completed
  })
