/**
 * The bridge between MCP and `effect/ai`, both ways: the tools of an
 * `McpClient` or an `McpGroup` as a toolkit for `LanguageModel`, and an
 * effect/ai `Toolkit` served as MCP tools by an `McpServer`.
 *
 * ```ts
 * const answer = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   const response = yield* LanguageModel.generateText({
 *     prompt: "What is in notes.md?",
 *     toolkit: yield* McpAi.toolkit(client) // the client's tools as of now
 *   })
 *   return response.text
 * })
 * ```
 *
 * @since 0.2.0
 */
import type * as Prompt from "effect/ai/Prompt"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Output from "./internal/ai/output.ts"
import type * as McpClient from "./McpClient.ts"
import type * as McpError from "./McpError.ts"
import type * as McpGroup from "./McpGroup.ts"
import * as McpSchema from "./McpSchema.ts"
import * as McpServer from "./McpServer.ts"

// -----------------------------------------------------------------------------
// MCP tools for a language model
// -----------------------------------------------------------------------------

/**
 * How a remote tool failed, as the model sees it (failure mode `"return"`:
 * a failed call in the conversation, not a failure of `generateText`).
 * `message` is the text of an `isError: true` result (its `structuredContent`,
 * if any, alongside), or the message of the `McpError` the call failed with
 * (e.g. a timeout, a server that is down, a protocol error). `tool` is the
 * name the model called.
 *
 * @category errors
 * @since 0.2.0
 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("McpToolFailure", {
  tool: Schema.String,
  message: Schema.String,
  structuredContent: Schema.optionalKey(McpSchema.JsonObject)
}) {}

/**
 * An MCP tool as an effect/ai tool: dynamic, with the server's JSON Schema as
 * parameters (passed on unchecked: the server checks them), the whole
 * `CallToolResult` as its typed success (what the model gets is mapped by
 * `toModelOutput`), {@link ToolFailure} as its failure, failure mode
 * `"return"`.
 *
 * @category models
 * @since 0.2.0
 */
export type RemoteTool = Tool.Dynamic<string, {
  readonly parameters: JsonSchema.JsonSchema
  readonly success: typeof McpSchema.CallToolResult
  readonly failure: typeof ToolFailure
  readonly failureMode: "return"
}>

/**
 * The tools of a remote toolkit, by model name.
 *
 * @category models
 * @since 0.2.0
 */
export type RemoteTools = Record<string, RemoteTool>

/**
 * A tool of the source: its name there (its group name, for a group), the
 * server it is on (for a group), and its declaration.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolEntry {
  readonly name: string
  readonly server?: string | undefined
  readonly tool: McpSchema.Tool
}

/**
 * Options of {@link toolkit}.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolkitOptions {
  /** Keeps only the tools it accepts. Default: every tool. */
  readonly filter?: ((entry: ToolEntry) => boolean) | undefined
  /** Options of every call (timeouts, progress, `_meta`). */
  readonly requestOptions?: McpClient.RequestOptions | undefined
}

/**
 * The tools of an MCP client or group as an effect/ai toolkit with handlers,
 * for the `toolkit` option of `LanguageModel.generateText` / `streamText`
 * (and `Chat`). Each run lists the tools (the client's cached list, which it
 * refreshes on `list_changed`; a group's current view), so yield it for each
 * request and a tool added or removed on a server is seen at the next one.
 * (effect/ai runs a toolkit Effect given as `toolkit` at each request too,
 * but its types only take one that cannot fail, and listing can fail.)
 *
 * - **Names**: a tool keeps its name (its group name, for a group) when
 *   providers accept it (`[a-zA-Z0-9_-]`, a letter or `_` first, at most 64
 *   characters); any other is renamed to a safe name plus a hash of the
 *   original (`read.file` → `read_file_1a2b3c4d`), the same each time.
 *   Calls go to the tool by its own name.
 * - **Schema and listing**: the tool's `inputSchema` is the parameters' JSON
 *   Schema, as it is (strict mode off); `description` carries over; `title`
 *   and the hints become the `Tool.Title`, `Readonly`, `Destructive`,
 *   `Idempotent` and `OpenWorld` annotations, `_meta` `Tool.Meta`.
 * - **Results**: the typed result is the `CallToolResult`; the model gets its
 *   text blocks joined, or its `structuredContent` as JSON when there is
 *   one (the text then mirrors it), with images, audio and binary resources
 *   as files, embedded text resources as text, and resource links as
 *   `title: uri` lines.
 * - **Failures**: an `isError: true` result, a failing call (`McpError`) and
 *   arguments that are not an object are a {@link ToolFailure} returned to the
 *   model as a failed call; `generateText` itself fails only when the tools
 *   cannot be listed.
 *
 * @example
 * ```ts
 * import { McpAi, McpGroup } from "@effect-mcp/core"
 * import { Effect } from "effect"
 * import { LanguageModel, Prompt } from "effect/ai"
 *
 * const chat = Effect.gen(function*() {
 *   const group = yield* McpGroup.McpGroup
 *   const toolkit = McpAi.toolkit(group, { filter: (entry) => entry.tool.annotations?.readOnlyHint === true })
 *   let prompt = Prompt.make("Summarize the open issues")
 *   for (let turn = 0; turn < 8; turn++) {
 *     const response = yield* LanguageModel.generateText({ prompt, toolkit: yield* toolkit })
 *     prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
 *     if (response.toolCalls.length === 0) return response.text
 *   }
 * })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const toolkit: (
  source: McpClient.Client | McpGroup.Group,
  options?: ToolkitOptions
) => Effect.Effect<Toolkit.WithHandler<RemoteTools>, McpError.McpError> = Effect.fn("McpAi.toolkit")(
  (source: McpClient.Client | McpGroup.Group, options?: ToolkitOptions) =>
    // effect/ai's `Tool` and `Toolkit` are loaded with the first toolkit, not with this module
    Effect.flatMap(
      Effect.promise(() => import("./internal/ai/remote.ts")),
      (Remote) => Remote.make(source, ToolFailure, options)
    )
)

/**
 * What the model gets of a successful remote call (the `toModelOutput` of a
 * {@link RemoteTool}), see {@link toolkit}.
 *
 * @category conversions
 * @since 0.2.0
 */
