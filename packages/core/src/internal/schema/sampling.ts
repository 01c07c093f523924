/**
 * Sampling: the server asks the client's LLM for a message
 * (`sampling/createMessage`), optionally with tools (2025-11-25).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { JsonObject, Meta, RequestMeta, Role } from "./base.ts"
import { AudioContent, ContentBlock, ImageContent, TextContent } from "./content.ts"
import { CreateTaskResult, TaskMetadata } from "./tasks.ts"
import { Tool } from "./tools.ts"

// -----------------------------------------------------------------------------
// Content
// -----------------------------------------------------------------------------

/**
 * The model asks to call a tool (2025-11-25). `id` pairs it with the
 * matching {@link ToolResultContent}.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolUseContent = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: JsonObject,
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ToolUseContent = typeof ToolUseContent.Type

/**
 * The result of a tool use, given back to the model (2025-11-25). Its fields
 * mirror a `CallToolResult`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolResultContent = Schema.Struct({
  type: Schema.Literal("tool_result"),
  toolUseId: Schema.String,
  content: Schema.Array(ContentBlock),
  structuredContent: Schema.optionalKey(JsonObject),
  isError: Schema.optionalKey(Schema.Boolean),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ToolResultContent = typeof ToolResultContent.Type

/**
 * A content block of a sampling message: text, image, audio, tool use or tool
 * result.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SamplingMessageContentBlock = Schema.Union([
  TextContent,
  ImageContent,
  AudioContent,
  ToolUseContent,
  ToolResultContent
]).annotate({ expected: "a sampling content block of type text, image, audio, tool_use or tool_result" })

/**
 * @category schemas
 * @since 0.1.0
 */
export type SamplingMessageContentBlock = typeof SamplingMessageContentBlock.Type

/**
 * The content of a sampling message: one block, or (2025-11-25) an array of
 * blocks.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SamplingContent = Schema.Union([SamplingMessageContentBlock, Schema.Array(SamplingMessageContentBlock)])

/**
 * @category schemas
 * @since 0.1.0
 */
export type SamplingContent = typeof SamplingContent.Type

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A message to or from the LLM.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SamplingMessage = Schema.Struct({
  role: Role,
  content: SamplingContent,
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type SamplingMessage = typeof SamplingMessage.Type

/**
 * A model-name hint, matched as a substring (e.g. `"sonnet"`); the client may
 * map it to another provider's equivalent.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ModelHint = Schema.Struct({
  name: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ModelHint = typeof ModelHint.Type

/**
 * Advisory model preferences. Hints are evaluated in order; priorities are
 * documented as 0 to 1 (not enforced).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ModelPreferences = Schema.Struct({
  hints: Schema.optionalKey(Schema.Array(ModelHint)),
  costPriority: Schema.optionalKey(Schema.Finite),
  speedPriority: Schema.optionalKey(Schema.Finite),
  intelligencePriority: Schema.optionalKey(Schema.Finite)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ModelPreferences = typeof ModelPreferences.Type

/**
 * How the model may use the offered tools (default `auto`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolChoice = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["auto", "required", "none"]))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ToolChoice = typeof ToolChoice.Type

/**
 * Which servers' context to include. `thisServer` and `allServers` are
 * soft-deprecated in 2025-11-25 and should be used only when the client
 * declares `sampling.context`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const IncludeContext = Schema.Literals(["none", "thisServer", "allServers"])

/**
 * @category schemas
 * @since 0.1.0
 */
export type IncludeContext = typeof IncludeContext.Type

/**
 * Params of `sampling/createMessage`. `tools` and `toolChoice` need the
 * client's `sampling.tools` capability; `task` asks for task-augmented
 * execution (2025-11-25).
 *
 * @category schemas
 * @since 0.1.0
 */
export const CreateMessageRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  task: Schema.optionalKey(TaskMetadata),
  messages: Schema.Array(SamplingMessage),
  modelPreferences: Schema.optionalKey(ModelPreferences),
  systemPrompt: Schema.optionalKey(Schema.String),
  includeContext: Schema.optionalKey(IncludeContext),
  temperature: Schema.optionalKey(Schema.Finite),
  maxTokens: Schema.Int,
  stopSequences: Schema.optionalKey(Schema.Array(Schema.String)),
  metadata: Schema.optionalKey(JsonObject),
  tools: Schema.optionalKey(Schema.Array(Tool)),
  toolChoice: Schema.optionalKey(ToolChoice)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CreateMessageRequestParams = typeof CreateMessageRequestParams.Type

/**
 * The client's sampled message. `stopReason` is an open string; the standard
 * values are `endTurn`, `stopSequence`, `maxTokens` and (2025-11-25)
 * `toolUse`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CreateMessageResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  role: Role,
  content: SamplingContent,
  model: Schema.String,
  stopReason: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CreateMessageResult = typeof CreateMessageResult.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `sampling/createMessage`. Needs the client's `sampling` capability, and
 * `sampling.tools` when the params carry `tools` or `toolChoice`. A request
 * with a `task` param is {@link CreateMessageTask}.
 *
 * @category methods
 * @since 0.1.0
 */
export const CreateMessage = McpMethod.request({
  name: "sampling/createMessage",
  params: CreateMessageRequestParams,
  result: CreateMessageResult,
  from: "server",
  capability: (params) =>
    params.tools !== undefined || params.toolChoice !== undefined
      ? McpMethod.clientCapability("sampling", "tools")
      : McpMethod.clientCapability("sampling")
})

/**
 * `sampling/createMessage` with a `task` param (2025-11-25, experimental):
 * answered with a `CreateTaskResult`. The same wire method as
 * {@link CreateMessage}, declared apart so that each has one result type.
 *
 * @category methods
 * @since 0.1.0
 */
export const CreateMessageTask = McpMethod.withResult(CreateMessage, CreateTaskResult)
