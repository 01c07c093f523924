/**
 * The Streamable HTTP client transport (and the legacy HTTP+SSE one) against
 * a scripted server behind a fake `HttpClient`: every request is recorded,
 * SSE bodies are streams the test writes to, and time is the TestClock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Queue, Ref, Schedule, Stream } from "effect"
import { HttpClient, HttpClientError, HttpClientResponse } from "effect/http"
import type { HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import * as McpAuth from "../src/McpAuth.ts"
import * as McpClientSession from "../src/McpClientSession.ts"
import * as McpError from "../src/McpError.ts"
import * as McpHttpClient from "../src/McpHttpClient.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpSseClient from "../src/McpSseClient.ts"
import { clientInfo } from "./utils/client.ts"

const URL = "http://mcp.test/mcp"
// -----------------------------------------------------------------------------
// a scripted server behind a fake HttpClient
// -----------------------------------------------------------------------------

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** the parsed JSON body of a POST */
  readonly message: any
}

/** An SSE response body the test writes to. */
interface SseBody {
  readonly response: Response
  readonly write: (text: string) => void
  readonly message: (value: unknown, id?: string) => void
  readonly close: () => void
  readonly cancelled: () => boolean
}

const encoder = new TextEncoder()

const sseBody = (headers: Record<string, string> = {}): SseBody => {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let cancelled = false
  let open = true
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c
    },
    cancel: () => {
      cancelled = true
      open = false
    }
  })
  const write = (text: string) => {
    if (open) controller.enqueue(encoder.encode(text))
  }
  return {
    response: new Response(stream, { status: 200, headers: { "content-type": "text/event-stream", ...headers } }),
    write,
    message: (value, id) =>
      write(`event: message\n${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(value)}\n\n`),
    close: () => {
      if (open) {
        open = false
        controller.close()
      }
    },
    cancelled: () => cancelled
  }
}

const json = (value: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json", ...headers } })

const status = (code: number, body = "") => new Response(code === 202 || body === "" ? null : body, { status: code })

const result = (id: unknown, value: unknown) => ({ jsonrpc: "2.0", id, result: value })

type Reply = Response | Effect.Effect<Response>

interface FakeOptions {
  /** Answers a POSTed request other than initialize; `undefined` for the default (ping, tools/list). */
  readonly onRequest?: (message: any, seen: Seen) => Reply | undefined
  /** Answers a GET (default 405). */
  readonly onGet?: (seen: Seen) => Reply
  readonly onDelete?: (seen: Seen) => Reply
  /** Answers the initialize POST; default: a JSON result with a new session id. */
  readonly onInitialize?: (message: any, session: string) => Reply | undefined
  /** Answers anything at another URL than the endpoint (the legacy transport's POSTs). */
  readonly other?: (seen: Seen) => Reply
}

const makeFake = (options: FakeOptions = {}) =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const arrivals = yield* Queue.unbounded<Seen>()
    const sessions = new Set<string>()
    let next = 0
    // when set, every request (with an id) of any session gets 404
    const state = { requestsExpire: false }

    const bodyOf = (request: HttpClientRequest.HttpClientRequest) =>
      request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : undefined

    const answer = (request: HttpClientRequest.HttpClientRequest): Reply => {
      const entry: Seen = {
        method: request.method,
        url: request.url,
        headers: request.headers,
        message: bodyOf(request)
      }
      seen.push(entry)
      Queue.offerUnsafe(arrivals, entry)
      if (request.url !== URL) return options.other?.(entry) ?? status(404, "Not Found")
      const session = entry.headers["mcp-session-id"]
      if (request.method === "POST") {
        const accept = entry.headers["accept"] ?? ""
        if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return status(406)
        const message = entry.message
        if (message.method === "initialize") {
          const id = `s${++next}`
          sessions.add(id)
          return options.onInitialize?.(message, id) ?? json(
            result(message.id, {
              protocolVersion: message.params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "fake", version: "1.0.0" }
            }),
            200,
            { "mcp-session-id": id }
          )
        }
        if (session === undefined) {
          return json({ jsonrpc: "2.0", error: { code: -32000, message: "no session" }, id: null }, 400)
        }
        const expired = !sessions.has(session) || (state.requestsExpire && "id" in message && "method" in message)
        if (expired) {
          return json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, 404)
        }
        if (!("id" in message) || !("method" in message)) {
          return status(202)
        }
        const custom = options.onRequest?.(message, entry)
        if (custom !== undefined) return custom
        if (message.method === "ping") return json(result(message.id, {}))
        if (message.method === "tools/list") {
          return json(result(message.id, { tools: [{ name: "t", inputSchema: { type: "object" } }] }))
        }
        return json({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
      }
      if (session !== undefined && !sessions.has(session)) return status(404, "Session not found")
      if (request.method === "GET") return options.onGet?.(entry) ?? status(405)
      if (request.method === "DELETE") {
        if (session !== undefined) sessions.delete(session)
        return options.onDelete?.(entry) ?? status(200)
      }
      return status(405)
    }

    const client = HttpClient.make((request) =>
      Effect.map(
        Effect.suspend(() => {
          const reply = answer(request)
          return reply instanceof Response ? Effect.succeed(reply) : reply
        }),
        (response) => HttpClientResponse.fromWeb(request, response)
      )
    )

    /** Waits for the next request that matches. */
    const next_ = (predicate: (seen: Seen) => boolean): Effect.Effect<Seen> =>
      Effect.flatMap(Queue.take(arrivals), (entry) => predicate(entry) ? Effect.succeed(entry) : next_(predicate))

    return {
      layer: Layer.succeed(HttpClient.HttpClient, client),
      seen,
      posts: () => seen.filter((s) => s.method === "POST").map((s) => s.message?.method ?? `response ${s.message?.id}`),
      sessions,
      state,
      expire: () => sessions.clear(),
      next: next_
    }
  })

