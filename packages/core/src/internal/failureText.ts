/**
 * The text of a failure, for a client (`isError` results, JSON-RPC error
 * messages) and for logs: never empty, never a secret, never unbounded.
 *
 * - a failure with a non-empty `message`: the message;
 * - a tagged failure (`_tag`) without one: `Tag` alone, or `Tag: {json}` with
 *   its fields (e.g. `NotFound: {"title":"x"}`);
 * - anything else: a string as it is, an `Error` its name, other values as
 *   bounded JSON.
 *
 * Values are written by {@link stringify}: `Redacted` values as
 * `<redacted>`, cycles as `"[Circular]"`, bigints as `"12n"`, with bounds on
 * depth, keys, items, string lengths and the whole text.
 *
 * @internal
 */
import * as Predicate from "effect/Predicate"
import * as Redactable from "effect/Redactable"
import * as Redacted from "effect/Redacted"

/** The longest failure text. @internal */
export const MAX_TEXT = 4096

const MAX_STRING = 1024
const MAX_ITEMS = 50
const MAX_DEPTH = 6

const ELLIPSIS = "…"

/** The text of a failure (see the module). @internal */
export const describeFailure = (error: unknown): string => {
  if (typeof error === "string") return error === "" ? "Unknown error" : truncate(error, MAX_TEXT)
  if (typeof error === "object" && error !== null) {
    const message = (error as { readonly message?: unknown }).message
    if (typeof message === "string" && message !== "") return message
    const tag = (error as { readonly _tag?: unknown })._tag
    if (typeof tag === "string" && tag !== "") {
      const fields = fieldsOf(error)
      return fields === undefined ? tag : truncate(`${tag}: ${stringify(fields)}`, MAX_TEXT)
    }
    if (error instanceof Error) return error.name === "" ? "Error" : error.name
  }
  const text = stringify(error)
  return text === "" ? "Unknown error" : text
}

/**
 * Bounded JSON text of any value; never throws (accessors are not run,
 * `toJSON` is not called but for `Date`s).
 *
 * @internal
 */
export const stringify = (value: unknown): string => {
  const json = JSON.stringify(toJson(value, 0, new Set()))
  return json === undefined ? "undefined" : truncate(json, MAX_TEXT)
}

// the own, enumerable data fields of a tagged failure, but `_tag` and an empty `message`
const fieldsOf = (error: object): Record<string, unknown> | undefined => {
  const out: Record<string, unknown> = {}
  let any = false
  for (const key of Object.keys(error)) {
    if (key === "_tag") continue
    const descriptor = Object.getOwnPropertyDescriptor(error, key)
    if (descriptor === undefined || !("value" in descriptor)) continue
    if (key === "message" && descriptor.value === "") continue
    out[key] = descriptor.value
    any = true
  }
  return any ? out : undefined
}

const truncate = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}${ELLIPSIS}(${text.length - max} more characters)`

// A JSON value standing for `value` (`undefined` where JSON leaves a key out).
const toJson = (value: unknown, depth: number, ancestors: Set<object>): unknown => {
  switch (typeof value) {
    case "string":
      return truncate(value, MAX_STRING)
    case "number":
      return Number.isFinite(value) ? value : String(value)
    case "boolean":
      return value
    case "bigint":
      return `${value}n`
    case "symbol":
      return value.toString()
    case "undefined":
    case "function":
      return undefined
  }
  if (value === null) return null
  const object = value as object
  if (Redacted.isRedacted(object)) return String(object)
  if (Redactable.isRedactable(object)) return toJson(Redactable.redact(object), depth, ancestors)
  if (ancestors.has(object)) return "[Circular]"
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString()
  if (ArrayBuffer.isView(object)) return `[${object.constructor.name} of ${object.byteLength} bytes]`
  if (object instanceof ArrayBuffer) return `[ArrayBuffer of ${object.byteLength} bytes]`
  if (depth >= MAX_DEPTH) return Array.isArray(object) ? "[Array]" : "[Object]"
  ancestors.add(object)
  const out = object instanceof Map
    ? items(Array.from(object.entries()), depth, ancestors)
    : object instanceof Set
    ? items(Array.from(object.values()), depth, ancestors)
    : Array.isArray(object)
    ? items(object, depth, ancestors)
    : object instanceof Error && !Predicate.hasProperty(object, "_tag")
    ? errorJson(object, depth, ancestors)
    : record(object, depth, ancestors)
  ancestors.delete(object)
  return out
}

const items = (array: ReadonlyArray<unknown>, depth: number, ancestors: Set<object>): Array<unknown> => {
  const out: Array<unknown> = []
  for (let i = 0; i < array.length && i < MAX_ITEMS; i++) {
    const item = toJson(array[i], depth + 1, ancestors)
    out.push(item === undefined ? null : item)
  }
  if (array.length > MAX_ITEMS) out.push(`${ELLIPSIS}${array.length - MAX_ITEMS} more items`)
  return out
}

const record = (object: object, depth: number, ancestors: Set<object>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  const keys = Object.keys(object)
  let taken = 0
  for (const key of keys) {
    if (taken >= MAX_ITEMS) break
    taken++
    const descriptor = Object.getOwnPropertyDescriptor(object, key)
    // an accessor may run anything: left out
    if (descriptor === undefined || !("value" in descriptor)) continue
    const item = toJson(descriptor.value, depth + 1, ancestors)
    if (item !== undefined) out[key] = item
  }
  if (keys.length > MAX_ITEMS) out[ELLIPSIS] = `${keys.length - MAX_ITEMS} more keys`
  return out
}

// a plain `Error` as its name and message, never its stack
const errorJson = (error: Error, depth: number, ancestors: Set<object>): Record<string, unknown> => ({
  name: error.name,
  message: truncate(error.message, MAX_STRING),
  ...record(error, depth, ancestors)
})
