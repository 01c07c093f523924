/**
 * Test helpers: a peer played by hand over the other end of a transport, and
 * small method declarations for exercising the engine without MCP semantics.
 */
import { Effect, Queue, Schema, Stream } from "effect"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../src/JsonRpc.ts"
import * as McpMethod from "../../src/McpMethod.ts"
import type * as McpTransport from "../../src/McpTransport.ts"

/** A peer that reads and writes raw JSON-RPC frames. */
export interface RawPeer {
  /** The next frame the session sent. */
  readonly next: Effect.Effect<unknown>
  /** The next `n` frames the session sent. */
  readonly take: (n: number) => Effect.Effect<ReadonlyArray<unknown>>
  /** Frames received so far and not yet taken. */
  readonly backlog: Effect.Effect<number>
  readonly send: (frame: unknown) => Effect.Effect<void>
}

export const rawPeer = (
  transport: McpTransport.McpTransport["Service"]
): Effect.Effect<RawPeer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const received = yield* Queue.unbounded<unknown>()
    yield* transport.incoming.pipe(
      Stream.runForEach((frame) => Queue.offer(received, frame)),
      Effect.ignore,
      Effect.forkScoped
    )
    return {
      next: Queue.take(received),
      take: (n) => Effect.forEach(Array.from({ length: n }), () => Queue.take(received)),
      backlog: Queue.size(received),
      send: (frame) => Effect.orDie(transport.send(frame as JsonRpc.Frame))
    }
  })

/** `test/echo`: answers its params. */
export const Echo = McpMethod.request({
  name: "test/echo",
  params: Schema.Struct({ n: Schema.Int, _meta: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) }),
  result: Schema.Struct({ n: Schema.Int }),
  from: "both"
})

/** `test/slow`: a request whose handler the test controls. */
export const Slow = McpMethod.request({
  name: "test/slow",
  params: Schema.Struct({ _meta: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) }),
  result: Schema.Struct({}),
  from: "both"
})

/** `test/note`: a notification. */
export const Note = McpMethod.notification({
  name: "test/note",
  params: Schema.Struct({ text: Schema.String }),
  from: "both"
})

/** Lets the other fibers run until they block (the in-memory transport is synchronous). */
export const settle = Effect.forEach(Array.from({ length: 20 }), () => Effect.yieldNow, { discard: true })

export const request = (id: JsonRpc.RequestId, method: string, params?: unknown) => JsonRpc.request(id, method, params)