type Fake = Effect.Success<ReturnType<typeof makeFake>>

const connectToFake = (fake: Fake, options: Partial<McpHttpClient.Options> = {}) =>
  Effect.map(
    Layer.build(
      // the fake is a stateful-era server
      McpClientSession.layer({ clientInfo, era: "legacy" }).pipe(
        Layer.provide(McpHttpClient.layer({ url: URL, ...options })),
        Layer.provide(fake.layer)
      )
    ),
    (context) => Context.get(context, McpClientSession.McpClientSession)
  )

/** Lets background fibers and body streams run (real time; the TestClock does not move). */
const settle = TestClock.withLive(Effect.sleep("30 millis"))

const transportReason = (error: McpError.McpError) => {
  assert.strictEqual(error.reason._tag, "TransportError")
  return error.reason as McpError.TransportError
}

// -----------------------------------------------------------------------------

describe("McpHttpClient: requests", () => {
  it.effect("POSTs each frame with Accept, Content-Type, session id and protocol version; DELETEs on close", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* connectToFake(fake, { headers: { authorization: "Bearer t0k3n" } })
        assert.strictEqual(session.protocolVersion, McpSchema.LATEST_PROTOCOL_VERSION)
        yield* session.ping()
        const tools = yield* session.request(McpSchema.ListTools, {})
        assert.deepStrictEqual(tools.tools.map((t) => t.name), ["t"])
      }))
      const posts = fake.seen.filter((s) => s.method === "POST")
      assert.deepStrictEqual(posts.map((s) => s.message.method), [
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list"
      ])
      for (const post of posts) {
        assert.strictEqual(post.headers["accept"], "application/json, text/event-stream")
        assert.strictEqual(post.headers["content-type"], "application/json")
        assert.strictEqual(post.headers["authorization"], "Bearer t0k3n")
      }
      // no session id nor version on initialize; both afterwards
      assert.isUndefined(posts[0]!.headers["mcp-session-id"])
      assert.isUndefined(posts[0]!.headers["mcp-protocol-version"])
      for (const post of posts.slice(1)) {
        assert.strictEqual(post.headers["mcp-session-id"], "s1")
        assert.strictEqual(post.headers["mcp-protocol-version"], McpSchema.LATEST_PROTOCOL_VERSION)
      }
      // the GET stream was tried once (405: none), and the session was deleted on close
      const gets = fake.seen.filter((s) => s.method === "GET")
      assert.strictEqual(gets.length, 1)
      assert.strictEqual(gets[0]!.headers["accept"], "text/event-stream")
      const deletes = fake.seen.filter((s) => s.method === "DELETE")
      assert.strictEqual(deletes.length, 1)
      assert.strictEqual(deletes[0]!.headers["mcp-session-id"], "s1")
    }))

  it.effect("headers given as an Effect are computed for each request", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      const counter = yield* Ref.make(0)
      const session = yield* connectToFake(fake, {
        headers: Effect.map(Ref.updateAndGet(counter, (n) => n + 1), (n) => ({ "x-request": String(n) }))
      })
      yield* session.ping()
      const values = fake.seen.map((s) => Number(s.headers["x-request"])).sort((a, b) => a - b)
      assert.deepStrictEqual(values, values.map((_, i) => i + 1))
      assert.isAtLeast(values.length, 3)
    }))

  it.effect("an SSE answer is merged into incoming: progress, then the result", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onRequest: (message) => {
          if (message.method !== "tools/call") return undefined
          const body = sseBody()
          const token = message.params._meta.progressToken
          body.message({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: 1, total: 2 }
          })
          body.message({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: 2, total: 2 }
          })
          body.message(result(message.id, { content: [{ type: "text", text: "done" }] }))
          body.close()
          return body.response
        }
      })
      const session = yield* connectToFake(fake)
      const progress = yield* Ref.make<ReadonlyArray<number>>([])
      const answer = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress])
      })
      assert.deepStrictEqual(answer.content, [{ type: "text", text: "done" }])
      assert.deepStrictEqual(yield* Ref.get(progress), [1, 2])
    }))

  it.effect("an HTTP error is a TransportError carrying the status and body", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onRequest: (message) => message.method === "tools/list" ? status(500, "boom") : undefined
      })
      const session = yield* connectToFake(fake)
      const error = yield* Effect.flip(session.request(McpSchema.ListTools, {}))
      const reason = transportReason(error)
      const cause = reason.cause as McpHttpClient.HttpStatusError
      assert.instanceOf(cause, McpHttpClient.HttpStatusError)
      assert.strictEqual(cause.status, 500)
      assert.strictEqual(cause.body, "boom")
      assert.include(reason.description, "HTTP 500")
      // the session goes on
      yield* session.ping()
    }))
})

