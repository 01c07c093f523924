/**
 * The client notifications a server handles: `notifications/roots/list_changed`,
 * when the options ask for it (`onRootsListChanged`), run through the
 * server's middleware.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import * as McpSession from "../../McpSession.ts"
import { sessionContext } from "./context.ts"
import type { ServerState } from "./state.ts"

/** The notification handlers of a server's sessions (none without `onRootsListChanged`). @internal */
export const handlers = (state: ServerState) => {
  const { lives, middleware, options } = state
  return options.onRootsListChanged === undefined ? [] : [
    // given the server session (see `McpServerSession`)
    McpSession.notificationHandler(McpSchema.RootsListChanged, (params, server) =>
      Effect.gen(function*() {
        const live = lives.get(server)!
        const session = live.session!
        const client = yield* session.clientParams
        if (Option.isNone(client)) {
          return
        }
        const state = yield* session.state
        const context = {
          kind: "notification" as const,
          method: McpSchema.RootsListChanged.name,
          ...sessionContext(
            live,
            session,
            client.value,
            state._tag === "NotInitialized" ? "" : state.protocolVersion
          ),
          logLevel: live.logLevel
        }
        const run = middleware.reduceRight<Effect.Effect<unknown, McpError.McpError>>(
          (next, wrap) => wrap(context, McpSchema.RootsListChanged.name, params, next),
          options.onRootsListChanged!(context)
        )
        yield* Effect.ignore(run)
      }))
  ]
}
