/**
 * Interop: our McpClient over our stdio client transport against
 * `@modelcontextprotocol/server-everything` (the MCP project's reference
 * server, built on the official SDK), spawned on stdio, its default.
 */
import { McpClient, McpSchema } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Ref, Schema, Scope, Stream } from "effect"
import { realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { connectStdio } from "./utils/client.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
// the package's bin, resolved to its script so it runs on this Node
const everything = realpathSync(`${root}node_modules/.bin/mcp-server-everything`)

/** The everything server over stdio; its gzip tool fetches a URL by default: let it fetch nothing. */
const connectEverything = (options: Partial<McpClient.Options> = {}) =>
  connectStdio({
    command: process.execPath,
    args: [everything, "stdio"],
    env: { GZIP_ALLOWED_DOMAINS: "127.0.0.1" },
    stderr: "capture"
  }, options)
const texts = (result: McpSchema.CallToolResult) =>
  result.content.flatMap((block) => block.type === "text" ? [block.text] : [])

describe("interop: our McpClient over stdio → server-everything", () => {
  it.live("handshake and tools: echo, get-sum, structured content checked against its outputSchema", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connectEverything()
      assert.strictEqual(client.serverInfo.name, "mcp-servers/everything")
      assert.isDefined(client.serverCapabilities.tools)
      assert.isDefined(client.serverCapabilities.resources?.subscribe)
      assert.isDefined(client.serverCapabilities.prompts)
      assert.isDefined(client.serverCapabilities.logging)
      const names = (yield* client.tools.get).map((tool) => tool.name)
      for (
        const name of ["echo", "get-sum", "get-structured-content", "get-tiny-image", "trigger-long-running-operation"]
      ) {
        assert.include(names, name)
      }
      // a client without sampling, elicitation or roots does not get the tools that need them
      assert.notInclude(names, "trigger-sampling-request")
      assert.deepStrictEqual(texts(yield* client.callTool("echo", { message: "hi" })), ["Echo: hi"])
      assert.include(texts(yield* client.callTool("get-sum", { a: 2, b: 40 }))[0], "42")
      const weather = yield* client.callToolTyped(
        "get-structured-content",
        { location: "Chicago" },
        Schema.Struct({ temperature: Schema.Finite, conditions: Schema.String, humidity: Schema.Finite })
      )
      assert.deepStrictEqual(weather, { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 })
      const image = yield* client.callTool("get-tiny-image")
      assert.isTrue(image.content.some((block) => block.type === "image"))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
    }))

  it.live("progress notifications of the long-running operation", () =>
    Effect.gen(function*() {
      const { client } = yield* connectEverything()
      const progress = yield* Ref.make<ReadonlyArray<string>>([])
      const result = yield* client.callTool("trigger-long-running-operation", { duration: 0.3, steps: 3 }, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, `${p.progress}/${p.total}`])
      })
      assert.deepStrictEqual(yield* Ref.get(progress), ["1/3", "2/3", "3/3"])
      assert.include(texts(result)[0], "Long running operation completed")
    }))

  it.live("resources: static documents (every page), templates, reads", () =>
    Effect.gen(function*() {
      const { client } = yield* connectEverything()
      const resources = yield* Stream.runCollect(client.streamResources())
      const uris = resources.map((resource) => resource.uri)
      assert.include(uris, "demo://resource/static/document/features.md")
      assert.isAtLeast(uris.length, 7)
      const features = yield* client.readResource("demo://resource/static/document/features.md")
      const first = features.contents[0]
      assert.isTrue(first !== undefined && "text" in first && first.text.length > 0)
      const templates = (yield* client.resourceTemplates.get).map((template) => template.uriTemplate)
      assert.include(templates, "demo://resource/dynamic/text/{resourceId}")
      assert.include(templates, "demo://resource/dynamic/blob/{resourceId}")
      const text = (yield* client.readResource("demo://resource/dynamic/text/3")).contents[0]
      assert.isTrue(text !== undefined && "text" in text && text.text.startsWith("Resource 3:"))
      const blob = (yield* client.readResource("demo://resource/dynamic/blob/4")).contents[0]
      assert.isTrue(blob !== undefined && "blob" in blob)
      if (blob !== undefined && "blob" in blob) {
        assert.isTrue(Buffer.from(blob.blob, "base64").toString("utf8").startsWith("Resource 4:"))
      }
    }))

  it.live("prompts: simple, with arguments, with completions, with an embedded resource", () =>
    Effect.gen(function*() {
      const { client } = yield* connectEverything()
      const names = (yield* client.prompts.get).map((prompt) => prompt.name)
      assert.deepStrictEqual(
        [...names].sort(),
        ["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"]
      )
      const simple = yield* client.getPrompt("simple-prompt")
      assert.strictEqual(simple.messages[0]?.role, "user")
      const args = yield* client.getPrompt("args-prompt", { city: "Oslo", state: "Oslo" })
      const argsText = args.messages[0]?.content
      assert.isTrue(argsText?.type === "text" && argsText.text.includes("Oslo, Oslo"))
      const departments = yield* client.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "department", value: "S" }
      })
      assert.deepStrictEqual(departments.completion.values, ["Sales", "Support"])
      const embedded = yield* client.getPrompt("resource-prompt", { resourceType: "Text", resourceId: "2" })
      assert.isTrue(embedded.messages.some((message) => message.content.type === "resource"))
    }))

  it.live("sampling, elicitation and roots: the server's requests are answered by our client", () =>
    Effect.gen(function*() {
      const { client } = yield* connectEverything({
        sampling: {
          handler: () =>
            Effect.succeed({
              role: "assistant",
              model: "effect-model",
              stopReason: "endTurn",
              content: { type: "text", text: "sampled by effect-mcp" }
            })
        },
        elicitation: {
          form: () => Effect.succeed({ action: "accept", content: { name: "Ada Lovelace", check: true } })
        },
        roots: [{ uri: "file:///project", name: "project" }]
      })
      // conditional tools are registered once the server knows our capabilities
      const names = (yield* client.tools.refresh).map((tool) => tool.name)
      for (const name of ["trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"]) {
        assert.include(names, name)
      }
      const sampled = texts(yield* client.callTool("trigger-sampling-request", { prompt: "hello", maxTokens: 5 }))
      assert.include(sampled.join("\n"), "sampled by effect-mcp")
      const elicited = texts(yield* client.callTool("trigger-elicitation-request")).join("\n")
      assert.include(elicited, "- Name: Ada Lovelace")
      // defaults of the requested schema were filled in by our client
      assert.include(elicited, "- Favorite Integer: 42")
      const roots = texts(yield* client.callTool("get-roots-list")).join("\n")
      assert.include(roots, "URI: file:///project")
    }))
})
