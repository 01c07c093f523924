/**
 * The server's gauges and counters over real HTTP (127.0.0.1, ephemeral
 * port), in a metric registry of the test's own: a 2025-11-25 session is a
 * live session until deleted, a GET stream an open SSE stream until dropped;
 * 2026-07-28 requests are counted and open no session.
 */
import { McpMetrics, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Metric, Schema } from "effect"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { mcpHeaders, openSession, openSse, send } from "./fixtures/rawHttp.ts"

const Add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed(`${a + b}`)
})

const serve = Effect.gen(function*() {
  const registry: Metric.MetricRegistry = new Map()
  const server = yield* McpServer.make({ name: "metrics", version: "1.0.0" })
  yield* server.register(Add)
  const context = yield* Layer.build(
    NodeMcpHttpServer.layer().pipe(
      Layer.provide(Layer.succeed(McpServer.McpServer, server)),
      Layer.provide(Layer.succeed(Metric.MetricRegistry, registry))
    )
  )
  const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  const read = <S>(metric: Metric.Metric<any, S>) =>
    Effect.provideService(Metric.value(metric), Metric.MetricRegistry, registry)
  return { url, read }
})

// the gauges move with the server's fibers: wait (bounded) for the value
const eventually = <A>(read: Effect.Effect<A>, expected: A) =>
  Effect.gen(function*() {
    let value = yield* read
    for (let i = 0; i < 100 && value !== expected; i++) {
      yield* Effect.sleep("10 millis")
      value = yield* read
    }
    return value
  })

describe("NodeMcpHttpServer metrics", () => {
  it.live("sessions and SSE streams are gauged; requests are counted in both eras", () =>
    Effect.gen(function*() {
      const { read, url } = yield* serve
      const sessions = Effect.map(read(McpMetrics.sessions), (state) => state.value)
      const streams = Effect.map(read(McpMetrics.sseStreams), (state) => state.value)
      const calls = Effect.map(
        read(Metric.withAttributes(McpMetrics.requests, { method: "tools/call", outcome: "ok" })),
        (state) => state.count
      )
      assert.strictEqual(yield* sessions, 0)

      const session = yield* openSession(url, { version: false })
      assert.strictEqual(yield* sessions, 1)
      const second = yield* openSession(url, { version: false })
      assert.strictEqual(yield* sessions, 2)

      const get = yield* openSse(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session }
      })
      assert.strictEqual(get.status, 200)
      assert.strictEqual(yield* eventually(streams, 1), 1)

      const reply = yield* send(url, {
        headers: mcpHeaders({ session, version: false }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }
      })
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(yield* calls, 1)

      yield* get.drop
      assert.strictEqual(yield* eventually(streams, 0), 0)

      const deleted = yield* send(url, { method: "DELETE", headers: mcpHeaders({ session: second, version: false }) })
      assert.strictEqual(deleted.status, 204)
      assert.strictEqual(yield* eventually(sessions, 1), 1)

      // 2026-07-28: a request alone, counted, no session
      const modern = yield* send(url, {
        headers: mcpHeaders({ version: "2026-07-28" }, { "mcp-method": "tools/call", "mcp-name": "add" }),
        body: {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: {
            name: "add",
            arguments: { a: 2, b: 2 },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {}
            }
          }
        }
      })
      assert.strictEqual(modern.status, 200, modern.body)
      assert.strictEqual(yield* calls, 2)
      assert.strictEqual(yield* sessions, 1)
    }).pipe(Effect.scoped))
})
