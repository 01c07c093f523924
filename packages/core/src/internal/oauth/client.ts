/**
 * The OAuth 2.1 client behind `McpOAuth.make`, as the `McpAuth.ClientAuth`
 * the HTTP client transports use: the `Authorization` header of a request
 * (refreshing tokens about to expire), and the answer to a challenge (`401`,
 * or `403 insufficient_scope`: step-up), one flow at a time. The stages are
 * modules of their own: `http.ts` (requests, on the platform's `fetch`),
 * `egress.ts` (where a server may send the client), `discovery.ts`,
 * `identity.ts` (client identity and authentication), `grants.ts` (tokens),
 * with the pure decisions in `McpOAuthPolicy`.
 *
 * Protocol mechanics come from `oauth4webapi` (PKCE, the authorization
 * response check with `state` and RFC 9207 `iss`, the token, refresh,
 * client credentials, generic grant and registration requests and their
 * response checks, client authentication) and keys from `jose`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpOAuth from "../../McpOAuth.ts"
import * as McpOAuthPolicy from "../../McpOAuthPolicy.ts"
import * as Discovery from "./discovery.ts"
import * as Dpop from "./dpop.ts"
import * as Egress from "./egress.ts"
import * as Grants from "./grants.ts"
import * as Http from "./http.ts"
import * as Identity from "./identity.ts"
import * as Tokens from "./tokens.ts"

/** The global `fetch` (a browser's, a worker's): names are not checked where they connect. */
const globalFetch = (): Http.Fetch => (url, init) => globalThis.fetch(url, init)

/**
 * The client. `platform.fetch` makes the `fetch` of its requests (default:
 * the global one); `platform.network` resolves names and may declare hosts'
 * classes (tests: a "remote" server that is on 127.0.0.1).
 *
 * @internal
 */
