/**
 * The interop suite of our client against the official SDK's test server
 * (`fixtures/sdkServer.ts`), one suite for every transport: each runner
 * gives how to connect (in process, over stdio, over Streamable HTTP in both
 * answer modes, over HTTP+SSE) and the test function to register with.
 */
import { McpSchema } from "@effect-mcp/core"
import type { McpClient, McpError } from "@effect-mcp/core"
import { assert } from "@effect/vitest"
import { Effect, Fiber, Queue, Ref, Schema, Stream } from "effect"
import { sdkInstructions, sdkServerInfo } from "../fixtures/sdkServer.ts"
import { textOf } from "./client.ts"

/** A connected client, in the test's scope. */
export type Connect<R> = (options?: Partial<McpClient.Options>) => Effect.Effect<McpClient.Client, McpError.McpError, R>

/** Registers one test (`it.effect`, `it.live`, or a layer's `it.effect`). */
export type Test<R> = (name: string, body: () => Effect.Effect<void, unknown, R>) => void

export interface Transport {
  /**
   * Whether what the server sends as part of a request (progress, a request
   * of its own) reaches the client: not with JSON answers, which have no
   * stream to carry it.
   */
  readonly related: boolean
}

/** Answers "What is 2+2?" and "What is 3+3?". */
export const sampling: McpClient.Options["sampling"] = {
  handler: (params) => {
    const content = params.messages[0]?.content
    const block = Array.isArray(content) ? undefined : content as McpSchema.SamplingMessageContentBlock | undefined
    const question = block?.type === "text" ? block.text : ""
    return Effect.succeed({
      role: "assistant",
      model: "effect-model",
      stopReason: "endTurn",
      content: { type: "text", text: question === "What is 2+2?" ? "4" : question === "What is 3+3?" ? "6" : "?" }
    })
  }
}

/** The first log notification with this `data`, forked before the action that causes it. */
const logged = (client: McpClient.Client, data: unknown) =>
  client.notificationsOf(McpSchema.LoggingMessage).pipe(
    Stream.filter((log) => log.data === data),
    Stream.runHead,
    Effect.forkChild({ startImmediately: true })
  )

