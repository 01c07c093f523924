/**
 * Validation of values against third-party JSON Schemas (a tool's
 * `outputSchema`, a raw `inputSchema`, an elicitation's `requestedSchema`).
 * Effect's Schema has no general JSON Schema validator, so this is a small
 * service that a maintained validator plugs into; `@effect-mcp/platform-node`
 * provides one backed by `@cfworker/json-schema`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * A compiled schema: the problems of a value, empty when it is valid.
 *
 * @category models
 * @since 0.1.0
 */
export type Check = (value: unknown) => ReadonlyArray<string>

/**
 * Compiles JSON Schemas (draft 2020-12 unless the schema says otherwise).
 * Compiling a schema the validator cannot read yields a check that reports
 * that problem for every value.
 *
 * @category services
 * @since 0.1.0
 */
export class JsonSchemaValidator extends Context.Service<JsonSchemaValidator, {
  readonly compile: (schema: unknown) => Check
}>()("@effect-mcp/core/JsonSchemaValidator") {}

/**
 * A validator from a compile function, caching one check per schema object.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (compile: (schema: unknown) => Check): JsonSchemaValidator["Service"] => {
  const cache = new WeakMap<object, Check>()
  return JsonSchemaValidator.of({
    compile: (schema) => {
      if (typeof schema !== "object" || schema === null) return compile(schema)
      const cached = cache.get(schema)
      if (cached !== undefined) return cached
      const check = compile(schema)
      cache.set(schema, check)
      return check
    }
  })
}

/**
 * A layer from a compile function.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (compile: (schema: unknown) => Check): Layer.Layer<JsonSchemaValidator> =>
  Layer.succeed(JsonSchemaValidator, make(compile))

/**
 * Runs a check as an Effect.
 *
 * @category combinators
 * @since 0.1.0
 */
export const validate = (schema: unknown, value: unknown): Effect.Effect<ReadonlyArray<string>, never, JsonSchemaValidator> =>
  Effect.map(JsonSchemaValidator, (validator) => validator.compile(schema)(value))
