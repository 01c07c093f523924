/**
 * JSON-RPC at the edges, per spec, and the capability checks that depend on
 * the revision: frames that are both a request and a response, batches (one
 * array of answers in 2025-03-26, one `-32600` with a null id otherwise or
 * when invalid), `completion/complete` to a 2024-11-05 server, and form/URL
 * elicitation against `elicitation` declarations.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import * as Capabilities from "../src/internal/era/capabilities.ts"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClientSession from "../src/McpClientSession.ts"
import * as McpMethod from "../src/McpMethod.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { type RawPeer, rawPeer, settle, Slow } from "./utils/peer.ts"

type Frame = {
  readonly id?: unknown
  readonly method?: string
  readonly result?: any
  readonly error?: any
  readonly params?: any
}

const AskForm = McpTool.make("ask_form", {
  description: "Form elicitation",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) }),
      (answer) => answer.action
    )
})

const AskUrl = McpTool.make("ask_url", {
  description: "URL elicitation",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicitUrl({ message: "Sign in", url: "https://example.com/in", elicitationId: "e1" }),
      (answer) => answer.action
    )
})

/** A real server on an in-memory connection, its client played by hand. */
const serve = Effect.gen(function*() {
  const server = yield* McpServer.make({ name: "edges", version: "1.0.0" })
  yield* server.register(AskForm)
  yield* server.register(AskUrl)
  const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
  yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
  return yield* rawPeer(clientEnd)
})

const next = (peer: RawPeer) => Effect.map(peer.next, (frame) => frame as Frame)

/** A legacy session of `version`, initialized with `capabilities`. */
const legacy = (version: string, capabilities: McpSchema.ClientCapabilities = {}) =>
  Effect.gen(function*() {
    const peer = yield* serve
    yield* peer.send(JsonRpc.request("init", "initialize", { protocolVersion: version, capabilities, clientInfo }))
    const answer = yield* next(peer)
    assert.strictEqual(answer.result.protocolVersion, version)
    yield* peer.send(JsonRpc.notification("notifications/initialized"))
    return peer
  })

const assertInvalidRequest = (frame: Frame, id: JsonRpc.RequestId | null) => {
  assert.isFalse(Array.isArray(frame))
  assert.strictEqual(frame.error?.code, JsonRpc.ErrorCode.InvalidRequest)
  assert.strictEqual(frame.id, id)
}

describe("JsonRpc.classify", () => {
  it("a frame with method and result or error is invalid, keeping a valid id", () => {
    const both = JsonRpc.classify({ jsonrpc: "2.0", id: 7, method: "ping", result: {} })
    assert.deepStrictEqual(both._tag === "Invalid" ? both.id : "not invalid", 7)
    const withError = JsonRpc.classify({ jsonrpc: "2.0", id: "a", method: "ping", error: { code: 1, message: "x" } })
    assert.deepStrictEqual(withError._tag === "Invalid" ? withError.id : "not invalid", "a")
    const badId = JsonRpc.classify({ jsonrpc: "2.0", id: { no: 1 }, method: "ping", result: {} })
    assert.deepStrictEqual(badId._tag === "Invalid" ? badId.id : "not invalid", null)
    const resultAndError = JsonRpc.classify({ jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "x" } })
    assert.strictEqual(resultAndError._tag, "Invalid")
    // the ordinary kinds are unchanged
    assert.strictEqual(JsonRpc.classify({ jsonrpc: "2.0", id: 1, method: "ping" })._tag, "Request")
    assert.strictEqual(JsonRpc.classify({ jsonrpc: "2.0", id: 1, result: {} })._tag, "Response")
    assert.strictEqual(
      JsonRpc.classify({ jsonrpc: "2.0", id: null, error: { code: 1, message: "x" } })._tag,
      "Response"
    )
  })
})

