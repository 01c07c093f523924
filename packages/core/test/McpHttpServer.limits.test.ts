/**
 * Resource limits of the Streamable HTTP server, in process (requests are
 * web `Request`s handed to the route, time is the TestClock): a POST stream
 * whose client went away is dropped after `abandonedStreamTimeout`, the
 * per-session caps on requests and streams, and the in-memory event store's
 * bounds in bytes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Queue, Schema, Scope, Stream } from "effect"
import * as Sse from "effect/encoding/Sse"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpHttpServer from "../src/McpHttpServer.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import { settle } from "./utils/peer.ts"
import { ACCEPT, call, initialize, initialized } from "./utils/rawMessages.ts"
import { text } from "./utils/sse.ts"

const harness = (options: McpHttpServer.Options) =>
  Effect.gen(function*() {
    const gate = yield* Queue.unbounded<void>()
    const interrupted = yield* Deferred.make<void>()
    const server = yield* McpServer.make({ name: "limits", version: "1.0.0", capabilities: { tools: {} } })
    yield* server.register(McpTool.make("wait", {
      input: Schema.Struct({}),
      handler: () =>
        Queue.take(gate).pipe(Effect.as("waited"), Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
    }))
    const handler = yield* HttpRouter.toHttpEffect(
      McpHttpServer.layerRoute(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const request = (method: string, headers: Record<string, string>, body?: unknown) =>
      handler.pipe(
        Effect.provideService(
          HttpServerRequest.HttpServerRequest,
          HttpServerRequest.fromWeb(
            new Request("http://localhost/mcp", {
              method,
              headers,
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })
          )
        ),
        Effect.scoped,
        Effect.orDie
      )
    const post = (body: unknown, session?: string) =>
      request("POST", {
        accept: ACCEPT,
        "content-type": "application/json",
        ...(session === undefined ? {} : { "mcp-session-id": session })
      }, body)
    const open = Effect.gen(function*() {
      const response = yield* post(initialize)
      assert.strictEqual(response.status, 200)
      const id = response.headers["mcp-session-id"]!
      assert.strictEqual((yield* post(initialized, id)).status, 202)
      yield* settle
      return id
    })
    return { gate, interrupted, request, post, open }
  })

/** The first event of an SSE response (its priming event); closing `scope` drops the connection. */
const firstEvent = (response: HttpServerResponse.HttpServerResponse, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const body = response.body
    if (body._tag !== "Stream") return yield* Effect.die("not a stream")
    const pull = yield* Stream.toPull(body.stream).pipe(Scope.provide(scope))
    const events: Array<Sse.AnyEvent> = []
    const parser = Sse.makeParser((event) => events.push(event))
    const decoder = new TextDecoder()
    for (let i = 0; i < 10 && events.length === 0; i++) {
      const chunks = yield* Effect.orDie(pull)
      for (const chunk of chunks) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
    }
    const event = events[0]
    if (event?._tag !== "Event") return yield* Effect.die("no event")
    return event
  })

/**
 * With a cap of two requests in flight: the third gets `429` (-32000, its
 * id), and once the two are answered there is room again.
 */
const assertTwoInFlight = (
  gate: Queue.Queue<void>,
  send: (id: number) => Effect.Effect<HttpServerResponse.HttpServerResponse>
) =>
  Effect.gen(function*() {
    const first = yield* Effect.forkChild(send(1))
    const second = yield* Effect.forkChild(send(2))
    yield* settle
    const third = yield* send(3)
    assert.strictEqual(third.status, 429)
    const error = JSON.parse(yield* text(third))
    assert.strictEqual(error.id, 3)
    assert.strictEqual(error.error.code, JsonRpc.ErrorCode.ServerError)
    assert.include(error.error.message, "too many requests in flight")
    yield* Queue.offerAll(gate, [undefined, undefined])
    assert.strictEqual((yield* Fiber.join(first)).status, 200)
    assert.strictEqual((yield* Fiber.join(second)).status, 200)
    const fourth = yield* Effect.forkChild(send(4))
    yield* settle
    yield* Queue.offer(gate, undefined)
    assert.strictEqual((yield* Fiber.join(fourth)).status, 200)
  })

