/**
 * Interop: our McpClient against the official SDK's McpServer
 * (`@modelcontextprotocol/sdk` 1.32.2, zod schemas), in process.
 */
import { assert, describe, it } from "@effect/vitest"
import { completable } from "@modelcontextprotocol/sdk/server/completable.js"
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js"
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Deferred, Effect, Fiber, Layer, Ref, Schema, Stream } from "effect"
import { z } from "zod"
import * as McpClient from "../src/McpClient.ts"
import * as McpSchema from "../src/McpSchema.ts"
import { makeSdkBridge } from "./utils/sdkBridge.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const clientInfo = { name: "effect-mcp-client", version: "0.1.0" }

interface Probe {
  readonly rootsChanged: Promise<void>
}

/** The official SDK's McpServer with one of each feature. */
const makeSdkServer = (): { readonly server: McpServer; readonly probe: Probe } => {
  const server = new McpServer(
    { name: "sdk-server", version: "1.32.2" },
    { capabilities: { logging: {} }, instructions: "official server" }
  )

  server.registerTool("add", {
    description: "Adds two numbers",
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() }
  }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
    structuredContent: { sum: a + b }
  }))

  server.registerTool("fail", { description: "Always fails" }, async () => ({
    content: [{ type: "text", text: "it broke" }],
    isError: true
  }))

  server.registerTool("work", {
    description: "Reports progress and logs",
    inputSchema: { steps: z.number() }
  }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken
    for (let step = 1; step <= steps; step++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: step, total: steps, message: `step ${step}` }
        })
      }
    }
    await server.sendLoggingMessage({ level: "info", logger: "work", data: { steps } })
    await server.sendLoggingMessage({ level: "debug", logger: "work", data: "details" })
    return { content: [{ type: "text", text: "worked" }] }
  })

  server.registerTool("ask", { description: "Samples the client's model" }, async () => {
    const result = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "What is 2+2?" } }],
      maxTokens: 10
    })
    const content = Array.isArray(result.content) ? result.content[0] : result.content
    return { content: [{ type: "text", text: `${result.model}: ${content?.type === "text" ? content.text : "?"}` }] }
  })

  server.registerTool("form", { description: "Elicits a form" }, async () => {
    const result = await server.server.elicitInput({
      message: "Who are you?",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", title: "Name" },
          age: { type: "integer", default: 36 },
          color: { type: "string", enum: ["red", "green"], default: "green" },
          newsletter: { type: "boolean", default: true }
        },
        required: ["name", "age"]
      }
    })
    return { content: [{ type: "text", text: JSON.stringify(result) }] }
  })

  server.registerTool("roots", { description: "Lists the client's roots" }, async () => {
    const result = await server.server.listRoots()
    return { content: [{ type: "text", text: result.roots.map((root) => root.uri).join(",") }] }
  })

  server.registerResource("readme", "mem://readme", { mimeType: "text/plain", description: "The readme" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "read me" }]
  }))

  server.registerResource(
    "docs",
    new ResourceTemplate("mem://docs/{name}", {
      list: undefined,
      complete: { name: (value) => ["intro", "install", "usage"].filter((name) => name.startsWith(value)) }
    }),
    { mimeType: "text/markdown" },
    async (uri, variables) => ({ contents: [{ uri: uri.href, text: `# ${String(variables.name)}` }] })
  )

  server.registerPrompt("greet", {
    description: "Greets someone",
    argsSchema: { who: completable(z.string(), (value) => ["Ada", "Alan", "Grace"].filter((n) => n.startsWith(value))) }
  }, ({ who }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Say hello to ${who}` } }]
  }))

  let resolveRoots: () => void = () => {}
  const rootsChanged = new Promise<void>((resolve) => {
    resolveRoots = resolve
  })
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => resolveRoots())

  return { server, probe: { rootsChanged } }
}

const connect = (options: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const bridge = yield* makeSdkBridge()
    const { probe, server } = makeSdkServer()
    yield* Effect.promise(() => server.connect(bridge.theirs))
    yield* Effect.addFinalizer(() => Effect.promise(() => server.close()))
    const context = yield* Layer.build(
      McpClient.layer({ clientInfo, ...options }).pipe(Layer.provide([bridge.layer, ValidatorLayer]))
    )
    return { client: Context.get(context, McpClient.McpClient), server, probe }
  })

const textOf = (result: McpSchema.CallToolResult) => {
  const [first] = result.content
  return first?.type === "text" ? first.text : undefined
}

describe("interop: McpClient against the official SDK's McpServer", () => {
  it.effect("handshake: server info, capabilities, instructions", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connect({ roots: [] })
      assert.deepStrictEqual(client.serverInfo, { name: "sdk-server", version: "1.32.2" })
      assert.strictEqual(client.instructions, "official server")
      assert.strictEqual(client.protocolVersion, McpSchema.LATEST_PROTOCOL_VERSION)
      assert.isDefined(client.serverCapabilities.tools)
      assert.isDefined(client.serverCapabilities.resources)
      assert.isDefined(client.serverCapabilities.prompts)
      assert.isDefined(client.serverCapabilities.completions)
      assert.isDefined(client.serverCapabilities.logging)
      assert.deepStrictEqual(server.server.getClientVersion(), clientInfo)
      assert.deepStrictEqual(server.server.getClientCapabilities(), { roots: { listChanged: true } })
      yield* client.ping()
    }))

  it.effect("tools with structured output: outputSchema from zod, validated; isError results pass through", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      const tools = yield* client.tools.get
      const add = tools.find((t) => t.name === "add")
      assert.isDefined(add?.outputSchema)
      const result = yield* client.callTool("add", { a: 2, b: 3 })
      assert.deepStrictEqual(result.structuredContent, { sum: 5 })
      assert.deepStrictEqual(yield* client.callToolTyped("add", { a: 20, b: 22 }, Schema.Struct({ sum: Schema.Number })), {
        sum: 42
      })
      const failed = yield* client.callTool("fail")
      assert.isTrue(failed.isError)
      const typed = yield* Effect.flip(client.callToolTyped("fail", {}, Schema.Struct({})))
      assert.strictEqual(typed._tag, "ToolError")
      // invalid arguments: the SDK answers with an isError result
      const invalid = yield* client.callTool("add", { a: "x" })
      assert.isTrue(invalid.isError)
    }))

  it.effect("a tool registered after connecting: tools/list_changed refreshes the cached list", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connect()
      assert.notInclude((yield* client.tools.get).map((t) => t.name), "late")
      const refreshed = yield* client.tools.changes.pipe(
        Stream.filter((tools) => tools.some((t) => t.name === "late")),
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      server.registerTool("late", { description: "Registered late", outputSchema: { ok: z.boolean() } }, async () => ({
        content: [{ type: "text", text: "ok" }],
        structuredContent: { ok: true }
      }))
      yield* Fiber.join(refreshed)
      assert.deepStrictEqual((yield* client.callTool("late")).structuredContent, { ok: true })
    }))

  it.effect("resources and resource templates", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      const resources = yield* Stream.runCollect(client.streamResources())
      assert.deepStrictEqual(resources.map((r) => r.uri), ["mem://readme"])
      assert.deepStrictEqual((yield* client.readResource("mem://readme")).contents, [
        { uri: "mem://readme", mimeType: "text/plain", text: "read me" }
      ])
      const templates = yield* client.listResourceTemplates()
      assert.deepStrictEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ["mem://docs/{name}"])
      assert.deepStrictEqual((yield* client.readResource("mem://docs/intro")).contents, [
        { uri: "mem://docs/intro", text: "# intro" }
      ])
    }))

  it.effect("prompts and completions", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      assert.deepStrictEqual((yield* client.prompts.get).map((p) => p.name), ["greet"])
      const prompt = yield* client.getPrompt("greet", { who: "Ada" })
      assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Say hello to Ada" } }])
      const names = yield* client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "A" } })
      assert.deepStrictEqual(names.completion.values, ["Ada", "Alan"])
      const docs = yield* client.complete({
        ref: { type: "ref/resource", uri: "mem://docs/{name}" },
        argument: { name: "name", value: "in" }
      })
      assert.deepStrictEqual(docs.completion.values, ["intro", "install"])
    }))

  it.effect("logging (after setLoggingLevel) and progress", () =>
    Effect.gen(function*() {
      const logged = yield* Ref.make<ReadonlyArray<McpSchema.LoggingMessageNotificationParams>>([])
      const { client } = yield* connect({
        onLoggingMessage: (params) => Ref.update(logged, (all) => [...all, params])
      })
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
      // the debug message is below the level set
      assert.deepStrictEqual((yield* Ref.get(logged)).map((l) => l.level), ["info"])
    }))

  it.effect("sampling: server.server.createMessage reaches the client's handler", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({
        sampling: {
          handler: (params) => {
            const content = params.messages[0]?.content
            const block = Array.isArray(content) ? undefined : content as McpSchema.SamplingMessageContentBlock | undefined
            const question = block?.type === "text" ? block.text : ""
            return Effect.succeed({
              role: "assistant",
              model: "effect-model",
              stopReason: "endTurn",
              content: { type: "text", text: question === "What is 2+2?" ? "4" : "?" }
            })
          }
        }
      })
      assert.strictEqual(textOf(yield* client.callTool("ask")), "effect-model: 4")
    }))

  it.effect("elicitation: server.server.elicitInput gets the accepted content with defaults applied", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({
        elicitation: { form: () => Effect.succeed({ action: "accept", content: { name: "Ada", newsletter: false } }) }
      })
      const result = JSON.parse(textOf(yield* client.callTool("form")) ?? "null")
      assert.deepStrictEqual(result, {
        action: "accept",
        content: { name: "Ada", newsletter: false, age: 36, color: "green" }
      })
    }))

  it.effect("elicitation: decline", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({ elicitation: { form: () => Effect.succeed({ action: "decline" }) } })
      assert.deepStrictEqual(JSON.parse(textOf(yield* client.callTool("form")) ?? "null"), { action: "decline" })
    }))

  it.effect("roots: server.server.listRoots, and list_changed after setRoots", () =>
    Effect.gen(function*() {
      const { client, probe } = yield* connect({ roots: [{ uri: "file:///work", name: "work" }] })
      assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///work")
      yield* client.setRoots([{ uri: "file:///a" }, { uri: "file:///b" }])
      yield* Effect.promise(() => probe.rootsChanged)
      assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///a,file:///b")
    }))

  it.effect("without the handlers, the SDK server refuses to sample, elicit or list roots", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      for (const name of ["ask", "form", "roots"]) {
        const result = yield* client.callTool(name)
        assert.isTrue(result.isError, name)
      }
    }))

  it.effect("interrupting a call cancels it on the SDK server", () =>
    Effect.gen(function*() {
      const aborted = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const { client, server } = yield* connect()
      server.registerTool("hang", { description: "Never answers" }, (extra) =>
        new Promise((_resolve, reject) => {
          Deferred.doneUnsafe(started, Effect.void)
          extra.signal.addEventListener("abort", () => {
            Deferred.doneUnsafe(aborted, Effect.void)
            reject(new Error("aborted"))
          })
        }))
      const call = yield* client.callTool("hang").pipe(Effect.forkChild({ startImmediately: true }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(call)
      yield* Deferred.await(aborted)
    }))
})
