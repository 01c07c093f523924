/**
 * Interop: our McpClient over our HTTP client transports against the
 * official SDK's servers (`@modelcontextprotocol/sdk` 1.32.2), run as a
 * child process on 127.0.0.1 (fixtures/http-sdk-server.mjs):
 * `StreamableHTTPServerTransport` in both answer modes, and
 * `SSEServerTransport` for the legacy transport and the fallback.
 */
import { assert, describe, layer } from "@effect/vitest"
import { McpClient } from "@effect-mcp/core"
import type { McpSchema, McpTransport } from "@effect-mcp/core"
import type { McpError } from "@effect-mcp/core"
import { Context, Effect, Fiber, Layer, Ref, Schema, Stream } from "effect"
import { spawn } from "node:child_process"
import { request } from "node:http"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"

const fixture = fileURLToPath(new URL("./fixtures/http-sdk-server.mjs", import.meta.url))
const clientInfo = { name: "effect-mcp-http-client", version: "0.1.0" }

interface Stats {
  readonly created: number
  readonly deleted: number
  readonly expired: number
  readonly open: number
  readonly sockets: number
}

class SdkServer extends Context.Service<SdkServer, {
  readonly url: (path: string) => string
  readonly stats: Effect.Effect<Stats>
  readonly expire: Effect.Effect<void>
}>()("test/SdkHttpServer") {}

/** One request on a connection of its own (closed after the answer), so that it leaves no socket behind. */
const admin = (port: number, method: string, path: string) =>
  Effect.callback<unknown>((resume) => {
    const req = request({ host: "127.0.0.1", port, method, path, agent: false }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resume(Effect.succeed(JSON.parse(body))))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end()
  })

const SdkServerLive = Layer.effect(
  SdkServer,
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, [fixture], { stdio: ["pipe", "pipe", "inherit"] })),
      (child) =>
        Effect.callback<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.stdin.end()
        })
    )
    const port = yield* Effect.callback<number>((resume) => {
      let out = ""
      child.stdout.on("data", (chunk) => {
        out += chunk
        const line = out.split("\n")[0]
        if (out.includes("\n") && line !== undefined) resume(Effect.succeed((JSON.parse(line) as { port: number }).port))
      })
      child.once("exit", (code) => resume(Effect.die(new Error(`the SDK server exited with ${code}`))))
    })
    return SdkServer.of({
      url: (path) => `http://127.0.0.1:${port}${path}`,
      stats: admin(port, "GET", "/admin/stats") as Effect.Effect<Stats>,
      expire: Effect.asVoid(admin(port, "POST", "/admin/expire"))
    })
  })
)

const connect = (
  transport: Layer.Layer<McpTransport.McpTransport, McpError.McpError>,
  options: Partial<McpClient.Options> = {}
) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ clientInfo, ...options }).pipe(Layer.provide([transport, NodeJsonSchemaValidator.layer]))
    ),
    (context) => Context.get(context, McpClient.McpClient)
  )

const textOf = (result: McpSchema.CallToolResult) => {
  const [first] = result.content
  return first?.type === "text" ? first.text : undefined
}

/** Polls the server's stats until `check` holds (at most 2 s). */
const statsUntil = (check: (stats: Stats) => boolean) =>
  Effect.gen(function*() {
    const server = yield* SdkServer
    let stats = yield* server.stats
    for (let i = 0; i < 100 && !check(stats); i++) {
      yield* Effect.sleep("20 millis")
      stats = yield* server.stats
    }
    return stats
  })

const handlers = {
  sampling: {
    handler: (params: McpSchema.CreateMessageRequestParams) => {
      const content = params.messages[0]?.content
      const block = Array.isArray(content) ? undefined : content as { type: string; text?: string } | undefined
      const answer = block?.text === "What is 2+2?" ? "4" : block?.text === "What is 3+3?" ? "6" : "?"
      return Effect.succeed({ role: "assistant" as const, model: "effect-model", content: { type: "text" as const, text: answer } })
    }
  },
  elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name: "Ada" } }) },
  roots: [{ uri: "file:///work", name: "work" }]
}

// -----------------------------------------------------------------------------

