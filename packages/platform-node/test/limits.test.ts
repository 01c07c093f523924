/**
 * Limits of the Node servers and of the HTTP client, on 127.0.0.1 with
 * ephemeral ports: a client that never finishes its headers gets `408`
 * (slowloris), connections beyond `maxConnections` are closed, the SSE
 * server refuses streams beyond `maxSessions`, and the client refuses a
 * JSON answer larger than `maxResponseBytes`.
 */
import { McpClient, McpError, McpServer, McpTool } from "@effect-mcp/core"
import {
  NodeJsonSchemaValidator,
  NodeMcpHttpClient,
  NodeMcpHttpServer,
  NodeMcpSseServer
} from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import { HttpServer } from "effect/http"
import type * as Http from "node:http"
import { createServer } from "node:http"
import { connect as netConnect } from "node:net"
import type { AddressInfo } from "node:net"

const Server = McpServer.register(
  McpTool.make("big", {
    input: Schema.Struct({ size: Schema.Int }),
    handler: ({ size }) => Effect.succeed("x".repeat(size))
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "limits", version: "1.0.0" })))

const build = <A>(layer: Layer.Layer<A, unknown, never>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    return yield* Layer.buildWithScope(layer, scope)
  })

const portOf = (context: Context.Context<HttpServer.HttpServer>) => {
  const address = Context.get(context, HttpServer.HttpServer).address
  return address._tag === "UnixPathAddress" ? 0 : address.port
}

/** Writes `text` on a raw connection and collects what comes back until the server closes it (or `within` passes). */
const raw = (port: number, text: string, within = 2000) =>
  Effect.callback<{ readonly data: string; readonly closed: boolean }>((resume) => {
    let data = ""
    const socket = netConnect({ host: "127.0.0.1", port }, () => socket.write(text))
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      data += chunk
    })
    const timer = globalThis.setTimeout(() => {
      socket.destroy()
      resume(Effect.succeed({ data, closed: false }))
    }, within)
    socket.on("close", () => {
      globalThis.clearTimeout(timer)
      resume(Effect.succeed({ data, closed: true }))
    })
    socket.on("error", () => undefined)
    return Effect.sync(() => {
      globalThis.clearTimeout(timer)
      socket.destroy()
    })
  })

describe("Node server limits", () => {
  it.live("a client that never finishes its headers gets 408 after headersTimeout", () =>
    Effect.gen(function*() {
      const port = portOf(
        yield* build(NodeMcpHttpServer.layer({ headersTimeout: "300 millis" }).pipe(Layer.provide(Server)))
      )
      const started = performance.now()
      const answer = yield* raw(port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
      assert.isTrue(answer.closed)
      assert.match(answer.data, /^HTTP\/1\.1 408/)
      assert.isBelow(performance.now() - started, 1500)
    }))

  it.live("by default a slow client is not cut within a second (headersTimeout is 30 s)", () =>
    Effect.gen(function*() {
      const port = portOf(yield* build(NodeMcpHttpServer.layer().pipe(Layer.provide(Server))))
      const answer = yield* raw(port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", 500)
      assert.isFalse(answer.closed)
    }))

  it.live("connections beyond maxConnections are closed at once", () =>
    Effect.gen(function*() {
      const port = portOf(yield* build(NodeMcpHttpServer.layer({ maxConnections: 1 }).pipe(Layer.provide(Server))))
      // the first connection stays open (headers not finished)
      const first = yield* Effect.forkChild(raw(port, "GET /mcp HTTP/1.1\r\n", 1500))
      yield* Effect.sleep("100 millis")
      const second = yield* raw(port, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1000)
      assert.isTrue(second.closed)
      assert.strictEqual(second.data, "")
      const held = yield* Fiber.join(first)
      assert.isFalse(held.closed)
    }))

  it.live("a request that comes while no route serves (starting, shutting down) gets 503, never silence", () =>
    Effect.gen(function*() {
      const Http = yield* Effect.promise(() => import("node:http"))
      const Limits = yield* Effect.promise(() => import("../src/internal/httpServerLimits.ts"))
      const server = yield* Effect.acquireRelease(
        Effect.callback<Http.Server>((resume) => {
          const made = Limits.createServer(Http, undefined)
          made.listen(0, "127.0.0.1", () => resume(Effect.succeed(made)))
        }),
        (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (server.address() as AddressInfo).port
      const request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
      const early = yield* raw(port, request)
      assert.match(early.data, /^HTTP\/1\.1 503/)
      assert.include(early.data, "not serving requests yet")
      // once a route serves, it answers alone
      const serve = (_: unknown, response: Http.ServerResponse) => response.end("served")
      server.on("request", serve)
      const served = yield* raw(port, request)
      assert.match(served.data, /^HTTP\/1\.1 200/)
      assert.notInclude(served.data, "not serving")
      server.off("request", serve)
      assert.match((yield* raw(port, request)).data, /^HTTP\/1\.1 503/)
    }).pipe(Effect.scoped))

  it.live("the SSE server: streams beyond maxSessions get 503", () =>
    Effect.gen(function*() {
      const port = portOf(
        yield* build(
          NodeMcpSseServer.layer({ maxSessions: 1, headersTimeout: "5 seconds" }).pipe(Layer.provide(Server))
        )
      )
      const get = "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
      const first = yield* Effect.forkChild(raw(port, get, 1500))
      yield* Effect.sleep("200 millis")
      const second = yield* raw(port, get + "", 300)
      assert.match(second.data, /^HTTP\/1\.1 503/)
      assert.include(second.data, "too many sessions")
      const held = yield* Fiber.join(first)
      assert.match(held.data, /^HTTP\/1\.1 200/)
    }))
})

describe("HTTP client limits", () => {
  const client = (url: string, maxResponseBytes?: number) =>
    Effect.map(
      build(
        McpClient.layer({ clientInfo: { name: "limits", version: "1.0.0" } }).pipe(
          Layer.provide([
            NodeMcpHttpClient.layer({ url, maxResponseBytes, listen: false }),
            NodeJsonSchemaValidator.layer
          ])
        )
      ),
      (context) => Context.get(context, McpClient.McpClient)
    )

  it.live("a JSON answer larger than maxResponseBytes fails its request with a clear error", () =>
    Effect.gen(function*() {
      const url = yield* NodeMcpHttpServer.url().pipe(
        Effect.provide(yield* build(NodeMcpHttpServer.layer().pipe(Layer.provide(Server))))
      )
      const mcp = yield* client(url, 4096)
      const small = yield* mcp.callTool("big", { size: 100 })
      assert.strictEqual((small.content[0] as { readonly text: string }).text.length, 100)
      const failed = yield* Effect.flip(mcp.callTool("big", { size: 10_000 }))
      assert.include(McpError.messageOf(failed), "larger than 4096 bytes")
    }))

  it.live("an answer without Content-Length is cut at maxResponseBytes too", () =>
    Effect.gen(function*() {
      // a server that streams an endless JSON body (chunked, no length)
      const server = createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s" })
          const chunk = "[" + " ".repeat(64 * 1024)
          for (let i = 0; i < 64; i++) res.write(chunk)
          res.end("]")
        })
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (server.address() as AddressInfo).port
      const failed = yield* Effect.flip(client(`http://127.0.0.1:${port}/mcp`, 100_000))
      assert.include(McpError.messageOf(failed), "larger than 100000 bytes")
    }))
})
