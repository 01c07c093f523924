/**
 * What the JSON Schema converters share: the `Json` object type, local
 * definition references (`#/$defs/Name`), copying a schema with its
 * references rewritten, and inlining a reference chain.
 *
 * @internal
 */
import * as JsonPointer from "effect/JsonPointer"
import * as Predicate from "effect/Predicate"

/** A JSON object: a schema, or a map of definitions. @internal */
export type Json = Record<string, unknown>

/** @internal */
export const isJson: (u: unknown) => u is Json = Predicate.isObject

/** Keywords whose values are data, not schemas: never searched for `$ref`. */
const dataKeywords: ReadonlySet<string> = new Set(["const", "enum", "default", "examples"])

/**
 * The name of the definition a local reference points at (`#/$defs/Name`,
 * or draft-07's `#/definitions/Name`), `undefined` for any other reference.
 */
const definitionName = (ref: unknown): string | undefined => {
  if (typeof ref !== "string") return undefined
  const path = JsonPointer.parseUriFragment(ref)
  return path !== undefined && path.length === 2 && (path[0] === "$defs" || path[0] === "definitions")
    ? path[1]
    : undefined
}

/**
 * A deep copy of a schema with every local definition reference written as
 * `#/$defs/Name`; `onReference` sees the name of each.
 *
 * @internal
 */
export const copySchema = (schema: unknown, onReference: (name: string) => void): unknown => {
  if (Array.isArray(schema)) return schema.map((item) => copySchema(item, onReference))
  if (!isJson(schema)) return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref") {
      const name = definitionName(value)
      if (name !== undefined) {
        onReference(name)
        out[key] = JsonPointer.formatUriFragment(["$defs", name])
        continue
      }
    }
    out[key] = dataKeywords.has(key) ? value : copySchema(value, onReference)
  }
  return out
}

/**
 * Follows a chain of local references (`{ $ref: "#/$defs/A" }`) to the
 * schema they name. Keywords next to a `$ref` (annotations) take precedence
 * over the definition's. A missing or circular reference is left as is.
 *
 * @internal
 */
export const inlineReference = (
  schema: Readonly<Record<string, unknown>>,
  definitions: Readonly<Record<string, unknown>>
): Record<string, unknown> => {
  let root: Json = schema
  const seen = new Set<string>()
  for (let name = definitionName(root.$ref); name !== undefined; name = definitionName(root.$ref)) {
    const target = Object.hasOwn(definitions, name) ? definitions[name] : undefined
    if (seen.has(name) || !isJson(target)) return root
    seen.add(name)
    const { $ref: _, ...siblings } = root
    root = { ...target, ...siblings }
  }
  return root
}

/** A schema as short text, for error messages. @internal */
export const describe = (schema: unknown): string => {
  const text = JSON.stringify(schema)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}
