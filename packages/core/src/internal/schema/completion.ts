/**
 * Argument completion (`completion/complete`) for prompt arguments and
 * resource-template variables.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { Meta, RequestMeta } from "./base.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Identifies a prompt (`title` is new in 2025-06-18).
 *
 * @category schemas
 * @since 0.1.0
 */
export const PromptReference = Schema.Struct({
  type: Schema.Literal("ref/prompt"),
  name: Schema.String,
  title: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type PromptReference = typeof PromptReference.Type

/**
 * Identifies a resource or resource template by URI or URI template (called
 * `ResourceReference` before 2025-06-18, same shape).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ResourceTemplateReference = Schema.Struct({
  type: Schema.Literal("ref/resource"),
  uri: Schema.String
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ResourceTemplateReference = typeof ResourceTemplateReference.Type

/**
 * Params of `completion/complete`: what is being completed, the argument's
 * current value, and (2025-06-18) the arguments already resolved.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CompleteRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  ref: Schema.Union([PromptReference, ResourceTemplateReference]).annotate({
    expected: "a reference of type ref/prompt or ref/resource"
  }),
  argument: Schema.Struct({
    name: Schema.String,
    value: Schema.String
  }),
  context: Schema.optionalKey(Schema.Struct({
    arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
  }))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CompleteRequestParams = typeof CompleteRequestParams.Type

/**
 * The result of `completion/complete`. `values` must not exceed 100 items
 * (not enforced here); `total` may exceed the number of values sent.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CompleteResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  completion: Schema.Struct({
    values: Schema.Array(Schema.String),
    total: Schema.optionalKey(Schema.Int),
    hasMore: Schema.optionalKey(Schema.Boolean)
  })
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CompleteResult = typeof CompleteResult.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `completion/complete`. The `completions` capability is new in 2025-03-26;
 * 2024-11-05 servers offered completion without declaring it.
 *
 * @category methods
 * @since 0.1.0
 */
export const Complete = McpMethod.request({
  name: "completion/complete",
  params: CompleteRequestParams,
  result: CompleteResult,
  from: "client",
  capability: McpMethod.serverCapability("completions")
})
