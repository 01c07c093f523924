/**
 * JSON Schema for a tool's `inputSchema` and `outputSchema`, generated from
 * an Effect Schema.
 *
 * `Schema.toJsonSchemaDocument` returns a document (`{ dialect, schema,
 * definitions }`) whose root is often a `$ref` into the definitions (any
 * schema with an `identifier`, every `Schema.Class`, every recursive
 * schema). MCP wants a plain JSON Schema whose root is an object schema, so
 * the root reference is inlined and the definitions still in use are kept
 * under `$defs`.
 *
 * **Gotchas**
 *
 * - `Schema.Number` accepts `Infinity`, `-Infinity` and `NaN`, which JSON
 *   cannot carry, so its JSON encoding turns them into strings and its JSON
 *   Schema is `{ anyOf: [{ type: "number" }, { type: "string", enum:
 *   ["Infinity", "-Infinity", "NaN"] }] }`. A client reading that schema
 *   may well send `"NaN"`. Use `Schema.Finite` (`{ type: "number" }`) or
 *   `Schema.Int` (`{ type: "integer" }`) for numeric fields.
 * - `Schema.optional(X)` (`X | undefined`) encodes `undefined` as `null`, so
 *   its field schema is `anyOf: [X, { type: "null" }]`. Use
 *   `Schema.optionalKey(X)` for a plain optional field.
 * - `Schema.isMinLength(n)` counts UTF-16 code units and JSON Schema's
 *   `minLength` counts code points, so it is emitted as a weaker bound; use
 *   `Schema.isMinCodePoints` for an exact `minLength`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type { ObjectJsonSchema } from "../schema/tools.ts"
import { copySchema, describe, inlineReference, type Json } from "./document.ts"
import { ANNOTATION, hoistAnnotations } from "./headers.ts"

/**
 * The JSON Schema (2020-12) of a tool's arguments or structured result:
 * an object schema at the root (`"type": "object"`), with the definitions it
 * still references under `$defs` (`#/$defs/Name` references). Optional keys
 * (`Schema.optionalKey`) are left out of `required`; `title` and
 * `description` annotations are carried through.
 *
 * **Details**
 *
 * - No `$schema` key is written: MCP 2025-11-25 makes 2020-12 the default
 *   dialect of tool schemas, and some older clients (ajv in its draft-07
 *   mode) reject a schema naming the 2020-12 meta-schema outright. The only
 *   2020-12-specific keywords Effect emits are `$defs` (which draft-07
 *   validators resolve as a plain JSON pointer) and `prefixItems` (tuples).
 * - Recursive schemas (`Schema.suspend`) keep their definition, referenced
 *   from the root and from itself; a definition no longer referenced once
 *   the root is inlined is dropped.
 * - Object schemas accept unknown properties (`additionalProperties: true`)
 *   unless `options.onExcessProperty` is `"error"`.
 *
 * **Gotchas**
 *
 * Use `Schema.Finite` or `Schema.Int`, not `Schema.Number`, for numbers:
 * `Schema.Number` allows `NaN` and the infinities, which its JSON encoding
 * writes as strings, so its schema is `anyOf: [number, "Infinity" | "-Infinity"
 * | "NaN"]` rather than `{ type: "number" }`. Prefer `Schema.optionalKey`
 * to `Schema.optional`, whose schema also admits `null`.
 *
 * Dies (throws) when the schema does not describe a JSON object, e.g.
 * `Schema.String` or a union of structs: MCP tools take objects (an output
 * schema goes through {@link toOutputJsonSchema}, which wraps such schemas).
 *
 * @category constructors
 * @since 0.1.0
 */
export const toObjectJsonSchema = (
  schema: Schema.Top,
  options?: { readonly onExcessProperty?: "ignore" | "error" | undefined }
): ObjectJsonSchema => {
  const out = toRootJsonSchema(schema, options)
  if (out.type !== "object") {
    throw new Error(
      `toObjectJsonSchema: a tool schema must describe a JSON object ("type": "object"), ` +
        `e.g. a Schema.Struct; got ${describe(out)}`
    )
  }
  return out as ObjectJsonSchema
}

/**
 * The `outputSchema` of a tool: {@link toObjectJsonSchema} of an object
 * schema as it is (`wrapped: false`); any other schema (`Schema.String`,
 * `Schema.Array(...)`, a union, ...) wrapped as the `result` property of an
 * object, `{ type: "object", properties: { result: <schema> }, required:
 * ["result"] }` (`wrapped: true`), whose structured content is then
 * `{ result: <encoded value> }`. Definitions stay under the root's `$defs`.
 *
 * @category constructors
 * @since 0.2.0
 */
export const toOutputJsonSchema = (
  schema: Schema.Top
): { readonly schema: ObjectJsonSchema; readonly wrapped: boolean } => {
  const out = toRootJsonSchema(schema)
  if (out.type === "object") return { schema: out as ObjectJsonSchema, wrapped: false }
  const { $defs, ...result } = out
  const wrapper: Json = { type: "object", properties: { result }, required: ["result"] }
  if ($defs !== undefined) wrapper.$defs = $defs
  return { schema: wrapper as ObjectJsonSchema, wrapped: true }
}

// The root schema, its root reference inlined, with the definitions it still
// uses under `$defs`.
const toRootJsonSchema = (
  schema: Schema.Top,
  options?: { readonly onExcessProperty?: "ignore" | "error" | undefined }
): Json => {
  // An empty struct means "no arguments"; Effect renders it as "anything not null".
  const ast = schema.ast
  if (ast._tag === "Objects" && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { type: "object", properties: {} }
  }
  const document = Schema.toJsonSchemaDocument(schema, {
    // `x-mcp-header` (2026-07-28): a parameter mirrored into an HTTP header
    includeAnnotationKey: (key) => key === ANNOTATION,
    ...(options?.onExcessProperty === undefined ? {} : { onExcessProperty: options.onExcessProperty })
  })
  const definitions: Readonly<Record<string, unknown>> = document.definitions
  const root = inlineReference(document.schema, definitions)

  // Copy the root, then every definition it reaches, transitively.
  const used = new Map<string, unknown>()
  const pending: Array<string> = []
  const onReference = (name: string) => {
    if (!used.has(name)) {
      used.set(name, undefined)
      pending.push(name)
    }
  }
  const out = copySchema(root, onReference) as Json
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (!Object.hasOwn(definitions, name)) {
      throw new Error(`toObjectJsonSchema: the generated schema references a missing definition "${name}"`)
    }
    used.set(name, copySchema(definitions[name], onReference))
  }
  hoistAnnotations(out)
  delete out.$schema
  delete out.$defs
  delete out.definitions
  if (used.size > 0) {
    const $defs: Json = {}
    for (const name of [...used.keys()].sort()) $defs[name] = used.get(name)
    out.$defs = $defs
  }
  return out
}
