/**
 * The client's tool calls: `callTool` (waiting for a task when the call runs
 * as one), `callToolTask`, `task`, `callToolTyped`, and the lookup of a
 * tool's declaration they check results against.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as JsonSchemaValidator from "../../JsonSchemaValidator.ts"
import { type Client, type Notification, type Options, type RequestOptions, ToolError } from "../../McpClient.ts"
import type * as McpClientSession from "../../McpClientSession.ts"
import * as McpError from "../../McpError.ts"
import * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpSession from "../../McpSession.ts"
import type * as McpTask from "../../McpTask.ts"
import { type McpTransport, RequestHeaders } from "../../McpTransport.ts"
import * as StandardHeaders from "../http/standardHeaders.ts"
import * as Headers from "../jsonSchema/headers.ts"
import type * as Cache from "./cache.ts"
import { withMeta } from "./meta.ts"
import * as Task from "./task.ts"
import { checkOutput, decodeStructured } from "./tools.ts"

/** What the calls need of the client. @internal */
export interface Deps {
  readonly session: McpClientSession.ClientSession
  readonly transport: McpTransport["Service"]
  readonly options: Options
  readonly validator: JsonSchemaValidator.JsonSchemaValidator.Service
  /** The client's handlers of server→client requests (they answer a task's input). */
  readonly handlers: ReadonlyArray<McpSession.Handler>
  readonly subscribe: Effect.Effect<Stream.Stream<Notification>, never, Scope.Scope>
  /** Every tool seen in a page, by name. */
  readonly toolIndex: ReadonlyMap<string, McpSchema.Tool>
  readonly tools: Cache.Cache<McpSchema.Tool>
}

const isMethodNotFound = (error: McpError.McpError) =>
  error.reason._tag === "ProtocolError" && error.reason.code === -32601

