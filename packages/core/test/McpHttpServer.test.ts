/**
 * The Streamable HTTP server, in process: requests are handed to the route's
 * handler as web `Request`s (no sockets), the test plays the client, and time
 * is the TestClock. Real sockets are in platform-node's tests.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Queue, Schema, Scope } from "effect"
import * as Sse from "effect/encoding/Sse"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import { TestClock } from "effect/testing"
import * as McpHttpServer from "../src/McpHttpServer.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import { settle } from "./utils/peer.ts"
import { json, readSse, sseOf, text } from "./utils/sse.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

const Add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

/** Tools whose steps the test drives through `gate`. */
const makeTools = (gate: Queue.Queue<void>) => {
  const steps = McpTool.make("steps", {
    input: Schema.Struct({ n: Schema.Int }),
    handler: ({ n }, context) =>
      Effect.gen(function*() {
        for (let i = 1; i <= n; i++) {
          yield* context.reportProgress({ progress: i, total: n })
          yield* Queue.take(gate)
        }
        return `did ${n} steps`
      })
  })
  const wait = McpTool.make("wait", {
    input: Schema.Struct({}),
    handler: () => Effect.as(Queue.take(gate), "waited")
  })
  const poll = McpTool.make("poll", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function*() {
        yield* McpHttpServer.closeSseStream
        yield* Queue.take(gate)
        return "after the reconnect"
      })
  })
  const sample = McpTool.make("sample", {
    input: Schema.Struct({}),
    handler: (_, context) =>
      Effect.map(
        context.createMessage({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 }),
        (result) => `model said ${(result.content as { readonly text: string }).text}`
      )
  })
  const whoami = McpTool.make("whoami", {
    input: Schema.Struct({}),
    handler: () => Effect.map(McpHttpServer.sessionId, Option.getOrElse(() => "none"))
  })
  const cyclic = McpTool.make("cyclic", {
    input: Schema.Struct({}),
    handler: () => {
      const meta: Record<string, unknown> = {}
      meta.self = meta
      return Effect.succeed({ content: [{ type: "text" as const, text: "x" }], _meta: meta })
    }
  })
  return [steps, wait, poll, sample, whoami, cyclic] as const
}

const ACCEPT = "application/json, text/event-stream"

const initialize = (version = "2025-11-25", id: number | string = 0) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: version, capabilities: { sampling: {} }, clientInfo: { name: "raw", version: "1" } }
})
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }
const call = (id: number | string, name: string, args: object = {}, meta?: object) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }
})

