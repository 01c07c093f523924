/**
 * NodeMcpHttpClient over real sockets on 127.0.0.1, against hand-written
 * node:http servers that do exactly what each test needs: the sse-retry
 * timing window measured live, resumption after a dropped connection, and
 * what closing leaves behind.
 */
import { McpClientSession, type McpError, McpSchema } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Ref, Schedule } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpWebSocket from "../src/NodeMcpWebSocket.ts"
import { listenLoopback } from "./fixtures/listen.ts"
import { clientInfo } from "./utils/client.ts"

interface Seen {
  readonly method: string
  readonly headers: IncomingMessage["headers"]
  readonly message: any
  readonly at: number
}

type Handler = (seen: Seen, res: ServerResponse) => void

/** A node:http server on 127.0.0.1 that answers initialize and notifications itself and the rest with `handler`. */
const rawServer = (handler: Handler) =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const server = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        const entry: Seen = {
          method: req.method ?? "",
          headers: req.headers,
          message: body === "" ? undefined : JSON.parse(body),
          at: performance.now()
        }
        seen.push(entry)
        const message = entry.message
        if (req.method === "POST" && message.method === "initialize") {
          res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "session-1" })
          return res.end(JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "raw", version: "1" }
            }
          }))
        }
        if (req.method === "POST" && !("id" in message && "method" in message)) return res.writeHead(202).end()
        if (req.method === "DELETE") return res.writeHead(200).end()
        handler(entry, res)
      })
    })
    const port = yield* listenLoopback(server)
    const sockets = Effect.callback<number>((resume) => {
      server.getConnections((_error, count) => resume(Effect.succeed(count)))
    })
    return { url: `http://127.0.0.1:${port}/mcp`, seen, sockets }
  })

/** A client session (no McpClient above it) over the Node HTTP client transport. */
// the raw servers here play stateful-era servers
const connectSession = (options: NodeMcpHttpClientOptions) =>
  Effect.map(
    Layer.build(
      McpClientSession.layer({ clientInfo, era: "legacy" }).pipe(Layer.provide(NodeMcpHttpClient.layer(options)))
    ),
    (context) => Context.get(context, McpClientSession.McpClientSession)
  )

type NodeMcpHttpClientOptions = Parameters<typeof NodeMcpHttpClient.layer>[0]

const sse = (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })

const event = (value: unknown, id: string) => `event: message\nid: ${id}\ndata: ${JSON.stringify(value)}\n\n`

