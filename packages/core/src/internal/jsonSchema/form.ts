/**
 * The `requestedSchema` of a form-mode elicitation, generated from an Effect
 * Schema.
 *
 * A form is a flat object whose fields are strings, numbers, booleans or
 * enums (MCP's `PrimitiveSchemaDefinition`). The JSON Schema that Effect
 * generates for the struct is narrowed to that vocabulary field by field;
 * a field the form cannot represent (a nested object, an array of anything
 * but string literals, a union of mixed types) is reported by name.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { ElicitRequestedSchema, type PrimitiveSchemaDefinition } from "../schema/elicitation.ts"
import { inlineReference, isJson, type Json } from "./document.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Why a schema cannot be turned into a form: the field at fault
 * (`undefined` when the schema as a whole is not a struct) and a readable
 * message that names it.
 *
 * @category models
 * @since 0.1.0
 */
export interface UnsupportedField {
  readonly field: string | undefined
  readonly message: string
}

/**
 * Options of {@link toRequestedSchema}.
 *
 * `defaults`: the value each field starts with in the form, by field name,
 * in the field's encoded (JSON) form. A default given here replaces one
 * given with a `default` annotation on the field.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<S extends Schema.Top> {
  readonly defaults?: { readonly [K in keyof S["Encoded"]]?: S["Encoded"][K] } | undefined
}

const isStringArray = (u: unknown): u is ReadonlyArray<string> =>
  Array.isArray(u) && u.every((item) => typeof item === "string")

const isFiniteNumber = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)

const show = (u: unknown): string => JSON.stringify(u) ?? String(u)

// -----------------------------------------------------------------------------
// Reading Effect's JSON Schema
// -----------------------------------------------------------------------------

const lowerBounds: ReadonlySet<string> = new Set(["minimum", "exclusiveMinimum", "minLength", "minItems"])
const upperBounds: ReadonlySet<string> = new Set(["maximum", "exclusiveMaximum", "maxLength", "maxItems"])

/**
 * One schema with its references resolved and its `allOf` parts (where
 * Effect puts the second and later checks of a schema, and annotations
 * given after a check) merged in; of two bounds the stricter wins.
 */
const normalize = (schema: unknown, definitions: Json): Json => {
  if (!isJson(schema)) return {}
  const { allOf, ...rest } = inlineReference(schema, definitions)
  if (!Array.isArray(allOf)) return rest
  const out: Json = { ...rest }
  for (const part of allOf) {
    for (const [key, value] of Object.entries(normalize(part, definitions))) {
      const current = out[key]
      out[key] = typeof current === "number" && typeof value === "number"
        ? lowerBounds.has(key) ? Math.max(current, value) : upperBounds.has(key) ? Math.min(current, value) : value
        : value
    }
  }
  return out
}

/** The options of a string-literal enum: its values and their titles. */
type EnumOption = { readonly value: string; readonly title: string | undefined }

/**
 * The options of a schema that only admits string literals
 * (`Schema.Literals`, a union of `Schema.Literal`s, `Schema.Enum`),
 * `undefined` for any other schema.
 */
const enumOptions = (schema: Json, definitions: Json): ReadonlyArray<EnumOption> | undefined => {
  if (Array.isArray(schema.anyOf)) {
    const options: Array<EnumOption> = []
    for (const member of schema.anyOf) {
      const normalized = normalize(member, definitions)
      const memberOptions = Array.isArray(normalized.anyOf)
        ? enumOptions(normalized, definitions)
        : enumMember(normalized)
      if (memberOptions === undefined) return undefined
      options.push(...memberOptions)
    }
    return options.length > 0 ? options : undefined
  }
  return enumMember(schema)?.map((option) => ({ value: option.value, title: undefined }))
}

