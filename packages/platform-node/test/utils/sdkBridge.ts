/**
 * An in-process bridge between our `McpTransport` service and the official
 * SDK's `Transport` interface (`start`, `send`, `close`, `onmessage`,
 * `onclose`, `onerror`), for interop tests in either direction: give `ours`
 * (or `layer`) to an effect-mcp client or server, and `theirs` to the SDK's
 * `Client.connect` or `McpServer.connect`.
 *
 * Messages travel through two queues. Each is copied through JSON on the way
 * (as on a real wire: no shared objects, `undefined` fields dropped) unless
 * `serialize: false`. Messages for the SDK side are held until its `start()`
 * is called, so none is lost before it installs `onmessage`.
 *
 * Closing either side ends both: the SDK's `close()` ends our `incoming`
 * stream, and closing the scope the bridge was made in calls the SDK side's
 * `onclose`.
 */
import type * as JsonRpc from "@effect-mcp/core/JsonRpc"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpTransport from "@effect-mcp/core/McpTransport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Layer, Queue, Stream } from "effect"
import type * as Cause from "effect/Cause"
import type * as Scope from "effect/Scope"

export interface SdkBridge {
  /** Our end, as a service value. */
  readonly ours: McpTransport.McpTransport["Service"]
  /** Our end, as a layer (the bridge itself belongs to the scope it was made in). */
  readonly layer: Layer.Layer<McpTransport.McpTransport>
  /** The SDK's end. */
  readonly theirs: Transport
  /** `true` once either side closed. */
  readonly isClosed: () => boolean
}

export const makeSdkBridge = (
  options?: { readonly serialize?: boolean }
): Effect.Effect<SdkBridge, never, Scope.Scope> =>
  Effect.gen(function*() {
    const copy = options?.serialize === false
      ? <A>(value: A): A => value
      : <A>(value: A): A => JSON.parse(JSON.stringify(value))
    const toOurs = yield* Queue.unbounded<unknown, Cause.Done>()
    const toTheirs = yield* Queue.unbounded<JSONRPCMessage, Cause.Done>()
    const started = yield* Deferred.make<void>()
    let closed = false

    const close = () => {
      if (closed) return
      closed = true
      Queue.endUnsafe(toOurs)
      Queue.endUnsafe(toTheirs)
      theirs.onclose?.()
    }

    const theirs: Transport = {
      start: async () => {
        Deferred.doneUnsafe(started, Effect.void)
      },
      send: async (message) => {
        if (closed) throw new Error("Not connected")
        Queue.offerUnsafe(toOurs, copy(message))
      },
      close: async () => close()
    }

    // deliver to the SDK side, once it has started
    yield* Deferred.await(started).pipe(
      Effect.andThen(Stream.runForEach(Stream.fromQueue(toTheirs), (message) =>
        Effect.try(() => theirs.onmessage?.(message)).pipe(
          Effect.catch((error) =>
            Effect.sync(() =>
              theirs.onerror?.(error.cause instanceof Error ? error.cause : new Error(String(error.cause)))
            )
          )
        ))),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(close)
    )

    const ours = McpTransport.McpTransport.of({
      incoming: Stream.fromQueue(toOurs),
      send: (frame: JsonRpc.Frame) =>
        Effect.suspend(() => {
          if (closed) return Effect.fail(McpError.closed("transport closed"))
          const messages = Array.isArray(frame) ? frame : [frame]
          for (const message of messages) Queue.offerUnsafe(toTheirs, copy(message) as JSONRPCMessage)
          return Effect.void
        })
    })

    return {
      ours,
      layer: Layer.succeed(McpTransport.McpTransport, ours),
      theirs,
      isClosed: () => closed
    }
  })
