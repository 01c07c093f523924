/**
 * A long-running tool as a task: the server declares `task: "optional"`,
 * the handler is an ordinary one (progress, an elicitation, interruption);
 * the client follows the task's status, answers its question with its
 * elicitation handler, and waits for the result. Then a second call,
 * cancelled. Connected in-process, in the era an `McpClient` settles on
 * with this server (2026-07-28; the same code works in 2025-11-25).
 *
 *   node --conditions=development scratchpad/example-tasks.ts
 */
import { McpClient, McpServer, McpTool, McpTransport } from "@effect-mcp/core"
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Schema, Stream } from "effect"

const render = McpTool.make("render", {
  description: "Renders a video: takes a while, asks before overwriting",
  input: Schema.Struct({ name: Schema.String, frames: Schema.Int }),
  task: "optional",
  handler: ({ frames, name }, context) =>
    Effect.gen(function*() {
      const answer = yield* context.elicit({
        message: `Overwrite ${name}.mp4?`,
        schema: Schema.Struct({ overwrite: Schema.Boolean })
      })
      if (answer.action !== "accept" || !answer.content.overwrite) return `kept the old ${name}.mp4`
      for (let frame = 1; frame <= frames; frame++) {
        yield* Effect.sleep("100 millis")
        yield* context.reportProgress({ progress: frame, total: frames, message: `frame ${frame}/${frames}` })
      }
      return `rendered ${name}.mp4 (${frames} frames)`
    })
})

const Server = McpServer.layer({ name: "studio", version: "1.0.0", tasks: { pollInterval: "150 millis" } }, render)

const Client = McpClient.layer({
  clientInfo: { name: "example-tasks", version: "1.0.0" },
  elicitation: { form: () => Effect.succeed({ action: "accept", content: { overwrite: true } }) }
})

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  const task = yield* client.callToolTask("render", { name: "intro", frames: 3 })
  yield* Console.log(`task ${task.taskId === "" ? "(answered at once)" : "started"}`)
  yield* task.status.pipe(
    Stream.runForEach((state) =>
      Console.log(`  ${state.status}${state.statusMessage ? `: ${state.statusMessage}` : ""}`)
    )
  )
  const result = yield* task.result
  yield* Console.log(`result: ${result.content.map((block) => block.type === "text" ? block.text : "").join("")}`)

  const second = yield* client.callToolTask("render", { name: "outro", frames: 50 })
  yield* Effect.sleep("300 millis")
  yield* second.cancel
  yield* Console.log(`second task: ${(yield* second.poll).status}`)
})

const main = Effect.gen(function*() {
  const link = yield* McpTransport.makeInMemoryLink
  yield* Layer.build(McpServer.layerSession.pipe(Layer.provide([link.server, Server])))
  yield* program.pipe(Effect.provide(Client.pipe(Layer.provide(link.client))))
}).pipe(Effect.scoped)

NodeMcpRuntime.runMain(main)
