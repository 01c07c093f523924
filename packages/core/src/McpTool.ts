/**
 * Tools: a name, an input Schema (its JSON Schema is the tool's
 * `inputSchema`), an optional output Schema (`outputSchema`, and
 * `structuredContent` encoded from it with a text copy), and a handler that
 * receives the decoded, typed arguments. Invalid arguments, typed failures
 * and defects become `isError: true` results (SEP-1303): a typed failure's
 * text is its `message`, or its `_tag` and fields (`McpError.messageOf`); a
 * defect's is generic (the cause is logged, never sent). The one failure that
 * stays a JSON-RPC error is `McpServer.urlElicitationRequired` (`-32042`);
 * interruption (a cancelled request) is not turned into a result. Without an
 * output Schema a handler returns text, content blocks, or a whole
 * `CallToolResult` (see `McpContent`).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { toObjectJsonSchema, toOutputJsonSchema } from "./internal/jsonSchema/tool.ts"
import * as Failure from "./internal/server/failure.ts"
import * as JsonRpc from "./JsonRpc.ts"
import type * as JsonSchemaValidator from "./JsonSchemaValidator.ts"
import * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A tool ready to register: its listing entry and how to call it.
 *
 * @category models
 * @since 0.1.0
 */
export interface McpTool<out R = never> {
  readonly _tag: "McpTool"
  readonly name: string
  /** The entry of `tools/list`. */
  readonly tool: McpSchema.Tool
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  /** Whether a call may, must or must not run as a task (`execution.taskSupport`). */
  readonly task: TaskSupport
  /**
   * 2026-07-28: how long a call runs as a plain request before the server
   * turns it into a task (asks made before then are input-required rounds);
   * `undefined`: the server's default (`McpServer.Options.tasks.after`).
   */
  readonly taskAfter: Duration.Duration | undefined
  /** 2026-07-28: hold a call instead of replaying it (see {@link Info.hold}). */
  readonly hold?: boolean | undefined
  /** Runs a call; failures are `isError` results, but for protocol errors `-32042` (URL elicitation required), `-32021` (missing client capability) and `-32602` (bad params, e.g. an input answer). */
  readonly call: (
    args: unknown,
    context: McpServer.RequestContext
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError, R>
}

/**
 * What a handler without an output Schema may return.
 *
 * @category models
 * @since 0.1.0
 */
export type Output =
  | string
  | McpSchema.ContentBlock
  | ReadonlyArray<McpSchema.ContentBlock>
  | McpSchema.CallToolResult

/**
 * Whether a tool's calls run as tasks (`execution.taskSupport`).
 *
 * @category models
 * @since 0.2.0
 */
export type TaskSupport = "forbidden" | "optional" | "required"

/**
 * What the handler of a tool without `input` receives: no arguments.
 *
 * @category models
 * @since 0.2.0
 */
export type NoInput = { readonly [key: string]: never }

/**
 * The listing fields of a tool besides its schemas.
 *
 * @category models
 * @since 0.1.0
 */
export interface Info {
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly annotations?: McpSchema.ToolAnnotations | undefined
  readonly icons?: ReadonlyArray<McpSchema.Icon> | undefined
  readonly execution?: McpSchema.Tool["execution"] | undefined
  /**
   * Whether a call may run as a task (a long-running call the client polls):
   * `"forbidden"` (the default), `"optional"` or `"required"`. Listed as
   * `execution.taskSupport`. The handler is the same either way.
   */
  readonly task?: TaskSupport | undefined
  /**
   * 2026-07-28: how long a call of a task-supporting tool runs as a plain
   * request before it becomes a task; what it asks the client before then
   * goes through input-required rounds. Default: the server's
   * (`McpServer.Options.tasks.after`, 0: a task at once).
   */
  readonly taskAfter?: Duration.Input | undefined
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
  /**
   * 2026-07-28: run the handler once per call, even when it asks the client
   * (`elicit`, `createMessage`, `listRoots`). By default a modern call's
   * handler is replayed from the start with each round's answers, so what it
   * does before an ask may run once per round; a held call's handler waits
   * for the answers instead, in a fiber of the server's, and the client's
   * retry resumes it (`McpServer.Options.hold` bounds how many and how long).
   * For a handler that asks after a side effect it must not repeat.
   */
  readonly hold?: boolean | undefined
}

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * A tool with Schema-typed input, and optionally typed output.
 *
 * - Without `input` the tool takes no arguments (`inputSchema`
 *   `{ type: "object", properties: {} }`, like `Schema.Struct({})`).
 * - An `output` that does not describe a JSON object (`Schema.String`,
 *   `Schema.Array(...)`, a union of structs, ...) is wrapped: the
 *   `outputSchema` is `{ type: "object", properties: { result: <schema> },
 *   required: ["result"] }` and the `structuredContent` is
 *   `{ result: <encoded value> }` (the text copy is its JSON). An object
 *   output is advertised and returned as it is.
 * - A typed failure becomes an `isError` result whose text is its `message`,
 *   or `Tag: {fields as JSON}` for a tagged failure without one (secrets in
 *   `Redacted` fields read `<redacted>`); a defect becomes a generic one.
 *   Both are logged on the server (a warning; an error with the cause),
 *   e.g. `tools/call tool "add" failed (request 3): NotFound: {"title":"x"}`,
 *   and never forwarded to the client by `McpServer.layerLogger`.
 *
 * @example
 * ```ts
 * import { McpTool } from "@effect-mcp/core"
 * import { Effect, Schema } from "effect"
 *
 * const add = McpTool.make("add", {
 *   description: "Adds two numbers",
 *   input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
 *   output: Schema.Struct({ sum: Schema.Finite }),
 *   handler: ({ a, b }) => Effect.succeed({ sum: a + b })
 * })
 * const listNotes = McpTool.make("list_notes", {
 *   output: Schema.Array(Schema.String), // structuredContent: { result: [...] }
 *   handler: () => Effect.succeed(["groceries"])
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: {
  <O extends Schema.Top, E, R>(
    name: string,
    options: Info & {
      readonly input?: undefined
      readonly output: O
      readonly handler: (input: NoInput, context: McpServer.RequestContext) => Effect.Effect<O["Type"], E, R>
    }
  ): McpTool<R | O["EncodingServices"]>
  <E, R>(
    name: string,
    options: Info & {
      readonly input?: undefined
      readonly output?: undefined
      readonly handler: (input: NoInput, context: McpServer.RequestContext) => Effect.Effect<Output, E, R>
    }
  ): McpTool<R>
  <I extends Schema.Top, O extends Schema.Top, E, R>(
    name: string,
    options: Info & {
      readonly input: I
      readonly output: O
      readonly handler: (input: I["Type"], context: McpServer.RequestContext) => Effect.Effect<O["Type"], E, R>
    }
  ): McpTool<R | I["DecodingServices"] | O["EncodingServices"]>
  <I extends Schema.Top, E, R>(
    name: string,
    options: Info & {
      readonly input: I
      readonly output?: undefined
      readonly handler: (input: I["Type"], context: McpServer.RequestContext) => Effect.Effect<Output, E, R>
    }
  ): McpTool<R | I["DecodingServices"]>
} = (
  name: string,
  options: Info & {
    readonly input?: Schema.Top | undefined
    readonly output?: Schema.Top | undefined
    readonly handler: (input: any, context: McpServer.RequestContext) => Effect.Effect<any, any, any>
  }
): McpTool<any> => {
  const input = options.input ?? Schema.Struct({})
  const decode = Schema.decodeUnknownEffect(input as Schema.Codec<unknown, unknown, any>)
  const encode = options.output === undefined
    ? undefined
    : Schema.encodeEffect(options.output as Schema.Codec<unknown, unknown, never, any>)
  const output = options.output === undefined ? undefined : toOutputJsonSchema(options.output)
  const tool = listing(name, options, toObjectJsonSchema(input), output?.schema)
  const structured = (value: unknown): Effect.Effect<McpSchema.CallToolResult, never, any> =>
    Effect.map(Effect.orDie(encode!(value)), (encoded): McpSchema.CallToolResult => {
      const structuredContent = (output?.wrapped ? { result: encoded } : encoded) as Record<string, unknown>
      return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent }
    })
  return {
    _tag: "McpTool",
    name,
    tool,
    cache: options.cache,
    ...taskOptions(options),
    call: (args, context) =>
      Effect.matchEffect(decode(args ?? {}, allErrors), {
        onFailure: (error) => Effect.succeed(invalidArguments(name, error.issue)),
        onSuccess: (input) => {
          const result = Effect.suspend(() => options.handler(input, context))
          return run(
            name,
            context,
            encode === undefined ? Effect.map(result, toResult) : Effect.flatMap(result, structured)
          )
        }
      })
  }
}

const allErrors = { errors: "all" } as const

// the validator (and its JSON Schema library) is loaded by the first call of
// a raw-JSON-Schema tool, not by every program that imports McpTool
let validatorModule: typeof JsonSchemaValidator | undefined
const currentValidator: Effect.Effect<JsonSchemaValidator.JsonSchemaValidator.Service> = Effect.suspend(() =>
  validatorModule !== undefined
    ? validatorModule.JsonSchemaValidator
    : Effect.flatMap(Effect.promise(() => import("./JsonSchemaValidator.ts")), (module) => {
      validatorModule = module
      return module.JsonSchemaValidator
    })
)

/**
 * A tool described by raw JSON Schemas. Arguments are checked against
 * `inputSchema` with the `JsonSchemaValidator` in context; the handler gets
 * them as a plain record. With `outputSchema`, the handler returns the
 * structured value.
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromJsonSchema = <E, R>(
  name: string,
  options: Info & {
    readonly inputSchema: McpSchema.Tool["inputSchema"]
    readonly outputSchema?: McpSchema.Tool["outputSchema"] | undefined
    readonly handler: (
      input: Readonly<Record<string, unknown>>,
      context: McpServer.RequestContext
    ) => Effect.Effect<Output | Readonly<Record<string, unknown>>, E, R>
  }
): McpTool<R> => ({
  _tag: "McpTool",
  name,
  tool: listing(name, options, options.inputSchema, options.outputSchema),
  cache: options.cache,
  ...taskOptions(options),
  call: (args, context) =>
    Effect.flatMap(currentValidator, (validator) => {
      const input = (args ?? {}) as Record<string, unknown>
      const problems = validator.compile(options.inputSchema)(input)
      if (problems.length > 0) {
        return Effect.succeed(errorResult(`Invalid arguments for tool ${name}:\n${problems.join("\n")}`))
      }
      return run(
        name,
        context,
        Effect.map(Effect.suspend(() => options.handler(input, context)), (value) =>
          options.outputSchema === undefined
            ? toResult(value as Output)
            : {
              content: [{ type: "text", text: JSON.stringify(value) }],
              structuredContent: value as Record<string, unknown>
            })
      )
    })
})

/**
 * The annotation that mirrors a tool parameter into the `Mcp-Param-{name}`
 * HTTP header of 2026-07-28 calls (`x-mcp-header`), for a string, integer
 * or boolean property reached through struct fields only. The server checks
 * the header against the argument (`-32020` on a mismatch).
 *
 * @example
 * ```ts
 * import { McpTool } from "@effect-mcp/core"
 * import { Schema } from "effect"
 *
 * const input = Schema.Struct({
 *   region: Schema.String.annotate(McpTool.header("Region")),
 *   query: Schema.String
 * })
 * ```
 *
 * @category annotations
 * @since 0.2.0
 */
export const header = (name: string): { readonly "x-mcp-header": string } => ({ "x-mcp-header": name })

// -----------------------------------------------------------------------------
// Results
// -----------------------------------------------------------------------------

/**
 * An error a handler fails with to answer the call with a JSON-RPC error
 * (`code`, `message`, `data`) instead of an `isError` result, which is what
 * other failures become. A call running as a task ends `failed` with it.
 *
 * @category results
 * @since 0.2.0
 */
export const protocolError = (code: number, message: string, data?: unknown): McpError.McpError => {
  const error = McpError.protocol(code, message, data)
  answeredAsErrors.add(error)
  return error
}

/**
 * An `isError: true` result with one text block.
 *
 * @category results
 * @since 0.1.0
 */
export const errorResult = (message: string): McpSchema.CallToolResult => ({
  content: [{ type: "text", text: message }],
  isError: true
})

/**
 * Turns a handler's return value into a `CallToolResult`.
 *
 * @category results
 * @since 0.1.0
 */
export const toResult = (output: Output): McpSchema.CallToolResult => {
  if (typeof output === "string") return { content: [{ type: "text", text: output }] }
  if (Array.isArray(output)) return { content: output as Array<McpSchema.ContentBlock> }
  if ("content" in output && Array.isArray(output.content)) return output as McpSchema.CallToolResult
  return { content: [output as McpSchema.ContentBlock] }
}

// -----------------------------------------------------------------------------
// Internal
// -----------------------------------------------------------------------------

const listing = (
  name: string,
  info: Info,
  inputSchema: McpSchema.Tool["inputSchema"],
  outputSchema: McpSchema.Tool["outputSchema"] | undefined
): McpSchema.Tool => {
  const tool: Record<string, unknown> = { name }
  if (info.title !== undefined) tool.title = info.title
  if (info.description !== undefined) tool.description = info.description
  tool.inputSchema = inputSchema
  if (outputSchema !== undefined) tool.outputSchema = outputSchema
  if (info.annotations !== undefined) tool.annotations = info.annotations
  if (info.icons !== undefined) tool.icons = info.icons
  if (info.execution !== undefined || (info.task !== undefined && info.task !== "forbidden")) {
    tool.execution = info.task === undefined ? info.execution : { ...info.execution, taskSupport: info.task }
  }
  if (info._meta !== undefined) tool._meta = info._meta
  return tool as McpSchema.Tool
}

const taskOptions = (info: Info): Pick<McpTool, "task" | "taskAfter" | "hold"> => ({
  task: info.task ?? info.execution?.taskSupport ?? "forbidden",
  taskAfter: info.taskAfter === undefined ? undefined : Duration.fromInputUnsafe(info.taskAfter),
  ...(info.hold === true ? { hold: true } : {})
})

// errors about the request rather than the tool's work stay JSON-RPC errors
// (a protocol error with bad params: an input answer that is not one)
const PASSED_THROUGH: ReadonlySet<number> = new Set([
  JsonRpc.ErrorCode.UrlElicitationRequired,
  JsonRpc.ErrorCode.MissingRequiredClientCapability,
  JsonRpc.ErrorCode.InvalidParams
])

// the errors made by `protocolError`
const answeredAsErrors = new WeakSet<McpError.McpError>()

const isPassedThrough = (error: unknown): error is McpError.McpError =>
  McpError.isMcpError(error) && error.reason._tag === "ProtocolError" &&
  (PASSED_THROUGH.has(error.reason.code) || answeredAsErrors.has(error))

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

const invalidArguments = (name: string, issue: SchemaIssue.Issue): McpSchema.CallToolResult => {
  const problems = issueFormatter(issue).issues.map((problem) => {
    const path = problem.path === undefined || problem.path.length === 0
      ? "(arguments)"
      : problem.path.map(String).join(".")
    return `- ${path}: ${problem.message}`
  })
  return errorResult(`Invalid arguments for tool ${name}:\n${problems.join("\n")}`)
}

// Typed failures become error results with their text (`McpError.messageOf`,
// never empty); defects a generic one; both are logged (not to the client).
// Interruption passes through.
const run = <E, R>(
  name: string,
  context: McpServer.RequestContext,
  effect: Effect.Effect<McpSchema.CallToolResult, E, R>
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError, R> =>
  Effect.catchCause(effect, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const error = Cause.findErrorOption(cause)
    const logged = Failure.log(Failure.siteOf(context, "tool", name), cause)
    if (Option.isSome(error) && isPassedThrough(error.value)) return Effect.andThen(logged, Effect.fail(error.value))
    if (Option.isSome(error)) return Effect.as(logged, errorResult(McpError.messageOf(error.value)))
    return Effect.as(logged, errorResult(`Tool ${name} failed with an internal error`))
  })