export const make = (
  options: McpOAuth.Options,
  store: McpAuth.McpAuthStore["Service"],
  authorizer: McpAuth.McpAuthorizer["Service"] | undefined,
  platform?: McpOAuth.Platform | undefined
): Effect.Effect<McpAuth.ClientAuth, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const parsedServer = Result.try(() => new URL(options.serverUrl))
    if (Result.isFailure(parsedServer)) {
      return yield* Effect.fail(McpError.auth("Discovery", `invalid MCP server URL: ${String(options.serverUrl)}`))
    }
    yield* checkAuthorizationServer(options.authorizationServer)
    const serverUrl = parsedServer.success
    const resource = McpAuth.canonicalResource(serverUrl)
    const skew = options.refreshBeforeExpirySeconds ?? 60
    const maxStepUps = options.maxStepUps ?? 3
    const grant = options.grant
    const lock = yield* Semaphore.make(1)
    const withLock = Semaphore.withPermits(lock, 1)
    const lastDiscovered = yield* Ref.make<Discovery.Discovered | undefined>(undefined)
    const stepUps = yield* Ref.make(0)
    /**
     * The access token last obtained by a refresh, and how many requests it was given to:
     * refused at its first use, it is not refreshed again (an authorization server whose
     * refreshed tokens the MCP server refuses would loop) but replaced by a new grant.
     */
    const refreshed = yield* Ref.make<{ readonly token: string; readonly uses: number } | undefined>(undefined)

    /**
     * The tokens this client last read from or wrote to the store. Requests
     * take their header from here, so a file store is not read per request;
     * a challenge or an expiry reads the store again (another process may
     * have refreshed the tokens meanwhile).
     */
    const cached = yield* Ref.make<McpAuth.Tokens | undefined>(undefined)
    const load = Effect.tap(store.getTokens(resource), (tokens) => Ref.set(cached, tokens))
    const save = (tokens: McpAuth.Tokens) => Effect.andThen(store.setTokens(resource, tokens), Ref.set(cached, tokens))
    const forget = Effect.andThen(store.clearTokens(resource), Ref.set(cached, undefined))
    /** Tokens go to this MCP server's origin only (transports pass normalised URLs). */
    const origin = serverUrl.origin
    const sameOrigin = (url: string) => url === origin || url.startsWith(`${origin}/`)

    const egress = Egress.make({
      serverUrl,
      trusted: userHosts(options),
      allowInsecure: options.allowInsecureRequests === true,
      network: platform?.network
    })
    const http = Http.make(options, platform?.fetch === undefined ? globalFetch() : yield* platform.fetch(egress))
    const discovery = Discovery.make(http, egress, serverUrl, options.authorizationServer)
    // the headless authorizer's own requests follow the same egress
    const guarded = authorizer === undefined ? undefined : Egress.guard(authorizer, egress)
    const identities = Identity.make(http, options, store, guarded)
    const dpop = yield* Dpop.make
    const grants = Grants.make({
      http,
      discovery,
      identities,
      grant,
      store,
      authorizer: guarded,
      dpop,
      serverUrl: resource
    })

    const discover = (fromChallenge: string | undefined, preferredIssuer: string | undefined) =>
      discovery.discover(fromChallenge, preferredIssuer).pipe(
        Effect.tap((discovered) => Ref.set(lastDiscovered, discovered))
      )

    /** The last discovery, else a new one. */
    const context = Effect.flatMap(
      Ref.get(lastDiscovered),
      (known) => known !== undefined ? Effect.succeed(known) : discover(undefined, undefined)
    )

    /** A refresh whose tokens are stored, marked unused. */
    const refresh = (discovered: Discovery.Discovered, tokens: McpAuth.Tokens) =>
      grants.refresh(discovered, tokens).pipe(
        Effect.tap((next) =>
          next === undefined
            ? Effect.void
            : Effect.andThen(save(next), Ref.set(refreshed, { token: next.accessToken, uses: 0 }))
        )
      )

    /** The header of the stored tokens while they are fresh (read from the store, not the cache). */
    const currentHeader = Effect.gen(function*() {
      const tokens = yield* load
      if (tokens === undefined) return undefined
      return Tokens.isExpired(tokens, yield* Tokens.nowSeconds, skew) ? undefined : Tokens.header(tokens)
    })

    const answer = (challenge: McpAuth.Challenge) =>
      Effect.gen(function*() {
        // RFC 9449 §9: the resource server wants its nonce in the proof; no new authorization
        if (challenge.dpop?.params.error === "use_dpop_nonce" && challenge.dpopNonce !== undefined) {
          return yield* dpop.learnNonce(challenge.url, challenge.dpopNonce)
        }
        const current = yield* currentHeader
        // another fiber already replaced the refused credentials
        if (current !== undefined && current !== challenge.authorization) return
        const params = challenge.bearer?.params ?? challenge.dpop?.params ?? {}
        const stored = yield* Ref.get(cached)
        const stepUp = challenge.status === 403
        const granted = stepUp ? McpOAuthPolicy.splitScope(stored?.scope) : []
        if (stepUp) {
          const wanted = McpOAuthPolicy.splitScope(params.scope)
          if (wanted.length > 0 && McpOAuthPolicy.coversScopes(granted, wanted)) {
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
          if (last === undefined || challenge.authorization?.replace(/^\S+ /, "") !== last.token || last.uses > 1) {
            const renewed = yield* Effect.option(refresh(discovered, stored))
            if (Option.isSome(renewed) && renewed.value !== undefined) return
          }
        }
        const scope = McpOAuthPolicy.selectScope({
          override: options.scope ?? grant?.scope,
          challenge: params.scope,
          resourceScopes: discovered.resourceMetadata?.scopes_supported,
          serverScopes: discovered.server.scopes_supported,
          granted,
          offlineAccess: grant === undefined
        })
        const tokens = yield* grants.obtain(discovered, scope)
        yield* save(tokens)
        yield* Ref.set(refreshed, undefined)
        if (!stepUp) yield* Ref.set(stepUps, 0)
      })

    const authorization = (url: string) =>
      Effect.gen(function*() {
        if (!sameOrigin(url)) return undefined
        const tokens = (yield* Ref.get(cached)) ?? (yield* load)
        if (tokens === undefined) return undefined
        if (!Tokens.isExpired(tokens, yield* Tokens.nowSeconds, skew)) {
          yield* Ref.update(
            refreshed,
            (last) => last !== undefined && last.token === tokens.accessToken ? { ...last, uses: last.uses + 1 } : last
          )
          return Tokens.header(tokens)
        }
        if (tokens.refreshToken === undefined) return undefined
        // expired: refresh (once, for all the fibers that see it)
        return yield* withLock(Effect.gen(function*() {
          const again = yield* currentHeader
          if (again !== undefined) return again
          const latest = yield* Ref.get(cached)
          if (latest === undefined) return undefined
          const discovered = yield* Effect.option(context)
          if (Option.isNone(discovered)) return undefined
          const renewed = yield* Effect.option(refresh(discovered.value, latest))
          if (Option.isSome(renewed) && renewed.value !== undefined) {
            yield* Ref.set(refreshed, { token: renewed.value.accessToken, uses: 1 })
            return Tokens.header(renewed.value)
          }
          yield* forget
          return undefined
        }))
      })

    /** A DPoP proof for a request presenting a DPoP-bound token (RFC 9449 §7). */
    const headers: McpAuth.ClientAuth["headers"] = ({ authorization, method, url }) =>
      authorization !== undefined && /^dpop /i.test(authorization) && sameOrigin(url)
        ? Effect.map(dpop.proof(method, url, authorization.slice(5)), (proof) => ({ dpop: proof }))
        : Effect.succeed({})

    const clientAuth: McpAuth.ClientAuth = {
      authorization,
      headers,
      challenge: (challenge) => withLock(answer(challenge)),
      maxAttempts: options.maxAttempts
    }
    return clientAuth
  })

/**
 * The hosts the user named besides the MCP server: a pre-configured
 * authorization server (its issuer, or its metadata's endpoints), the IdP of
 * cross-app access. A server may not send the client further inside the
 * network than these (see `egress.ts`).
 */
const userHosts = (options: McpOAuth.Options): ReadonlyArray<string | URL | undefined> => {
  const preset = options.authorizationServer
  const presetHosts = preset === undefined
    ? []
    : typeof preset === "object" && "metadata" in preset
    ? [
      preset.metadata.issuer,
      preset.metadata.authorization_endpoint,
      preset.metadata.token_endpoint,
      preset.metadata.registration_endpoint
    ]
    : [preset]
  const grant = options.grant
  const idpHosts = grant?.type === "cross_app_access" ? [grant.idp.tokenEndpoint, grant.idp.issuer] : []
  return [...presetHosts, ...idpHosts].map((url) => typeof url === "string" || url instanceof URL ? url : undefined)
}

/** A pre-configured authorization server must name a URL issuer. */
const checkAuthorizationServer = (
  configured: McpOAuth.Options["authorizationServer"]
): Effect.Effect<void, McpError.McpError> => {
  if (configured === undefined) return Effect.void
  const issuer = typeof configured === "object" && "metadata" in configured ? configured.metadata.issuer : configured
  return typeof issuer === "string" || issuer instanceof URL
    ? URL.canParse(String(issuer)) ? Effect.void : Effect.fail(invalidIssuer(issuer))
    : Effect.fail(invalidIssuer(issuer))
}

const invalidIssuer = (issuer: unknown) =>
  McpError.auth("Discovery", `invalid authorization server issuer: ${String(issuer)}`)
