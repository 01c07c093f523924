/**
 * A raw JSON-RPC peer over a transport, for tests that speak the protocol by
 * hand (core's in-memory task tests, platform-node's stdio ones): `call`
 * sends a request and waits for its answer (routed by id); everything else
 * the other side sends (its notifications and requests) is queued in
 * `others`.
 */
import { assert } from "@effect/vitest"
import { Deferred, Effect, Queue, Stream } from "effect"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../src/JsonRpc.ts"
import type * as McpTransport from "../../src/McpTransport.ts"

/** An answer to one of the peer's requests. */
export interface Answer {
  readonly id: number
  readonly result?: any
  readonly error?: { readonly code: number; readonly message: string; readonly data?: any }
}

export const rpcPeer = (transport: McpTransport.McpTransport["Service"]): Effect.Effect<
  {
    readonly call: (method: string, params: Record<string, unknown>) => Effect.Effect<Answer>
    readonly notify: (method: string, params?: Record<string, unknown>) => Effect.Effect<void>
    readonly send: (frame: unknown) => Effect.Effect<void>
    /** The next request from the other side with `method` (notifications skipped; at most 50 frames). */
    readonly nextRequest: (method: string) => Effect.Effect<any>
    readonly others: Queue.Queue<any>
  },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const pending = new Map<number, Deferred.Deferred<Answer>>()
    const others = yield* Queue.unbounded<any>()
    yield* transport.incoming.pipe(
      Stream.runForEach((frame: any) => {
        const waiting = "method" in frame ? undefined : pending.get(frame.id)
        if (waiting === undefined) return Queue.offer(others, frame)
        pending.delete(frame.id)
        return Deferred.succeed(waiting, frame as Answer)
      }),
      Effect.ignore,
      Effect.forkScoped
    )
    let nextId = 0
    const send = (frame: unknown) => Effect.orDie(transport.send(frame as JsonRpc.Frame))
    const call = (method: string, params: Record<string, unknown>) =>
      Effect.gen(function*() {
        const id = ++nextId
        const answer = yield* Deferred.make<Answer>()
        pending.set(id, answer)
        yield* send(JsonRpc.request(id, method, params))
        return yield* Deferred.await(answer)
      })
    const notify = (method: string, params?: Record<string, unknown>) =>
      send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) })
    const nextRequest = (method: string) =>
      Effect.gen(function*() {
        for (let i = 0; i < 50; i++) {
          const frame = yield* Queue.take(others)
          if (frame.method === method && frame.id !== undefined) return frame
        }
        return assert.fail(`no ${method} request from the other side`)
      })
    return { call, notify, send, nextRequest, others }
  })
