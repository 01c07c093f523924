/**
 * The server's metrics, read from a registry of the test's own (the tests of
 * this file run concurrently): requests by method and outcome with their
 * latency, in both eras; live sessions; task status transitions.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Metric, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClientSession from "../src/McpClientSession.ts"
import * as McpMetrics from "../src/McpMetrics.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { rawPeer, request, settle } from "./utils/peer.ts"

const Echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const Forever = McpTool.make("forever", {
  input: Schema.Struct({}),
  handler: () => Effect.never
})

const Slow = McpTool.make("slow", {
  input: Schema.Struct({}),
  handler: () => Effect.as(Effect.sleep("30 millis"), "done")
})

const Build = (release: Deferred.Deferred<void>) =>
  McpTool.make("build", {
    input: Schema.Struct({}),
    task: "optional",
    handler: () => Effect.as(Deferred.await(release), "built")
  })

const count = (method: string, outcome: McpMetrics.RequestAttributes["outcome"]) =>
  Effect.map(Metric.value(Metric.withAttributes(McpMetrics.requests, { method, outcome })), (state) => state.count)

const latency = (method: string) => Metric.value(Metric.withAttributes(McpMetrics.requestDuration, { method }))

const transitions = (status: McpSchema.TaskStatus) =>
  Effect.map(Metric.value(Metric.withAttributes(McpMetrics.taskTransitions, { status })), (state) => state.count)

const sessions = Effect.map(Metric.value(McpMetrics.sessions), (state) => state.value)

// a registry of the test's own: the server and the reads share it
const isolated = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Metric.MetricRegistry, new Map())

/** A server and a raw 2025-11-25 client session, in the current scope. */
const legacy = (definitions: ReadonlyArray<McpServer.Definition<any>>) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "metrics", version: "1.0.0" })
    for (const definition of definitions) yield* server.register(definition)
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
    const client = yield* McpClientSession.make({ clientInfo, era: "legacy" }).pipe(
      Effect.provideService(McpTransport.McpTransport, clientEnd)
    )
    yield* settle
    return client
  })

describe("McpMetrics", () => {
  it.effect("counts 2025-11-25 requests by method and outcome, and times them", () =>
    isolated(Effect.gen(function*() {
      const client = yield* legacy([Echo, Forever, Slow])
      for (let i = 0; i < 3; i++) yield* client.request(McpSchema.CallTool, { name: "echo", arguments: { text: "hi" } })
      const unknown = yield* Effect.flip(client.request(McpSchema.CallTool, { name: "nope", arguments: {} }))
      assert.strictEqual(unknown._tag, "McpError")
      const call = yield* Effect.forkChild(client.request(McpSchema.CallTool, { name: "forever", arguments: {} }), {
        startImmediately: true
      })
      yield* settle
      yield* Fiber.interrupt(call)
      yield* settle
      yield* client.request(McpSchema.ListTools, {})

      assert.strictEqual(yield* count("initialize", "ok"), 1)
      assert.strictEqual(yield* count("tools/call", "ok"), 3)
      assert.strictEqual(yield* count("tools/call", "error"), 1)
      assert.strictEqual(yield* count("tools/call", "cancelled"), 1)
      assert.strictEqual(yield* count("tools/list", "ok"), 1)
      assert.strictEqual(yield* count("tools/list", "error"), 0)

      const calls = yield* latency("tools/call")
      assert.strictEqual(calls.count, 5)
      assert.strictEqual(calls.buckets.length, McpMetrics.durationBoundaries.length)
      // TestClock time: the quick calls took no time
      assert.strictEqual(calls.max, 0)
    })))

  it.effect("counts requests refused before their handler; unknown methods under one series", () =>
    isolated(Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "metrics", version: "1.0.0" })
      yield* server.register(Echo)
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const peer = yield* rawPeer(clientEnd)
      yield* peer.send(request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }))
      yield* peer.next
      yield* peer.send(JsonRpc.notification("notifications/initialized", {}))
      // a peer's made-up method names do not become series of their own
      for (const [id, method] of [[1, "made/up"], [2, "another/one"]] as const) {
        yield* peer.send(request(id, method, {}))
      }
      yield* peer.send(request(3, "tools/call", { name: 42 }))
      const answers = yield* peer.take(3)
      assert.deepStrictEqual(answers.map((answer: any) => answer.error?.code), [-32601, -32601, -32602])
      assert.strictEqual(yield* count("(unknown)", "refused"), 2)
      assert.strictEqual(yield* count("tools/call", "refused"), 1)
      assert.strictEqual(yield* count("tools/call", "ok"), 0)
      // (reading a series by its attributes would make it: the snapshot is read instead)
      assert.isFalse(JSON.stringify(yield* Metric.snapshot).includes("made/up"))
    })).pipe(Effect.scoped))

  it.effect("records a handler's time in milliseconds", () =>
    isolated(Effect.gen(function*() {
      const client = yield* legacy([Slow])
      const call = yield* Effect.forkChild(client.request(McpSchema.CallTool, { name: "slow", arguments: {} }), {
        startImmediately: true
      })
      yield* settle
      yield* TestClock.adjust("30 millis")
      yield* Fiber.join(call)
      const slow = yield* latency("tools/call")
      assert.strictEqual(slow.count, 1)
      assert.strictEqual(slow.sum, 30)
      // 30 ms falls in the (25, 50] bucket
      const bucket = slow.buckets.find(([boundary]) => boundary === 50)!
      assert.strictEqual(bucket[1], 1)
      assert.strictEqual(slow.buckets.find(([boundary]) => boundary === 25)![1], 0)
    })))

  it.effect("counts 2026-07-28 requests", () =>
    isolated(Effect.gen(function*() {
      const client = yield* McpTest.client(McpServer.layer({ name: "metrics", version: "1.0.0" }, Echo), {
        era: "modern"
      })
      yield* client.callTool("echo", { text: "a" })
      yield* client.callTool("echo", { text: "b" })
      assert.strictEqual(yield* count("tools/call", "ok"), 2)
      assert.strictEqual((yield* latency("tools/call")).count, 2)
      assert.strictEqual(yield* count("initialize", "ok"), 0)
    })))

  it.effect("the sessions gauge follows live sessions", () =>
    isolated(Effect.gen(function*() {
      const server = McpServer.layer({ name: "metrics", version: "1.0.0" }, Echo)
      assert.strictEqual(yield* sessions, 0)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* McpTest.client(server, { era: "legacy" })
        assert.strictEqual(yield* sessions, 1)
        yield* Effect.scoped(Effect.gen(function*() {
          yield* McpTest.client(server, { era: "legacy" })
          assert.strictEqual(yield* sessions, 2)
        }))
        assert.strictEqual(yield* sessions, 1)
      }))
      assert.strictEqual(yield* sessions, 0)
    })))

  it.effect("counts task status transitions", () =>
    isolated(Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const server = McpServer.layer({ name: "metrics", version: "1.0.0" }, Build(release))
      const client = yield* McpTest.client(server, { era: "legacy" })
      const first = yield* client.callToolTask("build", {})
      const second = yield* client.callToolTask("build", {})
      assert.notStrictEqual(first.taskId, second.taskId)
      assert.strictEqual(yield* transitions("working"), 2)
      yield* second.cancel
      yield* Deferred.succeed(release, undefined)
      yield* first.result
      assert.strictEqual(yield* transitions("completed"), 1)
      assert.strictEqual(yield* transitions("cancelled"), 1)
      assert.strictEqual(yield* transitions("failed"), 0)
    })))
})
