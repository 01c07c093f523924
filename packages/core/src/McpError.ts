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
 * Whether a value is an `McpError`.
 *
 * @category guards
 * @since 0.1.0
 */
export const isMcpError = (u: unknown): u is McpError => Predicate.hasProperty(u, TypeId)

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * An `McpError` whose reason is a `TransportError`: the connection could not
 * be opened, written or read, or the peer went away.
 *
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
 * An `McpError` whose reason is a `ProtocolError`: a JSON-RPC error with its
 * `code`, message and optional `data`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const protocol = (code: number, description: string, data?: unknown): McpError =>
  new McpError({ reason: new ProtocolError(data === undefined ? { code, description } : { code, description, data }) })

/**
 * An `McpError` whose reason is an `InvalidParamsError`: the params of
 * `method` did not match its schema.
 *
 * @category constructors
 * @since 0.1.0
 */
export const invalidParams = (method: string, description: string): McpError =>
  new McpError({ reason: new InvalidParamsError({ method, description }) })

/**
 * An `McpError` whose reason is an `InvalidResultError`: the peer's result
 * for `method` did not match its schema.
 *
 * @category constructors
 * @since 0.1.0
 */
export const invalidResult = (method: string, description: string): McpError =>
  new McpError({ reason: new InvalidResultError({ method, description }) })

/**
 * An `McpError` whose reason is a `TimeoutError`: `method` got no reply
 * within `millis` (an idle or a total limit).
 *
 * @category constructors
 * @since 0.1.0
 */
export const timeout = (method: string, millis: number, kind: "idle" | "total"): McpError =>
  new McpError({ reason: new TimeoutError({ method, timeout: millis, kind }) })

/**
 * An `McpError` whose reason is a `ClosedError`: the session closed while
 * the call was pending.
 *
 * @category constructors
 * @since 0.1.0
 */
export const closed = (description = "MCP session closed"): McpError =>
  new McpError({ reason: new ClosedError({ description }) })

/**
 * An `McpError` whose reason is an `UnsupportedError`: `method` needs a
 * `capability` that was not declared.
 *
 * @category constructors
 * @since 0.1.0
 */
export const unsupported = (method: string, capability: string): McpError =>
  new McpError({ reason: new UnsupportedError({ method, capability }) })

/**
 * An `McpError` whose reason is a `HandshakeError`: the initialize handshake
 * failed.
 *
 * @category constructors
 * @since 0.1.0
 */
export const handshake = (description: string): McpError =>
  new McpError({ reason: new HandshakeError({ description }) })

/**
 * An `McpError` whose reason is a `ServerUnavailableError`: the `McpGroup`
 * server `server` cannot take the call.
 *
 * @category constructors
 * @since 0.1.0
 */
export const serverUnavailable = (server: string, description: string, cause?: unknown): McpError =>
  new McpError({
    reason: new ServerUnavailableError(cause === undefined ? { server, description } : { server, description, cause })
  })

/**
 * An `McpError` whose reason is a `NameCollisionError`: several servers of
 * an `McpGroup` offer a component of that kind and name.
 *
 * @category constructors
 * @since 0.1.0
 */
export const nameCollision = (kind: string, name: string, servers: ReadonlyArray<string>): McpError =>
  new McpError({ reason: new NameCollisionError({ kind, name, servers }) })

/**
 * An `McpError` whose reason is a `NotFoundError`: no server, or no server
 * offering a component, of that kind and name.
 *
 * @category constructors
 * @since 0.1.0
 */
export const notFound = (kind: string, name: string): McpError =>
  new McpError({ reason: new NotFoundError({ kind, name }) })

/**
 * An `McpError` whose reason is an `AmbiguousError`: several servers offer
 * the component called, so the call must name its server.
 *
 * @category constructors
 * @since 0.2.0
 */
export const ambiguous = (kind: string, name: string, servers: ReadonlyArray<string>): McpError =>
  new McpError({ reason: new AmbiguousError({ kind, name, servers }) })

/**
 * An `McpError` whose reason is a `ConfigError`: a configuration
 * (`mcp.json`) is not valid, with where, when known.
 *
 * @category constructors
 * @since 0.1.0
 */
export const config = (source: string, description: string, where?: {
  readonly server?: string | undefined
  readonly field?: string | undefined
}): McpError => new McpError({ reason: new ConfigError(configFields(source, description, where)) })

/**
 * An `McpError` whose reason is an `AuthError` of that kind: authorization
 * failed.
 *
 * @category constructors
 * @since 0.1.0
 */
export const auth = (kind: AuthError["kind"], description: string, extra?: {
  readonly status?: number | undefined
  readonly cause?: unknown
}): McpError => new McpError({ reason: new AuthError(authFields(kind, description, extra)) })

/**
 * An `McpError` whose reason is a `SkillError`: a skill failed a check
 * (`check`) on `uri`.
 *
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
    reason: new SkillError(
      differences === undefined ? { check, uri, description } : { check, uri, description, differences }
    )
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
