/**
 * Streamable HTTP for 2026-07-28 requests: which POSTs are modern, the
 * checks of their standard headers against the body (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`: `-32020` with a 400 on a mismatch),
 * and the HTTP status of a modern error answer. A modern request is served by
 * a session of its own (no `Mcp-Session-Id`, no GET stream); closing its
 * response stream closes that session, which cancels the handler.
 *
 * @internal
 */
import * as JsonRpc from "../../../JsonRpc.ts"
import * as McpSchema from "../../../McpSchema.ts"
import * as Stateless from "../../era/stateless.ts"
import type { HeaderParam } from "../../jsonSchema/headers.ts"
import { PROTOCOL_VERSION } from "../guard.ts"
import { decodeValue, MCP_METHOD, MCP_NAME, MCP_PARAM_PREFIX, nameOf, valueAt } from "../standardHeaders.ts"

type Headers = Readonly<Record<string, string | undefined>>

/**
 * A header's value without leading or trailing spaces and tabs (RFC 9110
 * §5.5): Node's HTTP parser strips them, workerd's does not.
 */
const field = (headers: Headers, name: string): string | undefined => headers[name]?.replace(/^[\t ]+|[\t ]+$/g, "")

/**
 * `true` when a POST of one message is to be served as a modern request: its
 * `_meta` names a version, its method exists only in the modern era, or (with
 * no session) its `MCP-Protocol-Version` is not a stateful revision.
 *
 * @internal
 */
export const isModern = (headers: Headers, message: JsonRpc.Message, sessionId: string | undefined): boolean => {
  if (!("method" in message)) return false
  if (Stateless.isModern(message.method, message.params)) return true
  if (message.method === McpSchema.Initialize.name) return false
  const version = field(headers, PROTOCOL_VERSION)
  return sessionId === undefined && version !== undefined && !McpSchema.isSupportedProtocolVersion(version)
}

const mismatch = (message: string): JsonRpc.ErrorObject => ({
  code: JsonRpc.ErrorCode.HeaderMismatch,
  message: `Header mismatch: ${message}`
})

const matches = (header: string, value: unknown, type: HeaderParam["type"]): boolean => {
  switch (type) {
    case "string":
      return header === value
    case "boolean":
      return header === String(value)
    case "integer":
      return header.trim() !== "" && Number(header) === value
  }
}

/**
 * `MCP-Protocol-Version` against the body's version, when the body names one:
 * the first check of a modern request.
 *
 * @internal
 */
export const checkVersionHeader = (headers: Headers, message: JsonRpc.Request): JsonRpc.ErrorObject | undefined => {
  const bodyVersion = Stateless.versionOf(message.params)
  const version = field(headers, PROTOCOL_VERSION)
  if (typeof bodyVersion !== "string") return undefined
  if (version === undefined) return mismatch("the MCP-Protocol-Version header is missing")
  return version === bodyVersion
    ? undefined
    : mismatch(`MCP-Protocol-Version header value '${version}' does not match _meta value '${bodyVersion}'`)
}

/**
 * The other standard-header checks of a modern request (after its `_meta`
 * passed): `undefined` when they pass, else the `-32020` error to answer with
 * a 400.
 *
 * @internal
 */
export const checkHeaders = (
  headers: Headers,
  message: JsonRpc.Request,
  headerParams: (tool: string) => ReadonlyArray<HeaderParam>
): JsonRpc.ErrorObject | undefined => {
  const method = field(headers, MCP_METHOD)
  if (method === undefined) return mismatch("the Mcp-Method header is missing")
  if (method !== message.method) {
    return mismatch(`Mcp-Method header value '${method}' does not match body value '${message.method}'`)
  }
  const name = nameOf(message.method, message.params)
  if (name !== undefined) {
    const header = field(headers, MCP_NAME)
    if (header === undefined) return mismatch("the Mcp-Name header is missing")
    const decoded = decodeValue(header)
    if (decoded === undefined) return mismatch("the Mcp-Name header is malformed")
    if (decoded !== name) return mismatch(`Mcp-Name header value '${header}' does not match body value '${name}'`)
  }
  if (message.method !== McpSchema.CallTool.name || name === undefined) return undefined
  const args = (message.params as { readonly arguments?: unknown }).arguments
  for (const param of headerParams(name)) {
    const headerName = `${MCP_PARAM_PREFIX}${param.header.toLowerCase()}`
    const header = field(headers, headerName)
    const value = valueAt(args, param.path)
    if (value === undefined || value === null) {
      if (header !== undefined) return mismatch(`Mcp-Param-${param.header} is set but the argument is absent`)
      continue
    }
    if (header === undefined) return mismatch(`the Mcp-Param-${param.header} header is missing`)
    const decoded = decodeValue(header)
    if (decoded === undefined) return mismatch(`the Mcp-Param-${param.header} header is malformed`)
    if (!matches(decoded, value, param.type)) {
      return mismatch(`Mcp-Param-${param.header} header value '${header}' does not match the argument`)
    }
  }
  return undefined
}

/**
 * The checks of a modern request before it is served, in the order the
 * revision gives them: a removed method, the version header against the
 * body, the `_meta`, then the other standard headers. `versions` are the
 * versions served.
 *
 * @internal
 */
export const check = (
  headers: Headers,
  message: JsonRpc.Request,
  versions: ReadonlyArray<string>,
  headerParams: (tool: string) => ReadonlyArray<HeaderParam>
): JsonRpc.ErrorObject | undefined =>
  (Stateless.LEGACY_ONLY.has(message.method)
    ? Stateless.removedMethod(message.method)
    : undefined) ??
    checkVersionHeader(headers, message) ??
    Stateless.checkMeta(
      Stateless.requestMeta(message.params),
      versions.filter(McpSchema.isModernProtocolVersion),
      versions
    ) ??
    checkHeaders(headers, message, headerParams)

/** The HTTP status of a modern error: 404 for an unknown method, 400 for the modern errors and bad `_meta`. @internal */
export const statusOfError = (error: JsonRpc.ErrorObject, beforeServing: boolean): number => {
  switch (error.code) {
    case JsonRpc.ErrorCode.MethodNotFound:
      return 404
    case JsonRpc.ErrorCode.HeaderMismatch:
    case JsonRpc.ErrorCode.MissingRequiredClientCapability:
    case JsonRpc.ErrorCode.UnsupportedProtocolVersion:
      return 400
    default:
      // a refusal of the envelope is a bad request; a handler's error is an answer
      return beforeServing ? 400 : 200
  }
}

/** The HTTP status of a modern answer. @internal */
export const statusOf = (message: JsonRpc.Message | undefined): number =>
  message !== undefined && "error" in message ? statusOfError(message.error, false) : 200
