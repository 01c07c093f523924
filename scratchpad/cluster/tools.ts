/**
 * The server of the cluster demo's replica (`replica.ts`) and of its no-Redis
 * twin in the benchmark (`bench/servers/cluster-plain.ts`). Each tool answers
 * with the name of the replica that ran it: `whoami`; `add_tool` (registers a
 * tool here, so every replica's clients hear of a change); `ask` (asks the
 * client for a word: an input-required round in 2026-07-28); `sleep` (a task
 * that sleeps `ms`; prints `interrupted sleep <ms> on <replica>` on stderr
 * when cancelled).
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { Console, Effect, Layer, Schema } from "effect"

const tools = (replica: string) =>
  [
    McpTool.make("whoami", {
      description: "The name of the replica that serves this call",
      input: Schema.Struct({}),
      handler: () => Effect.succeed(replica)
    }),
    McpTool.make("add_tool", {
      description: "Registers a tool on this replica; every replica's clients are told the list changed",
      input: Schema.Struct({ name: Schema.String }),
      handler: ({ name }) =>
        Effect.flatMap(McpServer.McpServer, (server) =>
          server.register(McpTool.make(name, {
            input: Schema.Struct({}),
            handler: () => Effect.succeed(name)
          }))).pipe(
            Effect.as(`${name} registered on ${replica}`)
          )
    }),
    McpTool.make("ask", {
      description: "Asks the client for a word, then says which replica heard it",
      input: Schema.Struct({}),
      handler: (_, context) =>
        Effect.map(
          context.elicit({ message: "A word?", schema: Schema.Struct({ word: Schema.String }) }),
          (answer) => `${replica} heard ${answer.action === "accept" ? answer.content.word : answer.action}`
        )
    }),
    McpTool.make("sleep", {
      description: "Sleeps as a task",
      input: Schema.Struct({ ms: Schema.Int }),
      task: "required",
      handler: ({ ms }) =>
        Effect.sleep(ms).pipe(
          Effect.as(`${replica} slept ${ms} ms`),
          Effect.onInterrupt(() => Console.error(`interrupted sleep ${ms} on ${replica}`))
        )
    })
  ] as const

/**
 * The server with the tools, `replica` naming it in their answers; `options`
 * go to `McpServer.layer` (the `requestState` secret, say). `add_tool` needs
 * the `McpServer`: the tools are registered on top of it.
 */
export const server = (replica: string, options: Partial<McpServer.Options> = {}) =>
  McpServer.register(...tools(replica)).pipe(
    Layer.provideMerge(McpServer.layer({
      name: "cluster-demo",
      version: "1.0.0",
      capabilities: { tools: { listChanged: true } },
      ...options
    }))
  )