describe("a frame that is both a request and a response", () => {
  it.effect("gets -32600 with its id, or null when the id is not valid; the session goes on", () =>
    Effect.gen(function*() {
      const peer = yield* legacy("2025-06-18")
      yield* peer.send({ jsonrpc: "2.0", id: 5, method: "ping", result: {} })
      assertInvalidRequest(yield* next(peer), 5)
      yield* peer.send({ jsonrpc: "2.0", id: 1.5, method: "ping", error: { code: 1, message: "x" } })
      assertInvalidRequest(yield* next(peer), null)
      yield* peer.send(JsonRpc.request(6, "ping"))
      assert.deepStrictEqual((yield* next(peer)).result, {})
    }))
})

describe("batches", () => {
  for (const version of ["2024-11-05", "2025-06-18", "2025-11-25"]) {
    it.effect(`${version}: a batch is refused with one -32600, id null`, () =>
      Effect.gen(function*() {
        const peer = yield* legacy(version)
        yield* peer.send([JsonRpc.request(1, "ping"), JsonRpc.request(2, "ping")])
        assertInvalidRequest(yield* next(peer), null)
        yield* settle
        assert.strictEqual(yield* peer.backlog, 0)
      }))
  }

  it.effect("2025-03-26: a valid batch is answered with one array", () =>
    Effect.gen(function*() {
      const peer = yield* legacy("2025-03-26")
      yield* peer.send([
        JsonRpc.request(1, "ping"),
        JsonRpc.notification("notifications/roots/list_changed"),
        JsonRpc.request("b", "tools/list")
      ])
      const answer = (yield* peer.next) as ReadonlyArray<Frame>
      assert.isTrue(Array.isArray(answer))
      assert.deepStrictEqual(answer.map((frame) => frame.id).sort(), [1, "b"])
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))

  it.effect("2025-03-26: a batch of notifications gets no answer", () =>
    Effect.gen(function*() {
      const peer = yield* legacy("2025-03-26")
      yield* peer.send([JsonRpc.notification("notifications/roots/list_changed")])
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))

  it.effect("2025-03-26: an empty batch gets one -32600, id null", () =>
    Effect.gen(function*() {
      const peer = yield* legacy("2025-03-26")
      yield* peer.send([])
      assertInvalidRequest(yield* next(peer), null)
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))

  it.effect("2025-03-26: invalid members and reused ids get -32600 each, in the one array (JSON-RPC 2.0 §6)", () =>
    Effect.gen(function*() {
      const peer = yield* legacy("2025-03-26")
      const array = (frame: unknown) => {
        assert.isTrue(Array.isArray(frame), JSON.stringify(frame))
        return (frame as ReadonlyArray<Frame>).map((m) => [m.id, m.error?.code ?? "ok"])
      }
      yield* peer.send([1, 2])
      assert.deepStrictEqual(array(yield* peer.next), [[null, -32600], [null, -32600]])
      yield* peer.send([
        JsonRpc.request(3, "ping"),
        { jsonrpc: "2.0", foo: "boo" },
        JsonRpc.notification("notifications/roots/list_changed")
      ])
      assert.sameDeepMembers(array(yield* peer.next), [[3, "ok"], [null, -32600]])
      yield* peer.send([{ jsonrpc: "2.0", id: 6, method: "ping", result: {} }, JsonRpc.request(7, "nope")])
      assert.sameDeepMembers(array(yield* peer.next), [[6, -32600], [7, -32601]])
      yield* peer.send([JsonRpc.request(8, "ping"), JsonRpc.request(8, "ping")])
      assert.sameDeepMembers(array(yield* peer.next), [[8, "ok"], [8, -32600]])
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
      // a single invalid message keeps its id
      yield* peer.send({ jsonrpc: "2.0", id: 9 })
      assertInvalidRequest(yield* next(peer), 9)
    }))

  it.effect("a cancelled member leaves the array without its answer", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* McpSession.make({
        role: "server",
        handlers: [McpSession.handler(Slow, () => Effect.never)],
        acceptBatches: () => true
      }).pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const peer = yield* rawPeer(clientEnd)
      yield* peer.send([JsonRpc.request(1, Slow.name, {}), JsonRpc.request(2, "ping")])
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
      // a single request may not reuse the id of a batched one still running
      yield* peer.send(JsonRpc.request(1, "ping"))
      assertInvalidRequest(yield* next(peer), 1)
      yield* peer.send(JsonRpc.notification("notifications/cancelled", { requestId: 1 }))
      const answer = (yield* peer.next) as ReadonlyArray<Frame>
      assert.deepStrictEqual(answer.map((frame) => frame.id), [2])
    }))

  it.effect("a 2025-03-26 client answers a server's batch with one array", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const connecting = yield* McpClientSession.make({ clientInfo, era: "legacy", protocolVersion: "2025-03-26" })
        .pipe(
          Effect.provideService(McpTransport.McpTransport, clientEnd),
          Effect.forkChild
        )
      const initialize = yield* next(server)
      yield* server.send(JsonRpc.success(initialize.id as JsonRpc.RequestId, {
        protocolVersion: "2025-03-26",
        capabilities: {},
        serverInfo: { name: "hand", version: "1" }
      }))
      assert.strictEqual((yield* next(server)).method, "notifications/initialized")
      yield* Fiber.await(connecting)
      yield* server.send([JsonRpc.request("p1", "ping"), JsonRpc.request("p2", "ping")])
      const answer = (yield* server.next) as ReadonlyArray<Frame>
      assert.deepStrictEqual(answer.map((frame) => frame.id), ["p1", "p2"])
    }))
})

