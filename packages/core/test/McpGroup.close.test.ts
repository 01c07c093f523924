/**
 * Closing a group, under TestClock, with a connector whose "stdio" servers
 * are in-memory servers behind a fake shutdown: the client's sequence (close
 * stdin, wait `closeTimeout`, SIGTERM, wait `termTimeout`, SIGKILL) as a
 * process that ignores the end of its stdin and SIGTERM lives it, each step
 * recorded. The group closes its servers at once (one closeTimeout +
 * termTimeout for ten of them), keeps the order that matters (no new server
 * and no reconnection once closing, its notifications ended after the
 * servers), and one close that fails does not stop the others.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Ref,
  Schedule,
  Schema,
  Scope,
  Stream
} from "effect"
import { TestClock } from "effect/testing"
import * as McpError from "../src/McpError.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const closeTimeout = Duration.seconds(2)
const termTimeout = Duration.seconds(2)

/**
 * How a fake server takes the end of its connection: `"stubborn"` ignores
 * the end of its stdin and SIGTERM (killed after closeTimeout + termTimeout),
 * `"polite"` exits at once, `"broken"` is stubborn and its kill dies.
 */
type Behaviour = "stubborn" | "polite" | "broken"

const serverLayer = (name: string) =>
  McpServer.register(
    McpTool.make(`${name}_echo`, {
      input: Schema.Struct({ text: Schema.String }),
      handler: ({ text }) => Effect.succeed(`${name}:${text}`)
    })
  ).pipe(Layer.provideMerge(McpServer.layer({ name, version: "1.0.0" })))

const fakeStdio = (behaviour: Behaviour) => McpGroup.stdio("fake-server", [behaviour])

const makeFake = Effect.gen(function*() {
  const events = yield* Ref.make<ReadonlyArray<string>>([])
  const record = (event: string) => Ref.update(events, (all) => [...all, event])
  const connections = new Map<string, number>()
  const cuts = new Map<string, Deferred.Deferred<void>>()

  // the stdio client's shutdown, as the server's process lives it
  const shutdown = (name: string, behaviour: Behaviour) =>
    behaviour === "polite" ? record(`exit ${name}`) : Effect.gen(function*() {
      yield* record(`stdin closed ${name}`)
      yield* Effect.sleep(closeTimeout)
      yield* record(`SIGTERM ${name}`)
      yield* Effect.sleep(termTimeout)
      yield* record(`SIGKILL ${name}`)
      if (behaviour === "broken") yield* Effect.die(new Error(`${name} could not be killed`))
    })

  const transport = (name: string, behaviour: Behaviour): Layer.Layer<McpTransport.McpTransport, McpError.McpError> =>
    Layer.effect(
      McpTransport.McpTransport,
      Effect.gen(function*() {
        connections.set(name, (connections.get(name) ?? 0) + 1)
        const cut = yield* Deferred.make<void>()
        cuts.set(name, cut)
        yield* Effect.addFinalizer(() => shutdown(name, behaviour))
        const inner = yield* Layer.build(McpGroup.transportInMemory(serverLayer(name)))
        const base = Context.get(inner, McpTransport.McpTransport)
        return McpTransport.McpTransport.of({
          ...base,
          incoming: base.incoming.pipe(
            Stream.interruptWhen(
              Effect.andThen(Deferred.await(cut), Effect.fail(McpError.transport("connection reset")))
            )
          )
        })
      })
    )

  const connector = Layer.succeed(McpGroup.Connector, {
    transport: (params, server) =>
      params._tag === "Stdio"
        ? transport(server, params.args?.[0] as Behaviour)
        : Layer.effect(McpTransport.McpTransport, Effect.fail(McpError.transport("fake stdio servers only")))
  })

  const count = (prefix: string) =>
    Effect.map(Ref.get(events), (all) => all.filter((event) => event.startsWith(prefix)).length)

  return {
    events: Ref.get(events),
    record,
    count,
    connections: (name: string) => Effect.sync(() => connections.get(name) ?? 0),
    cut: (name: string) => Effect.suspend(() => Deferred.succeed(cuts.get(name)!, undefined)).pipe(Effect.asVoid),
    makeGroup: (options: McpGroup.Options) =>
      McpGroup.make({ liveness: false, ...options }).pipe(Effect.provide([connector, ValidatorLayer]))
  }
})

/** Lets the other fibers run, without time passing, until `check` holds. */
const settle = (check: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let round = 0; round < 2_000; round++) {
      if (yield* check) return
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error("never settled"))
  })

