import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Logger, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpError from "../src/McpError.ts"
import * as McpMethod from "../src/McpMethod.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { Echo, Note, rawPeer, settle, Slow } from "./utils/peer.ts"

/** A session of `role` over one end of an in-memory pair, and a raw peer on the other end. */
const setup = (options: Omit<McpSession.Options, "role"> & { readonly role?: "client" | "server" } = {}) =>
  Effect.gen(function*() {
    const [mine, theirs] = yield* McpTransport.makeInMemoryPair
    const session = yield* McpSession.make({ role: "client", ...options }).pipe(
      Effect.provideService(McpTransport.McpTransport, mine)
    )
    const peer = yield* rawPeer(theirs)
    return { session, peer }
  })

const reasonOf = <A>(exit: Exit.Exit<A, McpError.McpError>) => {
  assert.isTrue(Exit.isFailure(exit))
  const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(error?._tag, "Fail")
  return (error as { readonly error: McpError.McpError }).error.reason
}

const pollExit = <A, E>(fiber: Fiber.Fiber<A, E>) => fiber.pollUnsafe()

describe("McpSession: outgoing requests", () => {
  it.effect("matches 1,000 concurrent replies that arrive out of order", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const calls = yield* Effect.forEach(
        Array.from({ length: 1000 }, (_, i) => i),
        (n) => Effect.forkChild(session.request(Echo, { n }), { startImmediately: true })
      )
      const requests = (yield* peer.take(1000)) as ReadonlyArray<JsonRpc.Request>
      assert.strictEqual(yield* session.pendingCount, 1000)
      // answer odd ids backwards, then even ids forwards
      const order = [
        ...requests.filter((r) => Number(r.id) % 2 === 1).reverse(),
        ...requests.filter((r) => Number(r.id) % 2 === 0)
      ]
      for (const request of order) {
        yield* peer.send(JsonRpc.success(request.id, { n: (request.params as { n: number }).n * 10 }))
      }
      const results = yield* Fiber.joinAll(calls)
      assert.deepStrictEqual(results.map((r) => r.n), Array.from({ length: 1000 }, (_, i) => i * 10))
      assert.strictEqual(yield* session.pendingCount, 0)
    }))

  it.effect("an error response fails the call with the peer's code, message and data", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const call = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 })), { startImmediately: true })
      const request = (yield* peer.next) as JsonRpc.Request
      yield* peer.send(JsonRpc.failure(request.id, { code: -32042, message: "needs a URL", data: { x: 1 } }))
      const reason = reasonOf(yield* Fiber.join(call))
      assert.deepStrictEqual(
        reason,
        new McpError.ProtocolError({ code: -32042, description: "needs a URL", data: { x: 1 } })
      )
    }))

  it.effect("a result that does not match the method's schema fails with InvalidResultError", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const call = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 })), { startImmediately: true })
      const request = (yield* peer.next) as JsonRpc.Request
      yield* peer.send(JsonRpc.success(request.id, { n: "one" }))
      const reason = reasonOf(yield* Fiber.join(call))
      assert.strictEqual(reason._tag, "InvalidResultError")
    }))

  it.effect("interrupting the caller sends notifications/cancelled and removes the pending entry", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const call = yield* Effect.forkChild(session.request(Echo, { n: 1 }), { startImmediately: true })
      const request = (yield* peer.next) as JsonRpc.Request
      assert.strictEqual(yield* session.pendingCount, 1)
      yield* Fiber.interrupt(call)
      const cancelled = (yield* peer.next) as JsonRpc.Notification
      assert.strictEqual(cancelled.method, "notifications/cancelled")
      assert.strictEqual((cancelled.params as { requestId: number }).requestId, request.id)
      assert.strictEqual(yield* session.pendingCount, 0)
      // a late reply for the cancelled id is dropped; the session goes on
      yield* peer.send(JsonRpc.success(request.id, { n: 1 }))
      const next = yield* Effect.forkChild(session.request(Echo, { n: 2 }), { startImmediately: true })
      const second = (yield* peer.next) as JsonRpc.Request
      yield* peer.send(JsonRpc.success(second.id, { n: 2 }))
      assert.deepStrictEqual(yield* Fiber.join(next), { n: 2 })
    }))

  it.effect("closing the scope fails every pending call with ClosedError and leaves the map empty", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { peer, session } = yield* setup().pipe(Scope.provide(scope))
      const calls = yield* Effect.forEach(
        [1, 2, 3],
        (n) => Effect.forkChild(Effect.exit(session.request(Echo, { n })), { startImmediately: true })
      )
      yield* peer.take(3)
      assert.strictEqual(yield* session.pendingCount, 3)
      yield* Scope.close(scope, Exit.void)
      for (const call of calls) assert.strictEqual(reasonOf(yield* Fiber.join(call))._tag, "ClosedError")
      assert.strictEqual(yield* session.pendingCount, 0)
      assert.isFalse(yield* session.isOpen)
      // a call on a session whose scope has closed fails at once
      assert.strictEqual(reasonOf(yield* Effect.exit(session.request(Echo, { n: 4 })))._tag, "ClosedError")
    }))

  it.effect("the peer going away fails pending calls at once", () =>
    Effect.gen(function*() {
      const link = yield* McpTransport.makeInMemoryLink
      const theirScope = yield* Scope.make()
      const theirs = Context.get(
        yield* Layer.build(link.server).pipe(Scope.provide(theirScope)),
        McpTransport.McpTransport
      )
      const mine = Context.get(yield* Layer.build(link.client), McpTransport.McpTransport)
      const session = yield* McpSession.make({ role: "client" }).pipe(
        Effect.provideService(McpTransport.McpTransport, mine)
      )
      const peer = yield* rawPeer(theirs)
      const call = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 })), { startImmediately: true })
      yield* peer.next
      yield* Scope.close(theirScope, Exit.void)
      assert.strictEqual(reasonOf(yield* Fiber.join(call))._tag, "ClosedError")
      yield* session.awaitClose
      assert.strictEqual(yield* session.pendingCount, 0)
    }))

  it.effect("a request needing an undeclared capability fails with UnsupportedError and sends nothing", () =>
    Effect.gen(function*() {
      const Gated = McpMethod.request({
        name: "test/gated",
        params: Echo.params,
        result: Echo.result,
        from: "client",
        capability: McpMethod.serverCapability("tools")
      })
      const { peer, session } = yield* setup({ capabilities: { own: {}, peer: () => ({ prompts: {} }) } })
      const reason = reasonOf(yield* Effect.exit(session.request(Gated, { n: 1 })))
      assert.deepStrictEqual(
        reason,
        new McpError.UnsupportedError({ method: "test/gated", capability: "server tools" })
      )
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))
})