layer(SdkServerLive, { excludeTestServices: true, timeout: "60 seconds" })("interop: McpClient over McpHttpClient → the SDK's servers", (it) => {
  for (const [mode, path] of [["SSE answers", "/mcp"], ["JSON answers", "/mcp-json"]] as const) {
    describe(`StreamableHTTPServerTransport, ${mode}`, () => {
      const transport = (url: string) => NodeMcpHttpClient.layer({ url })

      it.effect("handshake; tools with structured output checked against outputSchema", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const client = yield* connect(transport(server.url(path)))
          assert.deepStrictEqual(client.serverInfo, { name: "sdk-http-server", version: "1.32.2" })
          assert.strictEqual(client.protocolVersion, "2025-11-25")
          const tools = yield* client.tools.get
          assert.includeMembers(tools.map((t) => t.name), ["add", "work", "ask", "form", "roots"])
          const result = yield* client.callTool("add", { a: 2, b: 3 })
          assert.deepStrictEqual(result.structuredContent, { sum: 5 })
          assert.deepStrictEqual(yield* client.callToolTyped("add", { a: 20, b: 22 }, Schema.Struct({ sum: Schema.Number })), { sum: 42 })
          assert.isTrue((yield* client.callTool("add", { a: "x" })).isError)
        }))

      it.effect("resources, templates and prompts", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const client = yield* connect(transport(server.url(path)))
          assert.deepStrictEqual((yield* client.listResources()).resources.map((r) => r.uri), ["mem://readme"])
          assert.deepStrictEqual((yield* client.readResource("mem://readme")).contents, [
            { uri: "mem://readme", mimeType: "text/plain", text: "read me" }
          ])
          assert.deepStrictEqual((yield* client.readResource("mem://docs/intro")).contents, [{ uri: "mem://docs/intro", text: "# intro" }])
          const prompt = yield* client.getPrompt("greet", { who: "Ada" })
          assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Say hello to Ada" } }])
        }))

      it.effect("logging arrives on the GET stream, filtered by the level set; progress on the request's stream", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const client = yield* connect(transport(server.url(path)))
          const logs = yield* client.notificationsOf("notifications/message").pipe(
            Stream.take(1),
            Stream.runCollect,
            Effect.forkChild({ startImmediately: true })
          )
          yield* client.setLoggingLevel("info")
          const progress = yield* Ref.make<ReadonlyArray<number>>([])
          const result = yield* client.callTool("work", { steps: 3 }, {
            onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress])
          })
          assert.strictEqual(textOf(result), "worked")
          assert.deepStrictEqual((yield* Fiber.join(logs)).map((l) => l.data), [{ steps: 3 }])
          // in JSON mode the SDK drops notifications related to a request: there is no stream to carry them
          assert.deepStrictEqual(yield* Ref.get(progress), mode === "SSE answers" ? [1, 2, 3] : [])
        }))

      it.effect("sampling, elicitation and roots requests from the server (on the GET stream) are answered", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const client = yield* connect(transport(server.url(path)), handlers)
          assert.strictEqual(textOf(yield* client.callTool("ask")), "effect-model: 4")
          assert.deepStrictEqual(JSON.parse(textOf(yield* client.callTool("form")) ?? "null"), {
            action: "accept",
            content: { name: "Ada", age: 36 }
          })
          assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///work")
        }))

      it.effect("re-initializes transparently when the server forgot the session (404)", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const client = yield* connect(transport(server.url(path)), handlers)
          yield* client.ping()
          const before = yield* server.stats
          yield* server.expire
          assert.deepStrictEqual((yield* client.callTool("add", { a: 1, b: 1 })).structuredContent, { sum: 2 })
          const after = yield* server.stats
          assert.strictEqual(after.created, before.created + 1)
          // the new session has its GET stream: server requests reach the client
          assert.strictEqual(textOf(yield* client.callTool("ask")), "effect-model: 4")
        }))

      it.effect("closing the client DELETEs the session and leaves no socket open", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const before = yield* statsUntil((s) => s.open === 0 && s.sockets === 0)
          yield* Effect.scoped(Effect.gen(function*() {
            const client = yield* connect(transport(server.url(path)))
            yield* client.ping()
            const during = yield* server.stats
            assert.strictEqual(during.open, 1)
            assert.isAbove(during.sockets, 0)
          }))
          const after = yield* statsUntil((s) => s.open === 0 && s.sockets === 0)
          assert.strictEqual(after.deleted, before.deleted + 1)
          assert.strictEqual(after.open, 0)
          assert.strictEqual(after.sockets, 0)
        }))
    })
  }

  describe("StreamableHTTPServerTransport, SSE answers only", () => {
    it.effect("a server request related to a tool call travels on the call's own stream", () =>
      Effect.gen(function*() {
        const server = yield* SdkServer
        const client = yield* connect(NodeMcpHttpClient.layer({ url: server.url("/mcp") }), handlers)
        assert.strictEqual(textOf(yield* client.callTool("ask-here")), "effect-model: 6")
      }))

    it.effect("a stream the server closes mid-call (closeSSEStream) is resumed with Last-Event-ID; each event arrives once", () =>
      Effect.gen(function*() {
        const server = yield* SdkServer
        const client = yield* connect(NodeMcpHttpClient.layer({ url: server.url("/mcp") }))
        const progress = yield* Ref.make<ReadonlyArray<number>>([])
        const started = Date.now()
        const result = yield* client.callTool("poll", {}, {
          onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress])
        })
        assert.strictEqual(textOf(result), "polled")
        assert.deepStrictEqual(yield* Ref.get(progress), [1, 2, 3])
        // the server's retry is 200 ms
        assert.isAtLeast(Date.now() - started, 200)
      }))
  })

  describe("SSEServerTransport (2024-11-05)", () => {
    const everything = (client: McpClient.Client) =>
      Effect.gen(function*() {
        assert.deepStrictEqual((yield* client.callTool("add", { a: 2, b: 3 })).structuredContent, { sum: 5 })
        assert.deepStrictEqual((yield* client.readResource("mem://readme")).contents[0], {
          uri: "mem://readme",
          mimeType: "text/plain",
          text: "read me"
        })
        assert.strictEqual((yield* client.getPrompt("greet", { who: "Ada" })).messages.length, 1)
        const progress = yield* Ref.make<ReadonlyArray<number>>([])
        yield* client.setLoggingLevel("info")
        const logs = yield* client.notificationsOf("notifications/message").pipe(
          Stream.take(1),
          Stream.runCollect,
          Effect.forkChild({ startImmediately: true })
        )
        yield* client.callTool("work", { steps: 2 }, { onProgress: (p) => Ref.update(progress, (all) => [...all, p.progress]) })
        assert.deepStrictEqual(yield* Ref.get(progress), [1, 2])
        assert.deepStrictEqual((yield* Fiber.join(logs)).map((l) => l.data), [{ steps: 2 }])
        assert.strictEqual(textOf(yield* client.callTool("ask")), "effect-model: 4")
        assert.strictEqual(textOf(yield* client.callTool("ask-here")), "effect-model: 6")
        assert.strictEqual(textOf(yield* client.callTool("roots")), "file:///work")
        assert.deepStrictEqual(JSON.parse(textOf(yield* client.callTool("form")) ?? "null").content, { name: "Ada", age: 36 })
      })

    it.effect("McpSseClient: tools, resources, prompts, progress, logging, sampling, elicitation, roots", () =>
      Effect.gen(function*() {
        const server = yield* SdkServer
        const client = yield* connect(NodeMcpHttpClient.layerSse({ url: server.url("/sse") }), handlers)
        yield* everything(client)
      }))

    it.effect("McpHttpClient falls back: the POST to /sse is refused (404), the GET opens the legacy stream", () =>
      Effect.gen(function*() {
        const server = yield* SdkServer
        const client = yield* connect(NodeMcpHttpClient.layer({ url: server.url("/sse") }), handlers)
        yield* everything(client)
      }))

    it.effect("closing the client closes the legacy stream and its sockets", () =>
      Effect.gen(function*() {
        const server = yield* SdkServer
        yield* statsUntil((s) => s.open === 0 && s.sockets === 0)
        yield* Effect.scoped(Effect.gen(function*() {
          const client = yield* connect(NodeMcpHttpClient.layer({ url: server.url("/sse") }))
          yield* client.ping()
          assert.strictEqual((yield* server.stats).open, 1)
        }))
        const after = yield* statsUntil((s) => s.open === 0 && s.sockets === 0)
        assert.strictEqual(after.open, 0)
        assert.strictEqual(after.sockets, 0)
      }))
  })
})