describe("McpHttpClient: transparent re-initialize on 404", () => {
  it.effect("replays initialize and initialized in a new session, swallows the replayed answer, resends the frame", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      const transport = yield* McpHttpClient.make({ url: URL }).pipe(Effect.provide(fake.layer))
      const received = yield* Queue.unbounded<unknown>()
      yield* transport.incoming.pipe(Stream.runForEach((v) => Queue.offer(received, v)), Effect.forkScoped)
      const init = {
        jsonrpc: "2.0" as const,
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo }
      }
      yield* transport.send(init)
      assert.deepStrictEqual((yield* Queue.take(received) as Effect.Effect<any>).id, 0)
      yield* transport.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* transport.send({ jsonrpc: "2.0", id: 1, method: "ping" })
      assert.deepStrictEqual(yield* Queue.take(received), result(1, {}))

      fake.expire()
      yield* transport.send({ jsonrpc: "2.0", id: 2, method: "ping" })
      // the next thing the session sees is the answer to its ping: the replayed initialize's answer was swallowed
      assert.deepStrictEqual(yield* Queue.take(received), result(2, {}))
      yield* settle
      assert.strictEqual(yield* Queue.size(received), 0)
      const posts = fake.seen.filter((s) => s.method === "POST")
      assert.deepStrictEqual(
        posts.map((
          s
        ) => [s.message.method ?? "", s.message.id, s.headers["mcp-session-id"], s.headers["mcp-protocol-version"]]),
        [
          ["initialize", 0, undefined, undefined],
          ["notifications/initialized", undefined, "s1", "2025-06-18"],
          ["ping", 1, "s1", "2025-06-18"],
          ["ping", 2, "s1", "2025-06-18"],
          ["initialize", 0, undefined, undefined],
          ["notifications/initialized", undefined, "s2", "2025-06-18"],
          ["ping", 2, "s2", "2025-06-18"]
        ]
      )
      assert.deepStrictEqual(posts[4]!.message, init)
    }))

  it.effect("the client above sees only a delay; concurrent frames share one re-initialize", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      const session = yield* connectToFake(fake)
      yield* session.ping()
      fake.expire()
      const answers = yield* Effect.all([session.ping(), session.request(McpSchema.ListTools, {}), session.ping()], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(answers[1].tools.map((t) => t.name), ["t"])
      assert.strictEqual(fake.seen.filter((s) => s.message?.method === "initialize").length, 2)
      assert.strictEqual(fake.seen.filter((s) => s.message?.method === "notifications/initialized").length, 2)
      assert.deepStrictEqual([...fake.sessions], ["s2"])
      assert.strictEqual(yield* session.pendingCount, 0)
    }))

  it.effect("a 404 after the re-initialize limit is a TransportError with status 404", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      const session = yield* connectToFake(fake)
      fake.state.requestsExpire = true
      const error = yield* Effect.flip(session.ping())
      const reason = transportReason(error)
      assert.strictEqual((reason.cause as McpHttpClient.HttpStatusError).status, 404)
      assert.include(reason.description, "re-initialization")
      // one replay: the limit is 1
      assert.strictEqual(fake.seen.filter((s) => s.message?.method === "initialize").length, 2)
    }))

  it.effect("maxReinitializations: 0 turns it off", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      const session = yield* connectToFake(fake, { maxReinitializations: 0 })
      fake.expire()
      const error = yield* Effect.flip(session.ping())
      assert.strictEqual((transportReason(error).cause as McpHttpClient.HttpStatusError).status, 404)
      assert.strictEqual(fake.seen.filter((s) => s.message?.method === "initialize").length, 1)
    }))
})

