/**
 * An agent whose model calls MCP tools: the notes server's tools, through a
 * client, as an effect/ai toolkit. The model here is scripted (no network);
 * an app provides a real one (e.g. `OpenAiLanguageModel.model("…")`).
 *
 *   node --conditions=development scratchpad/agent.ts
 */
import { McpAi, McpClient } from "@effect-mcp/core"
import { NodeMcpRuntime, NodeMcpStdio } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Stream } from "effect"
import { LanguageModel, Prompt } from "effect/ai"

const agent = (question: string) =>
  Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    let prompt = Prompt.make(question)
    for (let turn = 0; turn < 8; turn++) {
      // the toolkit is listed afresh each turn, so tools added on the server show up
      const response = yield* LanguageModel.generateText({ prompt, toolkit: yield* McpAi.toolkit(client) })
      prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) return response.text
    }
    return "no answer in 8 turns"
  })

// asks for `add_note` first, then answers with what the tool said
const ScriptedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: ({ prompt }) =>
      Effect.sync(() => {
        const last = prompt.content.at(-1)
        if (last?.role !== "tool") {
          return [{ type: "tool-call", id: "1", name: "add_note", params: { title: "ideas", body: "try MCP" } }]
        }
        const outputs = last.content.map((part) =>
          part.type === "tool-result" && part.modelOutput ? Prompt.toolModelOutputToText(part.modelOutput) : ""
        )
        return [{ type: "text", text: `The tool said: ${outputs.join(", ")}` }]
      }),
    streamText: () => Stream.empty
  })
)

const Client = McpClient.layer({ clientInfo: { name: "agent", version: "1.0.0" } }).pipe(
  Layer.provide(NodeMcpStdio.layerClient({
    command: process.execPath,
    args: ["--conditions=development", "scratchpad/quickstart/server.ts"]
  }))
)

NodeMcpRuntime.runMain(
  agent("Save a note about MCP").pipe(Effect.flatMap(Console.log), Effect.provide([Client, ScriptedModel]))
)
