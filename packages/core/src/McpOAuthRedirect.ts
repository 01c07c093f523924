/**
 * The OAuth authorization code flow of a web page, which cannot wait for the
 * authorization server: it navigates there and comes back. {@link layerAuthorizer}
 * is the `McpAuth.McpAuthorizer` of `McpOAuth.make`: it keeps the pending
 * authorization (`state`, PKCE verifier, redirect URI, issuer, resource) in
 * {@link PendingAuthorizations} and navigates the page away, never
 * returning. On the redirect page, {@link complete} finds it by `state`,
 * checks the response, exchanges the code with the stored verifier, stores
 * the tokens and forgets the pending authorization. {@link layerWebStorage}
 * keeps both in `sessionStorage` or `localStorage`, as the app says: tokens
 * are never put in a cookie.
 *
 * ```ts
 * const Storage = McpOAuthRedirect.layerWebStorage(() => sessionStorage)
 * // the app: the first 401 navigates to the authorization server
 * const auth = McpOAuth.make({ serverUrl }).pipe(Effect.provide(
 *   McpOAuthRedirect.layerAuthorizer({ redirectUri: `${location.origin}/callback` }).pipe(Layer.provideMerge(Storage))
 * ))
 * // the redirect page
 * McpOAuthRedirect.complete(location.href, { serverUrl }).pipe(Effect.provide(Storage))
 * ```
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as McpAuth from "./McpAuth.ts"
import * as McpError from "./McpError.ts"
import type * as McpOAuth from "./McpOAuth.ts"
import * as McpOAuthPolicy from "./McpOAuthPolicy.ts"

// -----------------------------------------------------------------------------
// Pending authorizations
// -----------------------------------------------------------------------------

/**
 * Where the authorizations under way are kept between the page that
 * navigated to the authorization server and the redirect page. `take`
 * returns the one of a `state` and forgets it: a `state` is used once.
 *
 * @category services
 * @since 0.3.0
 */
export class PendingAuthorizations extends Context.Service<PendingAuthorizations, {
  readonly save: (pending: McpAuth.PendingAuthorization) => Effect.Effect<void, McpError.McpError>
  readonly take: (state: string) => Effect.Effect<McpAuth.PendingAuthorization | undefined, McpError.McpError>
}>()("@effect-mcp/core/McpOAuthRedirect/PendingAuthorizations") {}

/**
 * Pending authorizations in memory (tests; a page that does not navigate).
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeMemoryPending = (): PendingAuthorizations["Service"] => {
  const pending = new Map<string, McpAuth.PendingAuthorization>()
  return PendingAuthorizations.of({
    save: (authorization) => Effect.sync(() => void pending.set(authorization.state, authorization)),
    take: (state) =>
      Effect.sync(() => {
        const found = pending.get(state)
        pending.delete(state)
        return found
      })
  })
}

// -----------------------------------------------------------------------------
// Web Storage
// -----------------------------------------------------------------------------

/**
 * The part of the Web Storage API the store uses (`sessionStorage`,
 * `localStorage`, or a test's).
 *
 * @category models
 * @since 0.3.0
 */
export interface Storage {
  readonly getItem: (key: string) => string | null
  readonly setItem: (key: string, value: string) => void
  readonly removeItem: (key: string) => void
}

/**
 * Options of the Web Storage store.
 *
 * @category models
 * @since 0.3.0
 */
export interface WebStorageOptions {
  /** The prefix of every key. Default `"effect-mcp:"`. */
  readonly prefix?: string | undefined
}

