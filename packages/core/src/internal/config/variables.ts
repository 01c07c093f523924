/**
 * `${VAR}`, `${env:VAR}` and `${VAR:-default}` in the fields of an `mcp.json`
 * entry that take them, and the values that came from variables (secrets;
 * see `secrets.ts` for how errors are kept from quoting them).
 *
 * @internal
 */
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as McpConfig from "../../McpConfig.ts"
import * as McpError from "../../McpError.ts"

const VARIABLE = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

export interface Expansion {
  readonly env: McpConfig.Environment
  readonly secrets: Array<string>
}

const expandString = (
  text: string,
  expansion: Expansion,
  source: string,
  server: string,
  path: ReadonlyArray<PropertyKey>
): Result.Result<string, McpError.McpError> => {
  let missing: string | undefined
  const expanded = text.replace(VARIABLE, (whole, name: string, fallback: string | undefined) => {
    const value = expansion.env[name]
    if (fallback !== undefined && (value === undefined || value === "")) return fallback
    if (value === undefined) {
      missing ??= name
      return whole
    }
    expansion.secrets.push(value)
    return value
  })
  return missing === undefined
    ? Result.succeed(expanded)
    : Result.fail(McpError.config(
      source,
      `the variable ${missing} is not set (set it, or give a default: \${${missing}:-value})`,
      { server, field: formatPath(path) }
    ))
}

const expandField = (
  entry: Record<PropertyKey, unknown>,
  key: string,
  expansion: Expansion,
  source: string,
  server: string
): Result.Result<unknown, McpError.McpError> => {
  const value = entry[key]
  if (typeof value === "string") return expandString(value, expansion, source, server, [key])
  if (key === "args" && Array.isArray(value)) {
    const out: Array<unknown> = []
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index]
      if (typeof item !== "string") out.push(item)
      else {
        const expanded = expandString(item, expansion, source, server, [key, index])
        if (Result.isFailure(expanded)) return expanded
        out.push(expanded.success)
      }
    }
    return Result.succeed(out)
  }
  if (Predicate.isObject(value) && !Array.isArray(value)) {
    const names = key === "oauth" ? ["clientId", "clientSecret"] : Object.keys(value)
    const out: Record<string, unknown> = { ...value }
    for (const name of names) {
      const item = value[name]
      if (typeof item !== "string") continue
      const expanded = expandString(item, expansion, source, server, [key, name])
      if (Result.isFailure(expanded)) return expanded
      out[name] = expanded.success
    }
    return Result.succeed(out)
  }
  return Result.succeed(value)
}

/** The entry with its variables expanded in the fields that take them. */
export const expandEntry = (
  entry: Record<PropertyKey, unknown>,
  expansion: Expansion,
  source: string,
  server: string
): Result.Result<Record<PropertyKey, unknown>, McpError.McpError> => {
  const out: Record<PropertyKey, unknown> = { ...entry }
  for (const key of ["command", "args", "env", "url", "headers", "oauth"]) {
    if (!(key in entry)) continue
    const expanded = expandField(entry, key, expansion, source, server)
    if (Result.isFailure(expanded)) return Result.fail(expanded.failure)
    out[key] = expanded.success
  }
  return Result.succeed(out)
}

export const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string | undefined => {
  let text = ""
  for (const segment of path) {
    const key = typeof segment === "object" ? segment.key : segment
    if (typeof key === "number") text += `[${key}]`
    else if (typeof key === "string" && /^[A-Za-z_$][\w$-]*$/.test(key)) text += text === "" ? key : `.${key}`
    else text += `[${JSON.stringify(String(key))}]`
  }
  return text === "" ? undefined : text
}
