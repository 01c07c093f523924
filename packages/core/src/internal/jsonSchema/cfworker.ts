/**
 * The default JSON Schema check, backed by `@cfworker/json-schema`: drafts
 * 4, 7, 2019-09 and 2020-12, no dependencies and no code generation (it
 * never calls `new Function`, so it also runs where `eval` is forbidden).
 *
 * @internal
 */
import { type OutputUnit, type SchemaDraft, Validator } from "@cfworker/json-schema"
import * as JsonPointer from "effect/JsonPointer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type { Check } from "../../JsonSchemaValidator.ts"

/**
 * The draft a schema declares with `$schema`; 2020-12 (MCP's default
 * dialect) when it declares none or one this validator does not know.
 * Draft-06 is read as draft-07, its close successor.
 */
const draftOf = (schema: Record<string, unknown>): SchemaDraft => {
  const uri = typeof schema.$schema === "string" ? schema.$schema : ""
  if (/draft-0?4\b/.test(uri)) return "4"
  if (/draft-0?[67]\b/.test(uri)) return "7"
  if (/draft\/2019-09\b/.test(uri)) return "2019-09"
  return "2020-12"
}

/** The first line of a thrown value's message (cfworker appends a list of known schemas). */
const messageOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n", 1)[0]!.trim()

/** `#/a/b` (a URI fragment) as the JSON Pointer `/a/b`; the root is `/`. */
const pointerOf = (instanceLocation: string): string => {
  const path = JsonPointer.parseUriFragment(instanceLocation)
  if (path === undefined) return instanceLocation.replace(/^#/, "") || "/"
  return path.length === 0 ? "/" : `/${path.map(JsonPointer.escapeToken).join("/")}`
}

/** Keywords whose error only says "one of the alternatives failed": kept next to the alternatives' errors. */
const alternatives: ReadonlySet<string> = new Set(["anyOf", "oneOf"])

/**
 * One readable line per problem. With short-circuiting off, cfworker also
 * reports every keyword that merely contains a failure ("Property "count"
 * does not match schema.", "A subschema had errors."); those summaries are
 * dropped when the failure below them is reported. Conversely a `false`
 * subschema (`additionalProperties: false`) fails with a bare "False boolean
 * schema." that its parent's error explains better.
 */
const describeErrors = (errors: ReadonlyArray<OutputUnit>): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const error of errors) {
    if (error.keyword === "false" && errors.length > 1) continue
    const prefix = `${error.keywordLocation}/`
    const summary = !alternatives.has(error.keyword) &&
      errors.some((other) => other !== error && other.keywordLocation.startsWith(prefix))
    if (summary) continue
    const line = `${pointerOf(error.instanceLocation)}: ${error.error}`
    if (!lines.includes(line)) lines.push(line)
  }
  return lines.length === 0 ? ["does not match the schema"] : lines
}

const unreadable = (problem: string): Check => {
  const problems = [`the JSON Schema cannot be used: ${problem}`]
  return () => problems
}

/**
 * Compiles a JSON Schema with `@cfworker/json-schema` (see
 * `JsonSchemaValidator.compile`).
 *
 * @internal
 */
export const compile = (schema: unknown): Check => {
  if (typeof schema !== "boolean" && !Predicate.isObject(schema)) {
    return unreadable(`a JSON Schema is an object or a boolean, got ${JSON.stringify(schema) ?? String(schema)}`)
  }
  const validator = Result.try({
    // cfworker annotates the schema objects it reads: it gets a copy
    try: () => new Validator(structuredClone(schema), Predicate.isObject(schema) ? draftOf(schema) : "2020-12", false),
    catch: messageOf
  })
  if (Result.isFailure(validator)) return unreadable(validator.failure)
  return (value) => {
    const result = Result.try({ try: () => validator.success.validate(value), catch: messageOf })
    if (Result.isFailure(result)) return [`the JSON Schema cannot be used: ${result.failure}`]
    return result.success.valid ? [] : describeErrors(result.success.errors)
  }
}
