/**
 * Cursor pagination as a `Stream`: fetches the first page, then follows
 * `nextCursor` one page at a time, as the stream is pulled. Two guards stop a
 * server that would page forever: a page limit, and a cursor seen before (a
 * loop, including the same cursor returned twice in a row).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as McpError from "../../McpError.ts"

/** The default page limit of list streams. @internal */
export const DEFAULT_MAX_PAGES = 100

/** One page: its items and the cursor of the next. @internal */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | undefined
  /** The page's freshness hint (2026-07-28), if any. */
  readonly ttlMs?: number | undefined
}

interface State {
  readonly cursor: string | undefined
  readonly page: number
  readonly seen: ReadonlySet<string>
}

/** @internal */
export const paginate = <A>(options: {
  readonly method: string
  readonly maxPages: number
  readonly fetch: (cursor: string | undefined) => Effect.Effect<Page<A>, McpError.McpError>
  /** Called with each page as it arrives (to feed caches). */
  readonly onPage?: ((page: Page<A>) => void) | undefined
}): Stream.Stream<A, McpError.McpError> =>
  Stream.paginate<State, A, McpError.McpError>(
    { cursor: undefined, page: 1, seen: new Set() },
    (state) =>
      Effect.flatMap(options.fetch(state.cursor), (page) => {
        options.onPage?.(page)
        const next = page.nextCursor
        if (next === undefined) return Effect.succeed([page.items, Option.none()] as const)
        if (state.seen.has(next) || next === state.cursor) {
          return Effect.fail(McpError.invalidResult(
            options.method,
            `the server returned the cursor ${
              JSON.stringify(next)
            } again after page ${state.page}: it would page forever`
          ))
        }
        if (state.page >= options.maxPages) {
          return Effect.fail(McpError.invalidResult(
            options.method,
            `the list has more than ${options.maxPages} pages (the limit; raise maxPages to read further)`
          ))
        }
        const seen = new Set(state.seen)
        seen.add(next)
        return Effect.succeed([page.items, Option.some({ cursor: next, page: state.page + 1, seen })] as const)
      })
  )
