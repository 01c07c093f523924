/**
 * Shutting the Streamable HTTP endpoint down gracefully. Every session ends
 * at once: its engine first, while its transport still delivers (so a
 * `subscriptions/listen` stream answers `complete`, the other handlers are
 * interrupted), then what is still in flight is answered with an error, and
 * every stream ends after what it holds. Then shutdown waits, bounded by
 * `shutdownTimeout`, until each response of the endpoint is written, so that
 * the HTTP server's own close finds no MCP connection open. Requests that
 * arrive meanwhile get `503`.
 *
 * With a session registry the sessions are handed over rather than ended:
 * their records and stored events stay, and the next request for one, on
 * another replica, takes it over (the streams' ends tell clients to
 * reconnect).
 *
 * `Drains` (`state.ts`) is how a serving layer wrapped with
 * `McpHttpServer.withGracefulShutdown` runs this before its HTTP server
 * closes (the endpoint's own finalizer runs only after).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.ts"
import * as Exchange from "./exchange.ts"
import * as Responses from "./responses.ts"
import * as Sessions from "./sessions.ts"
import * as SseStream from "./sseStream.ts"
import type * as State from "./state.ts"

const SHUTTING_DOWN = "Service Unavailable: the server is shutting down"

/** The answer to a request that arrives while shutting down. @internal */
export const refused = (): HttpServerResponse.HttpServerResponse =>
  Responses.error(503, JsonRpc.ErrorCode.ServerError, SHUTTING_DOWN, { headers: { connection: "close" } })

/** Counts a request as active until its response is written (the request's scope closes then). @internal */
export const track = (state: State.State): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      state.active++
    }),
    () =>
      Effect.sync(() => {
        state.active--
        const idle = state.idle
        if (state.active === 0 && idle !== undefined) {
          state.idle = undefined
          Deferred.doneUnsafe(idle, Effect.void)
        }
      })
  )

const awaitIdle = (state: State.State): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (state.active === 0) return Effect.void
    state.idle ??= Deferred.makeUnsafe<void>()
    return Deferred.await(state.idle)
  })

// the engine ends while the transport still delivers, then the transport
const end = (
  state: State.State,
  session: State.Session,
  forgotten: Array<readonly [State.Session, ReadonlyArray<string>]>
) =>
  Effect.suspend(() => {
    if (session.closed) return Effect.void
    return Effect.andThen(
      Scope.close(session.scope, Exit.void),
      Effect.sync(() => {
        if (session.closed) return
        Exchange.failInflight(session, { code: JsonRpc.ErrorCode.ServerError, message: SHUTTING_DOWN })
        forgotten.push([session, Sessions.detach(state, session, SseStream.end)])
      })
    )
  })

/** Ends every session gracefully and waits (bounded) for the last answers to be written. @internal */
export const drain = (state: State.State): Effect.Effect<void> =>
  Effect.suspend(() => {
    state.closing = true
    const forgotten: Array<readonly [State.Session, ReadonlyArray<string>]> = []
    return Effect.forEach(Sessions.all(state), (session) => end(state, session, forgotten), {
      concurrency: "unbounded",
      discard: true
    }).pipe(
      Effect.andThen(awaitIdle(state)),
      Effect.timeoutOption(state.shutdownTimeout),
      // what the bound cut short closes at once
      Effect.andThen(Sessions.closeAll(state)),
      // with a registry the sessions go on elsewhere: their records and stored events stay
      Effect.andThen(Effect.suspend(() =>
        Effect.forEach(forgotten, ([session, streamIds]) =>
          Sessions.handsOver(state, session)
            ? Sessions.handOver(state, session)
            : Sessions.forget(session, streamIds), { discard: true })
      ))
    )
  })
