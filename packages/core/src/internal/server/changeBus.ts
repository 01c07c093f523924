/**
 * Following the changes other replicas publish on an `McpChangeBus`: each is
 * told to this replica's clients as if made here (and not published again).
 * The follower runs for the life of the scope the server is made in (for as
 * long as the process, when there is none).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpChangeBus from "../../McpChangeBus.ts"
import type { Listed } from "./registry.ts"

/** Forks the follower. @internal */
export const follow = (
  bus: McpChangeBus.Service,
  listChanged: (kind: Listed) => Effect.Effect<void>,
  resourceUpdated: (uri: string) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const follower = Stream.runForEach(
      bus.changes,
      (change) => change._tag === "ListChanged" ? listChanged(change.kind) : resourceUpdated(change.uri)
    )
    const scope = yield* Effect.serviceOption(Scope.Scope)
    if (Option.isSome(scope)) yield* Effect.forkIn(follower, scope.value)
    else yield* Effect.forkDetach(follower)
  })