/** @internal */
export const make = (deps: Deps): Pick<Client, "callTool" | "callToolTask" | "callToolTyped" | "task"> & {
  readonly lookupTool: (name: string) => Effect.Effect<McpSchema.Tool | undefined, McpError.McpError>
} => {
  const { options, session, toolIndex, tools, transport, validator } = deps

  // names still unknown after a refresh, for the cache version they were looked up in
  let unknownTools = { version: -1, names: new Set<string>() }

  /** The tool's declaration: from the index, or after one fetch of the list. */
  const lookupTool = (name: string): Effect.Effect<McpSchema.Tool | undefined, McpError.McpError> =>
    Effect.suspend(() => {
      const known = toolIndex.get(name)
      if (known !== undefined) return Effect.succeed(known)
      const version = tools.version()
      if (unknownTools.version === version && unknownTools.names.has(name)) return Effect.succeed(undefined)
      return Effect.flatMap(tools.cached, (cached) => Option.isSome(cached) ? tools.refresh : tools.get).pipe(
        Effect.map(() => {
          const found = toolIndex.get(name)
          if (found === undefined) {
            if (unknownTools.version !== version) unknownTools = { version, names: new Set() }
            unknownTools.names.add(name)
          }
          return found
        })
      )
    })

  // the common case (no outputSchema, nothing mirrored into headers) takes no
  // extra step: the tool is looked up only when it is not yet in the index
  const checkCall = (name: string) => (result: McpSchema.CallToolResult) => {
    if (result.isError === true) return Effect.succeed(result)
    const known = toolIndex.get(name)
    return known !== undefined
      ? checkOutput(validator, known, result)
      : Effect.flatMap(lookupTool(name), (tool) => checkOutput(validator, tool, result))
  }

  const taskClient: Task.Client = {
    session,
    handlers: new Map(deps.handlers.map((handler) => [handler.method.name, handler])),
    subscribe: deps.subscribe
  }
  const task = (taskId: string, requestOptions?: RequestOptions) => Task.handle(taskClient, taskId, requestOptions)

  // 2026-07-28: the answer may be a task (the extension is declared)
  const send = (
    name: string,
    args: Readonly<Record<string, unknown>> | undefined,
    requestOptions: RequestOptions | undefined
  ) => {
    const call = session.request(
      session.era === "modern" && options.tasks !== false ? Task.CallToolOrTask : McpSchema.CallTool,
      withMeta(args === undefined ? { name } : { name, arguments: args }, requestOptions),
      requestOptions
    )
    // a modern call mirrors the tool's x-mcp-header arguments into Mcp-Param-* headers
    if (session.era !== "modern" || transport.sendsParamHeaders !== true) return call
    return Effect.flatMap(lookupTool(name), (tool) => {
      const params = Headers.headerParams(tool?.inputSchema)
      return params.length === 0
        ? call
        : Effect.provideService(call, RequestHeaders, StandardHeaders.paramHeaders(params, args))
    })
  }

  // 2025-11-25: a task asked for
  const sendAsTask = (
    name: string,
    args: Readonly<Record<string, unknown>> | undefined,
    requestOptions: McpTask.CallOptions | undefined
  ) => {
    if (
      !McpMethod.hasCapability(
        session.serverCapabilities,
        McpMethod.clientCapability("tasks", "requests", "tools", "call")
      )
    ) {
      return Effect.fail(McpError.unsupported(McpSchema.CallTool.name, "server tasks.requests.tools.call"))
    }
    const ttl = requestOptions?.ttl === undefined
      ? {}
      : { ttl: Duration.toMillis(Duration.fromInputUnsafe(requestOptions.ttl)) }
    const params = { name, ...(args === undefined ? {} : { arguments: args }), task: ttl }
    return Effect.map(
      session.request(Task.CallToolAsTask, withMeta(params, requestOptions), requestOptions),
      (created) => created.task.taskId
    )
  }

  // a call interrupted while it waits for its task cancels the task
  const waitFor = (handle: McpTask.Task) =>
    Effect.onInterrupt(handle.result, () => Effect.forkDetach(Effect.ignore(handle.cancel), { startImmediately: true }))

  const callTool = (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    requestOptions?: RequestOptions
  ): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> => {
    const check = checkCall(name)
    // one step per call: a task's result is checked as the result would have been
    const answered = Effect.flatMap(
      send(name, args, requestOptions),
      (result) =>
        Task.isCreated(result) ? Effect.flatMap(waitFor(task(result.taskId, requestOptions)), check) : check(result)
    )
    if (session.era !== "legacy") return answered
    // 2025-11-25: a tool that must run as a task is refused (-32601) when called plainly
    return Effect.catchIf(
      answered,
      isMethodNotFound,
      (error) =>
        Effect.flatMap(lookupTool(name), (tool) =>
          tool?.execution?.taskSupport === "required"
            ? sendAsTask(name, args, requestOptions).pipe(
              Effect.flatMap((taskId) => waitFor(task(taskId, requestOptions))),
              Effect.flatMap(check)
            )
            : Effect.fail(error))
    )
  }

  const callToolTask = (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    requestOptions?: McpTask.CallOptions
  ): Effect.Effect<McpTask.Task, McpError.McpError> =>
    session.era === "legacy"
      ? Effect.map(sendAsTask(name, args, requestOptions), (taskId) => task(taskId, requestOptions))
      : Effect.map(send(name, args, requestOptions), (result) =>
        Task.isCreated(result) ? task(result.taskId, requestOptions) : Task.completed(result))

  const callToolTyped = <S extends Schema.Top>(
    name: string,
    args: Readonly<Record<string, unknown>> | undefined,
    schema: S,
    requestOptions?: RequestOptions
  ): Effect.Effect<S["Type"], McpError.McpError | ToolError, S["DecodingServices"]> =>
    Effect.flatMap(
      callTool(name, args, requestOptions),
      (result): Effect.Effect<S["Type"], McpError.McpError | ToolError, S["DecodingServices"]> =>
        result.isError === true
          ? Effect.fail(new ToolError({ tool: name, result }))
          : decodeStructured(name, result, schema)
    )

  return { callTool, callToolTask, callToolTyped, lookupTool, task }
}
