/**
 * The `@cfworker/json-schema` validator, now core's default
 * `JsonSchemaValidator`: nothing needs to provide it any more. Kept so that
 * existing code compiles.
 *
 * @since 0.1.0
 */
import * as JsonSchemaValidator from "@effect-mcp/core/JsonSchemaValidator"
import type * as Layer from "effect/Layer"

/**
 * The default validator's compiler.
 *
 * @deprecated Use `JsonSchemaValidator.compile` from `@effect-mcp/core`.
 * @category constructors
 * @since 0.1.0
 */
export const compile: (schema: unknown) => JsonSchemaValidator.Check = JsonSchemaValidator.compile

/**
 * The default validator, as a layer. Providing it is no longer needed (it is
 * what a client, a group or a `McpTool.fromJsonSchema` tool uses when no
 * validator is provided); it still restores the default under a layer that
 * replaced it.
 *
 * @deprecated Provide nothing (the default), or `JsonSchemaValidator.layerDefault` from `@effect-mcp/core`.
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<never> = JsonSchemaValidator.layerDefault
