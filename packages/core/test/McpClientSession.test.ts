import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClientSession from "../src/McpClientSession.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServerSession from "../src/McpServerSession.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, serverInfo } from "./utils/client.ts"
import { rawPeer } from "./utils/peer.ts"

const initializeResult = (protocolVersion: string, capabilities: McpSchema.ServerCapabilities = {}) => ({
  protocolVersion,
  capabilities,
  serverInfo,
  instructions: "hello"
})

/** Builds the client session layer (stateful era) against a server played by hand; returns the fiber acquiring it. */
const againstRawServer = (options: Partial<McpClientSession.Options> = {}) =>
  Effect.gen(function*() {
    const link = yield* McpTransport.makeInMemoryLink
    const server = yield* rawPeer(Context.get(yield* Layer.build(link.server), McpTransport.McpTransport))
    const scope = yield* Scope.make()
    const acquiring = yield* Layer.build(
      McpClientSession.layer({ clientInfo, era: "legacy", ...options }).pipe(Layer.provide(link.client))
    ).pipe(
      Scope.provide(scope),
      Effect.map((context) => Context.get(context, McpClientSession.McpClientSession)),
      Effect.exit,
      Effect.forkChild({ startImmediately: true })
    )
    return { server, scope, acquiring }
  })

describe("McpClientSession: handshake", () => {
  it.effect("sends initialize, then notifications/initialized, and only then provides the session", () =>
    Effect.gen(function*() {
      const { acquiring, server } = yield* againstRawServer({ capabilities: { roots: { listChanged: true } } })
      const initialize = (yield* server.next) as JsonRpc.Request
      assert.strictEqual(initialize.method, "initialize")
      assert.deepStrictEqual(initialize.params, {
        protocolVersion: McpSchema.LATEST_PROTOCOL_VERSION,
        capabilities: { roots: { listChanged: true } },
        clientInfo
      })
      assert.isUndefined(acquiring.pollUnsafe())
      yield* server.send(
        JsonRpc.success(initialize.id, initializeResult("2025-06-18", { tools: { listChanged: true } }))
      )
      const initialized = (yield* server.next) as JsonRpc.Notification
      assert.strictEqual(initialized.method, "notifications/initialized")
      const exit = yield* Fiber.join(acquiring)
      assert.isTrue(Exit.isSuccess(exit))
      const session = Exit.isSuccess(exit) ? exit.value : undefined
      assert.strictEqual(session?.protocolVersion, "2025-06-18")
      assert.deepStrictEqual(session?.serverInfo, serverInfo)
      assert.deepStrictEqual(session?.serverCapabilities, { tools: { listChanged: true } })
      assert.strictEqual(session?.instructions, "hello")
    }))

  it.effect("fails with HandshakeError when the server answers a version the client does not support", () =>
    Effect.gen(function*() {
      const { acquiring, server } = yield* againstRawServer()
      const initialize = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.success(initialize.id, initializeResult("2023-01-01")))
      const exit = yield* Fiber.join(acquiring)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag === "Fail" ? error.error.reason._tag : undefined, "HandshakeError")
    }))

  it.effect("fails with the server's error when initialize is refused", () =>
    Effect.gen(function*() {
      const { acquiring, server } = yield* againstRawServer()
      const initialize = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.failure(initialize.id, { code: -32600, message: "go away" }))
      const exit = yield* Fiber.join(acquiring)
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag === "Fail" ? error.error.reason._tag : undefined, "ProtocolError")
    }))

  it.effect("fails with InvalidResultError when the initialize result is malformed", () =>
    Effect.gen(function*() {
      const { acquiring, server } = yield* againstRawServer()
      const initialize = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.success(initialize.id, { protocolVersion: "2025-11-25" }))
      const exit = yield* Fiber.join(acquiring)
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag === "Fail" ? error.error.reason._tag : undefined, "InvalidResultError")
    }))
})

describe("McpClientSession: against McpServerSession", () => {
  const Server = McpServerSession.layer({
    serverInfo,
    capabilities: { tools: {} },
    handlers: [
      McpServerSession.handler(
        McpSchema.ListTools,
        () => Effect.succeed({ tools: [{ name: "t", inputSchema: { type: "object" } }] })
      )
    ]
  })

  const connected = (client: Partial<McpClientSession.Options> = {}) =>
    Effect.gen(function*() {
      const link = yield* McpTransport.makeInMemoryLink
      const server = Context.get(
        yield* Layer.build(Server.pipe(Layer.provide(link.server))),
        McpServerSession.McpServerSession
      )
      const scope = yield* Scope.make()
      const context = yield* Layer.build(
        McpClientSession.layer({ clientInfo, ...client }).pipe(Layer.provide(link.client))
      )
        .pipe(Scope.provide(scope))
      return { client: Context.get(context, McpClientSession.McpClientSession), server, scope }
    })

  it.effect("negotiates, and both sides see each other", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connected({ capabilities: { sampling: {} } })
      assert.strictEqual(client.protocolVersion, McpSchema.LATEST_PROTOCOL_VERSION)
      assert.deepStrictEqual(client.serverInfo, serverInfo)
      const listed = yield* client.request(McpSchema.ListTools, {})
      assert.deepStrictEqual(listed.tools.map((t) => t.name), ["t"])
      assert.strictEqual((yield* server.state)._tag, "Initialized")
      assert.isTrue(yield* server.checkClientCapability("sampling"))
      yield* client.ping()
      yield* server.ping()
    }))

  it.effect("a call whose capability the server did not declare fails with UnsupportedError before sending", () =>
    Effect.gen(function*() {
      const { client } = yield* connected()
      const error = yield* Effect.flip(client.request(McpSchema.ListPrompts, {}))
      assert.deepStrictEqual(error.reason._tag, "UnsupportedError")
      assert.strictEqual(error.message, "prompts/list needs the server prompts capability, which was not declared")
      const subscribe = yield* Effect.flip(client.request(McpSchema.Subscribe, { uri: "x://y" }))
      assert.strictEqual(subscribe.reason._tag, "UnsupportedError")
      assert.strictEqual(yield* client.pendingCount, 0)
    }))

  it.effect("answers server→client requests with its handlers", () =>
    Effect.gen(function*() {
      const { server } = yield* connected({
        capabilities: { roots: {} },
        handlers: [
          McpSession.handler(McpSchema.ListRoots, () => Effect.succeed({ roots: [{ uri: "file:///w", name: "w" }] }))
        ]
      })
      const roots = yield* server.request(McpSchema.ListRoots, {})
      assert.deepStrictEqual(roots.roots, [{ uri: "file:///w", name: "w" }])
    }))

  it.effect("closing the client's scope ends the session: calls fail with ClosedError, the server sees the end", () =>
    Effect.gen(function*() {
      const { client, scope, server } = yield* connected()
      yield* Scope.close(scope, Exit.void)
      const error = yield* Effect.flip(client.request(McpSchema.ListTools, {}))
      assert.strictEqual(error.reason._tag, "ClosedError")
      yield* server.awaitClose
      assert.isFalse(yield* server.isOpen)
      assert.strictEqual(yield* client.pendingCount, 0)
    }))
})