const enumMember = (schema: Json): ReadonlyArray<EnumOption> | undefined => {
  if (schema.type !== undefined && schema.type !== "string") return undefined
  const title = typeof schema.title === "string" ? schema.title : undefined
  if (typeof schema.const === "string") return [{ value: schema.const, title }]
  if (!isStringArray(schema.enum) || schema.enum.length === 0) return undefined
  return schema.enum.length === 1
    ? [{ value: schema.enum[0]!, title }]
    : schema.enum.map((value) => ({ value, title: undefined }))
}

/** `Schema.Number`'s non-finite values: `{ type: "string", enum: ["Infinity", "-Infinity", "NaN"] }`. */
const isNonFiniteStrings = (schema: Json): boolean =>
  schema.type === "string" && isStringArray(schema.enum) &&
  schema.enum.every((value) => value === "Infinity" || value === "-Infinity" || value === "NaN")

// -----------------------------------------------------------------------------
// Fields
// -----------------------------------------------------------------------------

/** A field of the form, the values its `default` may take and the default annotated on it. */
interface Field {
  readonly definition: Json
  readonly expected: string
  readonly isDefault: (value: unknown) => boolean
  readonly annotatedDefault: unknown
}

const annotations = (schema: Json): Json => {
  const out: Json = {}
  if (typeof schema.title === "string") out.title = schema.title
  if (typeof schema.description === "string") out.description = schema.description
  return out
}

const stringFormats: ReadonlySet<unknown> = new Set(["email", "uri", "date", "date-time"])

const stringField = (schema: Json): Field => {
  const definition: Json = { type: "string", ...annotations(schema) }
  if (isFiniteNumber(schema.minLength) && schema.minLength > 0) definition.minLength = schema.minLength
  if (isFiniteNumber(schema.maxLength)) definition.maxLength = schema.maxLength
  if (stringFormats.has(schema.format)) definition.format = schema.format
  return {
    definition,
    expected: "a string",
    isDefault: (value) => typeof value === "string",
    annotatedDefault: schema.default
  }
}

const numberField = (schema: Json, type: "number" | "integer"): Field => {
  const definition: Json = { type, ...annotations(schema) }
  let minimum = isFiniteNumber(schema.minimum) && schema.minimum > Number.MIN_SAFE_INTEGER ? schema.minimum : undefined
  let maximum = isFiniteNumber(schema.maximum) && schema.maximum < Number.MAX_SAFE_INTEGER ? schema.maximum : undefined
  // A form has no exclusive bounds; for integers they have an inclusive equivalent.
  if (type === "integer" && isFiniteNumber(schema.exclusiveMinimum)) {
    const bound = Math.floor(schema.exclusiveMinimum) + 1
    minimum = minimum === undefined ? bound : Math.max(minimum, bound)
  }
  if (type === "integer" && isFiniteNumber(schema.exclusiveMaximum)) {
    const bound = Math.ceil(schema.exclusiveMaximum) - 1
    maximum = maximum === undefined ? bound : Math.min(maximum, bound)
  }
  if (minimum !== undefined) definition.minimum = minimum
  if (maximum !== undefined) definition.maximum = maximum
  return {
    definition,
    expected: type === "integer" ? "an integer" : "a finite number",
    isDefault: (value) => isFiniteNumber(value) && (type === "number" || Number.isInteger(value)),
    annotatedDefault: schema.default
  }
}

const hasTitles = (options: ReadonlyArray<EnumOption>): boolean => options.some((option) => option.title !== undefined)

const titled = (options: ReadonlyArray<EnumOption>) =>
  options.map((option) => ({ const: option.value, title: option.title ?? option.value }))

const singleSelectField = (schema: Json, options: ReadonlyArray<EnumOption>): Field => {
  const values = options.map((option) => option.value)
  const definition: Json = hasTitles(options)
    ? { type: "string", ...annotations(schema), oneOf: titled(options) }
    : { type: "string", ...annotations(schema), enum: values }
  return {
    definition,
    expected: `one of ${show(values)}`,
    isDefault: (value) => typeof value === "string" && values.includes(value),
    annotatedDefault: schema.default
  }
}

