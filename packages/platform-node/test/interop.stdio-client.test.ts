/**
 * Interop: our McpClient over our stdio client transport against a server
 * written with the official SDK (`McpServer` + `StdioServerTransport`),
 * spawned as a real child process (fixtures/stdio-sdk-server.mjs).
 */
import { assert, describe, it } from "@effect/vitest"
import { McpClient, McpSchema, McpTransport } from "@effect-mcp/core"
import { Context, Effect, Exit, Fiber, Layer, Ref, Schema, Scope, Stream } from "effect"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"

const clientInfo = { name: "effect-mcp-stdio", version: "0.1.0" }

const connect = (options: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const transport = yield* NodeMcpStdio.makeClient({
      command: process.execPath,
      args: [fileURLToPath(new URL("./fixtures/stdio-sdk-server.mjs", import.meta.url))],
      stderr: "capture"
    }).pipe(Scope.provide(scope))
    const context = yield* Layer.buildWithScope(
      McpClient.layer({ clientInfo, ...options }).pipe(
        Layer.provide([Layer.succeed(McpTransport.McpTransport, transport), NodeJsonSchemaValidator.layer])
      ),
      scope
    )
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    return { client: Context.get(context, McpClient.McpClient), scope, transport }
  })

const textOf = (result: McpSchema.CallToolResult) => {
  const [first] = result.content
  return first?.type === "text" ? first.text : undefined
}

describe("interop: our McpClient over stdio → an official SDK server process", () => {
  it.live("handshake, then scope close: stdin closed, the SDK server exits 0 by itself", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connect()
      assert.deepStrictEqual(client.serverInfo, { name: "sdk-stdio-server", version: "1.32.2" })
      assert.strictEqual(client.instructions, "an official SDK server on stdio")
      assert.strictEqual(client.protocolVersion, McpSchema.LATEST_PROTOCOL_VERSION)
      assert.isDefined(client.serverCapabilities.tools)
      assert.isDefined(client.serverCapabilities.completions)
      yield* client.ping()
      assert.include(yield* transport.stderrTail, "sdk-stdio-server ready")
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
    }))

  it.live("tools with structured output, checked against the zod outputSchema; isError results", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      const tools = yield* client.tools.get
      assert.deepStrictEqual(tools.map((t) => t.name), ["add", "liar", "work", "ask", "form", "roots"])
      assert.isDefined(tools[0]?.outputSchema)
      assert.deepStrictEqual((yield* client.callTool("add", { a: 2, b: 3 })).structuredContent, { sum: 5 })
      assert.deepStrictEqual(yield* client.callToolTyped("add", { a: 20, b: 22 }, Schema.Struct({ sum: Schema.Finite })), {
        sum: 42
      })
      // the SDK server checks its own output first: the broken result becomes an isError result
      const liar = yield* client.callTool("liar")
      assert.isTrue(liar.isError)
      assert.include(textOf(liar), "Output validation error")
      const typed = yield* Effect.flip(client.callToolTyped("liar", {}, Schema.Struct({ sum: Schema.Finite })))
      assert.strictEqual(typed._tag, "ToolError")
      const invalid = yield* client.callTool("add", { a: "x" })
      assert.isTrue(invalid.isError)
    }))

  it.live("progress and logging notifications", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      const logs = yield* client.notificationsOf(McpSchema.LoggingMessage).pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* client.setLoggingLevel("info")
      const progress = yield* Ref.make<ReadonlyArray<string>>([])
      const result = yield* client.callTool("work", { steps: 3 }, {
        onProgress: (p) => Ref.update(progress, (all) => [...all, `${p.progress}/${p.total} ${p.message}`])
      })
      assert.strictEqual(textOf(result), "worked")
      assert.deepStrictEqual(yield* Ref.get(progress), ["1/3 step 1", "2/3 step 2", "3/3 step 3"])
      assert.deepStrictEqual(yield* Fiber.join(logs), [{ level: "info", logger: "work", data: { steps: 3 } }])
    }))

  it.live("resources, templates, prompts and completions", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      assert.deepStrictEqual((yield* client.resources.get).map((r) => r.uri), ["mem://readme"])
      assert.deepStrictEqual((yield* client.readResource("mem://readme")).contents, [
        { uri: "mem://readme", mimeType: "text/plain", text: "read me" }
      ])
      assert.deepStrictEqual((yield* client.resourceTemplates.get).map((t) => t.uriTemplate), ["mem://docs/{name}"])
      assert.deepStrictEqual((yield* client.readResource("mem://docs/intro")).contents, [
        { uri: "mem://docs/intro", text: "# intro" }
      ])
      const docs = yield* client.complete({
        ref: { type: "ref/resource", uri: "mem://docs/{name}" },
        argument: { name: "name", value: "in" }
      })
      assert.deepStrictEqual(docs.completion.values, ["intro", "install"])
      assert.deepStrictEqual((yield* client.prompts.get).map((p) => p.name), ["greet"])
      const prompt = yield* client.getPrompt("greet", { who: "Ada" })
      assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Say hello to Ada" } }])
      const names = yield* client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "A" } })
      assert.deepStrictEqual(names.completion.values, ["Ada", "Alan"])
    }))

  it.live("sampling, elicitation and roots are answered by our client's handlers", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({
        sampling: {
          handler: (params) => {
            const content = params.messages[0]?.content
            const block = Array.isArray(content) ? undefined : content as McpSchema.SamplingMessageContentBlock | undefined
            return Effect.succeed({
              role: "assistant",
              model: "effect-model",
              stopReason: "endTurn",
              content: { type: "text", text: block?.type === "text" && block.text === "What is 2+2?" ? "4" : "?" }
            })
          }
        },
        elicitation: { form: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }) },
        roots: [{ uri: "file:///project", name: "project" }]
      })
      assert.strictEqual(textOf(yield* client.callTool("ask")), "effect-model: 4")
      // the schema's default is filled in by our client
      assert.deepStrictEqual(JSON.parse(textOf(yield* client.callTool("form")) ?? "null"), {
        action: "accept",
        content: { name: "Ada", color: "green" }
      })
      assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///project")
      yield* client.setLoggingLevel("debug")
      const changed = yield* client.notificationsOf(McpSchema.LoggingMessage).pipe(
        Stream.filter((log) => log.data === "roots changed"),
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      yield* client.setRoots([{ uri: "file:///a" }, { uri: "file:///b" }])
      yield* Fiber.join(changed)
      assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///a,file:///b")
    }))
})