describe("NodeMcpHttpClient over real sockets", () => {
  it.live("sse-retry, live: after a priming event with retry: 500, the GET with Last-Event-ID comes 450–700 ms after the POST stream closed", () =>
    Effect.gen(function*() {
      let closedAt = 0
      let callId: unknown
      const server = yield* rawServer((seen, res) => {
        if (seen.method === "GET") {
          if (seen.headers["last-event-id"] === undefined) return res.writeHead(405).end()
          sse(res)
          res.write(
            event({ jsonrpc: "2.0", id: callId, result: { content: [{ type: "text", text: "reconnected" }] } }, "ev-2")
          )
          return res.end()
        }
        callId = seen.message.id
        sse(res)
        res.write("id: ev-1\nretry: 500\ndata: \n\n")
        setTimeout(() => {
          closedAt = performance.now()
          res.end()
        }, 50)
      })
      const session = yield* connectSession({ url: server.url })
      const result = yield* session.request(McpSchema.CallTool, { name: "test_reconnection", arguments: {} })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "reconnected" }])
      const resume = server.seen.find((s) => s.method === "GET" && s.headers["last-event-id"] !== undefined)!
      assert.strictEqual(resume.headers["last-event-id"], "ev-1")
      const delay = resume.at - closedAt
      assert.isAtLeast(delay, 450, `reconnected after ${delay} ms`)
      assert.isAtMost(delay, 700, `reconnected after ${delay} ms`)
    }))

  it.live("a connection dropped mid-stream (socket destroyed) is resumed with Last-Event-ID; the missed events arrive once", () =>
    Effect.gen(function*() {
      let callId: unknown
      let token: unknown
      const server = yield* rawServer((seen, res) => {
        if (seen.method === "GET") {
          if (seen.headers["last-event-id"] !== "e2") return res.writeHead(405).end()
          // the events after e2, then the result
          sse(res)
          res.write(
            event(
              { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 2 } },
              "e3"
            )
          )
          res.write(
            event(
              { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 3 } },
              "e4"
            )
          )
          res.write(
            event({ jsonrpc: "2.0", id: callId, result: { content: [{ type: "text", text: "resumed" }] } }, "e5")
          )
          return res.end()
        }
        callId = seen.message.id
        token = seen.message.params._meta.progressToken
        sse(res)
        res.write("id: e1\ndata: \n\n")
        res.write(
          event(
            { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 1 } },
            "e2"
          )
        )
        // a network failure, not a graceful end
        setTimeout(() => res.socket?.destroy(), 20)
      })
      const session = yield* connectSession({
        url: server.url,
        reconnect: Schedule.spaced("50 millis").pipe(Schedule.upTo({ times: 3 }))
      })
      const progress = yield* Ref.make<ReadonlyArray<number>>([])
      const result = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress])
      })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "resumed" }])
      assert.deepStrictEqual(yield* Ref.get(progress), [1, 2, 3])
      assert.strictEqual(server.seen.filter((s) => s.method === "GET" && s.headers["last-event-id"] === "e2").length, 1)
    }))

  it.live("custom headers, session id and protocol version travel on every request; closing DELETEs and closes every socket", () =>
    Effect.gen(function*() {
      let stream: ServerResponse | undefined
      const server = yield* rawServer((seen, res) => {
        if (seen.method === "GET") {
          // a GET stream the server keeps open
          stream = res
          sse(res)
          return res.write(": open\n\n")
        }
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: seen.message.id, result: {} }))
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* connectSession({ url: server.url, headers: { authorization: "Bearer abc" } })
        yield* session.ping()
        assert.isAbove(yield* server.sockets, 0)
      }))
      assert.deepStrictEqual(server.seen.map((s) => s.method), ["POST", "POST", "GET", "POST", "DELETE"])
      for (const seen of server.seen) assert.strictEqual(seen.headers["authorization"], "Bearer abc")
      for (const seen of server.seen.slice(1)) {
        assert.strictEqual(seen.headers["mcp-session-id"], "session-1")
        assert.strictEqual(seen.headers["mcp-protocol-version"], "2025-11-25")
      }
      assert.isDefined(stream)
      // the dispatcher of the layer is gone with its scope: no socket is left
      let open = yield* server.sockets
      for (let i = 0; i < 50 && open > 0; i++) {
        yield* Effect.sleep("10 millis")
        open = yield* server.sockets
      }
      assert.strictEqual(open, 0)
    }))

  it.live("an unreachable server is a TransportError", () =>
    Effect.gen(function*() {
      const server = yield* Effect.scoped(rawServer(() => {}))
      const error = yield* Effect.flip(connectSession({ url: server.url, fallbackToSse: false }))
      assert.strictEqual(error.reason._tag, "TransportError")
    }))

  it.live("interrupting a call aborts its POST", () =>
    Effect.gen(function*() {
      let aborted = false
      const server = yield* rawServer((seen, res) => {
        if (seen.method === "GET") return res.writeHead(405).end()
        res.on("close", () => {
          aborted = !res.writableEnded
        })
      })
      const session = yield* connectSession({ url: server.url })
      const call = yield* session.request(McpSchema.CallTool, { name: "t", arguments: {} }).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      for (let i = 0; i < 50 && !server.seen.some((s) => s.message?.method === "tools/call"); i++) {
        yield* Effect.sleep("10 millis")
      }
      yield* Fiber.interrupt(call)
      for (let i = 0; i < 50 && !aborted; i++) yield* Effect.sleep("10 millis")
      assert.isTrue(aborted)
      // the session told the server
      for (let i = 0; i < 50 && !server.seen.some((s) => s.message?.method === "notifications/cancelled"); i++) {
        yield* Effect.sleep("10 millis")
      }
      assert.isTrue(server.seen.some((s) => s.message?.method === "notifications/cancelled"))
    }))
})

describe("TransportError over real sockets: the status, and what went wrong on the wire", () => {
  const transportReason = (error: McpError.McpError) => {
    assert.strictEqual(error.reason._tag, "TransportError")
    return error.reason as McpError.TransportError
  }

  it.live("a refused connection says ECONNREFUSED, and has no status", () =>
    Effect.gen(function*() {
      // a loopback port that was just let go: nothing listens there
      const server = yield* Effect.scoped(rawServer(() => {}))
      const error = yield* Effect.flip(connectSession({ url: server.url, fallbackToSse: false }))
      const reason = transportReason(error)
      assert.include(error.message, "ECONNREFUSED")
      assert.include(reason.description, server.url)
      assert.isUndefined(reason.status)
    }))

  it.live("a POST answered 500 or 403 carries the status", () =>
    Effect.gen(function*() {
      const server = yield* rawServer((seen, res) => {
        if (seen.method === "GET") return res.writeHead(405).end()
        if (seen.message?.method === "tools/list") return res.writeHead(500).end("internal")
        res.writeHead(403).end("forbidden")
      })
      const session = yield* connectSession({ url: server.url })
      const failed = transportReason(yield* Effect.flip(session.request(McpSchema.ListTools, {})))
      assert.strictEqual(failed.status, 500)
      assert.include(failed.description, "internal")
      const forbidden = transportReason(
        yield* Effect.flip(session.request(McpSchema.CallTool, { name: "t", arguments: {} }))
      )
      assert.strictEqual(forbidden.status, 403)
    }))

  it.live("a WebSocket handshake answered 403 carries the status; a refused one says ECONNREFUSED", () =>
    Effect.gen(function*() {
      const refusing = createServer((_req, res) => res.writeHead(403).end("no"))
      const port = yield* listenLoopback(refusing)
      const open = (url: string) => Effect.flip(Layer.build(NodeMcpWebSocket.layerClient({ url })))
      const handshake = yield* open(`ws://127.0.0.1:${port}/mcp`)
      assert.strictEqual(transportReason(handshake).status, 403)
      assert.include(handshake.message, "403")
      const closed = yield* Effect.scoped(rawServer(() => {}))
      const refused = yield* open(closed.url.replace("http:", "ws:"))
      assert.include(refused.message, "ECONNREFUSED")
      assert.isUndefined(transportReason(refused).status)
    }))
})
