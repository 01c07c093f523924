/**
 * The legacy HTTP+SSE server (2024-11-05) on a real Node HTTP server on
 * 127.0.0.1 and an ephemeral port, driven with raw HTTP requests.
 */
import { type McpError, McpServer, McpSseServer } from "@effect-mcp/core"
import { NodeMcpSseServer } from "@effect-mcp/platform-node"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { initialize, openSse, post } from "./fixtures/sse-http.ts"
import { makeServer } from "./fixtures/ws-sse-tools.ts"
import { eventually } from "./utils/wait.ts"

const portOf = (context: Context.Context<HttpServer.HttpServer>): number => {
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("not a TCP server")
  return address.port
}

/** Starts the standalone server in its own scope, closed by the caller or with the test. */
const start = (options?: NodeMcpSseServer.Options) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      NodeMcpSseServer.layer(options).pipe(Layer.provideMerge(makeServer())),
      scope
    )
    return { port: portOf(context), server: Context.get(context, McpServer.McpServer), scope }
  })

const promise = <A>(evaluate: () => Promise<A>) => Effect.promise(evaluate)

describe("NodeMcpSseServer", () => {
  it.live("GET /sse: an event stream whose first event is `endpoint`, the POST URL with ?sessionId=", () =>
    Effect.gen(function*() {
      const { port } = yield* start()
      const stream = yield* promise(() => openSse(port))
      assert.strictEqual(stream.status, 200)
      assert.strictEqual(stream.headers["content-type"], "text/event-stream")
      assert.include(stream.headers["cache-control"], "no-cache")
      const first = yield* promise(() => stream.next())
      assert.strictEqual(first.event, "endpoint")
      assert.match(
        first.data,
        /^\/messages\?sessionId=[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
      )
      stream.close()
    }))

  it.live("POST gets 202 and the reply arrives on the stream as a `message` event; each GET is its own session", () =>
    Effect.gen(function*() {
      const { port, server } = yield* start()
      const one = yield* promise(() => openSse(port))
      const two = yield* promise(() => openSse(port))
      const endpointOne = (yield* promise(() => one.next())).data
      const endpointTwo = (yield* promise(() => two.next())).data
      assert.notStrictEqual(endpointOne, endpointTwo)
      assert.strictEqual(yield* server.sessionCount, 2)

      const accepted = yield* promise(() => post(port, endpointOne, initialize(1)))
      assert.deepStrictEqual(accepted, { status: 202, body: "Accepted" })
      const reply = yield* promise(() => one.next())
      assert.strictEqual(reply.event, "message")
      const message = JSON.parse(reply.data)
      assert.strictEqual(message.id, 1)
      assert.strictEqual(message.result.protocolVersion, "2024-11-05")
      assert.strictEqual(message.result.serverInfo.name, "transport-test")

      // JSON that is not a JSON-RPC message is accepted, and answered on the stream
      assert.strictEqual((yield* promise(() => post(port, endpointOne, "{\"hello\":1}"))).status, 202)
      assert.strictEqual(JSON.parse((yield* promise(() => one.next())).data).error.code, -32600)

      // the other session is not initialized: it answers only ping
      yield* promise(() => post(port, endpointTwo, JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })))
      assert.strictEqual(JSON.parse((yield* promise(() => two.next())).data).id, 7)
      one.close()
      two.close()
    }))

  it.live("POST errors: unknown session 404, no sessionId 400, not JSON 400 (-32700), wrong type 415, too big 413", () =>
    Effect.gen(function*() {
      const { port } = yield* start({ maxMessageBytes: 1024 })
      const stream = yield* promise(() => openSse(port))
      const endpoint = (yield* promise(() => stream.next())).data

      const unknown = yield* promise(() =>
        post(port, "/messages?sessionId=00000000-0000-4000-8000-000000000000", initialize(1))
      )
      assert.strictEqual(unknown.status, 404)
      assert.strictEqual((yield* promise(() => post(port, "/messages", initialize(1)))).status, 400)

      const notJson = yield* promise(() => post(port, endpoint, "{not json"))
      assert.strictEqual(notJson.status, 400)
      const error = JSON.parse(notJson.body)
      assert.strictEqual(error.error.code, -32700)
      assert.strictEqual(error.id, null)

      assert.strictEqual(
        (yield* promise(() => post(port, endpoint, initialize(1), { "content-type": "text/plain" }))).status,
        415
      )
      const big = JSON.stringify({ jsonrpc: "2.0", method: "notifications/x", params: { pad: "x".repeat(2000) } })
      assert.strictEqual((yield* promise(() => post(port, endpoint, big))).status, 413)
      // chunked, so no content-length: the limit is enforced while reading
      assert.strictEqual(
        (yield* promise(() => post(port, endpoint, big, { "transfer-encoding": "chunked" }))).status,
        413
      )

      // none of it reached the session, which still works
      assert.strictEqual((yield* promise(() => post(port, endpoint, initialize(2)))).status, 202)
      assert.strictEqual(JSON.parse((yield* promise(() => stream.next())).data).id, 2)
      stream.close()
    }))

  it.live("loopback bind: a foreign Origin or Host is refused with 403, on both routes", () =>
    Effect.gen(function*() {
      const { port } = yield* start()
      const evilOrigin = yield* promise(() => openSse(port, "/sse", { origin: "http://evil.example" }))
      assert.strictEqual(evilOrigin.status, 403)
      assert.include(yield* promise(() => evilOrigin.body), "Invalid Origin header")
      const evilHost = yield* promise(() => openSse(port, "/sse", { host: `evil.example:${port}` }))
      assert.strictEqual(evilHost.status, 403)

      // loopback origins and hosts, on any port, pass
      const local = yield* promise(() =>
        openSse(port, "/sse", { origin: "http://localhost:5173", host: `localhost:${port}` })
      )
      assert.strictEqual(local.status, 200)
      const endpoint = (yield* promise(() => local.next())).data

      const refused = yield* promise(() => post(port, endpoint, initialize(1), { origin: "https://evil.example" }))
      assert.strictEqual(refused.status, 403)
      const rebound = yield* promise(() => post(port, endpoint, initialize(1), { host: "attacker.example" }))
      assert.strictEqual(rebound.status, 403)
      assert.strictEqual(
        (yield* promise(() => post(port, endpoint, initialize(1), { origin: "http://127.0.0.1:8080" }))).status,
        202
      )
      local.close()
    }))

  it.live("allowedOrigins and allowedHosts replace the loopback defaults", () =>
    Effect.gen(function*() {
      const { port } = yield* start({
        allowedOrigins: ["http://app.example"],
        allowedHosts: ["mcp.example", "localhost:1"]
      })
      const open = (headers: Record<string, string>) => promise(() => openSse(port, "/sse", headers))
      const allowed = yield* open({ host: `mcp.example:${port}`, origin: "http://app.example" })
      assert.strictEqual(allowed.status, 200)
      allowed.close()
      assert.strictEqual((yield* open({ host: `mcp.example:${port}` })).status, 200)
      assert.strictEqual((yield* open({ host: "localhost:1" })).status, 200)
      assert.strictEqual((yield* open({ host: "localhost:2" })).status, 403)
      assert.strictEqual((yield* open({ host: `127.0.0.1:${port}` })).status, 403)
      assert.strictEqual((yield* open({ host: `mcp.example:${port}`, origin: "http://localhost:5173" })).status, 403)
    }))

  it.live("a client that disconnects ends its session: the server forgets it and its POST URL answers 404", () =>
    Effect.gen(function*() {
      const { port, server } = yield* start()
      const stream = yield* promise(() => openSse(port))
      const endpoint = (yield* promise(() => stream.next())).data
      assert.strictEqual(yield* server.sessionCount, 1)
      stream.close()
      yield* eventually(server.sessionCount, (count) => count === 0)
      assert.strictEqual((yield* promise(() => post(port, endpoint, initialize(1)))).status, 404)
    }))

  it.live("closing the scope ends the open streams at once, ends the sessions and closes the server", () =>
    Effect.gen(function*() {
      const { port, scope, server } = yield* start()
      const streams = [yield* promise(() => openSse(port)), yield* promise(() => openSse(port))]
      for (const stream of streams) yield* promise(() => stream.next())
      assert.strictEqual(yield* server.sessionCount, 2)
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      const closedIn = performance.now() - started
      // the responses are cut (the request fibers are interrupted), which an
      // EventSource sees as the end of the stream
      const endings = yield* promise(() => Promise.all(streams.map((stream) => stream.ended)))
      assert.deepStrictEqual(endings, ["cut", "cut"])
      assert.isBelow(closedIn, 1000)
      assert.strictEqual(yield* server.sessionCount, 0)
      const refused = yield* Effect.flip(Effect.tryPromise(() => openSse(port)))
      assert.include(String(refused.cause), "ECONNREFUSED")
    }))

  it.live("a port in use fails the layer with a TransportError", () =>
    Effect.gen(function*() {
      const { port } = yield* start()
      const error = yield* Effect.flip(Layer.build(NodeMcpSseServer.layer({ port }).pipe(Layer.provide(makeServer()))))
      assert.strictEqual(error.reason._tag, "TransportError")
      assert.include(String((error.reason as McpError.TransportError).cause), "EADDRINUSE")
    }))

  it.live("layerRoute: mounted in the user's own router, beside other routes, on custom paths", () =>
    Effect.gen(function*() {
      const App = Layer.mergeAll(
        McpSseServer.layerRoute({ ssePath: "/mcp/sse", messagesPath: "/mcp/messages" }),
        HttpRouter.add("GET", "/health", HttpServerResponse.text("ok"))
      )
      const context = yield* Layer.build(
        HttpRouter.serve(App, { disableLogger: true, disableListenLog: true }).pipe(
          Layer.provideMerge(
            NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1", disablePreemptiveShutdown: true })
          ),
          Layer.provideMerge(makeServer())
        )
      )
      const port = portOf(context)
      assert.strictEqual(yield* promise(() => openSse(port, "/health").then((r) => r.body)), "ok")
      const stream = yield* promise(() => openSse(port, "/mcp/sse"))
      const endpoint = (yield* promise(() => stream.next())).data
      assert.isTrue(endpoint.startsWith("/mcp/messages?sessionId="))
      assert.strictEqual((yield* promise(() => post(port, endpoint, initialize(1)))).status, 202)
      assert.strictEqual(JSON.parse((yield* promise(() => stream.next())).data).id, 1)
      // the loopback bind is seen through the HttpServer in context
      assert.strictEqual(
        (yield* promise(() => openSse(port, "/mcp/sse", { origin: "http://evil.example" }))).status,
        403
      )
      stream.close()
    }))
})