export const sdkClientSuite = <R>(test: Test<R>, connect: Connect<R>, transport: Transport): void => {
  test("handshake: server info, capabilities, instructions", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      assert.deepStrictEqual(client.serverInfo, sdkServerInfo)
      assert.strictEqual(client.instructions, sdkInstructions)
      assert.strictEqual(client.protocolVersion, McpSchema.LATEST_PROTOCOL_VERSION)
      assert.isDefined(client.serverCapabilities.tools)
      assert.isDefined(client.serverCapabilities.resources)
      assert.isDefined(client.serverCapabilities.prompts)
      assert.isDefined(client.serverCapabilities.completions)
      assert.isDefined(client.serverCapabilities.logging)
      yield* client.ping()
    }))

  test("tools with structured output, checked against the zod outputSchema; isError results pass through", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      const tools = yield* client.tools.get
      assert.includeMembers(tools.map((t) => t.name), ["add", "fail", "liar", "work", "ask", "form", "roots"])
      assert.isDefined(tools.find((t) => t.name === "add")?.outputSchema)
      assert.deepStrictEqual((yield* client.callTool("add", { a: 2, b: 3 })).structuredContent, { sum: 5 })
      assert.deepStrictEqual(
        yield* client.callToolTyped("add", { a: 20, b: 22 }, Schema.Struct({ sum: Schema.Finite })),
        { sum: 42 }
      )
      assert.isTrue((yield* client.callTool("fail")).isError)
      assert.strictEqual((yield* Effect.flip(client.callToolTyped("fail", {}, Schema.Struct({}))))._tag, "ToolError")
      // the SDK server checks its own output first: the broken result becomes an isError result
      const liar = yield* client.callTool("liar")
      assert.isTrue(liar.isError)
      assert.include(textOf(liar), "Output validation error")
      const typed = yield* Effect.flip(client.callToolTyped("liar", {}, Schema.Struct({ sum: Schema.Finite })))
      assert.strictEqual(typed._tag, "ToolError")
      // invalid arguments: the SDK answers with an isError result
      assert.isTrue((yield* client.callTool("add", { a: "x" })).isError)
    }))

  test("a tool registered after connecting: tools/list_changed refreshes the cached list", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      assert.notInclude((yield* client.tools.get).map((t) => t.name), "late")
      const refreshed = yield* client.tools.changes.pipe(
        Stream.filter((tools) => tools.some((t) => t.name === "late")),
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      assert.strictEqual(textOf(yield* client.callTool("add-late")), "registered")
      yield* Fiber.join(refreshed)
      assert.deepStrictEqual((yield* client.callTool("late")).structuredContent, { ok: true })
    }))

  test("resources and resource templates, as pages, streams and cached lists", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      assert.deepStrictEqual((yield* client.listResources()).resources.map((r) => r.uri), ["mem://readme"])
      assert.deepStrictEqual((yield* Stream.runCollect(client.streamResources())).map((r) => r.uri), ["mem://readme"])
      assert.deepStrictEqual((yield* client.resources.get).map((r) => r.uri), ["mem://readme"])
      assert.deepStrictEqual((yield* client.readResource("mem://readme")).contents, [
        { uri: "mem://readme", mimeType: "text/plain", text: "read me" }
      ])
      const templates = yield* client.listResourceTemplates()
      assert.deepStrictEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ["mem://docs/{name}"])
      assert.deepStrictEqual((yield* client.resourceTemplates.get).map((t) => t.uriTemplate), ["mem://docs/{name}"])
      assert.deepStrictEqual((yield* client.readResource("mem://docs/intro")).contents, [
        { uri: "mem://docs/intro", text: "# intro" }
      ])
    }))

  test("prompts and completions", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      assert.deepStrictEqual((yield* client.prompts.get).map((p) => p.name), ["greet"])
      const prompt = yield* client.getPrompt("greet", { who: "Ada" })
      assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Say hello to Ada" } }])
      const names = yield* client.complete({
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "A" }
      })
      assert.deepStrictEqual(names.completion.values, ["Ada", "Alan"])
      const docs = yield* client.complete({
        ref: { type: "ref/resource", uri: "mem://docs/{name}" },
        argument: { name: "name", value: "in" }
      })
      assert.deepStrictEqual(docs.completion.values, ["intro", "install"])
    }))

  test("logging (after setLoggingLevel; below the level filtered) and progress", () =>
    Effect.gen(function*() {
      // the handler and the notification stream each see the log in their own time: wait for both
      const levels = yield* Queue.unbounded<string>()
      const client = yield* connect({ onLoggingMessage: (params) => Queue.offer(levels, params.level) })
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
      assert.deepStrictEqual(
        yield* Ref.get(progress),
        // with JSON answers the SDK drops notifications related to a request: there is no stream to carry them
        transport.related ? ["1/3 step 1", "2/3 step 2", "3/3 step 3"] : []
      )
      assert.deepStrictEqual(yield* Fiber.join(logs), [{ level: "info", logger: "work", data: { steps: 3 } }])
      assert.strictEqual(yield* Queue.take(levels), "info")
      assert.strictEqual(yield* Queue.size(levels), 0)
    }))

  test("sampling: the server's createMessage reaches the client's handler", () =>
    Effect.gen(function*() {
      const client = yield* connect({ sampling })
      assert.strictEqual(textOf(yield* client.callTool("ask")), "effect-model: 4")
      // as part of the call (on HTTP: on the call's own stream)
      if (transport.related) assert.strictEqual(textOf(yield* client.callTool("ask-here")), "effect-model: 6")
    }))

  test("elicitation: the accepted content gets the requested schema's defaults", () =>
    Effect.gen(function*() {
      const client = yield* connect({
        elicitation: { form: () => Effect.succeed({ action: "accept", content: { name: "Ada", newsletter: false } }) }
      })
      assert.deepStrictEqual(JSON.parse(textOf(yield* client.callTool("form"))), {
        action: "accept",
        content: { name: "Ada", newsletter: false, age: 36, color: "green" }
      })
    }))

  test("elicitation: decline", () =>
    Effect.gen(function*() {
      const client = yield* connect({ elicitation: { form: () => Effect.succeed({ action: "decline" }) } })
      assert.deepStrictEqual(JSON.parse(textOf(yield* client.callTool("form"))), { action: "decline" })
    }))

  test("roots: listRoots, and list_changed after setRoots", () =>
    Effect.gen(function*() {
      const client = yield* connect({ roots: [{ uri: "file:///work", name: "work" }] })
      assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///work")
      const changed = yield* logged(client, "roots changed")
      yield* client.setRoots([{ uri: "file:///a" }, { uri: "file:///b" }])
      yield* Fiber.join(changed)
      assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///a,file:///b")
    }))

  test("without the handlers, the SDK server refuses to sample, elicit or list roots", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      for (const name of ["ask", "form", "roots"]) {
        assert.isTrue((yield* client.callTool(name)).isError, name)
      }
    }))

  test("interrupting a call cancels it on the SDK server", () =>
    Effect.gen(function*() {
      const client = yield* connect()
      const hanging = yield* logged(client, "hanging")
      const aborted = yield* logged(client, "aborted")
      const call = yield* client.callTool("hang").pipe(Effect.forkChild({ startImmediately: true }))
      yield* Fiber.join(hanging)
      yield* Fiber.interrupt(call)
      yield* Fiber.join(aborted)
    }))
}