/**
 * An `McpAuth.McpAuthStore` and {@link PendingAuthorizations} over Web
 * Storage, one JSON entry each: `<prefix>tokens:<server URL>`,
 * `<prefix>client:<issuer>`, `<prefix>pending:<state>`. A storage that
 * refuses a write (quota, private mode) or holds an entry that is no JSON
 * fails the operation with an `AuthError` of kind `"Storage"`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeWebStorage = (storage: Storage, options?: WebStorageOptions): {
  readonly store: McpAuth.McpAuthStore["Service"]
  readonly pending: PendingAuthorizations["Service"]
} => {
  const prefix = options?.prefix ?? "effect-mcp:"
  const failed = (what: string, key: string) => (cause: unknown) =>
    McpError.auth("Storage", `the web storage entry ${key} ${what}: ${McpError.messageOf(cause)}`, { cause })
  const get = <A>(key: string): Effect.Effect<A | undefined, McpError.McpError> =>
    Effect.try({
      try: () => {
        const text = storage.getItem(prefix + key)
        return text === null ? undefined : JSON.parse(text) as A
      },
      catch: failed("cannot be read", prefix + key)
    })
  const set = (key: string, value: unknown): Effect.Effect<void, McpError.McpError> =>
    Effect.try({
      try: () => storage.setItem(prefix + key, JSON.stringify(value)),
      catch: failed("cannot be written", prefix + key)
    })
  const remove = (key: string): Effect.Effect<void, McpError.McpError> =>
    Effect.try({ try: () => storage.removeItem(prefix + key), catch: failed("cannot be removed", prefix + key) })
  const store = McpAuth.McpAuthStore.of({
    getTokens: (resource) => get<McpAuth.Tokens>(`tokens:${resource}`),
    setTokens: (resource, tokens) => set(`tokens:${resource}`, tokens),
    getClient: (issuer) => get<McpAuth.ClientInformation>(`client:${issuer}`),
    setClient: (issuer, client) => set(`client:${issuer}`, client),
    clearTokens: (resource) => remove(`tokens:${resource}`),
    clearClient: (issuer) => remove(`client:${issuer}`)
  })
  const pending = PendingAuthorizations.of({
    save: (authorization) => set(`pending:${authorization.state}`, authorization),
    // read and removed in one step: the page runs one thing at a time
    take: (state) => Effect.tap(get<McpAuth.PendingAuthorization>(`pending:${state}`), () => remove(`pending:${state}`))
  })
  return { store, pending }
}

/**
 * The Web Storage store as a layer: `McpAuth.McpAuthStore` and
 * {@link PendingAuthorizations}. `storage` may be a function, called when
 * the layer is built (`() => sessionStorage`: nothing is touched at import).
 *
 * @category layers
 * @since 0.3.0
 */
export const layerWebStorage = (
  storage: Storage | (() => Storage),
  options?: WebStorageOptions
): Layer.Layer<McpAuth.McpAuthStore | PendingAuthorizations> =>
  Layer.unwrap(Effect.sync(() => {
    const made = makeWebStorage(typeof storage === "function" ? storage() : storage, options)
    return Layer.merge(
      Layer.succeed(McpAuth.McpAuthStore, made.store),
      Layer.succeed(PendingAuthorizations, made.pending)
    )
  }))

// -----------------------------------------------------------------------------
// The authorizer
// -----------------------------------------------------------------------------

/**
 * Options of the redirect authorizer.
 *
 * @category models
 * @since 0.3.0
 */
export interface AuthorizerOptions {
  /** The app's redirect page (registered, and sent in the authorization and token requests). */
  readonly redirectUri: string | URL
  /**
   * Sends the page to the authorization URL. Default
   * `globalThis.location.assign` (a browser page).
   */
  readonly navigate?: ((url: URL) => Effect.Effect<void, McpError.McpError>) | undefined
}

interface Location {
  readonly assign: (url: string) => void
}

const assignLocation = (url: URL): Effect.Effect<void, McpError.McpError> =>
  Effect.try({
    try: () => (globalThis as unknown as { readonly location: Location }).location.assign(url.href),
    catch: (cause) =>
      McpError.auth("Authorization", `cannot navigate to the authorization server: ${McpError.messageOf(cause)}`, {
        cause
      })
  })

/**
 * The redirect authorizer: `remember` saves the pending authorization in
 * {@link PendingAuthorizations}; `authorize` refuses a URL that is not
 * `McpOAuthPolicy.isBrowsable` (an `AuthError` of kind `"Refused"`), else
 * navigates the page there and never returns (the page unloads; the flow
 * goes on in {@link complete} on the redirect page).
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeAuthorizer = (
  options: AuthorizerOptions
): Effect.Effect<McpAuth.McpAuthorizer["Service"], never, PendingAuthorizations> =>
  Effect.gen(function*() {
    const pending = yield* PendingAuthorizations
    const navigate = options.navigate ?? assignLocation
    return McpAuth.McpAuthorizer.of({
      redirectUri: String(options.redirectUri),
      remember: pending.save,
      authorize: (authorizationUrl) =>
        McpOAuthPolicy.isBrowsable(authorizationUrl)
          ? Effect.andThen(navigate(authorizationUrl), Effect.never)
          : Effect.fail(McpError.auth(
            "Refused",
            `the authorization URL is ${
              authorizationUrl.protocol === "http:"
                ? `http on ${authorizationUrl.host}`
                : `a ${authorizationUrl.protocol} URL`
            }: only an https URL (or http on a loopback host) is opened`
          ))
    })
  })

/**
 * The redirect authorizer as a layer.
 *
 * @category layers
 * @since 0.3.0
 */
