/**
 * Definitions registered while the server runs, hidden and shown again, and a
 * middleware that gives handlers the caller it read from the request. Served
 * in memory to a test client (`McpTest.client`), which prints what it sees.
 *
 *   node --conditions=development scratchpad/docs/registration.ts
 */
import { McpClient, McpContent, McpServer, McpTest, McpTool } from "@effect-mcp/core"
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// #region middleware
// what the middleware hands to handlers
const Caller = Context.Reference<string>("docs/Caller", { defaultValue: () => "anonymous" })

const callerFromMeta: McpServer.Middleware = (_context, _method, params, next) => {
  const meta = (params as { readonly _meta?: { readonly caller?: unknown } } | undefined)?._meta
  return typeof meta?.caller === "string" ? Effect.provideService(next, Caller, meta.caller) : next
}

const whoami = McpTool.make("whoami", {
  description: "Who the middleware says is calling",
  handler: () =>
    Effect.gen(function*() {
      return `you are ${yield* Caller}`
    })
})

const Server = McpServer.layer({ name: "live", version: "1.0.0", middleware: [callerFromMeta] }, whoami)
// #endregion middleware

// #region runtime
const shout = McpTool.make("shout", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const toolNames = (client: McpClient.Client) =>
  Effect.map(client.listTools(), ({ tools }) => tools.map((tool) => tool.name).join(", "))

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const server = yield* McpServer.McpServer
  yield* Console.log(`tools: ${yield* toolNames(client)}`)

  // every session is told (notifications/tools/list_changed)
  yield* server.register(shout)
  yield* Console.log(`after register: ${yield* toolNames(client)}`)
  yield* server.disable(shout) // hidden from lists and calls, still registered
  yield* Console.log(`after disable: ${yield* toolNames(client)}`)
  yield* server.enable(shout)
  const shouted = yield* client.callTool("shout", { text: "hello" })
  yield* Console.log(`shout: ${McpContent.textOf(shouted)}`)
  yield* server.unregister(shout)
  yield* Console.log(`after unregister: ${yield* toolNames(client)}`)

  const anonymous = yield* client.callTool("whoami", {})
  const ada = yield* client.callTool("whoami", {}, { meta: { caller: "ada" } })
  yield* Console.log(`${McpContent.textOf(anonymous)}; ${McpContent.textOf(ada)}`)
})
// #endregion runtime

// the test client and the server it talks to, in one layer: the program gets both
const ClientAndServer = McpTest.layer(Server).pipe(Layer.provideMerge(Server))

NodeMcpRuntime.runMain(program.pipe(Effect.provide(ClientAndServer)))