const multiSelectField = (schema: Json, options: ReadonlyArray<EnumOption>): Field => {
  const values = options.map((option) => option.value)
  const definition: Json = {
    type: "array",
    ...annotations(schema),
    items: hasTitles(options) ? { anyOf: titled(options) } : { type: "string", enum: values }
  }
  if (isFiniteNumber(schema.minItems) && schema.minItems > 0) definition.minItems = schema.minItems
  if (isFiniteNumber(schema.maxItems)) definition.maxItems = schema.maxItems
  return {
    definition,
    expected: `an array of ${show(values)}`,
    isDefault: (value) => isStringArray(value) && value.every((item) => values.includes(item)),
    annotatedDefault: schema.default
  }
}

const unsupported = (field: string, message: string): Result.Result<never, UnsupportedField> =>
  Result.fail({ field, message: `field "${field}": ${message}` })

const onlyPrimitives = "an elicitation form only has string, number, integer, boolean and string-enum fields"

const toField = (
  name: string,
  raw: unknown,
  required: boolean,
  definitions: Json
): Result.Result<Field, UnsupportedField> => {
  const schema = normalize(raw, definitions)

  if (Array.isArray(schema.anyOf)) {
    const members = schema.anyOf
      .map((member) => normalize(member, definitions))
      // `Schema.optional(X)` admits `null`; an absent field already means that.
      .filter((member) => required || member.type !== "null")
    const options = enumOptions({ anyOf: members }, definitions)
    if (options !== undefined) return Result.succeed(singleSelectField(schema, options))
    // `Schema.Number`: a number, or one of the strings "Infinity", "-Infinity", "NaN".
    const numbers = members.some((member) => member.type === "number")
      ? members.filter((member) => !isNonFiniteStrings(member))
      : members
    if (numbers.length === 1) {
      const { anyOf: _, ...outer } = schema
      return toField(name, { ...numbers[0], ...outer }, required, definitions)
    }
    return unsupported(
      name,
      `a union of ${show(members.map((member) => member.type ?? "schema"))} is not supported: ${onlyPrimitives}`
    )
  }

  switch (schema.type) {
    case "string": {
      if (schema.enum === undefined && schema.const === undefined) return Result.succeed(stringField(schema))
      const options = enumOptions(schema, definitions)
      return options === undefined
        ? unsupported(name, "an enum must have string values")
        : Result.succeed(singleSelectField(schema, options))
    }
    case "number":
    case "integer":
      return schema.enum === undefined && schema.const === undefined
        ? Result.succeed(numberField(schema, schema.type))
        : unsupported(name, "numeric enums are not supported: use string literals")
    case "boolean":
      // A boolean literal (`Schema.Literal(true)`) is still a checkbox; decoding the answer enforces the value.
      return Result.succeed({
        definition: { type: "boolean", ...annotations(schema) },
        expected: "a boolean",
        isDefault: (value) => typeof value === "boolean",
        annotatedDefault: schema.default
      })
    case "array": {
      const items = normalize(schema.items, definitions)
      const options = Array.isArray(schema.prefixItems) ? undefined : enumOptions(items, definitions)
      return options === undefined
        ? unsupported(name, `only arrays of string literals (multiple choice) are supported: ${onlyPrimitives}`)
        : Result.succeed(multiSelectField(schema, options))
    }
    case "object":
      return unsupported(name, `nested objects are not supported: ${onlyPrimitives}`)
    default:
      return unsupported(
        name,
        `${schema.type === undefined ? "this schema" : `type ${show(schema.type)}`} is not supported: ${onlyPrimitives}`
      )
  }
}

const withDefault = (name: string, field: Field, value: unknown): Result.Result<Json, UnsupportedField> =>
  value === undefined
    ? Result.succeed(field.definition)
    : field.isDefault(value)
    ? Result.succeed({ ...field.definition, default: value })
    : unsupported(name, `the default ${show(value)} is not ${field.expected}`)

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

const isRequestedSchema = Schema.is(ElicitRequestedSchema)

