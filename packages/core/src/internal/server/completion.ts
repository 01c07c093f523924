/**
 * The `completion/complete` request a server answers: the completions of a
 * prompt's or a resource template's argument, from its own `completion` or
 * the argument's `complete` (at most `MAX_COMPLETIONS` values).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import * as Failure from "./failure.ts"
import { handler } from "./handler.ts"
import { reachable } from "./listing.ts"
import type { ServerState } from "./state.ts"

const MAX_COMPLETIONS = 100

/** The handler of `completion/complete`. @internal */
export const handlers = (state: ServerState): ReadonlyArray<McpServerSession.Handler> => [
  handler(
    state,
    McpSchema.Complete,
    (params, context) =>
      Effect.flatMap(Ref.get(state.registry), (current): Effect.Effect<McpSchema.CompleteResult, McpError.McpError> => {
        const ref = params.ref
        const owner = ref.type === "ref/prompt"
          ? reachable(state, current.prompts.get(ref.name), context)
          : reachable(state, current.resourceTemplates.get(ref.uri), context)
        if (owner === undefined) {
          const what = ref.type === "ref/prompt" ? `prompt ${ref.name}` : `resource template ${ref.uri}`
          return Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown ${what}`))
        }
        if (owner.completion !== undefined) {
          return owner.completion(params, context)
        }
        const complete = owner.complete[params.argument.name]
        if (complete === undefined) {
          return Effect.succeed({ completion: { values: [], hasMore: false } })
        }
        const site = ref.type === "ref/prompt"
          ? Failure.siteOf(context, "prompt", ref.name, params.argument.name)
          : Failure.siteOf(context, "resource", ref.uri, params.argument.name)
        return Effect.map(
          Failure.guard(
            site,
            Effect.suspend(() => complete(params.argument.value, { arguments: params.context?.arguments ?? {} }))
          ),
          (values) => ({
            completion: {
              values: values.slice(0, MAX_COMPLETIONS),
              total: values.length,
              hasMore: values.length > MAX_COMPLETIONS
            }
          })
        )
      })
  )
]
