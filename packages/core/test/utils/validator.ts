/**
 * A `JsonSchemaValidator` backed by `@cfworker/json-schema` (draft 2020-12
 * unless the schema names draft-07 or draft-04).
 */
import { Validator } from "@cfworker/json-schema"
import * as JsonSchemaValidator from "../../src/JsonSchemaValidator.ts"

const draftOf = (schema: unknown) => {
  const uri = typeof schema === "object" && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined
  return typeof uri === "string" && uri.includes("draft-07")
    ? "7"
    : typeof uri === "string" && uri.includes("draft-04")
    ? "4"
    : "2020-12"
}

export const compile = (schema: unknown): JsonSchemaValidator.Check => {
  try {
    const validator = new Validator(schema as any, draftOf(schema), false)
    return (value) => {
      const result = validator.validate(value)
      return result.valid ? [] : result.errors.map((error) => `${error.instanceLocation}: ${error.error}`)
    }
  } catch (error) {
    return () => [`unreadable JSON Schema: ${String(error)}`]
  }
}

export const ValidatorLayer = JsonSchemaValidator.layer(compile)