describe("McpHttpClient: the GET stream", () => {
  it.effect("opens after initialized and carries server requests, which are answered by POST", () =>
    Effect.gen(function*() {
      const stream = sseBody()
      const fake = yield* makeFake({ onGet: () => stream.response })
      yield* connectToFake(fake)
      const get = yield* fake.next((s) => s.method === "GET")
      assert.strictEqual(get.headers["mcp-session-id"], "s1")
      stream.message({ jsonrpc: "2.0", id: "srv-1", method: "ping" }, "e1")
      const answer = yield* fake.next((s) => s.method === "POST" && s.message.id === "srv-1")
      assert.deepStrictEqual(answer.message, result("srv-1", {}))
      assert.strictEqual(answer.headers["mcp-session-id"], "s1")
    }))

  it.effect("405: no GET stream and no retries", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      yield* connectToFake(fake)
      yield* settle
      yield* TestClock.adjust("10 minutes")
      yield* settle
      assert.strictEqual(fake.seen.filter((s) => s.method === "GET").length, 1)
    }))

  it.effect("reconnects with Last-Event-ID: the server's retry when it gave one, else the exponential schedule", () =>
    Effect.gen(function*() {
      const bodies = yield* Queue.unbounded<SseBody>()
      let gets = 0
      const fake = yield* makeFake({
        onGet: () => {
          gets++
          if (gets === 2) return status(503, "busy")
          const body = sseBody()
          Queue.offerUnsafe(bodies, body)
          return body.response
        }
      })
      yield* connectToFake(fake)
      yield* fake.next((s) => s.method === "GET")
      const getsSeen = () => fake.seen.filter((s) => s.method === "GET")
      // 1st connection: an event, then the server closes it (no retry given)
      const first = yield* Queue.take(bodies)
      first.message({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }, "e1")
      first.close()
      yield* settle
      // the schedule: 1 s
      yield* TestClock.adjust("999 millis")
      yield* settle
      assert.strictEqual(getsSeen().length, 1)
      yield* TestClock.adjust("1 millis")
      const second = yield* fake.next((s) => s.method === "GET")
      assert.strictEqual(second.headers["last-event-id"], "e1")
      // that attempt failed (503): the next waits 2 s
      yield* settle
      yield* TestClock.adjust("1999 millis")
      yield* settle
      assert.strictEqual(getsSeen().length, 2)
      yield* TestClock.adjust("1 millis")
      const third = yield* fake.next((s) => s.method === "GET")
      assert.strictEqual(third.headers["last-event-id"], "e1")
      // 3rd connection: the server sets retry: 300, sends e2 and closes
      const body = yield* Queue.take(bodies)
      body.write("retry: 300\n\n")
      body.message({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }, "e2")
      body.close()
      yield* settle
      yield* TestClock.adjust("299 millis")
      yield* settle
      assert.strictEqual(getsSeen().length, 3)
      yield* TestClock.adjust("1 millis")
      const fourth = yield* fake.next((s) => s.method === "GET")
      assert.strictEqual(fourth.headers["last-event-id"], "e2")
    }))

  it.effect("gives up when the schedule is exhausted", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ onGet: () => status(500, "down") })
      yield* connectToFake(fake, { reconnect: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 2 })) })
      yield* settle
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("1 second")
        yield* settle
      }
      // the first attempt, then two more
      assert.strictEqual(fake.seen.filter((s) => s.method === "GET").length, 3)
    }))
})

