/**
 * The values of a server's parameters that came from variables of the
 * environment (secrets), kept by the params `McpConfig.decode` made, and the
 * one way text and errors about a server are kept from quoting them.
 *
 * @internal
 */
import * as Redacted from "effect/Redacted"
import * as McpError from "../../McpError.ts"
import type { ServerParams } from "../group/params.ts"

/** The servers' values that came from variables, by the params decoded from their entries. */
const secretsByParams = new WeakMap<ServerParams, ReadonlyArray<Redacted.Redacted<string>>>()

/** Records the secrets of params made by `McpConfig.decode` (duplicates and empty values dropped). @internal */
export const remember = (params: ServerParams, secrets: ReadonlyArray<string>): void => {
  const kept = [...new Set(secrets)].filter((secret) => secret !== "")
  if (kept.length > 0) secretsByParams.set(params, kept.map((secret) => Redacted.make(secret)))
}

/** The secrets of params made by `McpConfig.decode` (none for others). @internal */
export const secretsOf = (params: ServerParams): ReadonlyArray<Redacted.Redacted<string>> =>
  secretsByParams.get(params) ?? []

/**
 * Shorter values are not masked in what a group reports about a server: they
 * would mask unrelated text (`DEBUG=1` and "exited with code 1").
 */
const MIN_MASKED_LENGTH = 4

/** The secrets of params, as the group masks them in its errors and logs. @internal */
export const maskedOf = (params: ServerParams): ReadonlyArray<string> =>
  secretsOf(params).map(Redacted.value).filter((secret) => secret.length >= MIN_MASKED_LENGTH)

/** `text` with every occurrence of a secret replaced by `***`, the longest first. @internal */
export const mask = (text: string, secrets: ReadonlyArray<string>): string => {
  let masked = text
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret !== "") masked = masked.split(secret).join("***")
  }
  return masked
}

const quotes = (text: string, secrets: ReadonlyArray<string>): boolean =>
  secrets.some((secret) => secret !== "" && text.includes(secret))

/** Whether a cause (an error, its fields, its causes, a few levels down) quotes a secret. */
const causeQuotes = (value: unknown, secrets: ReadonlyArray<string>, depth: number): boolean => {
  if (typeof value === "string") return quotes(value, secrets)
  if (depth === 0 || typeof value !== "object" || value === null) return false
  const own: Array<unknown> = value instanceof Error ? [value.message, value.stack, value.cause] : []
  for (const key of Object.keys(value).slice(0, 32)) own.push((value as Record<string, unknown>)[key])
  return own.some((item) =>
    Array.isArray(item)
      ? item.slice(0, 32).some((entry) => causeQuotes(entry, secrets, depth - 1))
      : causeQuotes(item, secrets, depth - 1)
  )
}

const maskCause = (cause: unknown, secrets: ReadonlyArray<string>): unknown => {
  if (McpError.isMcpError(cause)) return maskError(cause, secrets)
  return causeQuotes(cause, secrets, 4) ? new Error(mask(McpError.messageOf(cause), secrets)) : cause
}

/**
 * The error with the secrets replaced by `***` in every text of its reason
 * (descriptions, stderr, names, ...) and in its cause (an `McpError` cause
 * is masked the same way; another cause that quotes a secret becomes an
 * `Error` with its message masked). The reason keeps its tag and its other
 * fields; an error that quotes no secret is returned as it is.
 *
 * @internal
 */
export const maskError = (error: McpError.McpError, secrets: ReadonlyArray<string>): McpError.McpError => {
  if (!secrets.some((secret) => secret !== "")) return error
  const reason = error.reason
  const fields: Record<string, unknown> = {}
  let changed = false
  for (const [key, value] of Object.entries(reason)) {
    if (key === "_tag") continue
    const masked = typeof value === "string"
      ? mask(value, secrets)
      : Array.isArray(value) && value.every((item) => typeof item === "string")
      ? value.map((item: string) => mask(item, secrets))
      : value
    changed ||= typeof value === "string" ? masked !== value : masked !== value &&
      (masked as ReadonlyArray<string>).some((item, index) => item !== (value as ReadonlyArray<string>)[index])
    fields[key] = masked
  }
  if ("cause" in reason && reason.cause !== undefined) {
    const cause = maskCause(reason.cause, secrets)
    changed ||= cause !== reason.cause
    fields.cause = cause
  }
  if (!changed) return error
  const Reason = reason.constructor as new(fields: Record<string, unknown>) => McpError.Reason
  return new McpError.McpError({ reason: new Reason(fields) })
}
