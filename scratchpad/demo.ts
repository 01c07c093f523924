/**
 * The main demo: one McpGroup over three servers of three kinds.
 *
 * - `example`: the example server (scratchpad/example-server.ts), spawned as a
 *   child process and spoken to over stdio;
 * - `calculator`: a Streamable HTTP server started in this process on
 *   127.0.0.1 (an ephemeral port);
 * - `memory`: an McpServer served in this process over an in-memory link.
 *
 * It prints the aggregated tools with their servers, calls one tool on each,
 * disconnects `example` (its process ends) and shows the views shrink, then
 * exits 0 with nothing left running.
 *
 *   npm run demo
 */
import { McpGroup, type McpSchema, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpGroup, NodeMcpHttpServer, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Fiber, Layer, Schema, Stream } from "effect"
import { fileURLToPath } from "node:url"

// the Streamable HTTP server: one tool with structured output
const add = McpTool.make("add", {
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Calculator = NodeMcpHttpServer.layer({ port: 0 }).pipe(
  Layer.provide(
    McpServer.register(add).pipe(Layer.provideMerge(McpServer.layer({ name: "calculator", version: "1.0.0" })))
  )
)

// the in-memory server: one tool
const echo = McpTool.make("echo", {
  description: "Returns its text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const Memory = McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "memory", version: "1.0.0" })))

const exampleServer = fileURLToPath(new URL("./example-server.ts", import.meta.url))

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

const counts = (views: McpGroup.Views) =>
  [
    plural(views.tools.length, "tool"),
    plural(views.resources.length, "resource"),
    plural(views.resourceTemplates.length, "template"),
    plural(views.prompts.length, "prompt")
  ].join(", ")

const texts = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => block.type === "text" ? [block.text] : []).join(" ")

const program = Effect.gen(function*() {
  const group = yield* McpGroup.McpGroup

  for (const { name, params, serverInfo, status } of yield* group.servers) {
    yield* Console.log(`server ${name}: ${params._tag}, ${serverInfo?.name} ${serverInfo?.version}, ${status}`)
  }
  yield* Console.log("tools:")
  for (const { name, server, tool } of yield* group.tools) {
    yield* Console.log(`  ${name.padEnd(10)} ${server.padEnd(11)} ${tool.description ?? ""}`)
  }

  // one tool on each server, routed by name
  const forecast = yield* group.callTool("weather", { city: "Lisbon" })
  yield* Console.log(`example/weather -> ${JSON.stringify(forecast.structuredContent)}`)
  const sum = yield* group.callTool("add", { a: 2, b: 40 })
  yield* Console.log(`calculator/add -> ${JSON.stringify(sum.structuredContent)}`)
  const echoed = yield* group.callTool("echo", { text: "hello from memory" })
  yield* Console.log(`memory/echo -> ${texts(echoed)}`)

  // the views now and after the disconnect, as the `changes` stream sees them
  const seen = yield* group.changes.pipe(
    Stream.take(2),
    Stream.runCollect,
    Effect.forkScoped({ startImmediately: true })
  )
  yield* group.disconnect("example")
  const [before, after] = yield* Fiber.join(seen)
  yield* Console.log(`disconnected example: ${counts(before!)} -> ${counts(after!)}`)
  yield* Console.log(`servers now: ${(yield* group.servers).map(({ name }) => name).join(", ")}`)
  yield* Console.log(`tools now: ${(yield* group.tools).map(({ name, server }) => `${name} (${server})`).join(", ")}`)
})

const main = Effect.gen(function*() {
  const url = yield* NodeMcpHttpServer.url()
  const Group = NodeMcpGroup.layer({
    servers: {
      example: McpGroup.stdio(process.execPath, ["--conditions=development", exampleServer]),
      calculator: McpGroup.http(url),
      memory: McpGroup.inMemory(Memory)
    }
  })
  yield* program.pipe(Effect.provide(Group))
}).pipe(Effect.scoped, Effect.provide(Calculator))

NodeMcpRuntime.runMain(main)
