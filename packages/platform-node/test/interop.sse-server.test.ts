/**
 * The official TypeScript SDK's legacy `SSEClientTransport` against our
 * HTTP+SSE server, on 127.0.0.1 and an ephemeral port, in this process.
 */
import { McpServer } from "@effect-mcp/core"
import { NodeMcpSseServer } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Deferred, Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import { makeServer } from "./fixtures/ws-sse-tools.ts"
import { textOf } from "./utils/client.ts"
import { eventually } from "./utils/wait.ts"

const start = Effect.gen(function*() {
  const cancelled = yield* Deferred.make<void>()
  const scope = yield* Scope.make()
  yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
  const context = yield* Layer.buildWithScope(
    NodeMcpSseServer.layer().pipe(Layer.provideMerge(makeServer(cancelled))),
    scope
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  const port = address._tag === "UnixPathAddress" ? 0 : address.port
  return { port, server: Context.get(context, McpServer.McpServer), scope, cancelled }
})

/** The official SDK's client, connected to our server. */
const connectSdkClient = (port: number, setup?: (client: Client, transport: SSEClientTransport) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-sdk", version: "1.0.0" }, { capabilities: { sampling: {} } })
      const transport = new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`))
      setup?.(client, transport)
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

describe("interop: official SDK SSEClientTransport → our HTTP+SSE server", () => {
  it.live("initializes, lists and calls tools", () =>
    Effect.gen(function*() {
      const { port, server } = yield* start
      const client = yield* connectSdkClient(port)
      assert.strictEqual(client.getServerVersion()?.name, "transport-test")
      assert.strictEqual(yield* server.sessionCount, 1)
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["ask", "countdown", "echo", "hang"])
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "over SSE" } }))
      assert.strictEqual(textOf(echoed), "over SSE")
      const invalid = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: {} }))
      assert.isTrue(invalid.isError)
      yield* Effect.promise(() => client.ping())
    }))

  it.live("progress and logging notifications arrive on the stream", () =>
    Effect.gen(function*() {
      const { port } = yield* start
      const logs: Array<unknown> = []
      const client = yield* connectSdkClient(port, (client) =>
        client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
          logs.push(notification.params.data)
        }))
      yield* Effect.promise(() =>
        client.setLoggingLevel("info")
      )
      const progress: Array<number> = []
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "countdown", arguments: { from: 3 } }, undefined, {
          onprogress: (update) => progress.push(update.progress)
        })
      )
      assert.strictEqual(textOf(result), "liftoff")
      assert.deepStrictEqual(progress, [1, 2, 3])
      assert.deepStrictEqual(logs, ["at 3", "at 2", "at 1"])
    }))

  it.live("sampling: our server's request is answered by the SDK client, over the stream and a POST", () =>
    Effect.gen(function*() {
      const { port } = yield* start
      const client = yield* connectSdkClient(
        port,
        (client) =>
          client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
            model: "sdk-model",
            role: "assistant",
            content: { type: "text", text: `re: ${(request.params.messages[0]?.content as { text: string }).text}` }
          }))
      )
      const result = yield* Effect.promise(() => client.callTool({ name: "ask", arguments: { question: "why?" } }))
      assert.strictEqual(textOf(result), "sdk-model: {\"type\":\"text\",\"text\":\"re: why?\"}")
    }))

  it.live("an aborted call sends notifications/cancelled, which interrupts the handler", () =>
    Effect.gen(function*() {
      const { cancelled, port } = yield* start
      const client = yield* connectSdkClient(port)
      const abort = new AbortController()
      const call = client.callTool({ name: "hang", arguments: {} }, undefined, { signal: abort.signal })
      yield* Effect.sleep("50 millis")
      abort.abort("enough")
      const rejected = yield* Effect.promise(() => call.then(() => "resolved", () => "rejected"))
      assert.strictEqual(rejected, "rejected")
      yield* Deferred.await(cancelled)
    }))

  it.live("client.close() ends the session on the server", () =>
    Effect.gen(function*() {
      const { port, server } = yield* start
      const client = new Client({ name: "official-sdk", version: "1.0.0" })
      yield* Effect.promise(() => client.connect(new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`))))
      assert.strictEqual(yield* server.sessionCount, 1)
      yield* Effect.promise(() => client.close())
      yield* eventually(server.sessionCount, (count) => count === 0)
    }))

  it.live("closing our scope ends the stream: the SDK transport reports it, later calls fail", () =>
    Effect.gen(function*() {
      const { port, scope, server } = yield* start
      const errors: Array<unknown> = []
      const client = yield* connectSdkClient(port, (_, transport) => {
        transport.onerror = (error) => {
          errors.push(error)
        }
      })
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(yield* server.sessionCount, 0)
      yield* eventually(Effect.sync(() => errors.length), (count) => count > 0)
      const after = yield* Effect.promise(() => client.ping().then(() => "answered", () => "failed"))
      assert.strictEqual(after, "failed")
    }))
})
