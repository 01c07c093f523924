/**
 * Protecting the WebSocket server (on 127.0.0.1, ephemeral ports): bearer
 * tokens checked on the opening handshake (`401` with a challenge before the
 * socket opens), the token given to handlers, scopes per tool, Origin
 * checks, the connection cap, and a non-loopback host refused without auth.
 */
import { McpAuth, McpClient, McpError, McpServer, McpTool } from "@effect-mcp/core"
import { NodeJsonSchemaValidator, NodeMcpWebSocket } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { SocketServer } from "effect/socket"
import { request as httpRequest } from "node:http"

const TOKENS: Record<string, McpAuth.AuthInfo> = {
  good: { token: "good", subject: "alice", scopes: ["mcp"], claims: {} },
  reader: { token: "reader", subject: "bob", scopes: [], claims: {} },
  // expires 60 seconds after the TestClock's start
  brief: { token: "brief", subject: "carol", scopes: ["mcp"], expiresAt: 60, claims: {} }
}

const auth = {
  authorizationServers: ["https://as.example.com"],
  requireAudience: false,
  toolScopes: { whoami: ["mcp"] },
  verify: (token: string) =>
    TOKENS[token] === undefined
      ? Effect.fail(McpError.auth("Unauthorized", "unknown token"))
      : Effect.succeed(TOKENS[token]!)
}

const Server = McpServer.register(
  McpTool.make("whoami", {
    input: Schema.Struct({}),
    handler: () => Effect.map(McpAuth.CurrentAuth, (info) => info?.subject ?? "nobody")
  }),
  McpTool.make("echo", {
    input: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(text)
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "ws-auth", version: "1.0.0" })))

const start = (options?: NodeMcpWebSocket.ServerOptions) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      NodeMcpWebSocket.layerServer(options).pipe(Layer.provide(Server)),
      scope
    )
    const address = Context.get(context, SocketServer.SocketServer).address
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    return { port, url: `ws://127.0.0.1:${port}/mcp` }
  })

const connect = (url: string, headers?: Record<string, string>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      McpClient.layer({ clientInfo: { name: "ws-auth-client", version: "1.0.0" } }).pipe(
        Layer.provide([NodeMcpWebSocket.layerClient({ url, headers }), NodeJsonSchemaValidator.layer])
      ),
      scope
    )
    return { client: Context.get(context, McpClient.McpClient), scope }
  })

interface Upgrade {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
}

/** A raw opening handshake: its status (101 when accepted) and, when refused, the response. */
const upgrade = (port: number, headers: Record<string, string> = {}) =>
  Effect.callback<Upgrade>((resume) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path: "/mcp",
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-protocol": "mcp",
        ...headers
      }
    })
    req.on("upgrade", (res, socket) => {
      socket.destroy()
      resume(Effect.succeed({ status: res.statusCode ?? 101, headers: res.headers, body: "" }))
    })
    req.on("response", (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        body += chunk
      })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body })))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end()
    return Effect.sync(() => req.destroy())
  })

const text = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text: string }).text

describe("NodeMcpWebSocket auth", () => {
  it.live("a handshake without a token gets 401 with a challenge, before the socket opens", () =>
    Effect.gen(function*() {
      const { port } = yield* start({ path: "/mcp", auth })
      const refused = yield* upgrade(port)
      assert.strictEqual(refused.status, 401)
      const challenge = String(refused.headers["www-authenticate"])
      assert.match(challenge, /^Bearer /)
      // the resource defaults to the URL clients connect to
      assert.include(challenge, `resource_metadata="ws://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`)
      const bad = yield* upgrade(port, { authorization: "Bearer nope" })
      assert.strictEqual(bad.status, 401)
      assert.include(String(bad.headers["www-authenticate"]), `error="invalid_token"`)
      assert.strictEqual((yield* upgrade(port, { authorization: "Bearer good" })).status, 101)
    }))

  it.live("a client with a valid token works; handlers see the token; the client without one fails with 401", () =>
    Effect.gen(function*() {
      const { url } = yield* start({ path: "/mcp", auth })
      const { client } = yield* connect(url, { authorization: "Bearer good" })
      assert.strictEqual(text(yield* client.callTool("whoami", {})), "alice")
      const failed = yield* Effect.flip(connect(url))
      assert.strictEqual(failed.reason._tag, "TransportError")
      assert.strictEqual((failed.reason as { readonly status?: number }).status, 401)
    }))

  it.live("a request the token lacks a scope for is answered with an error; others work", () =>
    Effect.gen(function*() {
      const { url } = yield* start({ path: "/mcp", auth })
      const { client } = yield* connect(url, { authorization: "Bearer reader" })
      assert.strictEqual(text(yield* client.callTool("echo", { text: "hi" })), "hi")
      const refused = yield* Effect.flip(client.callTool("whoami", {}))
      assert.include(McpError.messageOf(refused), "mcp")
    }))

  it.effect("the socket closes when the token expires (TestClock)", () =>
    Effect.gen(function*() {
      const { url } = yield* start({ path: "/mcp", auth })
      const { client } = yield* connect(url, { authorization: "Bearer brief" })
      assert.strictEqual(text(yield* client.callTool("whoami", {})), "carol")
      const { TestClock } = yield* Effect.promise(() => import("effect/testing"))
      yield* TestClock.adjust("61 seconds")
      // the server closed the socket: the session is over
      const after = yield* Effect.flip(client.callTool("echo", { text: "late" }))
      assert.match(McpError.messageOf(after), /closed/i)
    }), { timeout: 20_000 })

  it.live("a handshake from a browser Origin not allowed gets 403", () =>
    Effect.gen(function*() {
      const { port } = yield* start({ path: "/mcp", auth })
      const refused = yield* upgrade(port, { authorization: "Bearer good", origin: "https://evil.example" })
      assert.strictEqual(refused.status, 403)
    }))

  it.live("beyond maxConnections a handshake gets 503; a closed connection makes room", () =>
    Effect.gen(function*() {
      const { port, url } = yield* start({ path: "/mcp", maxConnections: 1 })
      const first = yield* connect(url)
      assert.strictEqual(text(yield* first.client.callTool("echo", { text: "one" })), "one")
      const refused = yield* upgrade(port)
      assert.strictEqual(refused.status, 503)
      yield* Scope.close(first.scope, Exit.void)
      let status = 0
      for (let i = 0; i < 50 && status !== 101; i++) {
        status = (yield* upgrade(port)).status
        if (status !== 101) yield* Effect.sleep("20 millis")
      }
      assert.strictEqual(status, 101)
    }))

  it.live("a host that is not loopback is refused without auth, unless allowUnauthenticated", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(start({ host: "0.0.0.0" }))
      assert.include(McpError.messageOf(failed), "without authentication")
      const { port } = yield* start({ host: "0.0.0.0", allowUnauthenticated: true })
      assert.isAbove(port, 0)
      const { port: protectedPort } = yield* start({ host: "0.0.0.0", path: "/mcp", auth })
      assert.strictEqual((yield* upgrade(protectedPort)).status, 401)
    }))
})
