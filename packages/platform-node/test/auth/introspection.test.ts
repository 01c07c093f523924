/**
 * McpResourceServer.introspection's cache, against a real RFC 7662
 * endpoint on 127.0.0.1 that counts the calls it gets: active answers are
 * kept (at most `maxAge`, never past `exp`: TestClock), inactive answers and
 * failures are not, concurrent verifications of a new token share one call,
 * and `cache: false` asks every time.
 */
import { McpError, McpResourceServer } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import type * as Net from "node:net"

/** What the endpoint answers for a token (`undefined`: `{ active: false }`); `"error"`: HTTP 503. */
type Answer = Record<string, unknown> | "error" | undefined

/**
 * An introspection endpoint on 127.0.0.1 for the duration of the scope.
 * `answers` decides the answer per token; `calls` counts the requests per
 * token; with `hold`, answers wait until `release()`.
 */
const endpoint = Effect.gen(function*() {
  const answers = new Map<string, Answer>()
  const calls = new Map<string, number>()
  const held: Array<() => void> = []
  const state = { hold: false }
  const received = yield* Deferred.make<void>()
  const server = yield* Effect.acquireRelease(
    Effect.callback<Http.Server>((resume) => {
      const server = Http.createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8")
        request.on("data", (chunk: string) => (body += chunk))
        request.on("end", () => {
          const token = new URLSearchParams(body).get("token") ?? ""
          calls.set(token, (calls.get(token) ?? 0) + 1)
          Deferred.doneUnsafe(received, Exit.void)
          const answer = answers.get(token)
          const reply = () =>
            answer === "error"
              ? response.writeHead(503).end()
              : response.writeHead(200, { "content-type": "application/json" }).end(
                JSON.stringify(answer === undefined ? { active: false } : { active: true, ...answer })
              )
          if (state.hold) held.push(reply)
          else reply()
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
  return {
    url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}/introspect`,
    answers,
    calls: (token: string) => calls.get(token) ?? 0,
    total: () => [...calls.values()].reduce((sum, count) => sum + count, 0),
    hold: () => (state.hold = true),
    /** Resolves when the endpoint has received a request (since it was made). */
    received: Deferred.await(received),
    release: () => {
      state.hold = false
      for (const reply of held.splice(0)) reply()
    }
  }
})

const reasonOf = (exit: Exit.Exit<unknown, McpError.McpError>) =>
  Exit.isFailure(exit)
    ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error.reason._tag
    : undefined

// The TestClock starts at 0: `exp` is in seconds from then.
const ALICE = { sub: "alice", client_id: "cli", scope: "mcp:read", exp: 3600 }

describe("McpResourceServer.introspection cache", () => {
  it.effect("an active answer is cached: the same token is introspected once", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      const first = yield* verify("t1")
      const second = yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 1)
      assert.strictEqual(second, first)
      assert.deepStrictEqual(
        [first.subject, first.clientId, first.scopes, first.expiresAt],
        ["alice", "cli", ["mcp:read"], 3600]
      )
    }))

  it.effect("an entry lasts 30 seconds by default, then the endpoint is asked again (a revoked token is refused)", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      yield* verify("t1")
      as.answers.delete("t1") // revoked
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual((yield* verify("t1")).subject, "alice")
      assert.strictEqual(as.calls("t1"), 1)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(reasonOf(yield* Effect.exit(verify("t1"))), "AuthError")
      assert.strictEqual(as.calls("t1"), 2)
    }))

  it.effect("maxAge sets the bound", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      const verify = McpResourceServer.introspection({ endpoint: as.url, cache: { maxAge: "5 minutes" } })
      yield* verify("t1")
      yield* TestClock.adjust("299 seconds")
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 1)
      yield* TestClock.adjust("1 second")
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 2)
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 2)
    }))

  it.effect("an entry never outlives the token's exp", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", { ...ALICE, exp: 10 })
      as.answers.set("no-exp", { sub: "bob" })
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      yield* verify("t1")
      yield* verify("no-exp")
      yield* TestClock.adjust("9 seconds")
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 1)
      as.answers.delete("t1") // the authorization server says an expired token is inactive
      yield* TestClock.adjust("1 second")
      assert.strictEqual(reasonOf(yield* Effect.exit(verify("t1"))), "AuthError")
      assert.strictEqual(as.calls("t1"), 2)
      // a token without exp: maxAge alone
      yield* verify("no-exp")
      assert.strictEqual(as.calls("no-exp"), 1)
      yield* TestClock.adjust("20 seconds")
      yield* verify("no-exp")
      assert.strictEqual(as.calls("no-exp"), 2)
    }))

  it.effect("an answer about a token already expired is not cached", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      yield* TestClock.adjust("100 seconds")
      as.answers.set("late", { ...ALICE, exp: 50 }) // a lenient endpoint
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      const auth = yield* verify("late")
      assert.strictEqual(auth.expiresAt, 50) // the resource server refuses it (expiresAt before now)
      yield* verify("late")
      assert.strictEqual(as.calls("late"), 2)
    }))

  it.effect("inactive answers and failures are not cached", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      for (let i = 0; i < 3; i++) assert.strictEqual(reasonOf(yield* Effect.exit(verify("bad"))), "AuthError")
      assert.strictEqual(as.calls("bad"), 3)
      as.answers.set("t1", "error")
      for (let i = 0; i < 2; i++) assert.strictEqual(reasonOf(yield* Effect.exit(verify("t1"))), "TransportError")
      assert.strictEqual(as.calls("t1"), 2)
      // the endpoint is back, and the token turns out to be active: now it is cached
      as.answers.set("t1", ALICE)
      yield* verify("t1")
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 3)
    }))

  it.effect("10 concurrent verifications of a new token share one call", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      as.hold()
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      const fibers = yield* Effect.forEach(
        Array.from({ length: 10 }, () => verify("t1")),
        (verification) => Effect.forkChild(verification, { startImmediately: true })
      )
      yield* as.received
      as.release()
      const answers = yield* Fiber.joinAll(fibers)
      assert.strictEqual(answers.length, 10)
      assert.isTrue(answers.every((auth) => auth === answers[0] && auth.subject === "alice"))
      assert.strictEqual(as.calls("t1"), 1)
      yield* verify("t1")
      assert.strictEqual(as.total(), 1)
    }))

  it.effect("concurrent verifications share an inactive answer too, and do not cache it", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.hold()
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      const fibers = yield* Effect.forEach(
        Array.from({ length: 5 }, () => Effect.exit(verify("bad"))),
        (verification) => Effect.forkChild(verification, { startImmediately: true })
      )
      yield* as.received
      as.release()
      const exits = yield* Fiber.joinAll(fibers)
      assert.deepStrictEqual(exits.map(reasonOf), Array(5).fill("AuthError"))
      assert.strictEqual(as.calls("bad"), 1)
      assert.strictEqual(reasonOf(yield* Effect.exit(verify("bad"))), "AuthError")
      assert.strictEqual(as.calls("bad"), 2)
    }))

  it.effect("interrupting the first of two waiting verifications does not cancel the shared call", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      as.hold()
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      const first = yield* Effect.forkChild(verify("t1"), { startImmediately: true })
      const second = yield* Effect.forkChild(verify("t1"), { startImmediately: true })
      yield* as.received
      yield* Fiber.interrupt(first)
      as.release()
      assert.strictEqual((yield* Fiber.join(second)).subject, "alice")
      assert.strictEqual(as.calls("t1"), 1)
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 1)
    }))

  it.effect("a call every waiter gave up on is cancelled and forgotten", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      as.hold()
      const verify = McpResourceServer.introspection({ endpoint: as.url })
      const fibers = yield* Effect.forEach(
        [1, 2],
        () => Effect.forkChild(verify("t1"), { startImmediately: true })
      )
      yield* as.received
      yield* Fiber.interruptAll(fibers)
      as.release()
      yield* verify("t1")
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 2)
    }))

  it.effect("least recently used tokens are evicted at maxEntries", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      for (const token of ["a", "b", "c"]) as.answers.set(token, { ...ALICE, sub: token })
      const verify = McpResourceServer.introspection({ endpoint: as.url, cache: { maxEntries: 2 } })
      yield* verify("a")
      yield* verify("b")
      yield* verify("a") // a is now the most recent
      yield* verify("c") // evicts b
      yield* verify("a")
      yield* verify("c")
      assert.deepStrictEqual([as.calls("a"), as.calls("b"), as.calls("c")], [1, 1, 1])
      yield* verify("b")
      assert.strictEqual(as.calls("b"), 2)
    }))

  it.effect("cache: false asks the endpoint about every verification, concurrent ones included", () =>
    Effect.gen(function*() {
      const as = yield* endpoint
      as.answers.set("t1", ALICE)
      const verify = McpResourceServer.introspection({ endpoint: as.url, cache: false })
      yield* verify("t1")
      yield* verify("t1")
      yield* verify("t1")
      assert.strictEqual(as.calls("t1"), 3)
      yield* Effect.all(Array.from({ length: 4 }, () => verify("t1")), { concurrency: "unbounded" })
      assert.strictEqual(as.calls("t1"), 7)
    }))
})
