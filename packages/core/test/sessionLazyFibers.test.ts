import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Queue, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { Echo, Note, rawPeer, settle } from "./utils/peer.ts"

// The notification runner and the timeout sweeper start at first use (an idle
// session has neither): these check they behave as if always there.

const setup = (options: Omit<McpSession.Options, "role">) =>
  Effect.gen(function*() {
    const [mine, theirs] = yield* McpTransport.makeInMemoryPair
    const session = yield* McpSession.make({ role: "server", ...options }).pipe(
      Effect.provideService(McpTransport.McpTransport, mine)
    )
    const peer = yield* rawPeer(theirs)
    return { session, peer }
  })

describe("McpSession: fibers started at first use", () => {
  it.effect("closing the scope interrupts the notification runner started by the first notification", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const { peer } = yield* setup({
        notificationHandlers: [
          McpSession.notificationHandler(Note, () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            ))
        ]
      }).pipe(Scope.provide(scope))
      yield* peer.send(JsonRpc.notification("test/note", { text: "a" }))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* Deferred.isDone(interrupted))
    }))

  it.effect("the observer is called before the handler runs; a consumer it feeds sees the notification handled", () =>
    Effect.gen(function*() {
      const handled: Array<string> = []
      const atObserver: Array<ReadonlyArray<string>> = []
      const seen: Array<ReadonlyArray<string>> = []
      const observed = yield* Queue.unbounded<string>()
      // a consumer parked on the observer's queue before anything arrives (as the client's hub)
      yield* Stream.fromQueue(observed).pipe(
        Stream.runForEach(() => Effect.sync(() => seen.push([...handled]))),
        Effect.forkScoped
      )
      yield* settle
      const { peer } = yield* setup({
        notificationHandlers: [
          McpSession.notificationHandler(Note, ({ text }) => Effect.sync(() => handled.push(text)))
        ],
        observeNotification: (message) => {
          if (message.method !== "test/note") return
          atObserver.push([...handled])
          Queue.offerUnsafe(observed, (message.params as { readonly text: string }).text)
        }
      })
      // the first starts the runner, the next find it running
      for (const text of ["a", "b", "c"]) {
        yield* peer.send(JsonRpc.notification("test/note", { text }))
        yield* settle
      }
      assert.deepStrictEqual(atObserver, [[], ["a"], ["a", "b"]])
      assert.deepStrictEqual(seen, [["a"], ["a", "b"], ["a", "b", "c"]])
    }))

  it.effect("a nearer deadline armed after the sweeper started wakes it; the farther one still waits", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup({})
      const far = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 }, { timeout: "60 seconds" })), {
        startImmediately: true
      })
      yield* peer.next
      yield* settle
      const near = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 2 }, { timeout: "5 seconds" })), {
        startImmediately: true
      })
      yield* peer.next
      yield* TestClock.adjust("5 seconds")
      const nearExit = yield* Fiber.join(near)
      assert.isTrue(Exit.isFailure(nearExit))
      assert.isUndefined(far.pollUnsafe())
      assert.strictEqual(yield* session.pendingCount, 1)
      yield* TestClock.adjust("55 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.join(far)))
      assert.strictEqual(yield* session.pendingCount, 0)
    }))

  it.effect("closing the scope fails a pending request after the sweeper started", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { peer, session } = yield* setup({}).pipe(Scope.provide(scope))
      const call = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 })), { startImmediately: true })
      yield* peer.next
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.join(call)
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(yield* session.pendingCount, 0)
    }))
})
