/**
 * JSON-RPC at the edges over Streamable HTTP, in process: batches (one JSON
 * array in a 2025-03-26 session, one `-32600` with a null id when empty,
 * invalid or in another revision), and frames that are both a request and
 * a response.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpHttpServer from "../src/McpHttpServer.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import { settle } from "./utils/peer.ts"
import { json } from "./utils/sse.ts"

const Add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const call = (id: JsonRpc.RequestId, a: number, b: number) =>
  JsonRpc.request(id, "tools/call", { name: "add", arguments: { a, b } })
const initialized = JsonRpc.notification("notifications/initialized")

const harness = (options: McpHttpServer.Options = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "http-edges", version: "1.0.0" })
    yield* server.register(Add)
    const handler = yield* HttpRouter.toHttpEffect(
      McpHttpServer.layerRoute(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const post = (body: unknown, session?: string) =>
      handler.pipe(
        Effect.provideService(
          HttpServerRequest.HttpServerRequest,
          HttpServerRequest.fromWeb(
            new Request("http://localhost/mcp", {
              method: "POST",
              headers: {
                accept: "application/json, text/event-stream",
                "content-type": "application/json",
                ...(session === undefined ? {} : { "mcp-session-id": session })
              },
              body: JSON.stringify(body)
            })
          )
        ),
        Effect.scoped,
        Effect.orDie
      )
    const open = (version: string) =>
      Effect.gen(function*() {
        const response = yield* post(JsonRpc.request(0, "initialize", {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: "raw", version: "1" }
        }))
        assert.strictEqual(response.status, 200)
        const id = response.headers["mcp-session-id"]!
        assert.strictEqual((yield* post(initialized, id)).status, 202)
        yield* settle
        return id
      })
    return { post, open }
  })

const assertRefused = (response: HttpServerResponse.HttpServerResponse, id: JsonRpc.RequestId | null) =>
  Effect.gen(function*() {
    assert.strictEqual(response.status, 400)
    const body = yield* json(response)
    assert.isFalse(Array.isArray(body))
    assert.strictEqual(body.error.code, JsonRpc.ErrorCode.InvalidRequest)
    assert.strictEqual(body.id, id)
  })

describe("Streamable HTTP: batches", () => {
  it.effect("2025-03-26: a valid batch gets one JSON array; notifications only get 202", () =>
    Effect.gen(function*() {
      const { open, post } = yield* harness()
      const session = yield* open("2025-03-26")
      const batch = yield* post([
        call(1, 1, 1),
        JsonRpc.notification("notifications/roots/list_changed"),
        call("two", 2, 2)
      ], session)
      assert.strictEqual(batch.status, 200)
      const answers = yield* json(batch)
      assert.isTrue(Array.isArray(answers))
      assert.deepStrictEqual(answers.map((a: any) => [a.id, a.result.structuredContent.sum]), [[1, 2], ["two", 4]])
      const notes = yield* post([JsonRpc.notification("notifications/roots/list_changed")], session)
      assert.strictEqual(notes.status, 202)
    }))

  it.effect("empty, invalid-member and duplicate-id batches: one -32600 with id null", () =>
    Effect.gen(function*() {
      const { open, post } = yield* harness()
      const session = yield* open("2025-03-26")
      yield* assertRefused(yield* post([], session), null)
      yield* assertRefused(yield* post([call(5, 1, 1), { jsonrpc: "2.0", id: 6 }], session), null)
      yield* assertRefused(
        yield* post([call(7, 1, 1), { jsonrpc: "2.0", id: 8, method: "ping", result: {} }], session),
        null
      )
      yield* assertRefused(yield* post([call(9, 1, 1), call(9, 1, 1)], session), null)
      // nothing of a refused batch ran: its ids are free
      const again = yield* post([call(5, 1, 1), call(7, 1, 2)], session)
      assert.deepStrictEqual((yield* json(again)).map((a: any) => a.id), [5, 7])
    }))

  for (const version of ["2024-11-05", "2025-06-18", "2025-11-25"]) {
    it.effect(`${version}: a batch is refused with -32600, id null`, () =>
      Effect.gen(function*() {
        const { open, post } = yield* harness()
        const session = yield* open(version)
        yield* assertRefused(yield* post([call(1, 1, 1)], session), null)
      }))
  }
})

describe("Streamable HTTP: a frame that is both a request and a response", () => {
  it.effect("gets 400 -32600 with its id (null when the id is not valid), not 202", () =>
    Effect.gen(function*() {
      const { open, post } = yield* harness()
      const session = yield* open("2025-11-25")
      yield* assertRefused(yield* post({ jsonrpc: "2.0", id: 3, method: "ping", result: {} }, session), 3)
      yield* assertRefused(
        yield* post({ jsonrpc: "2.0", id: [1], method: "ping", error: { code: 1, message: "x" } }, session),
        null
      )
      const ping = yield* post(JsonRpc.request(4, "ping"), session)
      assert.deepStrictEqual((yield* json(ping)).result, {})
    }))
})
