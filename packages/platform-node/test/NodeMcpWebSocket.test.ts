/**
 * MCP over WebSocket: our McpClient over our client transport against our
 * McpServer over our server, on 127.0.0.1 and an ephemeral port; raw `ws`
 * peers for the wire details; the official SDK's WebSocketClientTransport.
 */
import { McpClient, McpError, McpServer, McpTransport, McpWebSocket } from "@effect-mcp/core"
import { NodeJsonSchemaValidator, NodeMcpWebSocket } from "@effect-mcp/platform-node"
import * as NodeWS from "@effect/platform-node/NodeWS"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js"
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { Socket, SocketServer } from "effect/socket"
import { type WebSocket, WebSocketServer } from "ws"
import { connectRaw, initialize, type RawSocket } from "./fixtures/ws-raw.ts"
import { makeServer } from "./fixtures/ws-sse-tools.ts"
import { eventually } from "./utils/wait.ts"

const start = (options?: NodeMcpWebSocket.ServerOptions) =>
  Effect.gen(function*() {
    const cancelled = yield* Deferred.make<void>()
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      NodeMcpWebSocket.layerServer(options).pipe(Layer.provideMerge(makeServer(cancelled))),
      scope
    )
    const address = Context.get(context, SocketServer.SocketServer).address
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    return {
      port,
      url: `ws://127.0.0.1:${port}${options?.path ?? ""}`,
      server: Context.get(context, McpServer.McpServer),
      scope,
      cancelled
    }
  })

const clientLayer = (url: string) =>
  McpClient.layer({
    clientInfo: { name: "ws-client", version: "1.0.0" },
    sampling: {
      handler: (params) =>
        Effect.succeed({
          role: "assistant" as const,
          model: "canned",
          content: { type: "text" as const, text: `re: ${JSON.stringify(params.messages[0]?.content)}` }
        })
    }
  }).pipe(Layer.provide([NodeMcpWebSocket.layerClient({ url }), NodeJsonSchemaValidator.layer]))

/** Builds a client in a scope of its own, for tests that close it early. */
const connectClient = (url: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(clientLayer(url), scope)
    return { client: Context.get(context, McpClient.McpClient), scope }
  })

const openRaw = (url: string, protocols: ReadonlyArray<string> | undefined = ["mcp"]) =>
  Effect.flatMap(Effect.promise(() => connectRaw(url, protocols)), (connected) =>
    connected._tag === "Open"
      ? Effect.succeed(connected.socket)
      : Effect.die(new Error(`not connected: ${JSON.stringify(connected)}`)))

const nextJson = (socket: RawSocket) => Effect.map(Effect.promise(() => socket.next()), (m) => JSON.parse(m.text))

const text = (result: unknown) =>
  (result as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0]!.text

