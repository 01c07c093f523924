/**
 * MCP tools as an effect/ai toolkit: one dynamic tool per MCP tool, its
 * server's JSON Schema as parameters, under a model-safe name, with a
 * handler calling the tool by its own name; results mapped for the model.
 *
 * @internal
 */
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Predicate from "effect/Predicate"
import type { RemoteTool, RemoteTools, ToolEntry, ToolFailure, ToolkitOptions } from "../../McpAi.ts"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type * as McpGroup from "../../McpGroup.ts"
import * as McpSchema from "../../McpSchema.ts"
import { modelNames } from "./names.ts"
import { toModelOutput } from "./output.ts"

/** Where the tools come from and where their calls go. @internal */
interface Source {
  readonly list: Effect.Effect<ReadonlyArray<ToolEntry>, McpError.McpError>
  readonly call: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
}

const isGroup = (source: McpClient.Client | McpGroup.Group): source is McpGroup.Group =>
  Predicate.hasProperty(source, "views") && Predicate.hasProperty(source, "connect")

const sourceOf = (source: McpClient.Client | McpGroup.Group): Source =>
  isGroup(source)
    ? { list: source.tools, call: source.callTool }
    : {
      // the cached list, refreshed by the client on `list_changed`
      list: Effect.map(source.tools.get, (tools) => tools.map((tool) => ({ name: tool.name, tool }))),
      call: source.callTool
    }

/** The toolkit of the source's current tools. @internal */
export const make = (
  source: McpClient.Client | McpGroup.Group,
  Failure: typeof ToolFailure,
  options: ToolkitOptions | undefined
): Effect.Effect<Toolkit.WithHandler<RemoteTools>, McpError.McpError> => {
  const { call, list } = sourceOf(source)
  return Effect.gen(function*() {
    const all = yield* list
    const entries = options?.filter === undefined ? all : all.filter(options.filter)
    const names = modelNames(entries.map((entry) => entry.name))
    const tools: Array<RemoteTool> = []
    const handlers: Record<string, (params: unknown) => Effect.Effect<McpSchema.CallToolResult, ToolFailure>> = {}
    entries.forEach((entry, i) => {
      const name = names[i]
      if (name === undefined) return
      tools.push(makeTool(name, entry, Failure))
      Object.defineProperty(handlers, name, {
        value: makeHandler(name, entry, Failure, call, options?.requestOptions),
        enumerable: true
      })
    })
    const toolkit = Toolkit.make(...tools) as unknown as Toolkit.Toolkit<RemoteTools>
    const context = yield* toolkit.toHandlers(handlers)
    return yield* Effect.provideContext(toolkit, context)
  })
}

const makeTool = (name: string, entry: ToolEntry, Failure: typeof ToolFailure): RemoteTool =>
  Tool.dynamic(name, {
    description: entry.tool.description,
    parameters: entry.tool.inputSchema as JsonSchema.JsonSchema,
    success: McpSchema.CallToolResult,
    failure: Failure,
    failureMode: "return",
    toModelOutput
  }).annotateMerge(annotationsOf(entry.tool)) as RemoteTool

// MCP hints → effect/ai annotations; a server's schema is not made for strict mode
const annotationsOf = (tool: McpSchema.Tool): Context.Context<never> => {
  let context = Context.make(Tool.Strict, false) as Context.Context<never>
  const title = tool.title ?? tool.annotations?.title
  if (title !== undefined) context = Context.add(context, Tool.Title, title)
  const hints = tool.annotations
  if (hints?.readOnlyHint !== undefined) context = Context.add(context, Tool.Readonly, hints.readOnlyHint)
  if (hints?.destructiveHint !== undefined) context = Context.add(context, Tool.Destructive, hints.destructiveHint)
  if (hints?.idempotentHint !== undefined) context = Context.add(context, Tool.Idempotent, hints.idempotentHint)
  if (hints?.openWorldHint !== undefined) context = Context.add(context, Tool.OpenWorld, hints.openWorldHint)
  if (tool._meta !== undefined) context = Context.add(context, Tool.Meta, tool._meta)
  return context
}

const makeHandler = (
  name: string,
  entry: ToolEntry,
  Failure: typeof ToolFailure,
  call: Source["call"],
  requestOptions: McpClient.RequestOptions | undefined
) =>
(params: unknown): Effect.Effect<McpSchema.CallToolResult, ToolFailure> => {
  const args = params === undefined || params === null ? {} : params
  if (!Predicate.isObject(args) || Array.isArray(args)) {
    return Effect.fail(new Failure({ tool: name, message: `The arguments of ${name} must be a JSON object` }))
  }
  return call(entry.name, args as Readonly<Record<string, unknown>>, requestOptions).pipe(
    Effect.matchEffect({
      onFailure: (error) => Effect.fail(new Failure({ tool: name, message: McpError.messageOf(error) })),
      onSuccess: (result) =>
        result.isError === true ? Effect.fail(failureOf(name, result, Failure)) : Effect.succeed(result)
    })
  )
}

const failureOf = (name: string, result: McpSchema.CallToolResult, Failure: typeof ToolFailure): ToolFailure => {
  const texts: Array<string> = []
  for (const block of result.content) {
    if (block.type === "text") texts.push(block.text)
    else if (block.type === "resource" && "text" in block.resource) texts.push(block.resource.text)
  }
  const message = texts.length > 0
    ? texts.join("\n")
    : result.structuredContent !== undefined
    ? JSON.stringify(result.structuredContent)
    : `The tool ${name} failed`
  return result.structuredContent === undefined
    ? new Failure({ tool: name, message })
    : new Failure({ tool: name, message, structuredContent: result.structuredContent })
}
