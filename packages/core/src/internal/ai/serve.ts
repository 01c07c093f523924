/**
 * An effect/ai toolkit as MCP tools: each tool (but provider-defined ones)
 * becomes an `McpTool` whose listing comes from the tool's Schemas and
 * annotations and whose calls run through the toolkit's own `handle`.
 *
 * @internal
 */
import * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Stream from "effect/Stream"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import * as McpTool from "../../McpTool.ts"

/** A failure of a toolkit handler, as the text of an `isError` result. @internal */
interface Failed {
  readonly message: string
}

/** The MCP tools of a toolkit with handlers. @internal */
export const mcpTools = (built: Toolkit.WithHandler<Record<string, Tool.Any>>): Array<McpTool.McpTool<any>> =>
  Object.values(built.tools).flatMap((tool) => Tool.isProviderDefined(tool) ? [] : [mcpTool(tool, built)])

const mcpTool = (tool: Tool.Any, built: Toolkit.WithHandler<Record<string, Tool.Any>>): McpTool.McpTool<any> => {
  const info = infoOf(tool)
  const run = runner(tool, built)
  if (Tool.isDynamic(tool) && tool.jsonSchema !== undefined) {
    // raw JSON Schema parameters: listed as they are, passed on unchecked (as effect/ai does)
    return McpTool.fromJsonSchema(tool.name, {
      ...info,
      inputSchema: tool.jsonSchema as McpSchema.Tool["inputSchema"],
      handler: (input, context) =>
        Effect.map(run(input, context), ({ encodedResult }) =>
          isVoid(tool.successSchema)
            ? []
            : typeof encodedResult === "string"
            ? encodedResult
            : JSON.stringify(encodedResult ?? null))
    })
  }
  // McpTool.make decodes the arguments; the toolkit's `handle` takes them encoded
  const encode = Schema.encodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown, never, any>)
  const handler = (input: unknown, context: McpServer.RequestContext) =>
    Effect.flatMap(Effect.orDie(encode(input)), (params) => run(params, context))
  return isVoid(tool.successSchema)
    ? McpTool.make(tool.name, {
      ...info,
      input: tool.parametersSchema,
      handler: (input, context) => Effect.as(handler(input, context), [])
    })
    : McpTool.make(tool.name, {
      ...info,
      input: tool.parametersSchema,
      output: tool.successSchema,
      handler: (input, context) => Effect.map(handler(input, context), ({ result }) => result)
    })
}

const isVoid = (schema: Schema.Top): boolean => SchemaAST.isVoid(schema.ast) || SchemaAST.isUndefined(schema.ast)

// effect/ai annotations → the listing's title, hints and `_meta`
const infoOf = (tool: Tool.Any): McpTool.Info => {
  const title = Option.getOrUndefined(Context.getOption(tool.annotations, Tool.Title))
  const meta = Option.getOrUndefined(Context.getOption(tool.annotations, Tool.Meta))
  const annotations: McpSchema.ToolAnnotations = {
    ...(title === undefined ? {} : { title }),
    readOnlyHint: Context.get(tool.annotations, Tool.Readonly),
    destructiveHint: Context.get(tool.annotations, Tool.Destructive),
    idempotentHint: Context.get(tool.annotations, Tool.Idempotent),
    openWorldHint: Context.get(tool.annotations, Tool.OpenWorld)
  }
  return { title, description: Tool.getDescription(tool), annotations, _meta: meta }
}

// Runs a call through the toolkit: the final result, or its failure (either
// failure mode) as text; a tool that needs approval is refused, since MCP has
// no way to ask for it.
const runner = (tool: Tool.Any, built: Toolkit.WithHandler<Record<string, Tool.Any>>) => {
  const encodeFailure = Schema.encodeUnknownEffect(
    Tool.failureResultSchema(tool) as unknown as Schema.Codec<unknown, unknown, never, any>
  )
  // a failure of `handle` (failure mode "error"): its message, or its encoded JSON
  const failed = (error: unknown): Effect.Effect<never, Failed, any> => {
    const message = messageOf(error)
    if (message !== undefined) return Effect.fail({ message })
    return encodeFailure(error).pipe(
      Effect.matchEffect({
        onFailure: () => Effect.fail({ message: String(error) }),
        onSuccess: (encoded) => Effect.fail({ message: textOf(encoded) })
      })
    )
  }
  return Effect.fnUntraced(function*(params: unknown, context: McpServer.RequestContext) {
    const toolCallId = String(context.requestId)
    if (yield* needsApproval(tool, params, toolCallId)) {
      return yield* Effect.fail<Failed>({
        message: `The tool ${tool.name} needs approval, which cannot be given over MCP`
      })
    }
    const final = yield* built.handle(tool.name, params as never, toolCallId).pipe(
      Effect.flatMap((results) => results.pipe(Stream.filter((result) => !result.preliminary), Stream.runLast)),
      Effect.catch(failed)
    )
    if (Option.isNone(final)) return yield* Effect.die(`The tool ${tool.name} gave no result`)
    // failure mode "return": the failure is a result
    if (final.value.isFailure) {
      return yield* Effect.fail<Failed>({ message: messageOf(final.value.result) ?? textOf(final.value.encodedResult) })
    }
    return final.value
  })
}

const needsApproval = (tool: Tool.Any, params: unknown, toolCallId: string): Effect.Effect<boolean, never, any> => {
  const setting = tool.needsApproval
  if (setting === undefined || setting === false) return Effect.succeed(false)
  if (setting === true) return Effect.succeed(true)
  return Schema.decodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown, any>)(params).pipe(
    Effect.flatMap((decoded) => {
      const answer = setting(decoded, { toolCallId, messages: [] })
      return Effect.isEffect(answer) ? answer : Effect.succeed(answer)
    }),
    // undecidable: ask (and so refuse)
    Effect.orElseSucceed(() => true)
  )
}

const messageOf = (error: unknown): string | undefined =>
  Predicate.hasProperty(error, "message") && typeof error.message === "string" && error.message !== ""
    ? error.message
    : undefined

const textOf = (encoded: unknown): string => typeof encoded === "string" ? encoded : JSON.stringify(encoded ?? null)
