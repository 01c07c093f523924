/**
 * Handler failures on the server side: each one is logged here (a warning
 * for a typed failure, an error with the cause for a defect), and a defect
 * reaches the client only as a generic internal error.
 *
 * A line reads `<method> <kind> "<name>" failed (request <id>): <failure text>`
 * or `<method> <kind> "<name>" died (request <id>)` with the cause, e.g.
 * `tools/call tool "roll" failed (request 3): Unlucky: {"n":13}`, annotated
 * with `mcp.method.name`, `jsonrpc.request.id` and the definition's name
 * (`mcp.tool.name`, `mcp.resource.uri`, `mcp.prompt.name`; completions add
 * `mcp.completion.argument`). The line is logged outside the request's
 * context, so `McpServer.layerLogger` does not forward it to the client.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpServer from "../../McpServer.ts"
import { describeFailure } from "../failureText.ts"
import { CurrentRequestContext } from "./context.ts"

/** What failed. @internal */
export interface Site {
  readonly method: string
  readonly kind: "tool" | "resource" | "prompt"
  /** The tool or prompt name, the resource URI or URI template. */
  readonly name: string
  /** For completions: the argument completed. */
  readonly argument?: string | undefined
  readonly requestId: JsonRpc.RequestId | undefined
}

/** The site of a definition's handler run for the request of `context`. @internal */
export const siteOf = (
  context: McpServer.RequestContext,
  kind: Site["kind"],
  name: string,
  argument?: string
): Site => ({ method: context.method, kind, name, argument, requestId: context.requestId })

const NAME_KEY: Readonly<Record<Site["kind"], string>> = {
  tool: "mcp.tool.name",
  resource: "mcp.resource.uri",
  prompt: "mcp.prompt.name"
}

/** The error a defect is answered with: no message, no stack of it. @internal */
export const internalError = (): McpError.McpError =>
  McpError.protocol(JsonRpc.ErrorCode.InternalError, "Internal error")

/**
 * Logs a failed (not interrupted) handler: a warning naming the typed
 * failure, or an error with the cause of a defect.
 *
 * @internal
 */
export const log = (site: Site, cause: Cause.Cause<unknown>): Effect.Effect<void> => {
  const argument = site.argument === undefined ? "" : ` argument ${JSON.stringify(site.argument)}`
  const where = `${site.method} ${site.kind} ${JSON.stringify(site.name)}${argument}`
  const request = site.requestId === undefined ? "" : ` (request ${JSON.stringify(site.requestId)})`
  const error = Cause.findErrorOption(cause)
  const line = Option.isSome(error)
    ? Effect.logWarning(`${where} failed${request}: ${describeFailure(error.value)}`)
    : Effect.logError(`${where} died${request}`, cause)
  const annotations: Record<string, string> = { "mcp.method.name": site.method, [NAME_KEY[site.kind]]: site.name }
  if (site.requestId !== undefined) annotations["jsonrpc.request.id"] = String(site.requestId)
  if (site.argument !== undefined) annotations["mcp.completion.argument"] = site.argument
  // outside the request's context: the logger bridge forwards nothing of it
  return line.pipe(Effect.annotateLogs(annotations), Effect.provideService(CurrentRequestContext, undefined))
}

/**
 * Runs a handler whose failures become JSON-RPC errors: a typed failure is
 * logged and becomes an `McpError` (`McpError.fromFailure`), a defect is
 * logged and becomes `-32603 Internal error`; interruption passes through.
 *
 * @internal
 */
export const guard = <A, E, R>(site: Site, effect: Effect.Effect<A, E, R>): Effect.Effect<A, McpError.McpError, R> =>
  Effect.catchCause(effect, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const error = Cause.findErrorOption(cause)
    return Effect.andThen(
      log(site, cause),
      Effect.fail(Option.isSome(error) ? McpError.fromFailure(error.value) : internalError())
    )
  })
