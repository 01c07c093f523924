/**
 * Tokens as the client stores them (`McpAuth.Tokens`): from a token
 * endpoint response, their `Authorization` header, and whether they are
 * about to expire.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as oauth from "oauth4webapi"
import type * as McpAuth from "../../McpAuth.ts"

/** The current time in whole seconds (token lifetimes, secret expiries). */
export const nowSeconds: Effect.Effect<number> = Effect.map(
  Clock.currentTimeMillis,
  (millis) => Math.floor(millis / 1000)
)

/** The tokens of a token endpoint response; the requested scope and the previous refresh token where it says none. */
export const fromResponse = (
  response: oauth.TokenEndpointResponse,
  issuer: string,
  requestedScope: string | undefined,
  previousRefreshToken?: string | undefined
): Effect.Effect<McpAuth.Tokens> =>
  Effect.map(nowSeconds, (now): McpAuth.Tokens => ({
    accessToken: response.access_token,
    tokenType: response.token_type === "bearer"
      ? "Bearer"
      : response.token_type === "dpop"
      ? "DPoP"
      : response.token_type,
    refreshToken: response.refresh_token ?? previousRefreshToken,
    expiresAt: response.expires_in === undefined ? undefined : now + response.expires_in,
    scope: response.scope ?? requestedScope,
    issuer
  }))

/** The `Authorization` header value of tokens: `DPoP` for a DPoP-bound token (RFC 9449 §7.1), else `Bearer`. */
export const header = (tokens: McpAuth.Tokens): string => `${isDpop(tokens) ? "DPoP" : "Bearer"} ${tokens.accessToken}`

/** `true` for a DPoP-bound token (`token_type` `DPoP`). */
export const isDpop = (tokens: McpAuth.Tokens): boolean => tokens.tokenType.toLowerCase() === "dpop"

/** `true` when the access token expires within `skew` seconds of `now`. */
export const isExpired = (tokens: McpAuth.Tokens, now: number, skew: number): boolean =>
  tokens.expiresAt !== undefined && now >= tokens.expiresAt - skew