describe("McpSession: timeouts (TestClock)", () => {
  it.effect("the default timeout fires at exactly 60 s and sends notifications/cancelled", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const call = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 })), { startImmediately: true })
      const request = (yield* peer.next) as JsonRpc.Request
      yield* TestClock.adjust("59999 millis")
      assert.isUndefined(pollExit(call))
      yield* TestClock.adjust("1 millis")
      const reason = reasonOf(yield* Fiber.join(call))
      assert.deepStrictEqual(reason, new McpError.TimeoutError({ method: "test/echo", timeout: 60000, kind: "idle" }))
      const cancelled = (yield* peer.next) as JsonRpc.Notification
      assert.strictEqual(cancelled.method, "notifications/cancelled")
      assert.strictEqual((cancelled.params as { requestId: number }).requestId, request.id)
      assert.strictEqual(yield* session.pendingCount, 0)
    }))

  it.effect("a send that blocks (blockingSend) still times out and fails on close", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const blocked = McpTransport.McpTransport.of({
        incoming: Stream.never,
        send: () => Effect.never,
        blockingSend: true
      })
      const session = yield* McpSession.make({ role: "client" }).pipe(
        Effect.provideService(McpTransport.McpTransport, blocked),
        Scope.provide(scope)
      )
      const timed = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 }, { timeout: "1 second" })), {
        startImmediately: true
      })
      yield* TestClock.adjust("1 second")
      assert.strictEqual(reasonOf(yield* Fiber.join(timed))._tag, "TimeoutError")
      const pending = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 2 })), { startImmediately: true })
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(reasonOf(yield* Fiber.join(pending))._tag, "ClosedError")
    }))

  it.effect("a per-call timeout overrides the default", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup({ defaultTimeout: "1 hour" })
      const call = yield* Effect.forkChild(Effect.exit(session.request(Echo, { n: 1 }, { timeout: "5 seconds" })), {
        startImmediately: true
      })
      yield* peer.next
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(pollExit(call))
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(reasonOf(yield* Fiber.join(call))._tag, "TimeoutError")
    }))

  it.effect("progress pushes the idle timeout back and reaches the caller", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const seen: Array<McpSession.Progress> = []
      const call = yield* Effect.forkChild(
        Effect.exit(session.request(Echo, { n: 1 }, { onProgress: (p) => Effect.sync(() => seen.push(p)) })),
        { startImmediately: true }
      )
      const request = (yield* peer.next) as JsonRpc.Request
      const token = (request.params as { _meta: { progressToken: number } })._meta.progressToken
      assert.strictEqual(token, request.id)
      yield* TestClock.adjust("40 seconds")
      yield* peer.send(
        JsonRpc.notification("notifications/progress", { progressToken: token, progress: 1, total: 3, message: "one" })
      )
      yield* settle
      yield* TestClock.adjust("59999 millis") // 99.999 s after the start, 59.999 s after the progress
      assert.isUndefined(pollExit(call))
      assert.deepStrictEqual(seen.map((p) => [p.progress, p.total, p.message, p.receivedAt]), [[1, 3, "one", 40000]])
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(reasonOf(yield* Fiber.join(call))._tag, "TimeoutError")
    }))

  it.effect("progress does not push the timeout back when resetTimeoutOnProgress is false", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const call = yield* Effect.forkChild(
        Effect.exit(session.request(Echo, { n: 1 }, { onProgress: () => Effect.void, resetTimeoutOnProgress: false })),
        { startImmediately: true }
      )
      const request = (yield* peer.next) as JsonRpc.Request
      yield* TestClock.adjust("40 seconds")
      yield* peer.send(JsonRpc.notification("notifications/progress", { progressToken: request.id, progress: 1 }))
      yield* settle
      yield* TestClock.adjust("20 seconds")
      assert.strictEqual(reasonOf(yield* Fiber.join(call))._tag, "TimeoutError")
    }))

  it.effect("the maximum total wins over progress", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const call = yield* Effect.forkChild(
        Effect.exit(session.request(Echo, { n: 1 }, { onProgress: () => Effect.void, maxTotalTimeout: "90 seconds" })),
        { startImmediately: true }
      )
      const request = (yield* peer.next) as JsonRpc.Request
      for (let i = 0; i < 2; i++) {
        yield* TestClock.adjust("30 seconds")
        yield* peer.send(JsonRpc.notification("notifications/progress", { progressToken: request.id, progress: i }))
        yield* settle
      }
      yield* TestClock.adjust("29999 millis")
      assert.isUndefined(pollExit(call))
      yield* TestClock.adjust("1 millis")
      const reason = reasonOf(yield* Fiber.join(call))
      assert.deepStrictEqual(reason, new McpError.TimeoutError({ method: "test/echo", timeout: 90000, kind: "total" }))
    }))

  it.effect("requestStream yields progress events then the result", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup()
      const events = yield* Effect.forkChild(
        Stream.runCollect(McpSession.requestStream(session, Echo, { n: 7 })),
        { startImmediately: true }
      )
      const request = (yield* peer.next) as JsonRpc.Request
      yield* peer.send(JsonRpc.notification("notifications/progress", { progressToken: request.id, progress: 1 }))
      yield* peer.send(JsonRpc.notification("notifications/progress", { progressToken: request.id, progress: 2 }))
      yield* settle
      yield* peer.send(JsonRpc.success(request.id, { n: 7 }))
      const collected = yield* Fiber.join(events)
      assert.deepStrictEqual(collected.map((e) => e._tag === "Progress" ? e.progress.progress : e.result), [1, 2, {
        n: 7
      }])
    }))
})

