/**
 * The services of a registered definition: captured when it is registered,
 * provided to its effects (the request's own services win over them).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as McpResource from "../../McpResource.ts"
import type * as McpServer from "../../McpServer.ts"

const missing: unique symbol = Symbol()
const absent = () => missing

/**
 * Runs a definition's effects with the services captured when it was
 * registered; the request's own services (middleware's, the current context)
 * win over them.
 *
 * @internal
 */
export const withServices = <D>(definition: D, services: Context.Context<never>): D => {
  // looked up by key, not through `mapUnsafe`: that would flatten the
  // request's context (its `CurrentRequestContext` overlay) into a new map
  const keys = Array.from(services.mapUnsafe.keys(), (key) => ({ key }) as unknown as Context.Key<any, any>)
  // usually every captured service is already there: then the context is
  // left as it is (a new context costs the fiber its context cache)
  const complete = (current: Context.Context<any>) => {
    for (const key of keys) {
      if (Context.getOrElse(current, key, absent) === missing) return Context.merge(services, current)
    }
    return current
  }
  const provide = <A, E>(effect: Effect.Effect<A, E, any>): Effect.Effect<A, E> =>
    Effect.updateContext(effect, complete) as Effect.Effect<A, E>
  const provideEach = (complete: Readonly<Record<string, McpResource.Complete<any>>>) =>
    Object.fromEntries(
      Object.entries(complete).map((
        [name, f]
      ) => [name, (value: string, ctx: { readonly arguments: Readonly<Record<string, string>> }) =>
        provide(f(value, ctx))]
      )
    )
  const d = definition as unknown as McpServer.Definition<any>
  switch (d._tag) {
    case "McpTool":
      return { ...d, call: (args: unknown, context: McpServer.RequestContext) => provide(d.call(args, context)) } as D
    case "McpResource":
      return { ...d, read: (context: McpServer.RequestContext) => provide(d.read(context)) } as D
    case "McpResourceTemplate": {
      const list = d.list
      const completion = d.completion
      return {
        ...d,
        completion: completion &&
          ((params: any, context: McpServer.RequestContext) => provide(completion(params, context))),
        read: (
          uri: string,
          variables: Readonly<Record<string, string | ReadonlyArray<string>>>,
          context: McpServer.RequestContext
        ) => provide(d.read(uri, variables, context)),
        list: list && ((context: McpServer.RequestContext) => provide(list(context))),
        complete: provideEach(d.complete)
      } as D
    }
    case "McpExtension":
      return {
        ...d,
        requests: d.requests.map((request) => ({
          method: request.method,
          handle: (params: unknown, context: McpServer.RequestContext) => provide(request.handle(params, context))
        }))
      } as D
    case "McpPrompt": {
      const completion = d.completion
      return {
        ...d,
        completion: completion &&
          ((params: any, context: McpServer.RequestContext) => provide(completion(params, context))),
        get: (args: Readonly<Record<string, string>>, context: McpServer.RequestContext) =>
          provide(d.get(args, context)),
        complete: provideEach(d.complete)
      } as D
    }
  }
}
