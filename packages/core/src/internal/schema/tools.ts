/**
 * Tools: listing, calling, and the list-changed notification.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import {
  Icon,
  JsonObject,
  Meta,
  NotificationParams,
  PaginatedRequestParams,
  PaginatedResult,
  RequestMeta
} from "./base.ts"
import { ContentBlock } from "./content.ts"
import { CreateTaskResult, TaskMetadata } from "./tasks.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Hints about a tool's behaviour (new in 2025-03-26). They are hints only:
 * never trust them from an untrusted server. Defaults: `readOnlyHint` false,
 * `destructiveHint` true, `idempotentHint` false, `openWorldHint` true.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolAnnotations = Schema.Struct({
  title: Schema.optionalKey(Schema.String),
  readOnlyHint: Schema.optionalKey(Schema.Boolean),
  destructiveHint: Schema.optionalKey(Schema.Boolean),
  idempotentHint: Schema.optionalKey(Schema.Boolean),
  openWorldHint: Schema.optionalKey(Schema.Boolean)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ToolAnnotations = typeof ToolAnnotations.Type

/**
 * How a tool may run (2025-11-25): `taskSupport` is `forbidden` (the default),
 * `optional` or `required`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolExecution = Schema.Struct({
  taskSupport: Schema.optionalKey(Schema.Literals(["forbidden", "optional", "required"]))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ToolExecution = typeof ToolExecution.Type

/**
 * A JSON Schema whose root is `type: "object"`, as used for a tool's
 * `inputSchema` and `outputSchema`. Any other JSON Schema keyword
 * (`additionalProperties`, `$defs`, …) is allowed. Without `$schema` the
 * dialect is JSON Schema 2020-12.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ObjectJsonSchema = Schema.StructWithRest(
  Schema.Struct({
    $schema: Schema.optionalKey(Schema.String),
    type: Schema.Literal("object"),
    properties: Schema.optionalKey(Schema.Record(Schema.String, JsonObject)),
    required: Schema.optionalKey(Schema.Array(Schema.String))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/**
 * @category schemas
 * @since 0.1.0
 */
export type ObjectJsonSchema = typeof ObjectJsonSchema.Type

/**
 * A tool the client can call. `title`, `outputSchema` and `_meta` are new in
 * 2025-06-18, `annotations` in 2025-03-26, `icons` and `execution` in
 * 2025-11-25. Display name precedence: `title`, `annotations.title`, `name`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Tool = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  inputSchema: ObjectJsonSchema,
  outputSchema: Schema.optionalKey(ObjectJsonSchema),
  annotations: Schema.optionalKey(ToolAnnotations),
  execution: Schema.optionalKey(ToolExecution),
  icons: Schema.optionalKey(Schema.Array(Icon)),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type Tool = typeof Tool.Type

/**
 * The result of `tools/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ListToolsResult = Schema.Struct({ ...PaginatedResult.fields, tools: Schema.Array(Tool) })

/**
 * @category schemas
 * @since 0.1.0
 */
export type ListToolsResult = typeof ListToolsResult.Type

/**
 * Params of `tools/call`. `task` (2025-11-25) asks for task-augmented
 * execution; the answer is then a `CreateTaskResult`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CallToolRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  name: Schema.String,
  arguments: Schema.optionalKey(JsonObject),
  task: Schema.optionalKey(TaskMetadata)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CallToolRequestParams = typeof CallToolRequestParams.Type

/**
 * A tool's result. Failures of the tool itself are results with
 * `isError: true`, not protocol errors. `structuredContent` (2025-06-18)
 * should match the tool's `outputSchema`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const CallToolResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  content: Schema.Array(ContentBlock),
  structuredContent: Schema.optionalKey(JsonObject),
  isError: Schema.optionalKey(Schema.Boolean)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type CallToolResult = typeof CallToolResult.Type

/**
 * The pre-2024-11-05 shape of a tool result, `{ toolResult }` (the spec's
 * "compatibility" result). `CallTool` does not accept it; it is here for code
 * that talks to such servers with a method of its own.
 *
 * @category schemas
 * @since 0.1.0
 */
export const LegacyCallToolResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  toolResult: Schema.Unknown
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type LegacyCallToolResult = typeof LegacyCallToolResult.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `tools/list`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ListTools = McpMethod.request({
  name: "tools/list",
  params: PaginatedRequestParams,
  result: ListToolsResult,
  from: "client",
  capability: McpMethod.serverCapability("tools")
})

/**
 * `tools/call` answered with a `CallToolResult`. A call with a `task` param
 * is {@link CallToolTask}; task augmentation additionally needs the server's
 * `tasks.requests.tools.call` (see `taskAugmentationCapability`).
 *
 * @category methods
 * @since 0.1.0
 */
export const CallTool = McpMethod.request({
  name: "tools/call",
  params: CallToolRequestParams,
  result: CallToolResult,
  from: "client",
  capability: McpMethod.serverCapability("tools")
})

/**
 * `tools/call` with a `task` param (2025-11-25, experimental): the server
 * answers with a `CreateTaskResult` at once and the tool's result is fetched
 * with `tasks/result`. The same wire method as {@link CallTool}, declared
 * apart so that each has one result type.
 *
 * @category methods
 * @since 0.1.0
 */
export const CallToolTask = McpMethod.withResult(CallTool, CreateTaskResult)

/**
 * `notifications/tools/list_changed`.
 *
 * @category methods
 * @since 0.1.0
 */
export const ToolListChanged = McpMethod.notification({
  name: "notifications/tools/list_changed",
  params: NotificationParams,
  from: "server",
  capability: McpMethod.serverCapability("tools", "listChanged")
})
