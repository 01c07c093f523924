/**
 * The `tools/*` requests a server answers: `tools/list` (by name) and
 * `tools/call` (directly, or as a task), and the header parameters of a
 * tool's input schema.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import type * as McpTool from "../../McpTool.ts"
import { type HeaderParam, headerParams } from "../jsonSchema/headers.ts"
import { handler } from "./handler.ts"
import { list, reachable, withCursor } from "./listing.ts"
import type { ServerState } from "./state.ts"
import * as TaskCall from "./task/call.ts"

// tools are listed by name: the same order on every replica and every call
const byName = (a: { readonly name: string }, b: { readonly name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

// computed once per tool definition
const headerCache = new WeakMap<McpTool.McpTool<any>, ReadonlyArray<HeaderParam>>()

/** The header parameters of a tool's input schema, computed once per tool definition. @internal */
export const headersOf = (tool: McpTool.McpTool<any>): ReadonlyArray<HeaderParam> => {
  let params = headerCache.get(tool)
  if (params === undefined) {
    params = headerParams(tool.tool.inputSchema)
    headerCache.set(tool, params)
  }
  return params
}

/** The handlers of `tools/list` and `tools/call`, in that order. @internal */
export const handlers = (state: ServerState): ReadonlyArray<McpServerSession.Handler> => {
  const { registry, tasks, withHints } = state
  return [
    handler(
      state,
      McpSchema.ListTools,
      (params, context) =>
        Effect.map(list<McpTool.McpTool>(state, "tools", params.cursor, context, byName), (page) =>
          withHints(
            context,
            withCursor({
              tools: page.items.map((tool) => tool.tool)
            }, page.nextCursor),
            page.items
          ))
    ),
    handler(
      state,
      McpSchema.CallTool,
      (params, context, live, raw) => {
        const tool = reachable(state, Ref.getUnsafe(registry).tools.get(params.name), context)
        if (tool === undefined) {
          return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown tool: ${params.name}`))
        }
        // a task only when the tool takes one and a 2025-11-25 request does not ask
        return tool.task === "forbidden" && (context.era === "modern" || params.task === undefined)
          ? tool.call(params.arguments, context)
          : TaskCall.call(tasks, tool, params, context, raw, live) as Effect.Effect<
            McpSchema.CallToolResult,
            McpError.McpError
          >
      },
      (params) => Ref.getUnsafe(registry).tools.get(params.name)?.definition.hold === true,
      (params) => {
        const annotations = Ref.getUnsafe(registry).tools.get(params.name)?.definition.tool.annotations
        return annotations?.idempotentHint === true || annotations?.readOnlyHint === true
      }
    )
  ]
}
