/**
 * Interop: our McpClient over our HTTP client transports against the
 * official SDK's test server (`fixtures/sdkServer.ts`) behind the SDK's
 * transports, run as a child process on 127.0.0.1
 * (`fixtures/http-sdk-server.mjs`): `StreamableHTTPServerTransport` in both
 * answer modes, and `SSEServerTransport` for the HTTP+SSE transport and the
 * fallback. Each runs the suite of `utils/sdkClientSuite.ts`, plus what is
 * particular to HTTP.
 */
import { McpClient } from "@effect-mcp/core"
import type { McpTransport } from "@effect-mcp/core"
import type { McpError } from "@effect-mcp/core"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Ref, type Scope } from "effect"
import { spawn } from "node:child_process"
import { request } from "node:http"
import { fileURLToPath } from "node:url"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { sampling, sdkClientSuite } from "./utils/sdkClientSuite.ts"

const fixture = fileURLToPath(new URL("./fixtures/http-sdk-server.mjs", import.meta.url))
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
        if (out.includes("\n") && line !== undefined) {
          resume(Effect.succeed((JSON.parse(line) as { port: number }).port))
        }
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

// -----------------------------------------------------------------------------

/** The handlers the HTTP-specific tests need. */
const handlers: Partial<McpClient.Options> = {
  sampling,
  elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name: "Ada" } }) },
  roots: [{ uri: "file:///work", name: "work" }]
}

// -----------------------------------------------------------------------------

layer(SdkServerLive, { excludeTestServices: true, timeout: "60 seconds" })(
  "interop: McpClient over McpHttpClient → the SDK's servers",
  (it) => {
    /** The suite over a transport to one of the fixture's endpoints. */
    const suite = (
      transport: (url: string) => Layer.Layer<McpTransport.McpTransport, McpError.McpError>,
      path: string,
      related: boolean
    ) =>
      sdkClientSuite<SdkServer | Scope.Scope>(
        it.effect,
        (options) => Effect.flatMap(SdkServer, (server) => connectOver(transport(server.url(path)), options)),
        { related }
      )

    for (const [mode, path] of [["SSE answers", "/mcp"], ["JSON answers", "/mcp-json"]] as const) {
      describe(`StreamableHTTPServerTransport, ${mode}`, () => {
        const transport = (url: string) => NodeMcpHttpClient.layer({ url })
        suite(transport, path, mode === "SSE answers")

        it.effect("re-initializes transparently when the server forgot the session (404)", () =>
          Effect.gen(function*() {
            const server = yield* SdkServer
            const client = yield* connectOver(transport(server.url(path)), handlers)
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
              const client = yield* connectOver(transport(server.url(path)))
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
          const client = yield* connectOver(NodeMcpHttpClient.layer({ url: server.url("/mcp") }), handlers)
          assert.strictEqual(textOf(yield* client.callTool("ask-here")), "effect-model: 6")
        }))

      it.effect("a stream the server closes mid-call (closeSSEStream) is resumed with Last-Event-ID; each event arrives once", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          const client = yield* connectOver(NodeMcpHttpClient.layer({ url: server.url("/mcp") }))
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

    describe("SSEServerTransport (2024-11-05), through McpSseClient", () => {
      suite((url) => NodeMcpHttpClient.layerSse({ url }), "/sse", true)
    })

    describe("SSEServerTransport (2024-11-05), through McpHttpClient's fallback (the POST to /sse is refused: 404)", () => {
      suite((url) => NodeMcpHttpClient.layer({ url }), "/sse", true)
    })

    describe("SSEServerTransport (2024-11-05)", () => {
      it.effect("closing the client closes the legacy stream and its sockets", () =>
        Effect.gen(function*() {
          const server = yield* SdkServer
          yield* statsUntil((s) => s.open === 0 && s.sockets === 0)
          yield* Effect.scoped(Effect.gen(function*() {
            const client = yield* connectOver(NodeMcpHttpClient.layer({ url: server.url("/sse") }))
            yield* client.ping()
            assert.strictEqual((yield* server.stats).open, 1)
          }))
          const after = yield* statsUntil((s) => s.open === 0 && s.sockets === 0)
          assert.strictEqual(after.open, 0)
          assert.strictEqual(after.sockets, 0)
        }))
    })
  }
)
