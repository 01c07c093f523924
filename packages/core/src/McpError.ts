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
import { ambiguousMessage, configMessage, nameCollisionMessage, notFoundMessage } from "./internal/errorText.ts"
import { describeFailure } from "./internal/failureText.ts"
import * as JsonRpc from "./JsonRpc.ts"

// -----------------------------------------------------------------------------
// Reasons
// -----------------------------------------------------------------------------

/**
 * The connection failed: it could not be opened, written or read, or the peer
 * went away. `status` is the HTTP status of the response that failed (an HTTP
 * exchange, a WebSocket handshake), when one did; a child process that exited
 * carries its `exitCode` or `signal` (e.g. `SIGKILL`) and the tail of its
 * `stderr`.
 *
 * @category reasons
 * @since 0.1.0
 */
export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  description: Schema.String,
  status: Schema.optionalKey(Schema.Int),
  exitCode: Schema.optionalKey(Schema.Int),
  signal: Schema.optionalKey(Schema.String),
  stderr: Schema.optionalKey(Schema.String),
  cause: Schema.optionalKey(Schema.Defect())
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * A JSON-RPC error: answered by the peer, or raised here to be sent back to
 * the peer (`code` is the JSON-RPC error code).
 *
 * @category reasons
 * @since 0.1.0
 */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  code: Schema.Int,
  description: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
}) {
  override get message(): string {
    return `${this.description} (code ${this.code})`
  }
}

/**
 * Params or a result did not match the schema of their method. On the
 * receiving side of a request this becomes a `-32602` error response.
 *
 * @category reasons
 * @since 0.1.0
 */
export class InvalidParamsError extends Schema.TaggedError<InvalidParamsError>()("InvalidParamsError", {
  method: Schema.String,
  description: Schema.String
}) {
  override get message(): string {
    return `Invalid params for ${this.method}: ${this.description}`
  }
}

/**
 * The peer's result did not match the result schema of the method.
 *
 * @category reasons
 * @since 0.1.0
 */
export class InvalidResultError extends Schema.TaggedError<InvalidResultError>()("InvalidResultError", {
  method: Schema.String,
  description: Schema.String
}) {
  override get message(): string {
    return `Invalid result for ${this.method}: ${this.description}`
  }
}

/**
 * A request got no reply in time. `timeout` is the idle limit or the maximum
 * total, whichever fired, in milliseconds.
 *
 * @category reasons
 * @since 0.1.0
 */
export class TimeoutError extends Schema.TaggedError<TimeoutError>()("TimeoutError", {
  method: Schema.String,
  timeout: Schema.Number,
  kind: Schema.Literals(["idle", "total"])
}) {
  override get message(): string {
    return `${this.method} timed out after ${this.timeout} ms${this.kind === "total" ? " (maximum total)" : ""}`
  }
}

/**
 * The session was closed (its scope ended, or its transport ended) while the
 * call was pending or before it was made.
 *
 * @category reasons
 * @since 0.1.0
 */