describe("McpHttpClient: resuming a request's SSE stream", () => {
  it.effect("after a priming event with retry: 500, a closed POST stream resumes with GET + Last-Event-ID after exactly 500 ms; missed events arrive once", () =>
    Effect.gen(function*() {
      const resumed = yield* Deferred.make<SseBody>()
      let callId: unknown
      let token: unknown
      const fake = yield* makeFake({
        onRequest: (message) => {
          if (message.method !== "tools/call") return undefined
          callId = message.id
          token = message.params._meta.progressToken
          const body = sseBody()
          body.write("id: p1\nretry: 500\ndata: \n\n")
          body.message({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: 1 }
          }, "p2")
          body.close()
          return body.response
        },
        onGet: (seen) => {
          if (seen.headers["last-event-id"] === undefined) return status(405)
          const body = sseBody()
          Deferred.doneUnsafe(resumed, Effect.succeed(body))
          return body.response
        }
      })
      const session = yield* connectToFake(fake)
      const progress = yield* Ref.make<ReadonlyArray<number>>([])
      const call = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress])
      }).pipe(Effect.forkChild({ startImmediately: true }))
      yield* settle
      yield* TestClock.adjust("499 millis")
      yield* settle
      assert.isFalse(yield* Deferred.isDone(resumed))
      yield* TestClock.adjust("1 millis")
      const body = yield* Deferred.await(resumed)
      const resume = fake.seen.find((s) => s.method === "GET" && s.headers["last-event-id"] !== undefined)!
      assert.strictEqual(resume.headers["last-event-id"], "p2")
      assert.strictEqual(resume.headers["mcp-session-id"], "s1")
      assert.strictEqual(resume.headers["accept"], "text/event-stream")
      // the events missed while disconnected, then the result
      body.message(
        { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 2 } },
        "p3"
      )
      body.message(result(callId, { content: [{ type: "text", text: "resumed" }] }), "p4")
      const answer = yield* Fiber.join(call)
      assert.deepStrictEqual(answer.content, [{ type: "text", text: "resumed" }])
      assert.deepStrictEqual(yield* Ref.get(progress), [1, 2])
      // the answered stream is let go
      yield* settle
      assert.isTrue(body.cancelled())
    }))

  it.effect("a POST stream without event ids is not resumed", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onRequest: (message) => {
          if (message.method !== "tools/call") return undefined
          const body = sseBody()
          body.close()
          return body.response
        }
      })
      const session = yield* connectToFake(fake)
      const call = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }, { timeout: "10 seconds" })
        .pipe(
          Effect.flip,
          Effect.forkChild({ startImmediately: true })
        )
      yield* settle
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* Fiber.join(call)).reason._tag, "TimeoutError")
      assert.strictEqual(fake.seen.filter((s) => s.method === "GET").length, 1)
    }))
})

describe("McpHttpClient: SSE answers with a length", () => {
  const whole = (text: string) =>
    new Response(text, {
      status: 200,
      headers: { "content-type": "text/event-stream", "content-length": String(encoder.encode(text).length) }
    })
  const event = (value: unknown, id: string) => `event: message\nid: ${id}\ndata: ${JSON.stringify(value)}\n\n`

  it.effect("a whole SSE body is read at once: progress, then the result", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onRequest: (message) => {
          if (message.method !== "tools/call") return undefined
          const token = message.params._meta.progressToken
          return whole(
            "retry: 500\nid: p1\ndata: \n\n" +
              event(
                { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 1 } },
                "p2"
              ) +
              event(result(message.id, { content: [{ type: "text", text: "whole" }] }), "p3")
          )
        }
      })
      const session = yield* connectToFake(fake)
      const progress = yield* Ref.make<ReadonlyArray<number>>([])
      const answer = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress])
      })
      assert.deepStrictEqual(answer.content, [{ type: "text", text: "whole" }])
      assert.deepStrictEqual(yield* Ref.get(progress), [1])
      assert.isUndefined(fake.seen.find((s) => s.method === "GET" && s.headers["last-event-id"] !== undefined))
    }))

  it.effect("a whole SSE body without the result is resumed with GET + Last-Event-ID after the server's retry", () =>
    Effect.gen(function*() {
      const resumed = yield* Deferred.make<SseBody>()
      let callId: unknown
      const fake = yield* makeFake({
        onRequest: (message) => {
          if (message.method !== "tools/call") return undefined
          callId = message.id
          return whole("retry: 500\nid: p1\ndata: \n\n")
        },
        onGet: (seen) => {
          if (seen.headers["last-event-id"] === undefined) return status(405)
          const body = sseBody()
          Deferred.doneUnsafe(resumed, Effect.succeed(body))
          return body.response
        }
      })
      const session = yield* connectToFake(fake)
      const call = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      yield* TestClock.adjust("499 millis")
      yield* settle
      assert.isFalse(yield* Deferred.isDone(resumed))
      yield* TestClock.adjust("1 millis")
      const body = yield* Deferred.await(resumed)
      const resume = fake.seen.find((s) => s.method === "GET" && s.headers["last-event-id"] !== undefined)!
      assert.strictEqual(resume.headers["last-event-id"], "p1")
      body.message(result(callId, { content: [{ type: "text", text: "resumed" }] }), "p2")
      const answer = yield* Fiber.join(call)
      assert.deepStrictEqual(answer.content, [{ type: "text", text: "resumed" }])
    }))
})