describe("McpSession: incoming requests", () => {
  const slowHandler = (started: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>) =>
    McpSession.handler(Slow, () =>
      Deferred.succeed(started, undefined).pipe(
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
      ))

  it.effect("notifications/cancelled interrupts the handler fiber and no response is sent", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const { peer } = yield* setup({ role: "server", handlers: [slowHandler(started, interrupted)] })
      yield* peer.send(JsonRpc.request(7, "test/slow", {}))
      yield* Deferred.await(started)
      yield* peer.send(JsonRpc.notification("notifications/cancelled", { requestId: 7, reason: "user" }))
      yield* Deferred.await(interrupted)
      yield* peer.send(JsonRpc.request(8, "ping"))
      // the first frame after the cancel is the ping's answer: request 7 got none
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(8, {}))
    }))

  it.effect("closing the scope interrupts running handlers", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const { peer } = yield* setup({ role: "server", handlers: [slowHandler(started, interrupted)] }).pipe(
        Scope.provide(scope)
      )
      yield* peer.send(JsonRpc.request(1, "test/slow", {}))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* Deferred.isDone(interrupted))
    }))

  it.effect("handlers answer concurrently, each with its own id", () =>
    Effect.gen(function*() {
      const { peer } = yield* setup({
        role: "server",
        handlers: [McpSession.handler(Echo, ({ n }) => Effect.as(Effect.sleep(`${10 - n} seconds`), { n }))]
      })
      for (let n = 0; n < 10; n++) yield* peer.send(JsonRpc.request(`r${n}`, "test/echo", { n }))
      yield* settle
      yield* TestClock.adjust("10 seconds")
      const replies = (yield* peer.take(10)) as ReadonlyArray<JsonRpc.SuccessResponse>
      // the slowest (n = 0) answers last
      assert.deepStrictEqual(replies.map((r) => r.id), Array.from({ length: 10 }, (_, i) => `r${9 - i}`))
      assert.deepStrictEqual(
        replies.map((r) => (r.result as { n: number }).n),
        Array.from({ length: 10 }, (_, i) => 9 - i)
      )
    }))

  it.effect("a handler's McpError becomes its JSON-RPC error; a defect becomes -32603 without details", () =>
    Effect.gen(function*() {
      const Fails = McpMethod.request({
        ...Echo,
        name: "test/fails",
        params: Echo.params,
        result: Echo.result,
        from: "both"
      })
      const Dies = McpMethod.request({ name: "test/dies", params: Echo.params, result: Echo.result, from: "both" })
      const { peer } = yield* setup({
        role: "server",
        handlers: [
          McpSession.handler(
            Fails,
            () => Effect.fail(McpError.protocol(-32002, "Resource not found", { uri: "x://y" }))
          ),
          McpSession.handler(Dies, () => Effect.die(new Error("secret stack details")))
        ]
      })
      yield* peer.send(JsonRpc.request(1, "test/fails", { n: 1 }))
      assert.deepStrictEqual(
        yield* peer.next,
        JsonRpc.failure(1, { code: -32002, message: "Resource not found", data: { uri: "x://y" } })
      )
      yield* peer.send(JsonRpc.request(2, "test/dies", { n: 1 }))
      assert.deepStrictEqual(yield* peer.next, JsonRpc.failure(2, { code: -32603, message: "Internal error" }))
    }))

  it.effect("bad input gets its error code and the session keeps working", () =>
    Effect.gen(function*() {
      const { peer } = yield* setup({
        role: "server",
        handlers: [McpSession.handler(Echo, (params) => Effect.succeed({ n: params.n }))]
      })
      const expectError = (frame: unknown, id: JsonRpc.RequestId | null, code: number) =>
        Effect.gen(function*() {
          yield* peer.send(frame)
          const answer = (yield* peer.next) as JsonRpc.ErrorResponse
          assert.strictEqual(answer.id, id)
          assert.strictEqual(answer.error.code, code)
          return answer.error.message
        })
      yield* expectError(new JsonRpc.Malformed("Unexpected token"), null, -32700)
      yield* expectError({ jsonrpc: "1.0", id: 3, method: "test/echo" }, 3, -32600)
      yield* expectError({ hello: "world" }, null, -32600)
      yield* expectError(42, null, -32600)
      yield* expectError({ jsonrpc: "2.0", id: { nested: true }, method: "test/echo" }, null, -32600)
      yield* expectError({ jsonrpc: "2.0", id: 4, method: "test/echo", params: "text" }, 4, -32600)
      yield* expectError([JsonRpc.request(5, "ping")], null, -32600)
      yield* expectError(JsonRpc.request(6, "no/such/method"), 6, -32601)
      const invalid = yield* expectError(JsonRpc.request(7, "test/echo", { n: "seven" }), 7, -32602)
      assert.match(invalid, /\["n"\]/)
      // a response for an id we never used is dropped without an answer
      yield* peer.send(JsonRpc.success(999, {}))
      yield* peer.send(JsonRpc.request(8, "test/echo", { n: 8 }))
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(8, { n: 8 }))
    }))

  it.effect("notifications reach their handler in order; unknown ones are dropped", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { peer } = yield* setup({
        role: "server",
        notificationHandlers: [McpSession.notificationHandler(Note, ({ text }) => Effect.sync(() => seen.push(text)))]
      })
      yield* peer.send(JsonRpc.notification("test/note", { text: "a" }))
      yield* peer.send(JsonRpc.notification("test/unknown", {}))
      yield* peer.send(JsonRpc.notification("test/note", { text: 1 }))
      yield* peer.send(JsonRpc.notification("test/note", { text: "b" }))
      yield* peer.send(JsonRpc.request(1, "ping"))
      yield* peer.next
      yield* settle
      assert.deepStrictEqual(seen, ["a", "b"])
    }))

  it.effect("reportProgress sends progress with the caller's token, and nothing without one", () =>
    Effect.gen(function*() {
      const { peer } = yield* setup({
        role: "server",
        handlers: [
          McpSession.handler(Slow, (_, context) => Effect.as(context.reportProgress({ progress: 1, total: 2 }), {}))
        ]
      })
      yield* peer.send(JsonRpc.request(1, "test/slow", { _meta: { progressToken: "tok" } }))
      assert.deepStrictEqual(
        yield* peer.next,
        JsonRpc.notification("notifications/progress", { progress: 1, total: 2, progressToken: "tok" })
      )
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(1, {}))
      yield* peer.send(JsonRpc.request(2, "test/slow", {}))
      assert.deepStrictEqual(yield* peer.next, JsonRpc.success(2, {}))
    }))
})