export const layerAuthorizer = (
  options: AuthorizerOptions
): Layer.Layer<McpAuth.McpAuthorizer, never, PendingAuthorizations> =>
  Layer.effect(McpAuth.McpAuthorizer, makeAuthorizer(options))

// -----------------------------------------------------------------------------
// The redirect page
// -----------------------------------------------------------------------------

/**
 * The authorization server's refusal, as its redirect said (`error`,
 * `error_description`, `error_uri`): the `cause` of the `AuthError` (kind
 * `"Authorization"`) that {@link complete} fails with.
 *
 * @category errors
 * @since 0.3.0
 */
export class AuthorizationDenied extends Data.TaggedError("AuthorizationDenied")<{
  readonly error: string
  readonly description?: string | undefined
  readonly uri?: string | undefined
}> {}

/**
 * The refusal of the authorization server an error of {@link complete}
 * carries, if it is one.
 *
 * @category accessors
 * @since 0.3.0
 */
export const denialOf = (error: McpError.McpError): AuthorizationDenied | undefined =>
  error.reason._tag === "AuthError" && error.reason.cause instanceof AuthorizationDenied
    ? error.reason.cause
    : undefined

/**
 * `true` when `url` carries an authorization response (`state`, with `code`
 * or `error`): the redirect page can tell a return from the authorization
 * server from a plain visit.
 *
 * @category guards
 * @since 0.3.0
 */
export const isAuthorizationResponse = (url: string | URL): boolean => {
  const parsed = Result.try(() => new URL(url))
  if (Result.isFailure(parsed)) return false
  const params = parsed.success.searchParams
  return params.has("state") && (params.has("code") || params.has("error"))
}

/**
 * Options of {@link complete}: those the client was made with (the
 * `serverUrl` the tokens are for, the client identity), and how old a
 * pending authorization may be.
 *
 * @category models
 * @since 0.3.0
 */
export interface CompleteOptions extends McpOAuth.Options {
  /** A pending authorization older than this is refused (default 600 s). */
  readonly maxAgeSeconds?: number | undefined
  /** The platform's `fetch` (default: the global one), as for `McpOAuth.make`. */
  readonly platform?: McpOAuth.Platform | undefined
}

/**
 * What a completed authorization gave.
 *
 * @category models
 * @since 0.3.0
 */
export interface Completed {
  /** The canonical MCP server URL the tokens are stored under. */
  readonly serverUrl: string
  /** The granted scope, when known. */
  readonly scope: string | undefined
}

/**
 * Completes an authorization on the redirect page, from the URL the
 * authorization server redirected to:
 *
 * - finds the pending authorization by `state` and forgets it at once (a
 *   missing `state`, one never issued here or already used, one older than
 *   `maxAgeSeconds`, or a redirect to another page than its redirect URI: an
 *   `AuthError` of kind `"Refused"`);
 * - checks `iss` where the authorization server advertises
 *   `authorization_response_iss_parameter_supported` (RFC 9207; kind
 *   `"Refused"`); an `error` from the authorization server fails with kind
 *   `"Authorization"` and an {@link AuthorizationDenied} cause ({@link denialOf});
 * - exchanges the code with the stored PKCE verifier (and `resource`), as
 *   the client identified at that issuer;
 * - stores the tokens in `McpAuth.McpAuthStore` under the MCP server URL,
 *   where `McpOAuth.make` finds them.
 *
 * Tokens obtained here are not DPoP-bound (the key would not outlive the
 * page).
 *
 * @category constructors
 * @since 0.3.0
 */
export const complete: (
  url: string | URL,
  options: CompleteOptions
) => Effect.Effect<Completed, McpError.McpError, McpAuth.McpAuthStore | PendingAuthorizations | Scope.Scope> = Effect
  .fn("McpOAuthRedirect.complete")(function*(url: string | URL, options: CompleteOptions) {
    const store = yield* McpAuth.McpAuthStore
    const pending = yield* PendingAuthorizations
    // `oauth4webapi` is loaded with the completion, not with this module
    const Redirect = yield* Effect.promise(() => import("./internal/oauth/redirect.ts"))
    return yield* Redirect.complete(url, options, store, pending)
  })