describe("McpHttpClient: closing", () => {
  it.effect("a DELETE answered 405 is fine; every stream is let go", () =>
    Effect.gen(function*() {
      const stream = sseBody()
      const fake = yield* makeFake({ onGet: () => stream.response, onDelete: () => status(405) })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* connectToFake(fake)
        yield* fake.next((s) => s.method === "GET")
        yield* session.ping()
      }))
      assert.strictEqual(fake.seen.filter((s) => s.method === "DELETE").length, 1)
      yield* settle
      assert.isTrue(stream.cancelled())
    }))

  it.effect("sending after close fails with ClosedError", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake()
      const transport = yield* Effect.scoped(McpHttpClient.make({ url: URL })).pipe(Effect.provide(fake.layer))
      const error = yield* Effect.flip(transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }))
      assert.strictEqual(error.reason._tag, "ClosedError")
      assert.deepStrictEqual(fake.seen, [])
    }))
})

// -----------------------------------------------------------------------------
// legacy HTTP+SSE and the fallback
// -----------------------------------------------------------------------------

/** A 2024-11-05 server: GET opens the stream with an endpoint event; POSTs to the endpoint answer 202 and reply on the stream. */
const legacyServer = (options: { readonly endpoint?: string; readonly postStatus?: number } = {}) => {
  let stream: SseBody | undefined
  return {
    onGet: () => {
      stream = sseBody()
      stream.write(`event: endpoint\ndata: ${options.endpoint ?? "/messages?sessionId=abc"}\n\n`)
      return stream.response
    },
    other: (seen: Seen) => {
      if (seen.method !== "POST" || !seen.url.startsWith("http://mcp.test/messages")) return status(404)
      const message = seen.message
      if (message.method === "initialize") {
        stream!.message(result(message.id, {
          protocolVersion: "2024-11-05",
          capabilities: { tools: {} },
          serverInfo: { name: "legacy", version: "0.1" }
        }))
      } else if (message.method === "ping") {
        stream!.message(result(message.id, {}))
      }
      return status(options.postStatus ?? 202, "Accepted")
    },
    end: () => stream?.close()
  }
}

