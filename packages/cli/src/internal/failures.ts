/**
 * How `effect-mcp` fails: its exit codes, its one error (`CliFailure`), and
 * how an `McpError` becomes one. `McpCli` re-exports the public part.
 *
 * @internal
 */
import * as JsonRpc from "@effect-mcp/core/JsonRpc"
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpGroup from "@effect-mcp/core/McpGroup"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Format from "./format.ts"

// -----------------------------------------------------------------------------
// Exit codes and the error
// -----------------------------------------------------------------------------

/** The process exit codes (documented on `McpCli.ExitCode`). */
export const ExitCode = {
  Ok: 0,
  ToolError: 1,
  Usage: 2,
  Connection: 3,
  Request: 4,
  Auth: 5
} as const

/** What made a command fail, named after its exit code. */
export type FailureKind = Exclude<keyof typeof ExitCode, "Ok">

/**
 * The one error of the CLI: it carries the exit code (read by the runtime's
 * teardown) and a message for stderr. It is printed once by `McpCli.run`, so
 * the runtime does not report it again.
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  kind: Schema.Literals(["ToolError", "Usage", "Connection", "Request", "Auth"]),
  description: Schema.String
}) {
  override get message(): string {
    return this.description
  }
  override get [Runtime.errorExitCode](): number {
    return ExitCode[this.kind]
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
}

/** A failure whose description, which may quote a server, is made safe for a terminal. */
const failure = (kind: FailureKind, description: string): CliFailure =>
  new CliFailure({ kind, description: Format.terminal(description) })

/** The failure with the secrets in its description replaced by `***` (see `Format.mask`). */
export const masked = (error: CliFailure, secrets: ReadonlyArray<string>): CliFailure =>
  secrets.length === 0
    ? error
    : new CliFailure({ kind: error.kind, description: Format.mask(error.description, secrets) })

/** A usage error (exit 2). */
export const usage = (description: string): CliFailure => failure("Usage", description)

/** A name no server has, with the names there are (the first 20). */
export const unknownName = (what: string, name: string, known: ReadonlyArray<string>): CliFailure => {
  const shown = known.slice(0, 20).join(", ")
  return usage(
    `unknown ${what} "${name}"; ${
      known.length === 0
        ? `there are no ${what}s`
        : `the ${what}s are: ${shown}${known.length > 20 ? `, … (${known.length} in all)` : ""}`
    }`
  )
}

/** `serve`: the front cannot listen there (the port is taken, the address is not this machine's). */
export const listenFailure = (where: string, cause: unknown): CliFailure => {
  const message = cause instanceof Error ? cause.message : String(cause)
  return failure("Connection", `cannot listen on ${where}: ${message}`)
}

// -----------------------------------------------------------------------------
// From McpError
// -----------------------------------------------------------------------------

/** The error's message, then the end of the server's stderr when it has one the message does not quote. */
const describe = (error: McpError.McpError): string => {
  const reason = error.reason
  const message = error.message
  if (reason._tag !== "TransportError" || reason.stderr === undefined) return message
  const tail = reason.stderr.trimEnd().split("\n").slice(-10)
  const quoted = tail.length === 1 && message.includes(tail[0]!.trim())
  return tail.join("").trim() === "" || quoted
    ? message
    : `${message}\n  the end of its stderr:\n${tail.map((line) => `    ${line}`).join("\n")}`
}

const authFailure = (error: McpError.AuthError, server?: string): CliFailure => {
  const where = server === undefined || error.description.includes(server) ? "" : `server "${server}": `
  const hint = error.kind === "Storage" ? "" : " (effect-mcp logout <server> forgets its tokens)"
  return failure(
    "Auth",
    `${where}authorization failed (${error.kind}): ${error.description}${
      error.kind === "Unauthorized" || error.kind === "InsufficientScope" ? hint : ""
    }`
  )
}

/** The era a server was connected with: its config's `"era"`, or `--era` (`fromFlag`). */
export interface Pinned {
  readonly era: McpGroup.CommonParams["era"]
  readonly fromFlag: boolean
}

/** A handshake the server refused (or did not understand) while the era was pinned. */
const eraHint = (reason: McpError.Reason, pinned: Pinned | undefined): string => {
  if (pinned === undefined || pinned.era === undefined || pinned.era === "auto") return ""
  const refused = reason._tag === "HandshakeError" ||
    (reason._tag === "ProtocolError" && reason.code === JsonRpc.ErrorCode.MethodNotFound)
  if (!refused) return ""
  return pinned.fromFlag
    ? ` (--era ${pinned.era} pins the era; --era auto lets the client find the server's)`
    : ` (its "era" in the config pins ${pinned.era}; "auto" or --era auto lets the client find the server's)`
}

/**
 * Connecting (config, spawn, handshake): everything is a connection failure,
 * but authorization. `pinned` says how the server's era was chosen, for a
 * hint when a pinned era was refused.
 */
export const connectionFailure = (error: McpError.McpError, server?: string, pinned?: Pinned): CliFailure => {
  const reason = error.reason
  if (reason._tag === "AuthError") return authFailure(reason, server)
  const hint = reason._tag === "NameCollisionError" && reason.kind !== "server"
    ? " (--qualify names them <server>_<name>)"
    : eraHint(reason, pinned)
  const where = server === undefined || error.message.includes(`"${server}"`) ? "" : `server "${server}": `
  return failure("Connection", `${where}${describe(error)}${hint}`)
}

/**
 * A request: a lost connection is a connection failure, a name no server
 * offers a usage error, an answered error (or a timeout) a request failure.
 */
export const requestFailure = (error: McpError.McpError): CliFailure => {
  const reason = error.reason
  switch (reason._tag) {
    case "AuthError":
      return authFailure(reason)
    case "TransportError":
    case "ClosedError":
    case "HandshakeError":
    case "ServerUnavailableError":
    case "ConfigError":
      return connectionFailure(error)
    case "NotFoundError":
      return failure("Usage", describe(error))
    case "ProtocolError":
      // the server knows no such resource, like a name no server offers:
      // -32002 (2025-11-25), -32602 with the URI as data (2026-07-28)
      return failure(isResourceNotFound(reason.code, reason.data) ? "Usage" : "Request", describe(error))
    default:
      return failure("Request", describe(error))
  }
}

const isResourceNotFound = (code: number, data: unknown): boolean =>
  code === JsonRpc.ErrorCode.ResourceNotFound ||
  (code === JsonRpc.ErrorCode.InvalidParams &&
    typeof (data as { readonly uri?: unknown } | undefined)?.uri === "string")
