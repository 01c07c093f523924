import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServerSession from "../src/McpServerSession.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { rawPeer, settle } from "./utils/peer.ts"

/** A server session and a client played by hand. */
const setup = (options: Partial<McpServerSession.Options> = {}) =>
  Effect.gen(function*() {
    const [client, server] = yield* McpTransport.makeInMemoryPair
    const notes: Array<string> = []
    const session = yield* McpServerSession.make({
      serverInfo: { name: "test-server", version: "1.2.3" },
      capabilities: { tools: {}, logging: {} },
      instructions: "be nice",
      handlers: [
        McpServerSession.handler(McpSchema.ListTools, (_, context) =>
          Effect.succeed({
            tools: [],
            _meta: {
              client: context.clientParams.clientInfo.name,
              version: context.protocolVersion,
              sampling: context.checkClientCapability("sampling"),
              samplingTools: context.checkClientCapability("sampling", "tools")
            }
          }))
      ],
      notificationHandlers: [
        McpSession.notificationHandler(McpSchema.RootsListChanged, () => Effect.sync(() => notes.push("roots")))
      ],
      ...options
    }).pipe(Effect.provideService(McpTransport.McpTransport, server))
    const peer = yield* rawPeer(client)
    const call = (id: JsonRpc.RequestId, method: string, params?: unknown) =>
      Effect.andThen(peer.send(JsonRpc.request(id, method, params)), peer.next)
    const initialize = (protocolVersion: string, capabilities: McpSchema.ClientCapabilities = {}) =>
      call("init", "initialize", { protocolVersion, capabilities, clientInfo })
    return { session, peer, call, initialize, notes }
  })

const errorCode = (frame: unknown) => (frame as JsonRpc.ErrorResponse).error?.code

