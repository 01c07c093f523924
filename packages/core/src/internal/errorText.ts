/**
 * The messages of the `McpError` reasons that take more than a line to
 * write.
 *
 * @internal
 */
import type { AmbiguousError, ConfigError, NameCollisionError, NotFoundError } from "./errorReasons.ts"

/** The message of a `NameCollisionError`. @internal */
export const nameCollisionMessage = (error: NameCollisionError): string => {
  if (error.kind === "server") return `a server named "${error.name}" is already in the group`
  const [first, second] = error.servers
  return first === second
    ? `server "${first}" offers two ${error.kind}s named "${error.name}" once named by the group's nameHook`
    : `${error.kind} "${error.name}" of server "${second}" collides with the one of server "${first}"; ` +
      `give the group a nameHook to namespace names`
}

/** The message of a `NotFoundError`. @internal */
export const notFoundMessage = (error: NotFoundError): string =>
  error.kind === "server"
    ? `no server named "${error.name}" in the group`
    : `no server of the group offers the ${error.kind} "${error.name}"`

/** The message of an `AmbiguousError`. @internal */
export const ambiguousMessage = (error: AmbiguousError): string =>
  `the ${error.kind} "${error.name}" is offered by several servers (${
    [...error.servers].sort().map((server) => `"${server}"`).join(", ")
  }): name the server to ask`

/** The message of a `ConfigError`. @internal */
export const configMessage = (error: ConfigError): string => {
  const server = error.server === undefined ? "" : `: server "${error.server}"`
  const field = error.field === undefined ? "" : `: ${error.field}`
  return `${error.source}${server}${field}: ${error.description}`
}
