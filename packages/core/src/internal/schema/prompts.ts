/**
 * Prompts: listing, getting, and the list-changed notification.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { Icon, Meta, NotificationParams, PaginatedRequestParams, PaginatedResult, RequestMeta, Role } from "./base.ts"
import { ContentBlock } from "./content.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * An argument a prompt template accepts.
 *
 * @category schemas
 * @since 0.1.0
 */
export const PromptArgument = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  required: Schema.optionalKey(Schema.Boolean)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type PromptArgument = typeof PromptArgument.Type

/**
 * A prompt or prompt template the server offers. `title` and `_meta` are new
 * in 2025-06-18, `icons` in 2025-11-25.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Prompt = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  arguments: Schema.optionalKey(Schema.Array(PromptArgument)),
  icons: Schema.optionalKey(Schema.Array(Icon)),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Prompt = typeof Prompt.Type

/**
 * One message of a prompt. Unlike a sampling message it may embed resources.
 *
 * @category schemas
 * @since 0.1.0
 */
export const PromptMessage = Schema.Struct({
  role: Role,
  content: ContentBlock
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type PromptMessage = typeof PromptMessage.Type

/**
 * The result of `prompts/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ListPromptsResult = Schema.Struct({ ...PaginatedResult.fields, prompts: Schema.Array(Prompt) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type ListPromptsResult = typeof ListPromptsResult.Type

/**
 * Params of `prompts/get`: the prompt's name and its string arguments.
 *
 * @category schemas
 * @since 0.1.0
 */
export const GetPromptRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  name: Schema.String,
  arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type GetPromptRequestParams = typeof GetPromptRequestParams.Type

/**
 * The result of `prompts/get`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const GetPromptResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  description: Schema.optionalKey(Schema.String),
  messages: Schema.Array(PromptMessage)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type GetPromptResult = typeof GetPromptResult.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `prompts/list`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ListPrompts = McpMethod.request({
  name: "prompts/list",
  params: PaginatedRequestParams,
  result: ListPromptsResult,
  from: "client",
  capability: McpMethod.serverCapability("prompts")
})

/**
 * `prompts/get`.
 *
 * @category methods
 * @since 0.1.0
 */
export const GetPrompt = McpMethod.request({
  name: "prompts/get",
  params: GetPromptRequestParams,
  result: GetPromptResult,
  from: "client",
  capability: McpMethod.serverCapability("prompts")
})

/**
 * `notifications/prompts/list_changed`.
 *
 * @category methods
 * @since 0.1.0
 */
export const PromptListChanged = McpMethod.notification({
  name: "notifications/prompts/list_changed",
  params: NotificationParams,
  from: "server",
  capability: McpMethod.serverCapability("prompts", "listChanged")
})