describe("McpSession: request origin", () => {
  it.effect("frames sent while a handler runs carry its request id as RequestOrigin", () =>
    Effect.gen(function*() {
      const [mine, theirs] = yield* McpTransport.makeInMemoryPair
      const origins: Array<[string, unknown]> = []
      const recording = McpTransport.McpTransport.of({
        incoming: mine.incoming,
        send: (frame) =>
          Effect.gen(function*() {
            origins.push([(frame as { method?: string }).method ?? "response", yield* McpTransport.RequestOrigin])
            return yield* mine.send(frame)
          }),
        routesByOrigin: true
      })
      yield* McpSession.make({
        role: "server",
        handlers: [McpSession.handler(Slow, (_, context) => Effect.as(context.reportProgress({ progress: 1 }), {}))]
      }).pipe(Effect.provideService(McpTransport.McpTransport, recording))
      const peer = yield* rawPeer(theirs)
      yield* peer.send(JsonRpc.request("r1", "test/slow", { _meta: { progressToken: 1 } }))
      yield* peer.take(2)
      assert.deepStrictEqual(origins, [["notifications/progress", "r1"], ["response", "r1"]])
    }))
})

describe("McpSession: ping and keep-alive", () => {
  it.effect("ping works in both directions between two engines", () =>
    Effect.gen(function*() {
      const [a, b] = yield* McpTransport.makeInMemoryPair
      const client = yield* McpSession.make({ role: "client" }).pipe(
        Effect.provideService(McpTransport.McpTransport, a)
      )
      const server = yield* McpSession.make({ role: "server" }).pipe(
        Effect.provideService(McpTransport.McpTransport, b)
      )
      yield* client.ping()
      yield* server.ping()
      assert.strictEqual(yield* client.pendingCount, 0)
      assert.strictEqual(yield* server.pendingCount, 0)
    }))

  it.effect("keep-alive ends the session after maxFailures unanswered pings", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup({
        keepAlive: { interval: "10 seconds", timeout: "5 seconds", maxFailures: 2 }
      })
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(((yield* peer.next) as JsonRpc.Request).method, "ping")
      yield* TestClock.adjust("5 seconds") // first failure
      yield* peer.next // its notifications/cancelled
      assert.isTrue(yield* session.isOpen)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(((yield* peer.next) as JsonRpc.Request).method, "ping")
      yield* TestClock.adjust("5 seconds") // second failure
      yield* session.awaitClose
      assert.isFalse(yield* session.isOpen)
    }))

  it.effect("answered keep-alive pings keep the session open", () =>
    Effect.gen(function*() {
      const { peer, session } = yield* setup({ keepAlive: { interval: "10 seconds", maxFailures: 1 } })
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("10 seconds")
        const ping = (yield* peer.next) as JsonRpc.Request
        yield* peer.send(JsonRpc.success(ping.id, {}))
        yield* settle
      }
      assert.isTrue(yield* session.isOpen)
    }))
})

describe("McpSession: diagnostics", () => {
  it.effect("what the engine drops or survives is logged through the Logger", () => {
    const lines: Array<string> = []
    const capture = Logger.make<unknown, void>(({ logLevel, message }) => {
      lines.push(`${logLevel}: ${(message as ReadonlyArray<unknown>)[0]}`)
    })
    return Effect.gen(function*() {
      const Dies = McpMethod.request({ name: "test/dies", params: Echo.params, result: Echo.result, from: "both" })
      const { peer } = yield* setup({
        role: "server",
        handlers: [McpSession.handler(Dies, () => Effect.die(new Error("boom")))]
      })
      yield* peer.send(JsonRpc.success(999, {}))
      yield* peer.send(JsonRpc.request(1, "test/dies", { n: 1 }))
      yield* peer.next
      assert.deepStrictEqual(lines, [
        "Warn: response for unknown request id 999 dropped",
        "Error: handler of test/dies died"
      ])
    }).pipe(Effect.provide(Logger.layer([capture])))
  })
})
