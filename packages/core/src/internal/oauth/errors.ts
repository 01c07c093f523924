/**
 * How the OAuth client reports a failed step: oauth4webapi's errors (a token
 * endpoint error, a challenge, a refused authorization response) as the
 * message of an `McpError` `AuthError`, with the HTTP status when there was
 * one; the OAuth `error` code of a failure, for the cases the client acts on
 * (`invalid_client`).
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as oauth from "oauth4webapi"
import * as McpError from "../../McpError.ts"

/**
 * A token endpoint error that came with a `WWW-Authenticate` challenge (a `401` to a
 * client that authenticated with a header): oauth4webapi reports the challenge and
 * leaves the body unread; the RFC 6749 §5.2 error is in the body.
 */
class ChallengedError extends Data.TaggedError("ChallengedError")<{
  readonly status: number
  readonly error: string | undefined
  readonly description: string | undefined
  readonly cause: unknown
}> {
  override get message(): string {
    const error = this.error === undefined ? "" : `, ${this.error}`
    return `HTTP ${this.status}${error}${this.description === undefined ? "" : `: ${this.description}`}`
  }
}

const describe = (cause: unknown): string => {
  if (cause instanceof oauth.ResponseBodyError) {
    return `HTTP ${cause.status}, ${cause.error}${
      cause.error_description === undefined ? "" : `: ${cause.error_description}`
    }`
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

/** A challenged token endpoint error with the error of its body read (else the cause as it is). */
export const withErrorBody = (cause: unknown): Effect.Effect<unknown> => {
  if (!(cause instanceof oauth.WWWAuthenticateChallengeError)) return Effect.succeed(cause)
  const params = cause.cause[0]?.parameters
  return Effect.promise(() =>
    cause.response.json().then(
      (body: unknown) => {
        const fields: Record<string, unknown> = Predicate.isObject(body) ? body : {}
        const error = typeof fields.error === "string" ? fields.error : params?.error
        const description = typeof fields.error_description === "string"
          ? fields.error_description
          : params?.error_description
        return new ChallengedError({ status: cause.status, error, description, cause })
      },
      () =>
        new ChallengedError({
          status: cause.status,
          error: params?.error,
          description: params?.error_description,
          cause
        })
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

/** An `AuthError` of `kind` for a failed `what` (an `McpError` passes through). */
export const authError = (kind: McpError.AuthError["kind"], what: string) => (cause: unknown): McpError.McpError =>
  McpError.isMcpError(cause)
    ? cause
    : McpError.auth(kind, `${what}: ${describe(cause)}`, { cause, status: statusOf(cause) })

/** `true` when the token endpoint refused the client itself (`invalid_client`). */
export const isInvalidClient = (error: McpError.McpError): boolean => {
  const reason = error.reason
  return reason._tag === "AuthError" && oauthErrorCode(reason.cause) === "invalid_client"
}