export const toModelOutput: (result: McpSchema.CallToolResult) => Array<Prompt.ToolModelOutputPart> =
  Output.toModelOutput

// -----------------------------------------------------------------------------
// An effect/ai toolkit served over MCP
// -----------------------------------------------------------------------------

/**
 * Registers every tool of an effect/ai toolkit (but provider-defined ones) on
 * the `McpServer` in context while the layer lasts. The toolkit's handlers
 * come from its handler layer (`toolkit.toLayer(...)`), which the served
 * layer requires.
 *
 * - **Listing**: the tool's name; `description` (or its parameters'); its
 *   parameters Schema as `inputSchema`; its success Schema as `outputSchema`
 *   (see `McpTool.make`: a non-object Schema is wrapped as `{ result }`;
 *   `Schema.Void`, the default, gives no `outputSchema` and an empty result);
 *   `Tool.Title` as `title` and `annotations.title`; `Tool.Readonly`,
 *   `Destructive`, `Idempotent` and `OpenWorld` as the matching hints (their
 *   defaults are MCP's); `Tool.Meta` as `_meta`. A dynamic tool with a raw
 *   JSON Schema is listed with it and gets its arguments unchecked.
 * - **Calls**: arguments are decoded with the parameters Schema (invalid ones
 *   are an `isError` result listing the problems), then run by the toolkit's
 *   `handle`; the final result is encoded as `structuredContent` with a text
 *   copy. A failure, in either failure mode, is an `isError` result with the
 *   failure's message, or else its JSON encoded with the failure Schema.
 *   Preliminary results are not sent.
 * - **Approval**: a tool that needs approval (`needsApproval` true, or a
 *   function answering true) is refused with an `isError` result.
 *
 * @example
 * ```ts
 * import { McpAi, McpServer } from "@effect-mcp/core"
 * import { Effect, Layer, Schema } from "effect"
 * import { Tool, Toolkit } from "effect/ai"
 *
 * const Search = Tool.make("search", {
 *   parameters: Schema.Struct({ query: Schema.String }),
 *   success: Schema.Struct({ hits: Schema.Array(Schema.String) })
 * }).annotate(Tool.Readonly, true)
 * const Tools = Toolkit.make(Search)
 *
 * const Served = McpAi.serveToolkit(Tools).pipe(
 *   Layer.provide(Tools.toLayer({ search: ({ query }) => Effect.succeed({ hits: [query] }) })),
 *   Layer.provideMerge(McpServer.layer({ name: "search", version: "1.0.0" }))
 * )
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const serveToolkit = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): Layer.Layer<
  never,
  never,
  McpServer.McpServer | Tool.HandlersFor<Tools> | Tool.HandlerServices<Tools[keyof Tools]>
> =>
  Layer.unwrap(
    Effect.zipWith(
      toolkit as unknown as Effect.Effect<
        Toolkit.WithHandler<Record<string, Tool.Any>>,
        never,
        Tool.HandlersFor<Tools>
      >,
      // loaded when the layer is built, not with this module
      Effect.promise(() => import("./internal/ai/serve.ts")),
      (built, Serve) =>
        McpServer.register(...Serve.mcpTools(built)) as Layer.Layer<
          never,
          never,
          McpServer.McpServer | Tool.HandlerServices<Tools[keyof Tools]>
        >
    )
  )