/**
 * The `requestedSchema` of a form-mode `elicitation/create` for an Effect
 * Schema whose encoded form is a flat object (a `Schema.Struct`). Decode
 * the accepted `content` with the same schema.
 *
 * **Details**
 *
 * Field by field:
 * - strings (`Schema.String`, with `Schema.isMinCodePoints` /
 *   `isMaxLength` / … bounds) → `{ type: "string", minLength?, maxLength?,
 *   format? }`; a `format` annotation is kept when it is one MCP allows
 *   (`email`, `uri`, `date`, `date-time`);
 * - `Schema.Finite`, `Schema.Number` → `{ type: "number" }`, `Schema.Int` →
 *   `{ type: "integer" }`, with `minimum` / `maximum` (exclusive bounds
 *   become inclusive ones for integers; `Schema.Int`'s safe-integer bounds
 *   are left out);
 * - `Schema.Boolean` → `{ type: "boolean" }`;
 * - string literal unions (`Schema.Literals`, `Schema.Union` of
 *   `Schema.Literal`s, `Schema.Enum`) → `{ type: "string", enum }`, or a
 *   titled `oneOf: [{ const, title }]` when any literal has a `title`
 *   annotation (`Schema.Enum` titles each value with its key);
 * - arrays of such unions → multiple choice, `{ type: "array", items,
 *   minItems?, maxItems? }`.
 *
 * A field's `title` and `description` annotations are kept. Keys made
 * optional with `Schema.optionalKey` or `Schema.optional` are left out of
 * `required`.
 *
 * Defaults: a `default` annotation on a field (`Schema.String.annotate({
 * default: "Ada" })`) or an entry of `options.defaults` (which wins) is
 * emitted as the field's `default`, after checking that it fits the field.
 *
 * **Gotchas**
 *
 * Constraints a form cannot express (`pattern`, `multipleOf`, exclusive
 * bounds on numbers, other formats, brands, transformations) are dropped,
 * so the form may accept a value the schema rejects: always decode the
 * answer. `Schema.isMinLength(n)` is emitted as a weaker `minLength`
 * (JSON Schema counts code points, not UTF-16 units); use
 * `Schema.isMinCodePoints(n)` for an exact bound.
 *
 * Fails, naming the field, on a field that is not one of the kinds above.
 *
 * @category constructors
 * @since 0.1.0
 */
export const toRequestedSchema = <S extends Schema.Top>(
  schema: S,
  options?: Options<S>
): Result.Result<ElicitRequestedSchema, UnsupportedField> => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions: Json = document.definitions
  const root = normalize(document.schema, definitions)
  if (root.type !== "object" || !isJson(root.properties)) {
    return Result.fail({
      field: undefined,
      message: "an elicitation form must be a struct (a JSON object with fixed properties)"
    })
  }
  if (isJson(root.additionalProperties) || root.patternProperties !== undefined) {
    return Result.fail({
      field: undefined,
      message: "an elicitation form cannot have index signatures (records): only fixed properties"
    })
  }
  const requiredKeys = isStringArray(root.required) ? root.required : []
  const defaults: Readonly<Record<string, unknown>> = options?.defaults ?? {}
  const properties: Record<string, PrimitiveSchemaDefinition> = {}
  for (const [name, raw] of Object.entries(root.properties)) {
    const field = toField(name, raw, requiredKeys.includes(name), definitions)
    if (Result.isFailure(field)) return Result.fail(field.failure)
    const value = Object.hasOwn(defaults, name) ? defaults[name] : field.success.annotatedDefault
    const definition = withDefault(name, field.success, value)
    if (Result.isFailure(definition)) return Result.fail(definition.failure)
    properties[name] = definition.success as PrimitiveSchemaDefinition
  }
  const requested: ElicitRequestedSchema = requiredKeys.length > 0
    ? { type: "object", properties, required: requiredKeys.filter((key) => Object.hasOwn(properties, key)) }
    : { type: "object", properties }
  return isRequestedSchema(requested)
    ? Result.succeed(requested)
    : Result.fail({ field: undefined, message: `the generated form schema is not valid: ${show(requested)}` })
}