describe("McpServerSession: lifecycle", () => {
  it.effect("answers initialize with the client's version, its info, capabilities and instructions", () =>
    Effect.gen(function*() {
      const { initialize, session } = yield* setup()
      assert.strictEqual((yield* session.state)._tag, "NotInitialized")
      const answer = (yield* initialize("2025-06-18")) as JsonRpc.SuccessResponse
      assert.deepStrictEqual(answer.result, {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: "test-server", version: "1.2.3" },
        instructions: "be nice"
      })
      assert.strictEqual((yield* session.state)._tag, "Initializing")
      assert.deepStrictEqual(Option.map(yield* session.clientParams, (p) => p.clientInfo), Option.some(clientInfo))
    }))

  it.effect("answers an unknown version with its own latest", () =>
    Effect.gen(function*() {
      const { initialize } = yield* setup()
      const answer = (yield* initialize("1999-01-01")) as JsonRpc.SuccessResponse
      assert.strictEqual(
        (answer.result as McpSchema.InitializeResult).protocolVersion,
        McpSchema.LATEST_PROTOCOL_VERSION
      )
    }))

  it.effect("negotiates within a configured version list", () =>
    Effect.gen(function*() {
      const { initialize } = yield* setup({ protocolVersions: ["2025-06-18", "2025-03-26"] })
      const old = (yield* initialize("2025-03-26")) as JsonRpc.SuccessResponse
      assert.strictEqual((old.result as McpSchema.InitializeResult).protocolVersion, "2025-03-26")
      const other = yield* setup({ protocolVersions: ["2025-06-18", "2025-03-26"] })
      const newer = (yield* other.initialize("2025-11-25")) as JsonRpc.SuccessResponse
      assert.strictEqual((newer.result as McpSchema.InitializeResult).protocolVersion, "2025-06-18")
    }))

  it.effect("rejects requests other than initialize and ping before notifications/initialized", () =>
    Effect.gen(function*() {
      const { call, initialize, peer, session } = yield* setup()
      assert.strictEqual(errorCode(yield* call(1, "tools/list")), JsonRpc.ErrorCode.InvalidRequest)
      assert.deepStrictEqual(yield* call(2, "ping"), JsonRpc.success(2, {}))
      yield* initialize("2025-11-25")
      // answered initialize, but no initialized notification yet
      assert.strictEqual(errorCode(yield* call(3, "tools/list")), JsonRpc.ErrorCode.InvalidRequest)
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      yield* settle
      assert.strictEqual((yield* session.state)._tag, "Initialized")
      const listed = (yield* call(4, "tools/list")) as JsonRpc.SuccessResponse
      assert.deepStrictEqual((listed.result as { tools: unknown }).tools, [])
    }))

  it.effect("drops notifications other than initialized before the handshake completes", () =>
    Effect.gen(function*() {
      const { call, initialize, notes, peer } = yield* setup()
      yield* peer.send(JsonRpc.notification("notifications/roots/list_changed"))
      yield* initialize("2025-11-25")
      yield* peer.send(JsonRpc.notification("notifications/roots/list_changed"))
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      yield* peer.send(JsonRpc.notification("notifications/roots/list_changed"))
      yield* call(9, "ping")
      yield* settle
      assert.deepStrictEqual(notes, ["roots"])
    }))

  it.effect("rejects a second initialize", () =>
    Effect.gen(function*() {
      const { call, initialize, peer } = yield* setup()
      yield* initialize("2025-11-25")
      assert.strictEqual(
        errorCode(yield* call("again", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo })),
        JsonRpc.ErrorCode.InvalidRequest
      )
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      assert.strictEqual(
        errorCode(yield* call("again2", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo })),
        JsonRpc.ErrorCode.InvalidRequest
      )
    }))

  it.effect("rejects initialize params that do not match the schema with -32602", () =>
    Effect.gen(function*() {
      const { call } = yield* setup()
      assert.strictEqual(
        errorCode(yield* call(1, "initialize", { protocolVersion: 2025 })),
        JsonRpc.ErrorCode.InvalidParams
      )
    }))

  it.effect("gives handlers the client's params and a capability check", () =>
    Effect.gen(function*() {
      const { call, initialize, peer, session } = yield* setup()
      yield* initialize("2025-11-25", { sampling: {}, roots: { listChanged: true } })
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      const listed = (yield* call(1, "tools/list")) as JsonRpc.SuccessResponse
      assert.deepStrictEqual((listed.result as { _meta: unknown })._meta, {
        client: clientInfo.name,
        version: "2025-11-25",
        sampling: true,
        samplingTools: false
      })
      assert.isTrue(yield* session.checkClientCapability("roots", "listChanged"))
      assert.isFalse(yield* session.checkClientCapability("elicitation"))
    }))

  it.effect("server→client requests need the client's capability; nothing is sent without it", () =>
    Effect.gen(function*() {
      const { initialize, peer, session } = yield* setup()
      yield* initialize("2025-11-25", { roots: {} })
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      yield* settle
      const refused = yield* Effect.flip(session.request(McpSchema.CreateMessage, {
        messages: [{ role: "user", content: { type: "text", text: "hi" } }],
        maxTokens: 10
      }))
      assert.strictEqual(refused.reason._tag, "UnsupportedError")
      assert.strictEqual(yield* peer.backlog, 0)
      const roots = yield* Effect.forkChild(session.request(McpSchema.ListRoots, {}), { startImmediately: true })
      const sent = (yield* peer.next) as JsonRpc.Request
      assert.strictEqual(sent.method, "roots/list")
      yield* peer.send(JsonRpc.success(sent.id, { roots: [{ uri: "file:///tmp" }] }))
      assert.deepStrictEqual((yield* Fiber.join(roots)).roots, [{ uri: "file:///tmp" }])
    }))
})

describe("McpServerSession: batches", () => {
  it.effect("accepts a batch when 2025-03-26 was negotiated", () =>
    Effect.gen(function*() {
      const { initialize, peer } = yield* setup()
      yield* initialize("2025-03-26")
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      yield* peer.send([JsonRpc.request(1, "ping"), JsonRpc.request(2, "tools/list")])
      // one array with both answers (JSON-RPC 2.0 batch)
      const answers = (yield* peer.next) as ReadonlyArray<JsonRpc.Message>
      assert.isTrue(Array.isArray(answers))
      assert.deepStrictEqual(answers.map((a) => (a as JsonRpc.SuccessResponse).id).sort(), [1, 2])
    }))

  it.effect("refuses a batch under 2025-06-18 and later with -32600", () =>
    Effect.gen(function*() {
      const { initialize, peer } = yield* setup()
      yield* initialize("2025-06-18")
      yield* peer.send(JsonRpc.notification("notifications/initialized"))
      yield* peer.send([JsonRpc.request(1, "ping")])
      assert.strictEqual(errorCode(yield* peer.next), JsonRpc.ErrorCode.InvalidRequest)
    }))
})