interface Harness {
  readonly server: McpServer.Server
  readonly gate: Queue.Queue<void>
  readonly request: (
    method: string,
    options?: { readonly body?: unknown; readonly headers?: Record<string, string> }
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** POST with the usual headers (and the session's, when given). */
  readonly post: (
    body: unknown,
    session?: string,
    headers?: Record<string, string>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** initialize + initialized; the session id. */
  readonly open: (version?: string) => Effect.Effect<string>
}

const harness = (options: McpHttpServer.Options = {}, serverOptions: Partial<McpServer.Options> = {}) =>
  Effect.gen(function*() {
    const gate = yield* Queue.unbounded<void>()
    const server = yield* McpServer.make({
      name: "http-test",
      version: "1.0.0",
      capabilities: { tools: { listChanged: true } },
      ...serverOptions
    })
    for (const tool of [Add, ...makeTools(gate)]) yield* server.register(tool)
    // a handler that makes the server notify every session
    yield* server.register(McpTool.make("unregisterAdd", {
      input: Schema.Struct({}),
      handler: () => Effect.as(server.unregister(Add), "done")
    }))
    const handler = yield* HttpRouter.toHttpEffect(
      McpHttpServer.layerRoute(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const request: Harness["request"] = (method, init) =>
      handler.pipe(
        Effect.provideService(
          HttpServerRequest.HttpServerRequest,
          HttpServerRequest.fromWeb(
            new Request("http://localhost/mcp", {
              method,
              headers: init?.headers ?? {},
              ...(init?.body === undefined
                ? {}
                : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
            })
          )
        ),
        Effect.scoped,
        Effect.orDie
      )
    const post: Harness["post"] = (body, session, headers) =>
      request("POST", {
        body,
        headers: {
          accept: ACCEPT,
          "content-type": "application/json",
          ...(session === undefined ? {} : { "mcp-session-id": session }),
          ...headers
        }
      })
    const open: Harness["open"] = (version) =>
      Effect.gen(function*() {
        const response = yield* post(initialize(version))
        assert.strictEqual(response.status, 200)
        const id = response.headers["mcp-session-id"]!
        assert.strictEqual((yield* post(initialized, id)).status, 202)
        // the session handles `initialized` on its own fiber
        yield* settle
        return id
      })
    return { server, gate, request, post, open } satisfies Harness
  })

// -----------------------------------------------------------------------------
// tests
// -----------------------------------------------------------------------------

describe("McpHttpServer", () => {
  describe("sessions", () => {
    it.effect("initialize mints a CSPRNG session id; calls answer with JSON", () =>
      Effect.gen(function*() {
        const { open, post, server } = yield* harness()
        const first = yield* open()
        const second = yield* open()
        assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        assert.notStrictEqual(first, second)
        assert.strictEqual(yield* server.sessionCount, 2)
        const response = yield* post(call(1, "add", { a: 2, b: 3 }), first)
        assert.strictEqual(response.status, 200)
        assert.strictEqual(response.headers["content-type"], "application/json")
        const body = yield* json(response)
        assert.deepStrictEqual(body.result.structuredContent, { sum: 5 })
        assert.strictEqual(body.id, 1)
        const who = yield* json(yield* post(call(2, "whoami"), second))
        assert.strictEqual(who.result.content[0].text, second)
      }))

    it.effect("the initialize answer carries the negotiated version; a refused initialize gets no session", () =>
      Effect.gen(function*() {
        const { post, server } = yield* harness()
        const response = yield* post(initialize("2025-03-26"))
        assert.strictEqual((yield* json(response)).result.protocolVersion, "2025-03-26")
        const bad = yield* post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { nope: true } })
        assert.strictEqual(bad.status, 200)
        assert.isDefined((yield* json(bad)).error)
        assert.isUndefined(bad.headers["mcp-session-id"])
        assert.strictEqual(yield* server.sessionCount, 1)
      }))

    it.effect("notifications and responses get 202", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness()
        const id = yield* open()
        const notification = yield* post({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }, id)
        assert.strictEqual(notification.status, 202)
        const response = yield* post({ jsonrpc: "2.0", id: 99, result: {} }, id)
        assert.strictEqual(response.status, 202)
      }))

    it.effect("DELETE ends the session: 204, then 404; its McpServer session is closed", () =>
      Effect.gen(function*() {
        const { open, post, request, server } = yield* harness()
        const id = yield* open()
        assert.strictEqual(yield* server.sessionCount, 1)
        const deleted = yield* request("DELETE", { headers: { "mcp-session-id": id } })
        assert.strictEqual(deleted.status, 204)
        assert.strictEqual(yield* server.sessionCount, 0)
        assert.strictEqual((yield* post(call(1, "add", { a: 1, b: 1 }), id)).status, 404)
        assert.strictEqual((yield* request("DELETE", { headers: { "mcp-session-id": id } })).status, 404)
      }))

    it.effect("a DELETE while a call is pending ends that call's POST", () =>
      Effect.gen(function*() {
        const { open, post, request } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const sse = yield* sseOf(yield* post(call(1, "wait"), id))
        yield* request("DELETE", { headers: { "mcp-session-id": id } })
        assert.deepStrictEqual(yield* sse.rest, [])
      }))

    it.effect("closing the layer closes every session", () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const { open, server } = yield* harness().pipe(Scope.provide(scope))
        yield* open()
        yield* open()
        assert.strictEqual(yield* server.sessionCount, 2)
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual(yield* server.sessionCount, 0)
      }))
  })

  describe("HTTP errors", () => {
    it.effect("400 without Mcp-Session-Id, 404 for an unknown one", () =>
      Effect.gen(function*() {
        const { open, post, request } = yield* harness()
        yield* open()
        const missing = yield* post(call(1, "add", { a: 1, b: 2 }))
        assert.strictEqual(missing.status, 400)
        assert.strictEqual((yield* json(missing)).error.code, -32000)
        const unknown = yield* post(call(1, "add", { a: 1, b: 2 }), "no-such-session")
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual((yield* json(unknown)).error.code, -32001)
        assert.strictEqual((yield* request("GET", { headers: { accept: "text/event-stream" } })).status, 400)
        assert.strictEqual(
          (yield* request("GET", { headers: { accept: "text/event-stream", "mcp-session-id": "nope" } })).status,
          404
        )
        assert.strictEqual((yield* request("DELETE")).status, 400)
      }))

    it.effect("405 for other methods, with Allow", () =>
      Effect.gen(function*() {
        const { request } = yield* harness()
        for (const method of ["PUT", "PATCH", "OPTIONS"]) {
          const response = yield* request(method)
          assert.strictEqual(response.status, 405)
          assert.strictEqual(response.headers["allow"], "GET, POST, DELETE")
        }
      }))

    it.effect("406 without the right Accept, 415 without JSON, 400 for bad JSON or an invalid message", () =>
      Effect.gen(function*() {
        const { open, post, request } = yield* harness()
        const id = yield* open()
        assert.strictEqual((yield* post(call(1, "add"), id, { accept: "application/json" })).status, 406)
        assert.strictEqual((yield* post(call(1, "add"), id, { "content-type": "text/plain" })).status, 415)
        const bad = yield* post("{not json", id)
        assert.strictEqual(bad.status, 400)
        assert.strictEqual((yield* json(bad)).error.code, -32700)
        const invalid = yield* post({ jsonrpc: "2.0", id: 4, method: 42 }, id)
        assert.strictEqual(invalid.status, 400)
        assert.deepStrictEqual([(yield* json(invalid)).error.code, (yield* json(invalid)).id], [-32600, 4])
        assert.strictEqual((yield* post([], id)).status, 400)
        const get = yield* request("GET", { headers: { accept: "application/json", "mcp-session-id": id } })
        assert.strictEqual(get.status, 406)
      }))

    it.effect("413 beyond maxBodyBytes", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness({ maxBodyBytes: 1024 })
        const id = yield* open()
        const response = yield* post(call(1, "add", { a: 1, b: 2, pad: "x".repeat(2000) }), id)
        assert.strictEqual(response.status, 413)
      }))

    it.effect("400 for an unsupported MCP-Protocol-Version; any supported one is accepted", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness()
        const id = yield* open()
        const bad = yield* post(call(1, "add", { a: 1, b: 2 }), id, { "mcp-protocol-version": "1999-01-01" })
        assert.strictEqual(bad.status, 400)
        assert.match((yield* json(bad)).error.message, /1999-01-01/)
        const old = yield* post(call(2, "add", { a: 1, b: 2 }), id, { "mcp-protocol-version": "2025-03-26" })
        assert.strictEqual(old.status, 200)
      }))

    it.effect("batches: accepted in a 2025-03-26 session (one JSON array), 400 in later ones", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness()
        const legacy = yield* open("2025-03-26")
        const batch = yield* post([call(1, "add", { a: 1, b: 1 }), call(2, "add", { a: 2, b: 2 }), initialized], legacy)
        assert.strictEqual(batch.status, 200)
        const answers = yield* json(batch)
        assert.deepStrictEqual(answers.map((a: any) => [a.id, a.result.structuredContent.sum]), [[1, 2], [2, 4]])
        const modern = yield* open()
        const refused = yield* post([call(1, "add", { a: 1, b: 1 })], modern)
        assert.strictEqual(refused.status, 400)
        assert.strictEqual((yield* post([initialize()])).status, 400)
        const twice = yield* post([call(3, "add", { a: 1, b: 1 }), call(3, "add", { a: 2, b: 2 })], legacy)
        assert.strictEqual(twice.status, 400)
      }))

    it.effect("a request id already in flight is refused", () =>
      Effect.gen(function*() {
        const { gate, open, post } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const first = yield* sseOf(yield* post(call(7, "wait"), id))
        const again = yield* post(call(7, "add", { a: 1, b: 2 }), id)
        assert.strictEqual(again.status, 400)
        yield* Queue.offer(gate, undefined)
        assert.strictEqual((yield* first.message).result.content[0].text, "waited")
      }))

    it.effect("403 for a Host or Origin outside the allow-lists", () =>
      Effect.gen(function*() {
        const { post } = yield* harness({
          allowedHosts: ["localhost", "127.0.0.1"],
          allowedOrigins: ["http://localhost:3000", "app.example"]
        })
        const evilHost = yield* post(initialize(), undefined, { host: "evil.example.com" })
        assert.strictEqual(evilHost.status, 403)
        const evilOrigin = yield* post(initialize(), undefined, {
          host: "localhost:8080",
          origin: "http://evil.example.com"
        })
        assert.strictEqual(evilOrigin.status, 403)
        const wrongPort = yield* post(initialize(), undefined, { origin: "http://localhost:4000" })
        assert.strictEqual(wrongPort.status, 403)
        assert.strictEqual((yield* post(initialize(), undefined, { host: "127.0.0.1:8080" })).status, 200)
        assert.strictEqual((yield* post(initialize(), undefined, { origin: "http://localhost:3000" })).status, 200)
        assert.strictEqual((yield* post(initialize(), undefined, { origin: "https://app.example:8443" })).status, 200)
      }))

    it.effect("without an HttpServer bound to loopback, a browser Origin is refused unless allowed", () =>
      Effect.gen(function*() {
        const { post } = yield* harness()
        assert.strictEqual((yield* post(initialize(), undefined, { host: "anything.example" })).status, 200)
        assert.strictEqual((yield* post(initialize(), undefined, { origin: "http://localhost:3000" })).status, 403)
        const open = yield* harness({ allowedOrigins: "any", allowedHosts: "any" })
        assert.strictEqual((yield* open.post(initialize(), undefined, { origin: "http://x.example" })).status, 200)
      }))

    it.effect("503 for initialize beyond maxSessions", () =>
      Effect.gen(function*() {
        const { open, post, request } = yield* harness({ maxSessions: 2 })
        const first = yield* open()
        yield* open()
        const refused = yield* post(initialize())
        assert.strictEqual(refused.status, 503)
        yield* request("DELETE", { headers: { "mcp-session-id": first } })
        assert.strictEqual((yield* post(initialize())).status, 200)
      }))
  })

  describe("answers", () => {
    it.effect("JSON mode turns into SSE when the handler sends progress before its result", () =>
      Effect.gen(function*() {
        const { gate, open, post } = yield* harness()
        const id = yield* open()
        yield* Queue.offerAll(gate, [undefined, undefined])
        const response = yield* post(call(1, "steps", { n: 2 }, { progressToken: "p" }), id)
        const sse = yield* sseOf(response)
        const all = yield* sse.rest
        assert.deepStrictEqual(all.map((m) => m.method ?? m.result.content[0].text), [
          "notifications/progress",
          "notifications/progress",
          "did 2 steps"
        ])
        assert.deepStrictEqual(all.slice(0, 2).map((m) => m.params.progress), [1, 2])
      }))

    it.effect("SSE mode: a priming event with an id (and retry) first, then the answer, then the end", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness({ responseMode: "sse", retry: "500 millis" })
        const id = yield* open()
        const sse = yield* sseOf(yield* post(call(1, "add", { a: 1, b: 2 }), id))
        const retry = yield* sse.next
        assert.strictEqual(retry?._tag, "Retry")
        const priming = yield* sse.next
        assert.strictEqual(priming?._tag, "Event")
        if (priming?._tag !== "Event") return
        assert.strictEqual(priming.data, "")
        assert.isString(priming.id)
        const answer = yield* sse.next
        assert.strictEqual(answer?._tag === "Event" && JSON.parse(answer.data).id, 1)
        assert.isDefined(answer?._tag === "Event" ? answer.id : undefined)
        assert.isUndefined(yield* sse.next)
      }))

    it.effect("SSE mode: a quick answer goes out whole, with its length; a slow one streams", () =>
      Effect.gen(function*() {
        const { gate, open, post } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const quick = yield* post(call(1, "add", { a: 1, b: 2 }), id)
        assert.strictEqual(quick.body._tag, "Uint8Array")
        assert.strictEqual(quick.headers["content-type"], "text/event-stream")
        assert.strictEqual((yield* (yield* sseOf(quick)).message).result.content[0].text, `{"sum":3}`)
        // the handler waits on the gate: the answer cannot be whole
        const slow = yield* post(call(2, "steps", { n: 1 }), id)
        assert.strictEqual(slow.body._tag, "Stream")
        yield* Queue.offer(gate, undefined)
        const rest = yield* (yield* sseOf(slow)).rest
        assert.deepStrictEqual(rest.map((m) => m.result.content[0].text), ["did 1 steps"])
      }))

    it.effect("a 2025-06-18 session gets no priming events; event ids all the same", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness({ responseMode: "sse" })
        const id = yield* open("2025-06-18")
        const sse = yield* sseOf(yield* post(call(1, "add", { a: 1, b: 2 }), id))
        const first = yield* sse.next
        assert.strictEqual(first?._tag === "Event" && JSON.parse(first.data).id, 1)
        assert.isString(first?._tag === "Event" ? first.id : undefined)
      }))

    it.effect("without an event store: no ids, no priming", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness({ responseMode: "sse", eventStore: false })
        const id = yield* open()
        const sse = yield* sseOf(yield* post(call(1, "add", { a: 1, b: 2 }), id))
        const first = yield* sse.next
        assert.isTrue(first?._tag === "Event" && first.id === undefined && JSON.parse(first.data).id === 1)
      }))

    it.effect("a server→client request goes out on the POST stream and its answer comes back on another POST", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness()
        const id = yield* open()
        const sse = yield* sseOf(yield* post(call(1, "sample"), id))
        const request = yield* sse.message
        assert.strictEqual(request.method, "sampling/createMessage")
        const answer = yield* post({
          jsonrpc: "2.0",
          id: request.id,
          result: { role: "assistant", model: "m", content: { type: "text", text: "hello" } }
        }, id)
        assert.strictEqual(answer.status, 202)
        const result = yield* sse.message
        assert.deepStrictEqual([result.id, result.result.content[0].text], [1, "model said hello"])
      }))

    it.effect("a result that cannot be serialized becomes an internal error for its request", () =>
      Effect.gen(function*() {
        for (const responseMode of ["json", "sse"] as const) {
          const { open, post } = yield* harness({ responseMode })
          const id = yield* open()
          const response = yield* post(call(5, "cyclic"), id)
          const body = responseMode === "json" ? yield* json(response) : (yield* (yield* sseOf(response)).rest)[0]
          assert.deepStrictEqual([body.id, body.error.code], [5, -32603])
        }
      }))

    it.effect("a cancelled request's POST ends without an answer", () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const sse = yield* sseOf(yield* post(call("c1", "wait"), id))
        const cancel = yield* post(
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "c1" } },
          id
        )
        assert.strictEqual(cancel.status, 202)
        assert.deepStrictEqual(yield* sse.rest, [])
        const json = yield* harness()
        const jsonId = yield* json.open()
        const waiting = yield* json.post(call("c2", "wait"), jsonId).pipe(Effect.forkChild({ startImmediately: true }))
        yield* json.post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "c2" } }, jsonId)
        const response = yield* Fiber.join(waiting)
        assert.strictEqual(response.headers["content-type"], "text/event-stream")
        assert.strictEqual(yield* text(response), "")
      }))
  })

  describe("the GET stream", () => {
    it.effect("carries what is not sent on behalf of a request; one at a time", () =>
      Effect.gen(function*() {
        const { open, request, server } = yield* harness()
        const id = yield* open()
        const headers = { accept: "text/event-stream", "mcp-session-id": id }
        const get = yield* request("GET", { headers })
        assert.strictEqual(get.status, 200)
        const sse = yield* sseOf(get)
        assert.strictEqual((yield* request("GET", { headers })).status, 409)
        yield* server.unregister(Add)
        assert.strictEqual((yield* sse.message).method, "notifications/tools/list_changed")
      }))
  })

  describe("the GET stream, more", () => {
    it.effect("a notification caused by another session's handler goes to this session's GET stream", () =>
      Effect.gen(function*() {
        const { gate, open, post, request } = yield* harness({ responseMode: "sse" })
        const a = yield* open()
        const b = yield* open()
        const get = yield* sseOf(
          yield* request("GET", { headers: { accept: "text/event-stream", "mcp-session-id": b } })
        )
        // b has request 1 in flight; a's request 1 makes the server notify every session
        const waiting = yield* sseOf(yield* post(call(1, "wait"), b))
        const aAnswer = yield* sseOf(yield* post(call(1, "unregisterAdd"), a))
        assert.deepStrictEqual((yield* aAnswer.rest).map((m) => m.method ?? m.id), [
          "notifications/tools/list_changed",
          1
        ])
        assert.strictEqual((yield* get.message).method, "notifications/tools/list_changed")
        yield* Queue.offer(gate, undefined)
        assert.deepStrictEqual((yield* waiting.rest).map((m) => m.method ?? m.id), [1])
      }))

    it.effect("without an event store, a new GET after a dropped one works", () =>
      Effect.gen(function*() {
        const { open, request, server } = yield* harness({ eventStore: false })
        const id = yield* open()
        const headers = { accept: "text/event-stream", "mcp-session-id": id }
        const scope = yield* Scope.make()
        const first = yield* readSse(yield* request("GET", { headers }), scope)
        yield* server.unregister(Add)
        assert.strictEqual((yield* first.message).method, "notifications/tools/list_changed")
        yield* Scope.close(scope, Exit.void)
        const second = yield* sseOf(yield* request("GET", { headers }))
        yield* server.register(Add)
        assert.strictEqual((yield* second.message).method, "notifications/tools/list_changed")
      }))
  })

  describe("resumability", () => {
    it.effect("after a dropped POST stream, GET with Last-Event-ID delivers the missed events exactly once", () =>
      Effect.gen(function*() {
        const { gate, open, post, request } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const scope = yield* Scope.make()
        const first = yield* readSse(yield* post(call(1, "steps", { n: 4 }, { progressToken: "t" }), id), scope)
        const priming = yield* first.next
        const one = yield* first.next
        assert.isTrue(priming?._tag === "Event" && priming.data === "")
        assert.isTrue(one?._tag === "Event" && JSON.parse(one.data).params.progress === 1)
        const lastId = one?._tag === "Event" ? one.id! : ""
        // the connection drops; the handler goes on
        yield* Scope.close(scope, Exit.void)
        yield* Queue.offerAll(gate, [undefined, undefined])
        yield* Effect.yieldNow
        const resumed = yield* request("GET", {
          headers: { accept: "text/event-stream", "mcp-session-id": id, "last-event-id": lastId }
        })
        assert.strictEqual(resumed.status, 200)
        const second = yield* sseOf(resumed)
        assert.strictEqual((yield* second.message).params.progress, 2)
        assert.strictEqual((yield* second.message).params.progress, 3)
        yield* Queue.offer(gate, undefined)
        assert.strictEqual((yield* second.message).params.progress, 4)
        yield* Queue.offer(gate, undefined)
        const rest = yield* second.rest
        assert.deepStrictEqual(rest.map((m) => m.id), [1])
        assert.strictEqual(rest[0].result.content[0].text, "did 4 steps")
      }))

    it.effect("events written to a connection whose client lost them are replayed from the store, once", () =>
      Effect.gen(function*() {
        const { gate, open, post, request } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const scope = yield* Scope.make()
        const first = yield* readSse(yield* post(call(1, "steps", { n: 4 }, { progressToken: "t" }), id), scope)
        yield* first.next // priming
        const one = yield* first.next
        const lastSeen = one?._tag === "Event" ? one.id! : ""
        // the server writes 2 and 3 to this connection, but the client never gets them
        yield* Queue.offerAll(gate, [undefined, undefined])
        assert.strictEqual((yield* first.message).params.progress, 2)
        assert.strictEqual((yield* first.message).params.progress, 3)
        yield* Scope.close(scope, Exit.void)
        const second = yield* sseOf(
          yield* request("GET", {
            headers: { accept: "text/event-stream", "mcp-session-id": id, "last-event-id": lastSeen }
          })
        )
        assert.strictEqual((yield* second.message).params.progress, 2)
        assert.strictEqual((yield* second.message).params.progress, 3)
        yield* Queue.offerAll(gate, [undefined, undefined])
        const rest = yield* second.rest
        assert.deepStrictEqual(rest.map((m) => m.params?.progress ?? m.result.content[0].text), [4, "did 4 steps"])
      }))

    it.effect("a resumption takes the stream over from a connection that is still open", () =>
      Effect.gen(function*() {
        const { gate, open, post, request } = yield* harness({ responseMode: "sse" })
        const id = yield* open()
        const first = yield* sseOf(yield* post(call(1, "steps", { n: 2 }, { progressToken: "t" }), id))
        yield* first.next // priming
        const one = yield* first.next
        const second = yield* sseOf(
          yield* request("GET", {
            headers: {
              accept: "text/event-stream",
              "mcp-session-id": id,
              "last-event-id": one?._tag === "Event" ? one.id! : ""
            }
          })
        )
        // the old connection ends; everything after goes to the new one
        assert.deepStrictEqual(yield* first.rest, [])
        yield* Queue.offerAll(gate, [undefined, undefined])
        const rest = yield* second.rest
        assert.deepStrictEqual(rest.map((m) => m.params?.progress ?? m.result.content[0].text), [2, "did 2 steps"])
      }))

    it.effect("a handler can end its connection early (SEP-1699 polling); the client resumes", () =>
      Effect.gen(function*() {
        const { gate, open, post, request } = yield* harness({ responseMode: "sse", retry: "250 millis" })
        const id = yield* open()
        const sse = yield* sseOf(yield* post(call(1, "poll"), id))
        const events: Array<Sse.AnyEvent> = []
        for (let i = 0; i < 10; i++) {
          const event = yield* sse.next
          if (event === undefined) break
          events.push(event)
        }
        assert.deepStrictEqual(events.map((e) => e._tag), ["Retry", "Event", "Retry"])
        const primingId = events[1]?._tag === "Event" ? events[1].id! : ""
        yield* Queue.offer(gate, undefined)
        yield* Effect.yieldNow
        const resumed = yield* sseOf(
          yield* request("GET", {
            headers: { accept: "text/event-stream", "mcp-session-id": id, "last-event-id": primingId }
          })
        )
        const rest = yield* resumed.rest
        assert.deepStrictEqual(rest.map((m) => m.result.content[0].text), ["after the reconnect"])
      }))

    it.effect("a resumed GET stream replays what was sent while it was down", () =>
      Effect.gen(function*() {
        const { open, request, server } = yield* harness()
        const id = yield* open()
        const headers = { accept: "text/event-stream", "mcp-session-id": id }
        const scope = yield* Scope.make()
        const first = yield* readSse(yield* request("GET", { headers }), scope)
        const priming = yield* first.next
        const primingId = priming?._tag === "Event" ? priming.id! : ""
        yield* Scope.close(scope, Exit.void)
        yield* server.unregister(Add)
        yield* server.register(Add)
        const resumed = yield* sseOf(yield* request("GET", { headers: { ...headers, "last-event-id": primingId } }))
        assert.strictEqual((yield* resumed.message).method, "notifications/tools/list_changed")
        assert.strictEqual((yield* resumed.message).method, "notifications/tools/list_changed")
      }))

    it.effect("unknown or foreign event ids get 400", () =>
      Effect.gen(function*() {
        const { open, post, request } = yield* harness({ responseMode: "sse" })
        const mine = yield* open()
        const other = yield* open()
        const sse = yield* sseOf(yield* post(call(1, "add", { a: 1, b: 1 }), other))
        const priming = yield* sse.next
        const foreign = priming?._tag === "Event" ? priming.id! : ""
        const get = (lastEventId: string) =>
          request("GET", {
            headers: { accept: "text/event-stream", "mcp-session-id": mine, "last-event-id": lastEventId }
          })
        assert.strictEqual((yield* get("garbage")).status, 400)
        assert.strictEqual((yield* get(foreign)).status, 400)
      }))
  })

  describe("reaping", () => {
    it.effect("idle sessions are closed after idleTimeout (TestClock); busy ones are not", () =>
      Effect.gen(function*() {
        const { gate, open, post, server } = yield* harness({ idleTimeout: "10 minutes", responseMode: "sse" })
        const idle = yield* open()
        const busy = yield* open()
        const waiting = yield* sseOf(yield* post(call(1, "wait"), busy))
        yield* TestClock.adjust("9 minutes")
        assert.strictEqual((yield* post(call(2, "add", { a: 1, b: 1 }), idle)).status, 200)
        yield* TestClock.adjust("9 minutes")
        assert.strictEqual(yield* server.sessionCount, 2)
        yield* TestClock.adjust("2 minutes")
        yield* settle
        assert.strictEqual(yield* server.sessionCount, 1)
        assert.strictEqual((yield* post(call(3, "add", { a: 1, b: 1 }), idle)).status, 404)
        yield* Queue.offer(gate, undefined)
        assert.strictEqual((yield* waiting.message).id, 1)
        yield* TestClock.adjust("11 minutes")
        yield* settle
        assert.strictEqual(yield* server.sessionCount, 0)
        assert.strictEqual((yield* post(call(4, "add", { a: 1, b: 1 }), busy)).status, 404)
      }))
  })

  describe("stateless", () => {
    it.effect("every POST is its own session: no ids, no GET, nothing left behind", () =>
      Effect.gen(function*() {
        const { post, request, server } = yield* harness({ stateless: true })
        const init = yield* post(initialize())
        assert.strictEqual(init.status, 200)
        assert.isUndefined(init.headers["mcp-session-id"])
        const listed = yield* json(
          yield* post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, undefined, {
            "mcp-protocol-version": "2025-11-25"
          })
        )
        assert.include(listed.result.tools.map((t: any) => t.name), "add")
        const called = yield* json(yield* post(call(2, "add", { a: 20, b: 22 })))
        assert.deepStrictEqual(called.result.structuredContent, { sum: 42 })
        assert.strictEqual((yield* post(initialized)).status, 202)
        assert.strictEqual((yield* request("GET", { headers: { accept: "text/event-stream" } })).status, 405)
        assert.strictEqual((yield* request("DELETE")).status, 405)
        const sampled = yield* json(yield* post(call(3, "sample")))
        assert.isTrue(sampled.result.isError)
        assert.strictEqual(yield* server.sessionCount, 0)
      }))

    it.effect("a streamed answer closes its session when the stream ends", () =>
      Effect.gen(function*() {
        const { gate, post, server } = yield* harness({ stateless: true })
        yield* Queue.offer(gate, undefined)
        const sse = yield* sseOf(yield* post(call(1, "steps", { n: 1 }, { progressToken: 1 })))
        assert.strictEqual(yield* server.sessionCount, 1)
        const all = yield* sse.rest
        assert.deepStrictEqual(all.map((m) => m.method ?? m.id), ["notifications/progress", 1])
        assert.strictEqual(yield* server.sessionCount, 0)
      }))
  })

  describe("load", () => {
    it.live("100 sessions × 20 concurrent calls: every answer reaches its own caller", () =>
      Effect.gen(function*() {
        for (const responseMode of ["json", "sse"] as const) {
          const { open, post, server } = yield* harness({ responseMode })
          const sessions = yield* Effect.forEach(Array.from({ length: 100 }, () => undefined), () => open(), {
            concurrency: 10
          })
          const results = yield* Effect.forEach(
            sessions.flatMap((session, s) => Array.from({ length: 20 }, (_, i) => ({ session, s, i }))),
            ({ i, s, session }) =>
              Effect.gen(function*() {
                const response = yield* post(call(i, "add", { a: s, b: i * 1000 }), session)
                const body = responseMode === "json" ? yield* json(response) : (yield* (yield* sseOf(response)).rest)[0]
                return body.id === i && body.result.structuredContent.sum === s + i * 1000
              }),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(results.length, 2000)
          assert.isTrue(results.every((ok) => ok))
          assert.strictEqual(yield* server.sessionCount, 100)
        }
      }), 60_000)
  })

  describe("event store", () => {
    it.effect("in memory: ids name their stream, replay skips priming events, old ids are refused", () =>
      Effect.gen(function*() {
        const store = yield* McpHttpServer.makeEventStoreMemory({ maxEventsPerStream: 3 })
        const message = (n: number) => ({ jsonrpc: "2.0" as const, method: "m", params: { n } })
        const priming = yield* store.append("s/1", undefined)
        const ids = [yield* store.append("s/1", message(1)), yield* store.append("s/1", message(2))]
        const replay = yield* store.replayAfter(priming)
        assert.isTrue(Option.isSome(replay))
        if (Option.isNone(replay)) return
        assert.strictEqual(replay.value.streamId, "s/1")
        assert.deepStrictEqual(replay.value.events.map((e) => e.id), ids)
        assert.deepStrictEqual(replay.value.events.map((e) => e.message), [message(1), message(2)])
        yield* store.append("s/1", message(3))
        yield* store.append("s/1", message(4))
        // the priming event and message 1 are gone: resuming after the priming id could miss message 1
        assert.isTrue(Option.isNone(yield* store.replayAfter(priming)))
        assert.strictEqual(Option.getOrThrow(yield* store.replayAfter(ids[0]!)).events.length, 3)
        yield* store.remove("s/1")
        assert.isTrue(Option.isNone(yield* store.replayAfter(ids[1]!)))
        assert.isTrue(Option.isNone(yield* store.replayAfter("nonsense")))
      }))

    it.effect("an EventStore in context is used; a closed session's streams are removed from it", () =>
      Effect.gen(function*() {
        const appended: Array<string> = []
        const live = new Set<string>()
        const inner = yield* McpHttpServer.makeEventStoreMemory()
        const store = McpHttpServer.EventStore.of({
          append: (streamId, message) =>
            Effect.tap(inner.append(streamId, message), (id) =>
              Effect.sync(() => {
                appended.push(id)
                live.add(streamId)
              })),
          replayAfter: inner.replayAfter,
          remove: (streamId) => Effect.andThen(inner.remove(streamId), Effect.sync(() => live.delete(streamId)))
        })
        const { open, post, request } = yield* harness({ responseMode: "sse" }).pipe(
          Effect.provideService(McpHttpServer.EventStore, store)
        )
        const id = yield* open()
        yield* (yield* sseOf(yield* post(call(1, "add", { a: 1, b: 1 }), id))).rest
        assert.strictEqual(appended.length, 2)
        for (let i = 2; i < 8; i++) yield* (yield* sseOf(yield* post(call(i, "add", { a: 1, b: 1 }), id))).rest
        // finished streams are kept only a few at a time
        assert.strictEqual(live.size, 4)
        const get = yield* sseOf(
          yield* request("GET", { headers: { accept: "text/event-stream", "mcp-session-id": id } })
        )
        yield* get.next // its priming event
        assert.strictEqual(live.size, 5)
        yield* request("DELETE", { headers: { "mcp-session-id": id } })
        assert.strictEqual(live.size, 0)
      }))
  })
})
