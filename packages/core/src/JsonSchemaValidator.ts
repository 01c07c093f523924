/**
 * Validation of values against third-party JSON Schemas (a tool's
 * `outputSchema`, a raw `inputSchema`, an elicitation's `requestedSchema`).
 * Effect's Schema has no general JSON Schema validator, so this is a small
 * service with a default: {@link compile}, backed by `@cfworker/json-schema`
 * (platform-free, no code generation). Nothing needs to provide it; provide
 * {@link layer} to plug another validator in.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Cfworker from "./internal/jsonSchema/cfworker.ts"

/**
 * A compiled schema: the problems of a value, empty when it is valid.
 *
 * @category models
 * @since 0.1.0
 */
export type Check = (value: unknown) => ReadonlyArray<string>

/**
 * Compiles a JSON Schema into a check that reports every problem of a value
 * (an empty list when it is valid), each as `"<JSON Pointer>: <message>"`,
 * e.g. `/count: Instance type "string" is invalid. Expected "integer".`
 * This is the default validator's compiler, backed by `@cfworker/json-schema`.
 *
 * **Details**
 *
 * - The draft is the one `$schema` names (draft-04, -06/-07, 2019-09),
 *   2020-12 otherwise.
 * - The schema is copied first: cfworker annotates the schema objects it
 *   reads, and the caller's (possibly frozen, possibly shared) object stays
 *   untouched.
 * - A schema that cannot be read (not an object or boolean, duplicate
 *   `$id`s, an unresolvable `$ref`, an invalid `pattern`) gives a check that
 *   reports that problem for every value, instead of throwing.
 *
 * @category constructors
 * @since 0.2.0
 */
export const compile: (schema: unknown) => Check = Cfworker.compile

/**
 * A validator from a compile function, caching one check per schema object
 * (a schema is compiled when it is first used, not before).
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (compile: (schema: unknown) => Check): JsonSchemaValidator.Service => {
  const cache = new WeakMap<object, Check>()
  return {
    compile: (schema) => {
      if (typeof schema !== "object" || schema === null) return compile(schema)
      const cached = cache.get(schema)
      if (cached !== undefined) return cached
      const check = compile(schema)
      cache.set(schema, check)
      return check
    }
  }
}

/**
 * Compiles JSON Schemas (draft 2020-12 unless the schema says otherwise).
 * Compiling a schema the validator cannot read yields a check that reports
 * that problem for every value.
 *
 * **Details**
 *
 * A `Context.Reference`: when none is provided, the default validator
 * ({@link compile}, one check cached per schema object) is used, so clients,
 * groups and `McpTool.fromJsonSchema` tools need no layer for it. Provide
 * {@link layer} (or `Effect.provideService`) to use another one.
 *
 * @category services
 * @since 0.1.0
 */
export class JsonSchemaValidator extends Context.Reference<JsonSchemaValidator.Service>(
  "@effect-mcp/core/JsonSchemaValidator",
  { defaultValue: () => make(compile) }
) {}

/**
 * @since 0.2.0
 */
export declare namespace JsonSchemaValidator {
  /**
   * What a validator does.
   *
   * @category models
   * @since 0.2.0
   */
  export interface Service {
    readonly compile: (schema: unknown) => Check
  }
}

/**
 * A layer that replaces the validator with one from a compile function.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (compile: (schema: unknown) => Check): Layer.Layer<never> =>
  Layer.succeed(JsonSchemaValidator, make(compile))

/**
 * A layer that restores the default validator (the one in effect when none
 * is provided): for code under a layer that replaced it.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerDefault: Layer.Layer<never> = Layer.sync(
  JsonSchemaValidator,
  () => Context.get(Context.empty(), JsonSchemaValidator)
)

/**
 * Runs a check of the validator in context as an Effect.
 *
 * @category combinators
 * @since 0.1.0
 */
export const validate = (schema: unknown, value: unknown): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(JsonSchemaValidator, (validator) => validator.compile(schema)(value))
