/**
 * An example McpClient, connected in-process to a small server: typed calls,
 * structured output checked against the tool's outputSchema, progress, a
 * sampling handler (which declares the `sampling` capability), notifications.
 *
 *   node --conditions=development scratchpad/example-client.ts
 */
import { McpClient, McpServer, McpTool, McpTransport } from "@effect-mcp/core"
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Fiber, Layer, Option, Schema, Stream } from "effect"

const Sum = Schema.Struct({ sum: Schema.Finite })

const add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Sum,
  handler: ({ a, b }, context) =>
    Effect.gen(function*() {
      // asking the client comes first: a 2026-07-28 request runs the handler again with the answer
      const poem = yield* context.createMessage({
        messages: [{ role: "user", content: { type: "text", text: `a poem about ${a + b}` } }],
        maxTokens: 20
      })
      yield* context.reportProgress({ progress: 1, total: 1 })
      yield* context.log("info", poem.content)
      return { sum: a + b }
    })
})

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  // log lines come at the level the client asks for (none: no logs, in 2026-07-28)
  yield* client.setLoggingLevel("info")
  const firstLog = yield* client.notificationsOf("notifications/message").pipe(
    Stream.runHead,
    Effect.forkScoped({ startImmediately: true })
  )
  yield* Console.log(`tools: ${(yield* client.tools.get).map((tool) => tool.name).join(", ")}`)
  const { sum } = yield* client.callToolTyped("add", { a: 2, b: 40 }, Sum, {
    onProgress: (progress) => Console.log(`progress ${progress.progress}/${progress.total}`)
  })
  yield* Console.log(`sum: ${sum}`)
  const log = yield* Fiber.join(firstLog)
  if (Option.isSome(log)) yield* Console.log(`the server logged: ${JSON.stringify(log.value.data)}`)
})

const Client = McpClient.layer({
  clientInfo: { name: "example-client", version: "1.0.0" },
  sampling: {
    handler: () =>
      Effect.succeed({ role: "assistant", model: "canned", content: { type: "text", text: "forty-two, how true" } })
  }
})

const main = Effect.gen(function*() {
  const link = yield* McpTransport.makeInMemoryLink
  // the server side of the link, served in the background
  yield* Layer.build(McpServer.layerSession.pipe(
    Layer.provide([
      link.server,
      McpServer.register(add).pipe(Layer.provideMerge(McpServer.layer({ name: "adder", version: "1.0.0" })))
    ])
  ))
  yield* program.pipe(Effect.provide(Client.pipe(Layer.provide(link.client))))
}).pipe(Effect.scoped)

NodeMcpRuntime.runMain(main)
