/**
 * The standalone Node server on real sockets (127.0.0.1, ephemeral ports):
 * the bound address, DNS-rebinding defaults, resumption after a dropped TCP
 * connection, shutdown with open streams, and load.
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Queue, Schema, Scope } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Http from "node:http"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { initialize, mcpHeaders, openSession, openSse, send } from "./fixtures/rawHttp.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

const Add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const makeSteps = (gate: Queue.Queue<void>) =>
  McpTool.make("steps", {
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

const serve = (options: NodeMcpHttpServer.Options = {}, scope?: Scope.Scope) =>
  Effect.gen(function*() {
    const gate = yield* Queue.unbounded<void>()
    const server = yield* McpServer.make({ name: "node-http", version: "1.0.0" })
    yield* server.register(Add)
    yield* server.register(makeSteps(gate))
    const build = Layer.build(
      NodeMcpHttpServer.layer(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const context = yield* (scope === undefined ? build : Scope.provide(build, scope))
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    const address = (yield* HttpServer.HttpServer.pipe(Effect.provideContext(context))).address
    return { server, gate, url, address }
  })

// -----------------------------------------------------------------------------
// tests
// -----------------------------------------------------------------------------

describe("NodeMcpHttpServer", () => {
  it.live("listens on 127.0.0.1 on an ephemeral port; url names the endpoint", () =>
    Effect.gen(function*() {
      const { address, url } = yield* serve()
      assert.strictEqual(address._tag, "InetAddressV4")
      if (address._tag !== "InetAddressV4") return
      assert.isAbove(address.port, 0)
      assert.strictEqual(url, `http://127.0.0.1:${address.port}/mcp`)
      const session = yield* openSession(url, { version: false })
      const reply = yield* send(url, {
        headers: mcpHeaders({ session: session, version: false }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }
      })
      assert.deepStrictEqual(JSON.parse(reply.body).result.structuredContent, { sum: 3 })
    }).pipe(Effect.scoped))

  it.live("on loopback, Host and Origin must be loopback names (403 otherwise)", () =>
    Effect.gen(function*() {
      const { address, url } = yield* serve()
      const port = address._tag === "InetAddressV4" ? address.port : 0
      const post = (extra: Http.OutgoingHttpHeaders) =>
        Effect.map(send(url, { headers: { ...mcpHeaders({ version: false }), ...extra }, body: initialize }), (r) =>
          r.status)
      assert.strictEqual(yield* post({ host: "evil.example.com" }), 403)
      assert.strictEqual(yield* post({ host: `evil.example.com:${port}` }), 403)
      assert.strictEqual(yield* post({ origin: "http://evil.example.com" }), 403)
      assert.strictEqual(yield* post({ host: `localhost:${port}`, origin: `http://localhost:${port}` }), 200)
      assert.strictEqual(yield* post({ host: `127.0.0.1:${port}`, origin: "http://127.0.0.1:5173" }), 200)
      assert.strictEqual(yield* post({ host: `[::1]:${port}` }), 200)
      const get = yield* send(url, {
        method: "GET",
        headers: { host: "evil.example.com", accept: "text/event-stream" }
      })
      assert.strictEqual(get.status, 403)
    }).pipe(Effect.scoped))

  it.live("allow-lists are configurable", () =>
    Effect.gen(function*() {
      const { url } = yield* serve({ allowedHosts: ["mcp.internal"], allowedOrigins: ["https://app.example"] })
      const post = (extra: Http.OutgoingHttpHeaders) =>
        Effect.map(send(url, { headers: { ...mcpHeaders({ version: false }), ...extra }, body: initialize }), (r) =>
          r.status)
      assert.strictEqual(yield* post({ host: "localhost" }), 403)
      assert.strictEqual(yield* post({ host: "mcp.internal:8080", origin: "https://app.example" }), 200)
    }).pipe(Effect.scoped))

  it.live("a dropped TCP connection: GET with Last-Event-ID delivers the missed events exactly once", () =>
    Effect.gen(function*() {
      const { gate, url } = yield* serve({ responseMode: "sse" })
      const session = yield* openSession(url, { version: false })
      const first = yield* openSse(url, {
        method: "POST",
        headers: mcpHeaders({ session: session, version: false }),
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "steps", arguments: { n: 5 }, _meta: { progressToken: 1 } }
        }
      })
      assert.strictEqual(first.status, 200)
      const priming = yield* first.next
      assert.strictEqual(priming?.data, "")
      const one = yield* first.next
      assert.strictEqual(JSON.parse(one!.data).params.progress, 1)
      yield* first.drop
      // the server notices the close, the handler goes on meanwhile
      yield* Effect.sleep("50 millis")
      yield* Queue.offerAll(gate, [undefined, undefined])
      yield* Effect.sleep("50 millis")
      const second = yield* openSse(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session, "last-event-id": one!.id! }
      })
      assert.strictEqual(second.status, 200)
      const seen: Array<unknown> = []
      for (let i = 0; i < 2; i++) seen.push(JSON.parse((yield* second.next)!.data).params.progress)
      yield* Queue.offerAll(gate, [undefined, undefined, undefined])
      for (let i = 0; i < 20; i++) {
        const event = yield* second.next
        if (event === undefined) break
        const message = JSON.parse(event.data)
        seen.push(message.params?.progress ?? message.result.content[0].text)
      }
      assert.deepStrictEqual(seen, [2, 3, 4, 5, "did 5 steps"])
    }).pipe(Effect.scoped))

  it.live("closing the layer ends open streams and returns promptly", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { server, url } = yield* serve({ responseMode: "sse" }, scope)
      const session = yield* openSession(url, { version: false })
      const get = yield* openSse(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session }
      })
      assert.strictEqual(get.status, 200)
      const post = yield* openSse(url, {
        method: "POST",
        headers: mcpHeaders({ session: session, version: false }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "steps", arguments: { n: 1 } } }
      })
      yield* post.next
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = Date.now() - started
      assert.isBelow(elapsed, 1000)
      assert.strictEqual(yield* server.sessionCount, 0)
      for (let i = 0; i < 5; i++) if ((yield* get.next) === undefined) break
      // the call in flight is answered (the server is shutting down), then its stream ends
      assert.include(JSON.parse((yield* post.next)!.data).error.message, "shutting down")
      assert.isUndefined(yield* post.next)
      // the listening socket is closed too
      const again = yield* Effect.exit(send(url, { headers: mcpHeaders({ version: false }), body: initialize }))
      assert.isTrue(Exit.isFailure(again))
    }))

  it.live(
    "100 sessions × 20 concurrent calls over real sockets: every answer reaches its own caller",
    () =>
      Effect.gen(function*() {
        const { server, url } = yield* serve()
        const agent = new Http.Agent({ keepAlive: true, maxSockets: 64 })
        yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
        const sessions = yield* Effect.forEach(
          Array.from({ length: 100 }),
          () => openSession(url, { version: false }, agent),
          { concurrency: 16 }
        )
        const calls = sessions.flatMap((session, s) => Array.from({ length: 20 }, (_, i) => ({ session, s, i })))
        const results = yield* Effect.forEach(calls, ({ i, s, session }) =>
          Effect.map(
            send(url, {
              agent,
              headers: mcpHeaders({ session: session, version: false }),
              body: {
                jsonrpc: "2.0",
                id: i,
                method: "tools/call",
                params: { name: "add", arguments: { a: s, b: i * 1000 } }
              }
            }),
            (reply) => {
              const body = JSON.parse(reply.body)
              return reply.status === 200 && body.id === i && body.result.structuredContent.sum === s + i * 1000
            }
          ), { concurrency: "unbounded" })
        assert.strictEqual(results.length, 2000)
        assert.isTrue(results.every((ok) => ok))
        assert.strictEqual(yield* server.sessionCount, 100)
      }).pipe(Effect.scoped),
    60_000
  )
})
