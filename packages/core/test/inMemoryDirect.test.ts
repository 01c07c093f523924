/**
 * The in-memory link's direct delivery (a reply completes its caller and a
 * request starts its handler with no reader fiber woken): the rules it must
 * keep, each pinned by a test that fails when the rule is broken.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpError from "../src/McpError.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { Echo, Note, rawPeer, settle, Slow } from "./utils/peer.ts"

/** A server session over one end of a link and a raw peer on the other. */
const setup = (options: Omit<McpSession.Options, "role"> = {}) =>
  Effect.gen(function*() {
    const [client, server] = yield* McpTransport.makeInMemoryPair
    const session = yield* McpSession.make({ role: "server", ...options }).pipe(
      Effect.provideService(McpTransport.McpTransport, server)
    )
    const peer = yield* rawPeer(client)
    return { session, peer }
  })

/** `test/slow` that reports when it starts and when it is interrupted, and never ends. */
const slowHandler = (started: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>) =>
  McpSession.handler(Slow, () =>
    Deferred.succeed(started, undefined).pipe(
      Effect.andThen(Effect.never),
      Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
    ))

const reasonOf = <A>(exit: Exit.Exit<A, McpError.McpError>) => {
  assert.isTrue(Exit.isFailure(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail")
  return (reason as { readonly error: McpError.McpError }).error.reason
}

describe("in-memory link, direct delivery: order", () => {
  it.effect("a notification sent right before a request is handled before the request's handler runs", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const { peer } = yield* setup({
        handlers: [McpSession.handler(Echo, ({ n }) => Effect.sync(() => (order.push(`request ${n}`), { n })))],
        notificationHandlers: [
          McpSession.notificationHandler(Note, ({ text }) => Effect.sync(() => order.push(`note ${text}`)), {
            inline: true
          })
        ]
      })
      // sent in the same turn: the request must queue behind the notification
      yield* peer.send(JsonRpc.notification("test/note", { text: "a" }))
      yield* peer.send(JsonRpc.request(1, "test/echo", { n: 1 }))
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(1, { n: 1 }))
      assert.deepStrictEqual(order, ["note a", "request 1"])
    }))

  it.effect("a request arriving while the reader is mid-message waits for it", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const { peer } = yield* setup({
        handlers: [McpSession.handler(Echo, ({ n }) => Effect.sync(() => (order.push(`request ${n}`), { n })))],
        notificationHandlers: [
          // inline: the reader holds the notification until the gate opens
          McpSession.notificationHandler(Note, ({ text }) =>
            Effect.sync(() => order.push(`note ${text} start`)).pipe(
              Effect.andThen(Deferred.succeed(entered, undefined)),
              Effect.andThen(Deferred.await(gate)),
              Effect.andThen(Effect.sync(() => order.push(`note ${text} end`)))
            ), { inline: true })
        ]
      })
      yield* peer.send(JsonRpc.notification("test/note", { text: "a" }))
      yield* Deferred.await(entered)
      // the queue is empty now, but the reader is busy with the notification
      yield* peer.send(JsonRpc.request(1, "test/echo", { n: 1 }))
      yield* settle
      assert.deepStrictEqual(order, ["note a start"])
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(1, { n: 1 }))
      assert.deepStrictEqual(order, ["note a start", "note a end", "request 1"])
    }))

  it.effect("a burst of interleaved requests and notifications reaches the handlers in order", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const { peer } = yield* setup({
        handlers: [McpSession.handler(Echo, ({ n }) => Effect.sync(() => (order.push(`request ${n}`), { n })))],
        notificationHandlers: [
          McpSession.notificationHandler(Note, ({ text }) => Effect.sync(() => order.push(`note ${text}`)), {
            inline: true
          })
        ]
      })
      const N = 60
      const expected: Array<string> = []
      // irregular: runs of requests (which may go directly) broken by notifications (which queue)
      for (let i = 0; i < N; i++) {
        if (i % 3 === 1 || i % 7 === 0) {
          expected.push(`note ${i}`)
          yield* peer.send(JsonRpc.notification("test/note", { text: String(i) }))
        } else {
          expected.push(`request ${i}`)
          yield* peer.send(JsonRpc.request(i, "test/echo", { n: i }))
        }
        // a turn of the event loop between some of them: later ones arrive on an idle session
        if (i % 10 === 9) {
          yield* settle
        }
      }
      const requests = expected.filter((e) => e.startsWith("request")).length
      const answers = (yield* peer.take(requests)) as ReadonlyArray<JsonRpc.SuccessResponse>
      assert.strictEqual(answers.length, requests)
      yield* settle
      assert.deepStrictEqual(order, expected)
    }))
})