describe("NodeMcpWebSocket: our client ⇄ our server", () => {
  it.live("round trip (2026-07-28): discover, tools, progress, logging, sampling answered by the client", () =>
    Effect.gen(function*() {
      const { server, url } = yield* start({ path: "/mcp" })
      const { client } = yield* connectClient(url)
      assert.strictEqual(client.serverInfo.name, "transport-test")
      assert.deepStrictEqual([client.era, client.protocolVersion], ["modern", "2026-07-28"])
      assert.strictEqual(yield* server.sessionCount, 1)
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["ask", "countdown", "echo", "hang"])
      assert.strictEqual(text(yield* client.callTool("echo", { text: "over a WebSocket" })), "over a WebSocket")

      yield* client.setLoggingLevel("info")
      const logs = yield* client.notificationsOf("notifications/message").pipe(
        Stream.take(3),
        Stream.runCollect,
        Effect.forkScoped({ startImmediately: true })
      )
      const progress: Array<number> = []
      const result = yield* client.callTool("countdown", { from: 3 }, {
        onProgress: (update) => Effect.sync(() => progress.push(update.progress))
      })
      assert.strictEqual(text(result), "liftoff")
      assert.deepStrictEqual(progress, [1, 2, 3])
      assert.deepStrictEqual((yield* Fiber.join(logs)).map((log) => log.data), ["at 3", "at 2", "at 1"])

      const asked = yield* client.callTool("ask", { question: "why?" })
      assert.strictEqual(
        text(asked),
        "canned: {\"type\":\"text\",\"text\":\"re: {\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"why?\\\"}\"}"
      )
    }))

  it.live("interrupting a call sends notifications/cancelled, which interrupts the server's handler", () =>
    Effect.gen(function*() {
      const { cancelled, url } = yield* start()
      const { client } = yield* connectClient(url)
      const call = yield* client.callTool("hang", {}).pipe(Effect.forkChild({ startImmediately: true }))
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(call)
      yield* Deferred.await(cancelled)
      assert.strictEqual(yield* client.session.pendingCount, 0)
    }))

  it.live("one session per socket; closing the client's scope (code 1000) ends its session on the server", () =>
    Effect.gen(function*() {
      const { server, url } = yield* start()
      const one = yield* connectClient(url)
      const two = yield* connectClient(url)
      assert.strictEqual(yield* server.sessionCount, 2)
      assert.strictEqual(text(yield* one.client.callTool("echo", { text: "one" })), "one")
      yield* Scope.close(one.scope, Exit.void)
      yield* eventually(server.sessionCount, (count) => count === 1)
      assert.strictEqual(text(yield* two.client.callTool("echo", { text: "two" })), "two")
      yield* Scope.close(two.scope, Exit.void)
      yield* eventually(server.sessionCount, (count) => count === 0)
    }))

  it.live("closing the server's scope closes every socket with 1000: the client's session ends, calls fail Closed", () =>
    Effect.gen(function*() {
      const { scope, server, url } = yield* start()
      const { client } = yield* connectClient(url)
      const raw = yield* openRaw(url)
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      assert.isBelow(performance.now() - started, 1000)
      assert.strictEqual(yield* server.sessionCount, 0)
      assert.deepStrictEqual(yield* Effect.promise(() => raw.closed), { code: 1000, reason: "" })
      yield* client.session.awaitClose
      const after = yield* Effect.flip(client.ping())
      assert.strictEqual(after.reason._tag, "ClosedError")
      // and nothing listens any more
      const refused = yield* Effect.promise(() => connectRaw(url, ["mcp"]))
      assert.strictEqual(refused._tag, "Failed")
    }))

  it.live("layerSocket: the transport over the Socket in context", () =>
    Effect.gen(function*() {
      const { url } = yield* start()
      const context = yield* Layer.build(
        McpClient.layer({ clientInfo: { name: "socket-client", version: "1.0.0" } }).pipe(
          Layer.provide([McpWebSocket.layerSocket, NodeJsonSchemaValidator.layer]),
          Layer.provide(Socket.layerWebSocket(url, { protocols: McpWebSocket.SUBPROTOCOL })),
          Layer.provide(NodeWS.layerWebSocketConstructor)
        )
      )
      const client = Context.get(context, McpClient.McpClient)
      assert.strictEqual(text(yield* client.callTool("echo", { text: "socket" })), "socket")
    }))

  it.live("a port in use fails the server layer with a TransportError", () =>
    Effect.gen(function*() {
      const { port } = yield* start()
      const error = yield* Effect.flip(
        Layer.build(NodeMcpWebSocket.layerServer({ port }).pipe(Layer.provide(makeServer())))
      )
      assert.strictEqual(error.reason._tag, "TransportError")
      assert.include(String((error.reason as McpError.TransportError).cause), "EADDRINUSE")
    }))

  it.live("connecting to nothing fails the client layer with a TransportError", () =>
    Effect.gen(function*() {
      const { scope, url } = yield* start()
      yield* Scope.close(scope, Exit.void)
      const error = yield* Effect.flip(Layer.build(clientLayer(url)))
      assert.isTrue(McpError.isMcpError(error))
      assert.strictEqual((error as McpError.McpError).reason._tag, "TransportError")
    }))
})