const statusOf = (servers: ReadonlyArray<McpGroup.ServerStatus>, name: string) =>
  servers.find((server) => server.name === name)?.status

const names = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`)

describe("McpGroup: closing", () => {
  it.effect("ten servers that ignore the end of their stdin and SIGTERM close within one closeTimeout + termTimeout", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake
      const scope = yield* Scope.make()
      const servers = names(10)
      yield* fake.makeGroup({
        servers: Object.fromEntries(servers.map((name) => [name, fakeStdio("stubborn")]))
      }).pipe(Scope.provide(scope))
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.forkChild({ startImmediately: true }))
      // every server's stdin is closed at once
      yield* settle(Effect.map(fake.count("stdin closed"), (n) => n === 10))
      assert.strictEqual(yield* fake.count("SIGTERM"), 0)
      // one closeTimeout later, every one gets SIGTERM
      yield* TestClock.adjust(closeTimeout)
      yield* settle(Effect.map(fake.count("SIGTERM"), (n) => n === 10))
      assert.strictEqual(yield* fake.count("SIGKILL"), 0)
      assert.isUndefined(closing.pollUnsafe())
      // one termTimeout later, every one is killed and the group is closed, with no more time passing
      yield* TestClock.adjust(termTimeout)
      yield* settle(Effect.sync(() => closing.pollUnsafe() !== undefined))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(closing)))
      assert.strictEqual(yield* fake.count("SIGKILL"), 10)
    }))

  it.effect("once closing, no server is added or reconnected, and the notifications end after every server has closed", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake
      const scope = yield* Scope.make()
      const group = yield* fake.makeGroup({
        servers: { a: fakeStdio("polite"), b: fakeStdio("polite"), slow: fakeStdio("stubborn") },
        reconnect: Schedule.spaced("10 millis")
      }).pipe(Scope.provide(scope))
      // `a` goes down and comes back: its connection is now younger than its supervisor
      yield* fake.cut("a")
      yield* settle(Effect.map(group.servers, (servers) => statusOf(servers, "a") === "down"))
      yield* TestClock.adjust("10 millis")
      yield* settle(Effect.map(group.servers, (servers) => statusOf(servers, "a") === "up"))
      assert.strictEqual(yield* fake.connections("a"), 2)

      const notifications = yield* Stream.runDrain(group.notifications).pipe(
        Effect.ensuring(fake.record("notifications end")),
        Effect.forkChild({ startImmediately: true })
      )
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.forkChild({ startImmediately: true }))
      // the polite ones go at once (`a` exited once before, when cut), the stubborn one is still
      // closing: the group takes no new server
      yield* settle(Effect.map(
        Effect.all([fake.count("exit a"), fake.count("exit b"), fake.count("stdin closed slow")]),
        (counts) => counts.join() === "2,1,1"
      ))
      assert.isUndefined(closing.pollUnsafe())
      const refused = yield* Effect.flip(group.connect("late", fakeStdio("polite")))
      assert.strictEqual(refused.reason._tag, "ClosedError")
      assert.strictEqual(yield* fake.connections("late"), 0)
      yield* TestClock.adjust(Duration.sum(closeTimeout, termTimeout))
      yield* Fiber.await(closing)
      yield* Fiber.await(notifications)
      // the notifications ended last
      const events = yield* fake.events
      assert.strictEqual(events[events.length - 1], "notifications end")
      assert.include(events, "SIGKILL slow")
      // no reconnection, however long we wait
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* fake.connections("a"), 2)
      assert.strictEqual(yield* fake.connections("b"), 1)
      assert.strictEqual(yield* fake.connections("slow"), 1)
    }))

  it.effect("a close that fails does not stop the others: every server is closed, and the failure is the close's", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake
      const scope = yield* Scope.make()
      yield* fake.makeGroup({
        servers: { s0: fakeStdio("stubborn"), s1: fakeStdio("broken"), s2: fakeStdio("stubborn") }
      }).pipe(Scope.provide(scope))
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.forkChild({ startImmediately: true }))
      yield* settle(Effect.map(fake.count("stdin closed"), (n) => n === 3))
      yield* TestClock.adjust(Duration.sum(closeTimeout, termTimeout))
      const exit = yield* Fiber.await(closing)
      assert.strictEqual(yield* fake.count("SIGKILL"), 3)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), "s1 could not be killed")
    }))
})