describe("in-memory link, direct delivery: requests handled directly", () => {
  it.effect("notifications/cancelled interrupts a request's handler started directly", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const { peer } = yield* setup({ handlers: [slowHandler(started, interrupted)] })
      // the session is idle: the request starts its handler directly
      yield* peer.send(JsonRpc.request(7, "test/slow", {}))
      yield* Deferred.await(started)
      yield* peer.send(JsonRpc.notification("notifications/cancelled", { requestId: 7, reason: "user" }))
      yield* peer.send(JsonRpc.request(8, "ping"))
      // the first frame after the cancel is the ping's answer: request 7 got none
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(8, {}))
      yield* settle
      assert.isTrue(yield* Deferred.isDone(interrupted), "the cancelled handler was not interrupted")
    }))

  it.effect("a duplicate in-flight id is refused with -32600 and the first handler goes on", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      let starts = 0
      const { peer } = yield* setup({
        handlers: [
          McpSession.handler(Slow, () =>
            Effect.sync(() => starts++).pipe(
              Effect.andThen(Deferred.succeed(started, undefined)),
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            ))
        ]
      })
      yield* peer.send(JsonRpc.request(7, "test/slow", {}))
      yield* Deferred.await(started)
      yield* peer.send(JsonRpc.request(7, "test/slow", {}))
      yield* peer.send(JsonRpc.request(8, "ping"))
      const refusal = (yield* peer.next) as JsonRpc.ErrorResponse
      assert.strictEqual(refusal.id, 7)
      assert.strictEqual(refusal.error?.code, JsonRpc.ErrorCode.InvalidRequest)
      assert.strictEqual(refusal.error.code, -32600)
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(8, {}))
      assert.strictEqual(starts, 1)
      assert.isFalse(yield* Deferred.isDone(interrupted))
    }))

  it.effect("closing the scope interrupts a handler started directly and fails the caller's pending request", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const link = yield* McpTransport.makeInMemoryLink
      const serverScope = yield* Scope.make()
      const serverTransport = Context.get(
        yield* Layer.build(link.server).pipe(Scope.provide(serverScope)),
        McpTransport.McpTransport
      )
      yield* McpSession.make({ role: "server", handlers: [slowHandler(started, interrupted)] }).pipe(
        Effect.provideService(McpTransport.McpTransport, serverTransport),
        Scope.provide(serverScope)
      )
      const clientTransport = Context.get(yield* Layer.build(link.client), McpTransport.McpTransport)
      const client = yield* McpSession.make({ role: "client" }).pipe(
        Effect.provideService(McpTransport.McpTransport, clientTransport)
      )
      const call = yield* Effect.forkChild(Effect.exit(client.request(Slow, {})), { startImmediately: true })
      yield* Deferred.await(started)
      assert.strictEqual(yield* client.pendingCount, 1)
      yield* Scope.close(serverScope, Exit.void)
      assert.isTrue(yield* Deferred.isDone(interrupted), "the handler outlived its session's scope")
      assert.strictEqual(reasonOf(yield* Fiber.join(call))._tag, "ClosedError")
      assert.strictEqual(yield* client.pendingCount, 0)
    }))

  it.effect("a reply completes its caller directly, and many concurrent calls match their replies", () =>
    Effect.gen(function*() {
      const link = yield* McpTransport.makeInMemoryLink
      const server = Context.get(yield* Layer.build(link.server), McpTransport.McpTransport)
      const client = Context.get(yield* Layer.build(link.client), McpTransport.McpTransport)
      yield* McpSession.make({
        role: "server",
        handlers: [McpSession.handler(Echo, ({ n }) => Effect.succeed({ n: n * 2 }))]
      }).pipe(Effect.provideService(McpTransport.McpTransport, server))
      const session = yield* McpSession.make({ role: "client" }).pipe(
        Effect.provideService(McpTransport.McpTransport, client)
      )
      const results = yield* Effect.forEach(
        Array.from({ length: 200 }, (_, i) => i),
        (n) => Effect.map(session.request(Echo, { n }), (r) => r.n),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(results, Array.from({ length: 200 }, (_, i) => i * 2))
      assert.strictEqual(yield* session.pendingCount, 0)
    }))
})

describe("in-memory link, direct delivery: closing", () => {
  it.effect("frames sent before close are delivered; later sends fail with \"transport closed\" on both ends", () =>
    Effect.gen(function*() {
      const link = yield* McpTransport.makeInMemoryLink
      const serverScope = yield* Scope.make()
      const server = Context.get(
        yield* Layer.build(link.server).pipe(Scope.provide(serverScope)),
        McpTransport.McpTransport
      )
      const client = Context.get(yield* Layer.build(link.client), McpTransport.McpTransport)
      const frame = JsonRpc.notification(McpSchema.Initialized.name, {})
      // sent, not yet delivered (delivery is in the link's next task), then closed
      yield* client.send(frame)
      yield* Scope.close(serverScope, Exit.void)
      assert.deepStrictEqual(Array.from(yield* Stream.runCollect(server.incoming)), [frame])
      for (const end of [client, server]) {
        const reason = reasonOf(yield* Effect.exit(end.send(JsonRpc.notification("test/note", { text: "late" }))))
        assert.strictEqual(reason._tag, "ClosedError")
        assert.strictEqual(reason.message, "transport closed")
      }
      // the other side's incoming ends too
      assert.deepStrictEqual(Array.from(yield* Stream.runCollect(client.incoming)), [])
    }))
})
