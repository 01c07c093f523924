/**
 * The `resources/*` requests a server answers: `resources/list` (the
 * resources, then what each template lists), `resources/templates/list`,
 * `resources/read` (a resource, else the first template that matches), and
 * `resources/subscribe` / `resources/unsubscribe` (counted in the demand).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import * as McpResource from "../../McpResource.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import type { Cached } from "./cacheHints.ts"
import * as Demand from "./demand.ts"
import { handler } from "./handler.ts"
import { list, reachable, shown, withCursor } from "./listing.ts"
import * as Pagination from "./pagination.ts"
import { enabled } from "./registry.ts"
import type { ServerState } from "./state.ts"
import * as Visibility from "./visibility.ts"

/**
 * The handlers of `resources/list`, `resources/templates/list`,
 * `resources/read`, `resources/subscribe` and `resources/unsubscribe`, in
 * that order.
 *
 * @internal
 */
export const handlers = (state: ServerState): ReadonlyArray<McpServerSession.Handler> => {
  const { demand, registry, withHints } = state
  const readHolds = (params: McpSchema.ReadResourceRequestParams) =>
    Visibility.readHolds(Ref.getUnsafe(registry), params.uri)
  return [
    handler(state, McpSchema.ListResources, (params, context) =>
      Effect.gen(function*() {
        const current = yield* Ref.get(registry)
        const listed = yield* Effect.forEach(
          shown(state, enabled(current.resourceTemplates), context),
          (template) =>
            template.list === undefined
              ? Effect.succeed([])
              : Effect.map(
                template.list(context),
                (resources) => resources.map((resource) => ({ resource, cache: template.cache }))
              )
        )
        const all: ReadonlyArray<{ readonly resource: McpSchema.Resource } & Cached> = [
          ...shown(state, enabled(current.resources), context),
          ...listed.flat()
        ]
        const page = yield* Pagination.page(all, params.cursor, state.pageSize)
        return withHints(
          context,
          withCursor({
            resources: page.items.map((item) => item.resource)
          }, page.nextCursor),
          page.items
        )
      })),
    handler(state, McpSchema.ListResourceTemplates, (params, context) =>
      Effect.map(
        list<McpResource.McpResourceTemplate>(state, "resourceTemplates", params.cursor, context),
        (page) =>
          withHints(
            context,
            withCursor({
              resourceTemplates: page.items.map((template) => template.template)
            }, page.nextCursor),
            page.items
          )
      )),
    handler(
      state,
      McpSchema.ReadResource,
      (params, context) =>
        Effect.flatMap(Ref.get(registry), (current) => {
          // a retry with input answers is about one caller: not to be cached
          const retried = "requestState" in params || "inputResponses" in params
          const answer = (
            definition: Cached,
            read: Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
          ) =>
            Effect.map(
              read,
              (result) =>
                withHints(
                  context,
                  result,
                  retried ? [{ cache: { ttlMs: 0, cacheScope: "private" } }] : [definition]
                )
            )
          const resource = reachable(state, current.resources.get(params.uri), context)
          if (resource !== undefined) {
            return answer(resource, resource.read(context))
          }
          for (const template of shown(state, enabled(current.resourceTemplates), context)) {
            const variables = template.match(params.uri)
            if (Option.isSome(variables)) {
              return answer(template, template.read(params.uri, variables.value, context))
            }
          }
          const notFound = McpResource.notFound(params.uri)
          // 2026-07-28 answers an unknown resource as bad params
          return Effect.fail(
            context.era === "modern"
              ? McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Resource not found: ${params.uri}`, {
                uri: params.uri
              })
              : notFound
          )
        }),
      readHolds,
      () => true
    ),
    handler(state, McpSchema.Subscribe, (params, _, live) =>
      Effect.suspend(() => {
        if (live.subscriptions?.has(params.uri) === true) {
          return Effect.succeed({})
        }
        return Effect.as(
          Effect.tap(
            Demand.acquire(demand, params.uri),
            () => Effect.sync(() => (live.subscriptions ??= new Set()).add(params.uri))
          ),
          {}
        )
      })),
    handler(
      state,
      McpSchema.Unsubscribe,
      (params, _, live) =>
        Effect.suspend(() =>
          live.subscriptions?.delete(params.uri) === true
            ? Effect.as(Demand.release(demand, params.uri), {})
            : Effect.succeed({})
        )
    )
  ]
}
