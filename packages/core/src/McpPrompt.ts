/**
 * Prompts: a name, typed arguments (a `Schema.Struct` of string fields; the
 * listing's `arguments` are derived from it), optional completions per
 * argument, and a handler that returns the messages. Failures are answered
 * as resource reads' are (`McpResource`): a typed failure with its text, a
 * defect with `-32603 Internal error`, both logged on the server.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Failure from "./internal/server/failure.ts"
import * as McpError from "./McpError.ts"
import type * as McpResource from "./McpResource.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"

/**
 * What a prompt handler returns: one user message of text, messages, or a
 * whole result.
 *
 * @category models
 * @since 0.1.0
 */
export type Output = string | ReadonlyArray<McpSchema.PromptMessage> | McpSchema.GetPromptResult

/**
 * A prompt ready to register.
 *
 * @category models
 * @since 0.1.0
 */
export interface McpPrompt<out R = never> {
  readonly _tag: "McpPrompt"
  readonly name: string
  /** The entry of `prompts/list`. */
  readonly prompt: McpSchema.Prompt
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  readonly get: (
    args: Readonly<Record<string, string>>,
    context: McpServer.RequestContext
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError, R>
  readonly complete: Readonly<Record<string, McpResource.Complete<R>>>
  /** Answers `completion/complete` for this prompt whole, in place of `complete` (a gateway's, passing the request on). */
  readonly completion?:
    | ((
      params: McpSchema.CompleteRequestParams,
      context: McpServer.RequestContext
    ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError, R>)
    | undefined
  /** 2026-07-28: hold a `prompts/get` instead of replaying it when it asks the client (see `McpTool.Info.hold`). */
  readonly hold?: boolean | undefined
}

type StringFields = {
  readonly [key: string]:
    | Schema.Codec<any, string, any, never>
    | Schema.optionalKey<Schema.Codec<any, string, any, never>>
}

/**
 * A prompt. Its arguments are decoded with `arguments`; bad ones are answered
 * with `-32602`.
 *
 * @example
 * ```ts
 * import { McpPrompt } from "@effect-mcp/core"
 * import { Effect, Schema } from "effect"
 *
 * const review = McpPrompt.make({
 *   name: "review",
 *   arguments: Schema.Struct({ code: Schema.String }),
 *   get: ({ code }) => Effect.succeed(`Please review:\n${code}`)
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <Fields extends StringFields = {}, E = never, R = never, R2 = never>(options: {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly icons?: ReadonlyArray<McpSchema.Icon> | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
  readonly arguments?: Schema.Struct<Fields> | undefined
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  readonly complete?: { readonly [K in keyof Fields]?: McpResource.Complete<R2> } | undefined
  readonly get: (args: Schema.Struct.Type<Fields>, context: McpServer.RequestContext) => Effect.Effect<Output, E, R>
}): McpPrompt<R | R2> => {
  const struct = options.arguments ?? (Schema.Struct({}) as unknown as Schema.Struct<Fields>)
  const decode = Schema.decodeUnknownEffect(struct as unknown as Schema.Codec<Schema.Struct.Type<Fields>, unknown, any>)
  const prompt: Record<string, unknown> = { name: options.name }
  for (const key of ["title", "description", "icons", "_meta"] as const) {
    if (options[key] !== undefined) prompt[key] = options[key]
  }
  const args = argumentsOf(struct)
  if (args.length > 0) prompt.arguments = args
  return {
    _tag: "McpPrompt",
    name: options.name,
    prompt: prompt as McpSchema.Prompt,
    cache: options.cache,
    get: (input, context) =>
      decode(input, { errors: "all" }).pipe(
        Effect.mapError((error) =>
          McpError.invalidParams("prompts/get", `${options.name}: ${SchemaIssue.makeFormatterDefault()(error.issue)}`)
        ),
        Effect.flatMap((decoded) =>
          Failure.guard(
            Failure.siteOf(context, "prompt", options.name),
            Effect.suspend(() => options.get(decoded, context))
          )
        ),
        Effect.map(toResult)
      ),
    complete: (options.complete ?? {}) as Record<string, McpResource.Complete<R2>>
  }
}

const argumentsOf = (struct: Schema.Top): Array<McpSchema.PromptArgument> => {
  const ast = struct.ast
  if (ast._tag !== "Objects") return []
  return ast.propertySignatures.map((property) => {
    const argument: Record<string, unknown> = { name: String(property.name) }
    const title = SchemaAST.resolveTitle(property.type)
    const description = SchemaAST.resolveDescription(property.type)
    if (title !== undefined) argument.title = title
    if (description !== undefined) argument.description = description
    argument.required = !SchemaAST.isOptional(property.type)
    return argument as McpSchema.PromptArgument
  })
}

const toResult = (output: Output): McpSchema.GetPromptResult => {
  if (typeof output === "string") return { messages: [{ role: "user", content: { type: "text", text: output } }] }
  if (Array.isArray(output)) return { messages: output as Array<McpSchema.PromptMessage> }
  return output as McpSchema.GetPromptResult
}
