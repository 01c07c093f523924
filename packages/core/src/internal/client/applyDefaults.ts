/**
 * Fills the fields a user left out of an accepted form-mode elicitation with
 * the `default`s of the request's `requestedSchema`.
 *
 * Every primitive kind of the 2025-11-25 revision carries an optional
 * `default`: strings, numbers and integers, booleans, single-select enums
 * (untitled `enum`, titled `oneOf`, legacy `enum` + `enumNames`) and
 * multi-select enums (untitled `items.enum`, titled `items.anyOf`). An enum
 * default that is not one of the enum's options is ignored: copying it would
 * only make the answer invalid.
 *
 * @internal
 */
import type * as McpSchema from "../../McpSchema.ts"

type Content = Record<string, McpSchema.ElicitValue>

const options = (field: McpSchema.PrimitiveSchemaDefinition): ReadonlyArray<string> | undefined => {
  if ("enum" in field && Array.isArray(field.enum)) return field.enum
  if ("oneOf" in field && Array.isArray(field.oneOf)) return field.oneOf.map((option) => option.const)
  if (field.type === "array") {
    const items = field.items
    if ("enum" in items) return items.enum
    if ("anyOf" in items) return items.anyOf.map((option) => option.const)
  }
  return undefined
}

/** The default of one field, or `undefined` when it has none that fits. @internal */
export const defaultOf = (field: McpSchema.PrimitiveSchemaDefinition): McpSchema.ElicitValue | undefined => {
  const value = (field as { readonly default?: McpSchema.ElicitValue }).default
  if (value === undefined) return undefined
  const allowed = options(field)
  if (allowed === undefined) return value
  if (field.type === "array") {
    return Array.isArray(value) && value.every((item) => allowed.includes(item)) ? [...value] : undefined
  }
  return typeof value === "string" && allowed.includes(value) ? value : undefined
}

/**
 * The content with every missing field that has a default filled in. Fields
 * the user gave (even empty strings, `false` or `[]`) are kept as they are.
 *
 * @internal
 */
export const applyDefaults = (
  schema: McpSchema.ElicitRequestedSchema,
  content: Readonly<Content> | undefined
): Content => {
  const filled: Content = { ...content }
  for (const [key, field] of Object.entries(schema.properties)) {
    if (filled[key] !== undefined) continue
    const value = defaultOf(field)
    if (value !== undefined) filled[key] = value
  }
  return filled
}

/**
 * Applies defaults to an elicitation result when it is an `accept`; other
 * actions are returned without `content`, which only `accept` may carry.
 *
 * @internal
 */
export const applyDefaultsToResult = (
  schema: McpSchema.ElicitRequestedSchema,
  result: McpSchema.ElicitResult
): McpSchema.ElicitResult => {
  if (result.action !== "accept") {
    const { content: _content, ...rest } = result
    return rest
  }
  return { ...result, content: applyDefaults(schema, result.content) }
}