describe("NodeMcpWebSocket: the wire", () => {
  it.live("subprotocol: the client offers mcp and the server picks it, among others", () =>
    Effect.gen(function*() {
      const { url } = yield* start()
      assert.strictEqual((yield* openRaw(url, ["mcp"])).protocol, "mcp")
      assert.strictEqual((yield* openRaw(url, ["other", "mcp"])).protocol, "mcp")
    }))

  it.live("subprotocol: a handshake without mcp is refused with 400", () =>
    Effect.gen(function*() {
      const { url } = yield* start()
      const none = yield* Effect.promise(() => connectRaw(url, undefined))
      assert.strictEqual(none._tag, "Rejected")
      assert.strictEqual((none as { status: number }).status, 400)
      const other = yield* Effect.promise(() => connectRaw(url, ["graphql-ws"]))
      assert.strictEqual((other as { status: number }).status, 400)
    }))

  it.live("loopback bind: a foreign Origin or Host is refused with 403; a loopback Origin passes", () =>
    Effect.gen(function*() {
      const { port, url } = yield* start()
      const evil = yield* Effect.promise(() => connectRaw(url, ["mcp"], { origin: "http://evil.example" }))
      assert.deepStrictEqual(evil, {
        _tag: "Rejected",
        status: 403,
        body: "Invalid Origin header: http://evil.example"
      })
      const rebound = yield* Effect.promise(() =>
        connectRaw(url, ["mcp"], { headers: { host: `evil.example:${port}` } })
      )
      assert.strictEqual((rebound as { status: number }).status, 403)
      const local = yield* Effect.promise(() => connectRaw(url, ["mcp"], { origin: "http://localhost:5173" }))
      assert.strictEqual(local._tag, "Open")
    }))

  it.live("allowedOrigins and a path", () =>
    Effect.gen(function*() {
      const { port } = yield* start({ path: "/mcp", allowedOrigins: ["http://app.example"] })
      const ok = yield* Effect.promise(() =>
        connectRaw(`ws://127.0.0.1:${port}/mcp`, ["mcp"], { origin: "http://app.example" })
      )
      assert.strictEqual(ok._tag, "Open")
      const local = yield* Effect.promise(() =>
        connectRaw(`ws://127.0.0.1:${port}/mcp`, ["mcp"], { origin: "http://localhost:1" })
      )
      assert.strictEqual((local as { status: number }).status, 403)
      const elsewhere = yield* Effect.promise(() => connectRaw(`ws://127.0.0.1:${port}/other`, ["mcp"]))
      assert.strictEqual((elsewhere as { status: number }).status, 400)
    }))

  it.live("frames are JSON text messages, one message each; a frame that is not JSON is answered with -32700", () =>
    Effect.gen(function*() {
      const { server, url } = yield* start()
      const raw = yield* openRaw(url)
      raw.ws.send(initialize(1))
      const reply = yield* Effect.promise(() => raw.next())
      assert.isFalse(reply.binary)
      assert.strictEqual(JSON.parse(reply.text).result.serverInfo.name, "transport-test")
      raw.ws.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
      raw.ws.send("{not json")
      const parseError = yield* nextJson(raw)
      assert.strictEqual(parseError.error.code, -32700)
      assert.strictEqual(parseError.id, null)
      // a binary frame carrying UTF-8 JSON is read too
      raw.ws.send(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })))
      assert.deepStrictEqual(yield* nextJson(raw), { jsonrpc: "2.0", id: 2, result: {} })
      raw.ws.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "raw" } }
        })
      )
      assert.deepStrictEqual((yield* nextJson(raw)).result.content, [{ type: "text", text: "raw" }])
      assert.strictEqual(yield* server.sessionCount, 1)
      raw.ws.close(1000)
      yield* eventually(server.sessionCount, (count) => count === 0)
    }))

  it.live("the server's session ends when the socket drops abruptly (1006) or a message is too big (1009)", () =>
    Effect.gen(function*() {
      const { server, url } = yield* start({ maxMessageBytes: 1024 })
      const dropped = yield* openRaw(url)
      const big = yield* openRaw(url)
      assert.strictEqual(yield* server.sessionCount, 2)
      dropped.ws.terminate()
      big.ws.send(JSON.stringify({ jsonrpc: "2.0", method: "x", params: { pad: "x".repeat(4096) } }))
      assert.strictEqual((yield* Effect.promise(() => big.closed)).code, 1009)
      yield* eventually(server.sessionCount, (count) => count === 0)
    }))

  it("checkHandshake: the subprotocol and the DNS-rebinding rules (those of McpHttpServer)", () => {
    const status = (verdict: McpWebSocket.Handshake) => verdict._tag === "Accept" ? 101 : verdict.status
    const check = (headers: Record<string, string>, options?: McpWebSocket.HandshakeOptions) =>
      status(McpWebSocket.checkHandshake({ "sec-websocket-protocol": "mcp", ...headers }, options))
    const loopback = { loopback: true }
    // loopback: Host and Origin hostnames must be localhost, 127.0.0.1 or [::1], on any port
    assert.strictEqual(check({ host: "127.0.0.1:1" }, loopback), 101)
    assert.strictEqual(check({ host: "[::1]:1", origin: "https://localhost:8443" }, loopback), 101)
    assert.strictEqual(check({ host: "LOCALHOST" }, loopback), 101)
    assert.strictEqual(check({ host: "evil.example" }, loopback), 403)
    assert.strictEqual(check({ host: "localhost", origin: "http://evil.example" }, loopback), 403)
    assert.strictEqual(check({ host: "localhost", origin: "null" }, loopback), 403)
    // no Host, no Origin: not a browser
    assert.strictEqual(check({}, loopback), 101)
    // elsewhere: any Host, but no browser Origin unless allowed
    assert.strictEqual(check({ host: "evil.example" }), 101)
    assert.strictEqual(check({ host: "mcp.example", origin: "http://localhost:1" }), 403)
    assert.strictEqual(check({ host: "mcp.example", origin: "http://localhost:1" }, { allowedOrigins: "any" }), 101)
    const explicit = {
      allowedHosts: ["mcp.example", "other.example:8443"],
      allowedOrigins: ["https://app.example", "dev.example"]
    }
    assert.strictEqual(check({ host: "mcp.example:443", origin: "https://app.example" }, explicit), 101)
    assert.strictEqual(check({ host: "other.example:8443", origin: "http://dev.example:3000" }, explicit), 101)
    assert.strictEqual(check({ host: "other.example:1" }, explicit), 403)
    assert.strictEqual(check({ host: "mcp.example", origin: "http://app.example" }, explicit), 403)
    // the subprotocol
    assert.strictEqual(
      status(McpWebSocket.checkHandshake({ host: "localhost", "sec-websocket-protocol": "x, mcp" }, loopback)),
      101
    )
    assert.strictEqual(
      status(McpWebSocket.checkHandshake({ host: "localhost", "sec-websocket-protocol": "x" }, loopback)),
      400
    )
    assert.strictEqual(status(McpWebSocket.checkHandshake({ host: "localhost" }, loopback)), 400)
  })
})

