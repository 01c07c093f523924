/**
 * Two change buses in one process, as two replicas' would be: what one
 * publishes, the other hears (and not itself).
 */
import { Effect, PubSub, Stream } from "effect"
import type * as McpChangeBus from "../../src/McpChangeBus.ts"

export const linkedBuses = Effect.gen(function*() {
  const toA = yield* PubSub.unbounded<McpChangeBus.Change>()
  const toB = yield* PubSub.unbounded<McpChangeBus.Change>()
  const bus = (inbox: typeof toA, outbox: typeof toA): McpChangeBus.Service => ({
    publish: (change) => Effect.asVoid(PubSub.publish(outbox, change)),
    changes: Stream.fromPubSub(inbox)
  })
  return { a: bus(toA, toB), b: bus(toB, toA) }
})
