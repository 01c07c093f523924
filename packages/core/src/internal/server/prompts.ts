/**
 * The `prompts/*` requests a server answers: `prompts/list` and
 * `prompts/get`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpPrompt from "../../McpPrompt.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import { handler } from "./handler.ts"
import { list, reachable, withCursor } from "./listing.ts"
import type { ServerState } from "./state.ts"

/** The handlers of `prompts/list` and `prompts/get`, in that order. @internal */
export const handlers = (state: ServerState): ReadonlyArray<McpServerSession.Handler> => {
  const { registry, withHints } = state
  return [
    handler(
      state,
      McpSchema.ListPrompts,
      (params, context) =>
        Effect.map(list<McpPrompt.McpPrompt>(state, "prompts", params.cursor, context), (page) =>
          withHints(
            context,
            withCursor({
              prompts: page.items.map((prompt) => prompt.prompt)
            }, page.nextCursor),
            page.items
          ))
    ),
    handler(
      state,
      McpSchema.GetPrompt,
      (params, context) =>
        Effect.flatMap(Ref.get(registry), (current) => {
          const prompt = reachable(state, current.prompts.get(params.name), context)
          if (prompt === undefined) {
            return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown prompt: ${params.name}`))
          }
          return prompt.get(params.arguments ?? {}, context)
        }),
      (params) => Ref.getUnsafe(registry).prompts.get(params.name)?.definition.hold === true,
      () => true
    )
  ]
}