describe("NodeMcpWebSocket: our client transport's close codes", () => {
  // a bare `ws` server that answers the first message, then closes with
  // `code` (none: a close frame without a code; "drop": no close frame)
  const closingServer = (code: number | undefined | "drop", reason: string) =>
    Effect.acquireRelease(
      Effect.promise(() =>
        new Promise<WebSocketServer>((resolve) => {
          const wss: WebSocketServer = new WebSocketServer(
            { port: 0, host: "127.0.0.1", handleProtocols: () => "mcp" },
            () => resolve(wss)
          )
          wss.on("connection", (ws: WebSocket) =>
            ws.once("message", (data: Buffer) => {
              ws.send(data.toString())
              if (code === "drop") ws.terminate()
              else if (code === undefined) ws.close()
              else ws.close(code, reason)
            }))
        })
      ),
      (wss) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            for (const client of wss.clients) client.terminate()
            wss.close(() => resolve())
          })
        )
    )

  const exchange = (code: number | undefined | "drop", reason: string) =>
    Effect.gen(function*() {
      const wss = yield* closingServer(code, reason)
      const port = (wss.address() as { port: number }).port
      const context = yield* Layer.build(NodeMcpWebSocket.layerClient({ url: `ws://127.0.0.1:${port}` }))
      const transport = Context.get(context, McpTransport.McpTransport)
      yield* transport.send({ jsonrpc: "2.0", id: 1, method: "ping" })
      return yield* Effect.exit(Stream.runCollect(transport.incoming))
    })

  it.live("1000, 1001 and 1005 end `incoming` normally", () =>
    Effect.gen(function*() {
      for (const code of [1000, 1001, undefined]) {
        const exit = yield* exchange(code, "bye")
        assert.deepStrictEqual(exit, Exit.succeed([{ jsonrpc: "2.0", id: 1, method: "ping" }]))
      }
    }))

  it.live("any other code fails `incoming` with a TransportError naming it", () =>
    Effect.gen(function*() {
      const exit = yield* exchange(4000, "policy")
      assert.isTrue(Exit.isFailure(exit))
      const error = Option.getOrThrow(Exit.findErrorOption(exit as Exit.Exit<unknown, McpError.McpError>))
      assert.strictEqual(error.reason._tag, "TransportError")
      assert.include(error.message, "4000")
      assert.include(error.message, "policy")
      const dropped = yield* exchange("drop", "")
      assert.include(
        Option.getOrThrow(Exit.findErrorOption(dropped as Exit.Exit<unknown, McpError.McpError>)).message,
        "1006"
      )
    }))
})

