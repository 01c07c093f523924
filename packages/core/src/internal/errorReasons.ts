/**
 * The reasons of an `McpError`, each a tagged class with the fields that say
 * what went wrong, and their union. Exported by `McpError`.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { ambiguousMessage, configMessage, nameCollisionMessage, notFoundMessage } from "./errorText.ts"

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
  TransportError,
  ProtocolError,
  InvalidParamsError,
  InvalidResultError,
  TimeoutError,
  ClosedError,
  UnsupportedError,
  HandshakeError,
  ServerUnavailableError,
  NameCollisionError,
  NotFoundError,
  AmbiguousError,
  ConfigError,
  AuthError,
  SkillError
])

/**
 * @category reasons
 * @since 0.1.0
 */
export type Reason = typeof Reason.Type
