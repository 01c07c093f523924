/**
 * Our McpServer and our McpClient together over the in-memory transport.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema, Stream } from "effect"
import * as McpClient from "../src/McpClient.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { connectOver } from "./utils/client.ts"
import { settle } from "./utils/peer.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const Add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Lying = McpTool.fromJsonSchema("lying", {
  inputSchema: { type: "object" },
  outputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  handler: () => Effect.succeed({ n: "not a number" })
})

/** A server offering `add` and a client connected to it. */
const connectToAdder = (client: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "s", version: "1", capabilities: { tools: { listChanged: true } } })
    yield* server.register(Add)
    const link = yield* McpTransport.makeInMemoryLink
    yield* Layer.build(McpServer.layerSession.pipe(
      Layer.provide(link.server),
      Layer.provide(Layer.succeed(McpServer.McpServer, server))
    ))
    return { server, client: yield* connectOver(link.client, client) }
  })

describe("McpServer + McpClient", () => {
  it.effect("runtime add and remove reach the client's cached tool list", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connectToAdder()
      assert.deepStrictEqual((yield* client.tools.get).map((t) => t.name), ["add"])
      const Echo = McpTool.make("echo", {
        input: Schema.Struct({ text: Schema.String }),
        handler: ({ text }) => Effect.succeed(text)
      })
      yield* server.register(Echo)
      yield* settle
      assert.deepStrictEqual((yield* client.tools.get).map((t) => t.name), ["add", "echo"])
      yield* server.unregister(Add)
      yield* settle
      assert.deepStrictEqual((yield* client.tools.get).map((t) => t.name), ["echo"])
    }))

  it.effect("structured output: validated against outputSchema, decoded by callToolTyped; a mismatch is a typed error", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connectToAdder()
      const typed = yield* client.callToolTyped("add", { a: 1, b: 2 }, Schema.Struct({ sum: Schema.Finite }))
      assert.deepStrictEqual(typed, { sum: 3 })
      yield* server.register(Lying)
      yield* settle
      const error = yield* Effect.flip(client.callTool("lying", {}))
      assert.strictEqual(error.reason._tag, "InvalidResultError")
      // an isError result is not validated
      const invalidArgs = yield* client.callTool("add", { a: "x" })
      assert.isTrue(invalidArgs.isError)
    }).pipe(Effect.provide(ValidatorLayer)))

  it.effect("URL elicitation and its completion notification", () =>
    Effect.gen(function*() {
      const Login = McpTool.make("login", {
        input: Schema.Struct({}),
        handler: (_, context) =>
          Effect.gen(function*() {
            const answer = yield* context.elicitUrl({
              message: "Sign in",
              url: "https://127.0.0.1/login",
              elicitationId: "e-1"
            })
            if (answer.action === "accept") yield* context.completeUrlElicitation("e-1")
            return answer.action
          })
      })
      const opened: Array<string> = []
      // URL elicitation with its completion notification is of the stateful era
      const { client, server } = yield* connectToAdder({
        era: "legacy",
        elicitation: {
          url: (params) =>
            Effect.sync(() => {
              opened.push((params as McpSchema.ElicitRequestURLParams).url)
              return { action: "accept" as const }
            })
        }
      })
      yield* server.register(Login)
      yield* settle
      const completions = yield* client.notificationsOf(McpSchema.ElicitationComplete).pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      const result = yield* client.callTool("login", {})
      assert.deepStrictEqual(result.content, [{ type: "text", text: "accept" }])
      assert.deepStrictEqual(opened, ["https://127.0.0.1/login"])
      assert.deepStrictEqual((yield* Fiber.join(completions)).map((n) => n.elicitationId), ["e-1"])
    }))
})