describe("McpHttpServer limits", () => {
  describe("abandoned POST streams", () => {
    // the client sends a call on an SSE stream, reads the priming event, and drops the connection
    const dropped = (options: McpHttpServer.Options) =>
      Effect.gen(function*() {
        const h = yield* harness({ responseMode: "sse", ...options })
        const id = yield* h.open
        const scope = yield* Scope.make()
        const priming = yield* firstEvent(yield* h.post(call(1, "wait"), id), scope)
        yield* Scope.close(scope, Exit.void)
        yield* settle
        const resume = h.request("GET", {
          accept: "text/event-stream",
          "mcp-session-id": id,
          "last-event-id": priming.id!
        })
        return { ...h, id, resume }
      })

    it.effect("a dropped stream is kept for a resumption within the grace period", () =>
      Effect.gen(function*() {
        const { gate, resume } = yield* dropped({ abandonedStreamTimeout: "1 minute" })
        yield* TestClock.adjust("59 seconds")
        const response = yield* resume
        assert.strictEqual(response.status, 200)
        yield* Queue.offer(gate, undefined)
        const body = yield* text(response)
        assert.include(body, "waited")
        // resumed: the timer of the first connection does not drop it later
        yield* TestClock.adjust("5 minutes")
      }))

    it.effect("a dropped stream nobody resumes is dropped after the grace period, its request cancelled", () =>
      Effect.gen(function*() {
        const { interrupted, resume } = yield* dropped({ abandonedStreamTimeout: "1 minute" })
        yield* TestClock.adjust("61 seconds")
        yield* settle
        const response = yield* resume
        assert.strictEqual(response.status, 400)
        assert.include(yield* text(response), "unknown Last-Event-ID")
        // the handler that would have answered it is interrupted
        assert.isTrue(Option.isSome(yield* Deferred.poll(interrupted)))
      }))

    it.effect("the default grace period is a minute", () =>
      Effect.gen(function*() {
        const { resume } = yield* dropped({})
        yield* TestClock.adjust("61 seconds")
        yield* settle
        assert.strictEqual((yield* resume).status, 400)
      }))
  })

  describe("per-session caps", () => {
    it.effect("requests in flight beyond maxRequestsPerSession get 429", () =>
      Effect.gen(function*() {
        const { gate, open, post } = yield* harness({ maxRequestsPerSession: 2 })
        const id = yield* open
        yield* assertTwoInFlight(gate, (n) => post(call(n, "wait"), id))
      }))

    it.effect("2026-07-28 requests in flight beyond maxModernRequests get 429, all clients together", () =>
      Effect.gen(function*() {
        const { gate, request } = yield* harness({ maxModernRequests: 2 })
        const modern = (id: number) =>
          request("POST", {
            accept: ACCEPT,
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "wait"
          }, {
            ...call(id, "wait"),
            params: {
              name: "wait",
              arguments: {},
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { name: `client-${id}`, version: "1" },
                "io.modelcontextprotocol/clientCapabilities": {}
              }
            }
          })
        yield* assertTwoInFlight(gate, modern)
      }))

    it.effect("open POST streams beyond maxStreamsPerSession get 429", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness({ responseMode: "sse", maxStreamsPerSession: 1 })
        const id = yield* open
        const scope = yield* Scope.make()
        yield* firstEvent(yield* post(call(1, "wait"), id), scope)
        // the first stream's connection dropped: it still counts until resumed or dropped
        yield* Scope.close(scope, Exit.void)
        yield* settle
        const second = yield* post(call(2, "wait"), id)
        assert.strictEqual(second.status, 429)
        assert.include(yield* text(second), "too many open streams")
        yield* TestClock.adjust("61 seconds")
        yield* settle
        const third = yield* post(call(3, "wait"), id)
        assert.strictEqual(third.status, 200)
      }))
  })

  describe("the memory event store", () => {
    const big = (n: number, size: number) =>
      JsonRpc.notification("notifications/message", { level: "info", data: String(n).repeat(size) })

    it.effect("keeps at most maxBytesPerStream per stream, dropping the oldest events", () =>
      Effect.gen(function*() {
        const store = yield* McpHttpServer.makeEventStoreMemory({ maxBytesPerStream: 2500 })
        const ids: Array<string> = []
        for (let i = 0; i < 10; i++) ids.push(yield* store.append("s", big(i % 10, 1000)))
        // about two events fit: resuming from the 7th sees the last two; earlier ids are gone
        const recent = yield* store.replayAfter(ids[7]!)
        assert.isTrue(Option.isSome(recent))
        assert.strictEqual(Option.getOrThrow(recent).events.length, 2)
        assert.isTrue(Option.isNone(yield* store.replayAfter(ids[2]!)))
      }))

    it.effect("keeps at most maxBytes in all, dropping the oldest streams' events first", () =>
      Effect.gen(function*() {
        const store = yield* McpHttpServer.makeEventStoreMemory({ maxBytes: 4500 })
        const first: Array<string> = []
        for (let i = 0; i < 3; i++) first.push(yield* store.append("a", big(1, 1000)))
        const second: Array<string> = []
        for (let i = 0; i < 3; i++) second.push(yield* store.append("b", big(2, 1000)))
        // 6 events of ~1 KB do not fit in 4.5 KB: the two oldest (of "a") went
        assert.isTrue(Option.isNone(yield* store.replayAfter(first[0]!)))
        assert.strictEqual(Option.getOrThrow(yield* store.replayAfter(first[1]!)).events.length, 1)
        assert.strictEqual(Option.getOrThrow(yield* store.replayAfter(second[0]!)).events.length, 2)
        // many more: the bound holds (only the newest few of "b" stay)
        for (let i = 0; i < 100; i++) yield* store.append("b", big(3, 1000))
        assert.isTrue(Option.isNone(yield* store.replayAfter(first[1]!)))
        assert.isTrue(Option.isNone(yield* store.replayAfter(second[2]!)))
      }))

    it.effect("an event larger than the stream's bound is delivered but not kept", () =>
      Effect.gen(function*() {
        const store = yield* McpHttpServer.makeEventStoreMemory({ maxBytesPerStream: 500 })
        const before = yield* store.append("s", undefined)
        const huge = yield* store.append("s", big(1, 1000))
        assert.isTrue(Option.isNone(yield* store.replayAfter(before)))
        assert.deepStrictEqual(Option.getOrThrow(yield* store.replayAfter(huge)).events, [])
      }))
  })
})
