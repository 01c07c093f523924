/**
 * What the list and lookup handlers share: the definitions a request may
 * see or reach (`McpServer.Options.visible`), one page of a kind's enabled
 * ones, and a result with its next cursor.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as McpServer from "../../McpServer.ts"
import type { Cached } from "./cacheHints.ts"
import * as Pagination from "./pagination.ts"
import { enabled, type Entry, type Kind } from "./registry.ts"
import type { ServerState } from "./state.ts"
import * as Visibility from "./visibility.ts"

/** The items the request's client may see. @internal */
export const shown = <D extends McpServer.Definition<any>>(
  state: ServerState,
  items: Array<D>,
  context: McpServer.RequestContext
): Array<D> => Visibility.shown(state.options.visible, items, context)

/** The definition of an entry, if it is enabled and the request's client may reach it. @internal */
export const reachable = <D extends McpServer.Definition<any>>(
  state: ServerState,
  entry: Entry<D> | undefined,
  context: McpServer.RequestContext
): D | undefined => Visibility.reachable(state.options.visible, entry, context)

/** One page of the enabled definitions of `kind` the request may see, in `order` if given. @internal */
export const list = <D extends Cached & McpServer.Definition<any>>(
  state: ServerState,
  kind: Kind,
  cursor: string | undefined,
  context: McpServer.RequestContext,
  order?: (a: D, b: D) => number
) =>
  Effect.flatMap(Ref.get(state.registry), (current) => {
    const all = shown(state, enabled(current[kind] as unknown as ReadonlyMap<string, Entry<D>>), context)
    return Pagination.page(order === undefined ? all : all.sort(order), cursor, state.pageSize)
  })

/** `result` with `nextCursor` when there is a next page. @internal */
export const withCursor = <A extends object>(result: A, nextCursor: string | undefined): A =>
  nextCursor === undefined ? result : { ...result, nextCursor }