describe("McpHttpClient: fallback to HTTP+SSE", () => {
  it.effect("a 405 on the initialize POST: GET the URL, take the endpoint event, go on over the legacy transport", () =>
    Effect.gen(function*() {
      const legacy = legacyServer()
      const fake = yield* makeFake({
        onInitialize: () => status(405, "Method Not Allowed"),
        onGet: legacy.onGet,
        other: legacy.other
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* connectToFake(fake, { headers: { "x-key": "k" } })
        assert.strictEqual(session.protocolVersion, "2024-11-05")
        assert.strictEqual(session.serverInfo.name, "legacy")
        yield* session.ping()
      }))
      assert.deepStrictEqual(
        fake.seen.map((s) => `${s.method} ${s.url.replace("http://mcp.test", "")} ${s.message?.method ?? ""}`.trim()),
        [
          "POST /mcp initialize",
          "GET /mcp",
          "POST /messages?sessionId=abc initialize",
          "POST /messages?sessionId=abc notifications/initialized",
          "POST /messages?sessionId=abc ping"
        ]
      )
      for (const s of fake.seen) assert.strictEqual(s.headers["x-key"], "k")
      assert.strictEqual(fake.seen[4]!.headers["mcp-protocol-version"], "2024-11-05")
      assert.strictEqual(fake.seen[1]!.headers["accept"], "text/event-stream")
    }))

  it.effect("the server ending the legacy stream ends the session", () =>
    Effect.gen(function*() {
      const legacy = legacyServer()
      const fake = yield* makeFake({
        onInitialize: () => status(404, "Cannot POST /mcp"),
        onGet: legacy.onGet,
        other: legacy.other
      })
      const session = yield* connectToFake(fake)
      legacy.end()
      yield* session.awaitClose
      assert.isFalse(yield* session.isOpen)
    }))

  it.effect("a 400 with a JSON-RPC error body is a modern refusal: no fallback", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onInitialize: () =>
          json({ jsonrpc: "2.0", error: { code: -32000, message: "Unsupported protocol version" }, id: null }, 400)
      })
      const error = yield* Effect.flip(connectToFake(fake))
      assert.strictEqual((transportReason(error).cause as McpHttpClient.HttpStatusError).status, 400)
      assert.deepStrictEqual(fake.seen.map((s) => s.method), ["POST"])
    }))

  it.effect("fallbackToSse: false keeps the refusal", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ onInitialize: () => status(405) })
      const error = yield* Effect.flip(connectToFake(fake, { fallbackToSse: false }))
      assert.strictEqual((transportReason(error).cause as McpHttpClient.HttpStatusError).status, 405)
    }))

  it.effect("when the GET is no SSE stream either, the error names both", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ onInitialize: () => status(404, "nope"), onGet: () => status(404, "nope") })
      const error = yield* Effect.flip(connectToFake(fake))
      const reason = transportReason(error)
      assert.include(reason.description, "HTTP 404")
      assert.include(reason.description, "fallback failed")
    }))
})

describe("McpSseClient", () => {
  const connectSse = (fake: Fake, options: Partial<McpSseClient.Options> = {}) =>
    Effect.map(
      Layer.build(
        McpClientSession.layer({ clientInfo }).pipe(
          Layer.provide(McpSseClient.layer({ url: URL, ...options })),
          Layer.provide(fake.layer)
        )
      ),
      (context) => Context.get(context, McpClientSession.McpClientSession)
    )

  it.effect("connects to a legacy server directly", () =>
    Effect.gen(function*() {
      const legacy = legacyServer({ endpoint: "http://mcp.test/messages?sessionId=xyz" })
      const fake = yield* makeFake({ onGet: legacy.onGet, other: legacy.other })
      const session = yield* connectSse(fake)
      yield* session.ping()
      assert.deepStrictEqual(fake.seen.map((s) => s.method), ["GET", "POST", "POST", "POST"])
      assert.isTrue(fake.seen.slice(1).every((s) => s.url === "http://mcp.test/messages?sessionId=xyz"))
    }))

  it.effect("refuses an endpoint on another origin", () =>
    Effect.gen(function*() {
      const legacy = legacyServer({ endpoint: "http://evil.test/messages" })
      const fake = yield* makeFake({ onGet: legacy.onGet, other: legacy.other })
      const error = yield* Effect.flip(connectSse(fake))
      assert.include(transportReason(error).description, "origin")
      assert.deepStrictEqual(fake.seen.map((s) => s.method), ["GET"])
    }))

  it.effect("waits for the endpoint event no longer than endpointTimeout", () =>
    Effect.gen(function*() {
      const stream = sseBody()
      const fake = yield* makeFake({ onGet: () => stream.response })
      const fiber = yield* connectSse(fake, { endpointTimeout: "5 seconds" }).pipe(
        Effect.flip,
        Effect.forkChild({ startImmediately: true })
      )
      yield* settle
      yield* TestClock.adjust("5 seconds")
      assert.include(transportReason(yield* Fiber.join(fiber)).description, "no endpoint event")
      yield* settle
      assert.isTrue(stream.cancelled())
    }))

  it.effect("a POST refused by the server fails the send with its status", () =>
    Effect.gen(function*() {
      const legacy = legacyServer({ postStatus: 500 })
      const fake = yield* makeFake({ onGet: legacy.onGet, other: legacy.other })
      const transport = yield* McpSseClient.make({ url: URL }).pipe(Effect.provide(fake.layer))
      const error = yield* Effect.flip(transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }))
      assert.strictEqual((transportReason(error).cause as McpHttpClient.HttpStatusError).status, 500)
    }))
})