export class ClosedError extends Schema.TaggedError<ClosedError>()("ClosedError", {
  description: Schema.String
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * The call needs a capability the peer (or this side) did not declare; nothing
 * was sent.
 *
 * @category reasons
 * @since 0.1.0
 */
export class UnsupportedError extends Schema.TaggedError<UnsupportedError>()("UnsupportedError", {
  method: Schema.String,
  capability: Schema.String
}) {
  override get message(): string {
    return `${this.method} needs the ${this.capability} capability, which was not declared`
  }
}

/**
 * The initialize handshake failed (unsupported protocol version, a malformed
 * initialize result, ...).
 *
 * @category reasons
 * @since 0.1.0
 */
export class HandshakeError extends Schema.TaggedError<HandshakeError>()("HandshakeError", {
  description: Schema.String
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * A server of an `McpGroup` cannot take the call: it is down (its process
 * exited, its connection dropped), still connecting, or went away while the
 * call was running. `cause` is the error that took it down, when known.
 *
 * @category reasons
 * @since 0.1.0
 */
export class ServerUnavailableError extends Schema.TaggedError<ServerUnavailableError>()("ServerUnavailableError", {
  server: Schema.String,
  description: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  override get message(): string {
    return `server "${this.server}" is unavailable: ${this.description}`
  }
}

/**
 * Two servers of an `McpGroup` offer a component (tool, prompt, resource,
 * resource template) under the same group name, or a server name is already
 * taken (`kind` `"server"`). `servers` names the server that had it first,
 * then the one refused.
 *
 * @category reasons
 * @since 0.1.0
 */
export class NameCollisionError extends Schema.TaggedError<NameCollisionError>()("NameCollisionError", {
  kind: Schema.String,
  name: Schema.String,
  servers: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return nameCollisionMessage(this)
  }
}

/**
 * An `McpGroup` has no server of that name, or none of its servers offers the
 * tool, prompt or resource asked for.
 *
 * @category reasons
 * @since 0.1.0
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("NotFoundError", {
  kind: Schema.String,
  name: Schema.String
}) {
  override get message(): string {
    return notFoundMessage(this)
  }
}

/**
 * A call of an `McpGroup` names something that several of its servers offer
 * (a resource URI they all list, or that their templates all match) without
 * saying which server to ask: `servers` names them, in order of connection.
 * Give the call's `server` option.
 *
 * @category reasons
 * @since 0.2.0
 */
export class AmbiguousError extends Schema.TaggedError<AmbiguousError>()("AmbiguousError", {
  kind: Schema.String,
  name: Schema.String,
  servers: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return ambiguousMessage(this)
  }
}

/**
 * A configuration file (`mcp.json`) is not valid: `source` is the file (or
 * whatever the text came from), `server` the entry and `field` the path inside
 * it, when the problem is that precise.
 *
 * @category reasons
 * @since 0.1.0
 */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  source: Schema.String,
  server: Schema.optionalKey(Schema.String),
  field: Schema.optionalKey(Schema.String),
  description: Schema.String
}) {
  override get message(): string {
    return configMessage(this)
  }
}

/**
 * Authorization failed: the server refused the credentials (`401`, `403`)
 * and no new ones could be obtained, or an OAuth step (discovery,
 * registration, the user's authorization, the token endpoint) failed or was
 * refused for safety (a protected resource metadata `resource` that is not
 * the server, an authorization server without PKCE S256, a `state` or `iss`
 * mismatch). `status` is the HTTP status that led here, when one did.
 *
 * @category reasons
 * @since 0.1.0
 */
export class AuthError extends Schema.TaggedError<AuthError>()("AuthError", {
  kind: Schema.Literals([
    "Unauthorized",
    "InsufficientScope",
    "Discovery",
    "Registration",
    "Authorization",
    "Token",
    "Refused",
    "Storage"
  ]),
  description: Schema.String,
  status: Schema.optionalKey(Schema.Int),
  cause: Schema.optionalKey(Schema.Defect())
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * A skill (the Skills extension) failed a check: on the client, a file read
 * that is not listed in the skill's entry (`unlisted`), whose byte length
 * (`size`) or `sha256` digest (`digest`) differs from the entry's, or a
 * `SKILL.md` whose frontmatter differs from the entry's (`frontmatter`, one
 * line per field in `differences`), or an entry that breaks the extension's
 * rules (`entry`); on the server, a skill breaking the name, path or size
 * rules (`name`, `path`, `limit`) or a file changed since it was listed
 * (`changed`). The content that failed is never returned.
 *
 * @category reasons
 * @since 0.3.0
 */
export class SkillError extends Schema.TaggedError<SkillError>()("SkillError", {
  check: Schema.Literals(["unlisted", "size", "digest", "frontmatter", "entry", "name", "path", "limit", "changed"]),
  uri: Schema.String,
  description: Schema.String,
  differences: Schema.optionalKey(Schema.Array(Schema.String))
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * Every reason.
 *
 * @category reasons
 * @since 0.1.0
 */
export const Reason = Schema.Union([
  TransportError, ProtocolError, InvalidParamsError, InvalidResultError, TimeoutError, ClosedError, UnsupportedError,
  HandshakeError, ServerUnavailableError, NameCollisionError, NotFoundError, AmbiguousError, ConfigError, AuthError,
  SkillError
])

/**
 * @category reasons
 * @since 0.1.0
 */
export type Reason = typeof Reason.Type

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
