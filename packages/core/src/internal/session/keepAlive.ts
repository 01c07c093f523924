/**
 * The session engine's keep-alive: a ping every interval, and the session
 * shut down when too many in a row fail.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as McpError from "../../McpError.ts"
import type * as McpSession from "../../McpSession.ts"

/**
 * Pings the peer every `interval`; ends the session after `maxFailures`
 * pings in a row got no answer.
 *
 * @internal
 */
export const run = (
  session: McpSession.Session,
  options: NonNullable<McpSession.Options["keepAlive"]>,
  shutdown: (error: McpError.McpError) => Effect.Effect<void>
): Effect.Effect<void> => {
  const maxFailures = options.maxFailures ?? 3
  // any answer shows the peer is alive, a JSON-RPC error too (a 2026-07-28 server has no `ping`)
  const ping = Effect.exit(session.ping({ timeout: options.timeout ?? options.interval })).pipe(
    Effect.map((exit) => {
      if (Exit.isSuccess(exit)) return exit
      const error = Cause.findErrorOption(exit.cause)
      return Option.isSome(error) && error.value.reason._tag === "ProtocolError" ? Exit.void : exit
    })
  )
  const round = (failures: number): Effect.Effect<void> =>
    Effect.sleep(options.interval).pipe(
      // asked when the interval is over, not when the round is built
      Effect.andThen(
        Effect.suspend(() => options.when === undefined || options.when() ? ping : Effect.succeed(Exit.void))
      ),
      Effect.flatMap((exit) => {
        if (Exit.isSuccess(exit)) return round(0)
        if (failures + 1 >= maxFailures) {
          return shutdown(McpError.transport(`keep-alive: ${maxFailures} pings in a row failed`))
        }
        return round(failures + 1)
      })
    )
  return round(0)
}
