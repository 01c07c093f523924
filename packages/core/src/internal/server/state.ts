/**
 * What the parts of a server share: the registry, the live sessions and the
 * services its request handlers and its change announcements read, built
 * once by `makeServer`.
 *
 * @internal
 */
import type * as Ref from "effect/Ref"
import type * as McpServer from "../../McpServer.ts"
import type * as McpSession from "../../McpSession.ts"
import type * as Tasks from "../task/tasks.ts"
import type { Cached } from "./cacheHints.ts"
import type { LiveSession } from "./context.ts"
import type * as Demand from "./demand.ts"
import type { Registry } from "./registry.ts"
import type * as Subscriptions from "./subscriptions.ts"

/** A server's shared state, one per `makeServer`. @internal */
export interface ServerState {
  readonly options: McpServer.Options
  readonly pageSize: number
  readonly middleware: ReadonlyArray<McpServer.Middleware>
  readonly registry: Ref.Ref<Registry>
  /** The sessions counted by `sessionCount`, told of list changes and resource updates. */
  readonly sessions: Set<LiveSession>
  /** The server's part of each session, by the session its handlers are given. */
  readonly lives: WeakMap<McpSession.Session, LiveSession>
  readonly listeners: Subscriptions.Listeners
  readonly demand: Demand.Demand
  readonly tasks: Tasks.Tasks
  /** `result` with the cache hints of `items` (and the server's defaults), for a modern request. */
  readonly withHints: <A extends object>(
    context: McpServer.RequestContext,
    result: A,
    items: ReadonlyArray<Cached>
  ) => A
}
