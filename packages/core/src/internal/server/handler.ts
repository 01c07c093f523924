/**
 * A server's request handler as its sessions are given it: the request
 * context built for the session, the server's middleware around the handler,
 * and the context readable as `CurrentRequestContext`.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as McpError from "../../McpError.ts"
import type * as McpMethod from "../../McpMethod.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import { CurrentRequestContext, type LiveSession, requestContext } from "./context.ts"
import type { ServerState } from "./state.ts"

/**
 * The session handler of `method`, with how a call of it is held and whether
 * it is idempotent. Built once per server and shared by its sessions.
 *
 * @internal
 */
export const handler = <M extends McpMethod.Request>(
  state: ServerState,
  method: M,
  handle: (
    params: McpMethod.Params<M>,
    context: McpServer.RequestContext,
    live: LiveSession,
    raw: McpServerSession.RequestContext
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>,
  hold?: (params: McpMethod.Params<M>) => boolean,
  idempotent?: (params: McpMethod.Params<M>) => boolean
): McpServerSession.Handler => {
  const { lives, middleware } = state
  return {
    method,
    hold,
    idempotent,
    handle: (params: McpMethod.Params<M>, sessionContext: McpServerSession.RequestContext) => {
      const live = lives.get(sessionContext.session)!
      const context = requestContext(live, sessionContext, live.session!)
      const run = middleware.length === 0 ? handle(params, context, live, sessionContext) : middleware.reduceRight<
        Effect.Effect<unknown, McpError.McpError>
      >(
        (next, wrap) => wrap(context, method.name, params, next),
        Effect.suspend(() => handle(params, context, live, sessionContext))
      )
      // `updateContext` rather than `provideService`, which builds a function per call
      return Effect.updateContext(
        run,
        (current) => Context.add(current, CurrentRequestContext, context)
      ) as Effect.Effect<
        McpMethod.Result<M>,
        McpError.McpError
      >
    }
  }
}