describe("TransportError.status and messages", () => {
  it.effect("a POST answered 500 or 403 fails with the status on the reason", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onRequest: (message) =>
          message.method === "tools/list"
            ? status(500, "boom")
            : message.method === "tools/call"
            ? status(403)
            : undefined
      })
      const session = yield* connectToFake(fake)
      const failed = transportReason(yield* Effect.flip(session.request(McpSchema.ListTools, {})))
      assert.strictEqual(failed.status, 500)
      const forbidden = transportReason(
        yield* Effect.flip(session.request(McpSchema.CallTool, { name: "t", arguments: {} }))
      )
      assert.strictEqual(forbidden.status, 403)
      assert.include(forbidden.description, "HTTP 403")
    }))

  it.effect("the refused initialize, the expired session and the failed fallback carry their status", () =>
    Effect.gen(function*() {
      const modern = yield* makeFake({
        onInitialize: () =>
          json({ jsonrpc: "2.0", error: { code: -32000, message: "Unsupported protocol version" }, id: null }, 400)
      })
      assert.strictEqual(transportReason(yield* Effect.flip(connectToFake(modern))).status, 400)

      const expiring = yield* makeFake()
      const session = yield* connectToFake(expiring)
      expiring.state.requestsExpire = true
      assert.strictEqual(transportReason(yield* Effect.flip(session.ping())).status, 404)

      // the POST's status: the GET of the fallback failed with its own
      const legacyless = yield* makeFake({ onInitialize: () => status(404, "nope"), onGet: () => status(410, "gone") })
      const both = transportReason(yield* Effect.flip(connectToFake(legacyless)))
      assert.strictEqual(both.status, 404)
      assert.include(both.description, "HTTP 410")
    }))

  it.effect("a fallback refused for authorization fails with the AuthError itself", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({
        onInitialize: () => status(405),
        onGet: () => new Response("", { status: 401, headers: { "www-authenticate": "Bearer realm=\"mcp\"" } })
      })
      const error = yield* Effect.flip(connectToFake(fake, { auth: McpAuth.bearer("expired") }))
      assert.strictEqual(error.reason._tag, "AuthError")
    }))

  it.effect("McpSseClient: a GET or a POST answered with an error status carries it", () =>
    Effect.gen(function*() {
      const refusing = yield* makeFake({ onGet: () => status(403, "forbidden") })
      const opening = yield* Effect.flip(
        Layer.build(McpSseClient.layer({ url: URL })).pipe(Effect.provide(refusing.layer))
      )
      assert.strictEqual(transportReason(opening).status, 403)
      assert.include(transportReason(opening).description, "opening the SSE stream")

      const legacy = legacyServer({ postStatus: 502 })
      const fake = yield* makeFake({ onGet: legacy.onGet, other: legacy.other })
      const transport = yield* McpSseClient.make({ url: URL }).pipe(Effect.provide(fake.layer))
      const refused = yield* Effect.flip(transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }))
      assert.strictEqual(transportReason(refused).status, 502)
    }))

  it.effect("errors without a response have no status", () =>
    Effect.gen(function*() {
      const legacy = legacyServer({ endpoint: "http://evil.test/messages" })
      const fake = yield* makeFake({ onGet: legacy.onGet, other: legacy.other })
      const error = yield* Effect.flip(Layer.build(McpSseClient.layer({ url: URL })).pipe(Effect.provide(fake.layer)))
      assert.isUndefined(transportReason(error).status)
    }))

  it.effect("a request that got no response says what went wrong on the wire (the innermost cause)", () =>
    Effect.gen(function*() {
      // as fetch reports a refused connection: TypeError("fetch failed") caused by the socket's error
      const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" })
      const client = HttpClient.make((request) =>
        Effect.fail(
          new HttpClientError.HttpClientError({
            reason: new HttpClientError.TransportError({
              request,
              cause: new TypeError("fetch failed", { cause: refused })
            })
          })
        )
      )
      const error = yield* Effect.flip(
        McpHttpClient.make({ url: URL }).pipe(
          Effect.flatMap((transport) => transport.send({ jsonrpc: "2.0", id: 0, method: "ping" })),
          Effect.provideService(HttpClient.HttpClient, client)
        )
      )
      const reason = transportReason(error)
      assert.strictEqual(reason.description, `Transport error (POST ${URL}): connect ECONNREFUSED 127.0.0.1:1`)
      assert.strictEqual(error.message, reason.description)
      assert.isUndefined(reason.status)
      assert.instanceOf(reason.cause, HttpClientError.HttpClientError)
    }))
})
