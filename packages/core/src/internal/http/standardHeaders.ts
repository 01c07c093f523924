/**
 * The standard headers of a 2026-07-28 request over Streamable HTTP, both
 * ways: `Mcp-Method`, `Mcp-Name` (the tool, prompt, resource or task) and
 * `Mcp-Param-*` values, in plain ASCII or, when a value cannot be one, in the
 * `=?base64?…?=` form; and reading them back.
 *
 * @internal
 */
import * as Base64 from "effect/encoding/Base64"
import * as Result from "effect/Result"
import * as McpSchema from "../../McpSchema.ts"
import type { HeaderParam } from "../jsonSchema/headers.ts"

/** The header names, lower-case. @internal */
export const MCP_METHOD = "mcp-method"
/** @internal */
export const MCP_NAME = "mcp-name"
/** @internal */
export const MCP_PARAM_PREFIX = "mcp-param-"

const SENTINEL = /^=\?base64\?(.*)\?=$/

// visible ASCII, space and tab only (RFC 9110 field values)
const SAFE = /^[\x20-\x7e\t]*$/

// what goes plain: visible ASCII and space (a tab, even inside, goes in Base64)
const PLAIN = /^[\x20-\x7e]*$/

/** A header value, Base64-decoded when in the `=?base64?…?=` form; `undefined` when malformed. @internal */
export const decodeValue = (value: string): string | undefined => {
  if (!SAFE.test(value)) return undefined
  const match = SENTINEL.exec(value)
  if (match === null) return value
  const decoded = Base64.decodeString(match[1]!)
  return Result.isSuccess(decoded) ? decoded.success : undefined
}

/** A value as a header: as it is when it is printable ASCII without edge spaces, else Base64 in the sentinel form. @internal */
export const encodeValue = (value: string): string =>
  PLAIN.test(value) && value.trim() === value && !SENTINEL.test(value)
    ? value
    : `=?base64?${Base64.encode(value)}?=`

/** What `Mcp-Name` names for a request: the tool, prompt, resource or task. @internal */
export const nameOf = (method: string, params: unknown): string | undefined => {
  const object = params as
    | { readonly name?: unknown; readonly uri?: unknown; readonly taskId?: unknown }
    | undefined
  switch (method) {
    case McpSchema.CallTool.name:
    case McpSchema.GetPrompt.name:
      return typeof object?.name === "string" ? object.name : undefined
    case McpSchema.ReadResource.name:
      return typeof object?.uri === "string" ? object.uri : undefined
    case McpSchema.GetTask.name:
    case McpSchema.UpdateTask.name:
    case McpSchema.CancelTask.name:
      return typeof object?.taskId === "string" ? object.taskId : undefined
    default:
      return undefined
  }
}

/** The value of the argument at `path`. @internal */
export const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let current = args
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

/** The `Mcp-Param-*` headers of a call's arguments. @internal */
export const paramHeaders = (params: ReadonlyArray<HeaderParam>, args: unknown): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const param of params) {
    const value = valueAt(args, param.path)
    if (value === undefined || value === null) continue
    headers[`${MCP_PARAM_PREFIX}${param.header.toLowerCase()}`] = encodeValue(String(value))
  }
  return headers
}