/** A client session over a server played by hand that answered `initialize` with `version` and `capabilities`. */
const clientOf = (version: string, capabilities: McpSchema.ServerCapabilities) =>
  Effect.gen(function*() {
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    const server = yield* rawPeer(serverEnd)
    const connecting = yield* McpClientSession.make({ clientInfo, era: "legacy", protocolVersion: version }).pipe(
      Effect.provideService(McpTransport.McpTransport, clientEnd),
      Effect.forkChild
    )
    const initialize = yield* next(server)
    yield* server.send(JsonRpc.success(initialize.id as JsonRpc.RequestId, {
      protocolVersion: version,
      capabilities,
      serverInfo: { name: "hand", version: "1" }
    }))
    yield* server.next
    const exit = yield* Fiber.await(connecting)
    assert.strictEqual(exit._tag, "Success")
    return { session: (exit as any).value as McpClientSession.ClientSession, server }
  })

const completeParams: McpSchema.CompleteRequestParams = {
  ref: { type: "ref/prompt", name: "p" },
  argument: { name: "a", value: "x" }
}

describe("completion/complete per revision", () => {
  it.effect("2024-11-05: sent although the server declares no completions", () =>
    Effect.gen(function*() {
      const { server, session } = yield* clientOf("2024-11-05", { prompts: {} })
      const call = yield* Effect.forkChild(session.request(McpSchema.Complete, completeParams))
      const sent = yield* next(server)
      assert.strictEqual(sent.method, "completion/complete")
      yield* server.send(JsonRpc.success(sent.id as JsonRpc.RequestId, { completion: { values: ["xy"] } }))
      const result = yield* Fiber.await(call)
      assert.strictEqual(result._tag, "Success")
    }))

  for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
    it.effect(`${version}: refused (nothing sent) without completions, sent with it`, () =>
      Effect.gen(function*() {
        const { server, session } = yield* clientOf(version, { prompts: {} })
        const refused = yield* Effect.flip(session.request(McpSchema.Complete, completeParams))
        assert.strictEqual(refused.reason._tag, "UnsupportedError")
        yield* settle
        assert.strictEqual(yield* server.backlog, 0)
        const declared = yield* clientOf(version, { completions: {} })
        yield* Effect.forkChild(declared.session.request(McpSchema.Complete, completeParams))
        assert.strictEqual((yield* next(declared.server)).method, "completion/complete")
      }))
  }

  it.effect("2026-07-28: checked against the discovered capabilities", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "modern", version: "1" })
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const session = yield* McpClientSession.make({ clientInfo, era: "modern" }).pipe(
        Effect.provideService(McpTransport.McpTransport, clientEnd)
      )
      assert.strictEqual(session.protocolVersion, "2026-07-28")
      const refused = yield* Effect.flip(session.request(McpSchema.Complete, completeParams))
      assert.strictEqual(refused.reason._tag, "UnsupportedError")
    }))
})

