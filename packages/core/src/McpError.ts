/**
 * The one public error of effect-mcp. Every failure is an `McpError` whose
 * `reason` says what went wrong; match on `error.reason._tag`.
 *
 * A tool's own failure is not an `McpError`: it travels as a `tools/call`
 * result with `isError: true`. Bugs are defects.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { authFields, configFields } from "./internal/errorFields.ts"
import { errorObjectOf } from "./internal/errorObject.ts"
import {
  AmbiguousError,
  AuthError,
  ClosedError,
  ConfigError,
  HandshakeError,
  InvalidParamsError,
  InvalidResultError,
  NameCollisionError,
  NotFoundError,
  ProtocolError,
  Reason,
  ServerUnavailableError,
  SkillError,
  TimeoutError,
  TransportError,
  UnsupportedError
} from "./internal/errorReasons.ts"
import { describeFailure } from "./internal/failureText.ts"
import * as JsonRpc from "./JsonRpc.ts"

// -----------------------------------------------------------------------------
// Reasons (each documented where it is declared)
// -----------------------------------------------------------------------------

export * from "./internal/errorReasons.ts"

// -----------------------------------------------------------------------------
// The error
// -----------------------------------------------------------------------------

const TypeId = "~@effect-mcp/core/McpError"

/**
 * The error of every effect-mcp operation.
 *
 * @category errors
 * @since 0.1.0
 */
export class McpError extends Schema.TaggedError<McpError>()("McpError", { reason: Reason }) {
  readonly [TypeId] = TypeId
  override get message(): string {
    return this.reason.message
  }
}

/**
 * @category guards
 * @since 0.1.0
 */
export const isMcpError = (u: unknown): u is McpError => Predicate.hasProperty(u, TypeId)

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * @category constructors
 * @since 0.1.0
 */
export const transport = (description: string, extra?: {
  readonly status?: number
  readonly exitCode?: number
  readonly signal?: string
  readonly stderr?: string
  readonly cause?: unknown
}): McpError => new McpError({ reason: new TransportError({ description, ...extra }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const protocol = (code: number, description: string, data?: unknown): McpError =>
  new McpError({ reason: new ProtocolError(data === undefined ? { code, description } : { code, description, data }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const invalidParams = (method: string, description: string): McpError =>
  new McpError({ reason: new InvalidParamsError({ method, description }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const invalidResult = (method: string, description: string): McpError =>
  new McpError({ reason: new InvalidResultError({ method, description }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const timeout = (method: string, millis: number, kind: "idle" | "total"): McpError =>
  new McpError({ reason: new TimeoutError({ method, timeout: millis, kind }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const closed = (description = "MCP session closed"): McpError =>
  new McpError({ reason: new ClosedError({ description }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const unsupported = (method: string, capability: string): McpError =>
  new McpError({ reason: new UnsupportedError({ method, capability }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const handshake = (description: string): McpError =>
  new McpError({ reason: new HandshakeError({ description }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const serverUnavailable = (server: string, description: string, cause?: unknown): McpError =>
  new McpError({
    reason: new ServerUnavailableError(cause === undefined ? { server, description } : { server, description, cause })
  })

/**
 * @category constructors
 * @since 0.1.0
 */
export const nameCollision = (kind: string, name: string, servers: ReadonlyArray<string>): McpError =>
  new McpError({ reason: new NameCollisionError({ kind, name, servers }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const notFound = (kind: string, name: string): McpError =>
  new McpError({ reason: new NotFoundError({ kind, name }) })

/**
 * @category constructors
 * @since 0.2.0
 */
export const ambiguous = (kind: string, name: string, servers: ReadonlyArray<string>): McpError =>
  new McpError({ reason: new AmbiguousError({ kind, name, servers }) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const config = (source: string, description: string, where?: {
  readonly server?: string | undefined
  readonly field?: string | undefined
}): McpError => new McpError({ reason: new ConfigError(configFields(source, description, where)) })

/**
 * @category constructors
 * @since 0.1.0
 */
export const auth = (kind: AuthError["kind"], description: string, extra?: {
  readonly status?: number | undefined
  readonly cause?: unknown
}): McpError => new McpError({ reason: new AuthError(authFields(kind, description, extra)) })

/**
 * @category constructors
 * @since 0.3.0
 */
export const skill = (
  check: SkillError["check"],
  uri: string,
  description: string,
  differences?: ReadonlyArray<string>
): McpError =>
  new McpError({
    reason: new SkillError(differences === undefined ? { check, uri, description } : { check, uri, description, differences })
  })

/**
 * `-32601 Method not found`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const methodNotFound = (method: string): McpError =>
  protocol(JsonRpc.ErrorCode.MethodNotFound, `Method not found: ${method}`)

/**
 * The message of any failure, never empty: its `message` when it has a
 * non-empty one; else, for a tagged failure, its `_tag` and fields as
 * `Tag: {json}` (just `Tag` without fields), e.g. `NotFound: {"title":"x"}`
 * for `new NotFound({ title: "x" })` of
 * `class NotFound extends Data.TaggedError("NotFound")<{ readonly title: string }> {}`;
 * else a string as it is, an `Error` by its name, any other value as JSON.
 * `Redacted` fields read `<redacted>`; cycles, bigints and huge values are
 * written safely and the text is bounded (4096 characters).
 *
 * @category conversions
 * @since 0.1.0
 */
export const messageOf = (error: unknown): string => describeFailure(error)

/**
 * A handler's typed failure as an `McpError`: an `McpError` as it is,
 * anything else as an internal error (`-32603`) carrying its
 * {@link messageOf} (never empty).
 *
 * @category conversions
 * @since 0.1.0
 */
export const fromFailure = (error: unknown): McpError =>
  isMcpError(error) ? error : protocol(JsonRpc.ErrorCode.InternalError, messageOf(error))

// -----------------------------------------------------------------------------
// JSON-RPC mapping
// -----------------------------------------------------------------------------

/**
 * The JSON-RPC error object that answers a request whose handler failed with
 * this error. Only protocol and invalid-params reasons carry their details to
 * the peer; every other reason is an internal error with a short message.
 *
 * @category conversions
 * @since 0.1.0
 */
export const toErrorObject = (error: McpError): JsonRpc.ErrorObject => errorObjectOf(error)

/**
 * The error that a JSON-RPC error response from the peer becomes.
 *
 * @category conversions
 * @since 0.1.0
 */
export const fromErrorObject = (error: JsonRpc.ErrorObject): McpError => protocol(error.code, error.message, error.data)