describe("interop: the official SDK's WebSocketClientTransport → our server", () => {
  it.live("initializes, calls tools, gets progress and logs, answers sampling", () =>
    Effect.gen(function*() {
      const { server, url } = yield* start()
      const logs: Array<unknown> = []
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "official-sdk", version: "1.0.0" }, { capabilities: { sampling: {} } })
          client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
            logs.push(notification.params.data)
          })
          client.setRequestHandler(CreateMessageRequestSchema, async () => ({
            model: "sdk-model",
            role: "assistant",
            content: { type: "text", text: "42" }
          }))
          await client.connect(new WebSocketClientTransport(new URL(url)))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      assert.strictEqual(client.getServerVersion()?.name, "transport-test")
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.strictEqual(tools.length, 4)
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "sdk" } }))
      assert.strictEqual(text(echoed), "sdk")
      yield* Effect.promise(() => client.setLoggingLevel("info"))
      const progress: Array<number> = []
      yield* Effect.promise(() =>
        client.callTool({ name: "countdown", arguments: { from: 2 } }, undefined, {
          onprogress: (update) => progress.push(update.progress)
        })
      )
      assert.deepStrictEqual(progress, [1, 2])
      assert.deepStrictEqual(logs, ["at 2", "at 1"])
      const asked = yield* Effect.promise(() => client.callTool({ name: "ask", arguments: { question: "?" } }))
      assert.strictEqual(text(asked), "sdk-model: {\"type\":\"text\",\"text\":\"42\"}")
      assert.strictEqual(yield* server.sessionCount, 1)
      yield* Effect.promise(() => client.close())
      yield* eventually(server.sessionCount, (count) => count === 0)
    }))
})