/** Calls a tool in a legacy session; returns the first frame the server sends back. */
const callTool = (peer: RawPeer, name: string) =>
  Effect.andThen(peer.send(JsonRpc.request(`call-${name}`, "tools/call", { name, arguments: {} })), next(peer))

const asked = (frame: Frame) => frame.method === "elicitation/create"

describe("elicitation capability per revision", () => {
  for (const version of ["2024-11-05", "2025-03-26"]) {
    it.effect(`${version}: nothing declared, nothing asked`, () =>
      Effect.gen(function*() {
        const peer = yield* legacy(version)
        assert.isFalse(asked(yield* callTool(peer, "ask_form")))
      }))
  }

  it.effect("2025-06-18: elicitation {} is form support", () =>
    Effect.gen(function*() {
      assert.isTrue(asked(yield* callTool(yield* legacy("2025-06-18", { elicitation: {} }), "ask_form")))
      assert.isFalse(asked(yield* callTool(yield* legacy("2025-06-18", {}), "ask_form")))
    }))

  it.effect("2025-11-25: {} and form allow form only; url allows URL only", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [McpSchema.ClientCapabilities, boolean, boolean]> = [
        [{ elicitation: {} }, true, false],
        [{ elicitation: { form: {} } }, true, false],
        [{ elicitation: { url: {} } }, false, true],
        [{ elicitation: { form: {}, url: {} } }, true, true],
        [{}, false, false]
      ]
      for (const [capabilities, form, url] of cases) {
        const label = JSON.stringify(capabilities)
        assert.strictEqual(
          asked(yield* callTool(yield* legacy("2025-11-25", capabilities), "ask_form")),
          form,
          `form ${label}`
        )
        assert.strictEqual(
          asked(yield* callTool(yield* legacy("2025-11-25", capabilities), "ask_url")),
          url,
          `url ${label}`
        )
      }
    }))

  it.effect("2026-07-28: the request's declared capabilities, same rules", () =>
    Effect.gen(function*() {
      const modern = (capabilities: McpSchema.ClientCapabilities) =>
        Effect.gen(function*() {
          const peer = yield* serve
          yield* peer.send(JsonRpc.request(1, "tools/call", {
            name: "ask_form",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": clientInfo,
              "io.modelcontextprotocol/clientCapabilities": capabilities
            }
          }))
          return yield* next(peer)
        })
      assert.strictEqual((yield* modern({ elicitation: {} })).result?.resultType, "input_required")
      assert.strictEqual((yield* modern({ elicitation: { form: {} } })).result?.resultType, "input_required")
      const urlOnly = yield* modern({ elicitation: { url: {} } })
      assert.strictEqual(urlOnly.error?.code, JsonRpc.ErrorCode.MissingRequiredClientCapability)
    }))

  it("declares: the rules in one place", () => {
    const form = McpMethod.clientCapability("elicitation")
    assert.isTrue(Capabilities.declares({ elicitation: {} }, form))
    assert.isFalse(Capabilities.declares({ elicitation: { url: {} } }, form))
    assert.isFalse(Capabilities.declares({ elicitation: true }, form))
    assert.isTrue(Capabilities.declares({ elicitation: { url: {} } }, McpMethod.clientCapability("elicitation", "url")))
    assert.deepStrictEqual(Capabilities.ofServer({}, "2024-11-05"), { completions: {} })
    assert.deepStrictEqual(Capabilities.ofServer({}, "2025-03-26"), {})
  })
})
