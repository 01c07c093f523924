/**
 * The official TypeScript SDK's client (`StreamableHTTPClientTransport`)
 * against our Streamable HTTP server on a real socket, in both answer modes;
 * and the official conformance suite's transport scenarios against it.
 */
import { McpHttpServer, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer, Schema } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { textOf } from "./utils/client.ts"
import { waitFor } from "./utils/wait.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))

// -----------------------------------------------------------------------------
// the server
// -----------------------------------------------------------------------------

const Forecast = Schema.Struct({ city: Schema.String, celsius: Schema.Finite })

const weather = McpTool.make("weather", {
  description: "Today's forecast",
  input: Schema.Struct({ city: Schema.String }),
  output: Forecast,
  handler: ({ city }) => Effect.succeed({ city, celsius: 21.5 })
})

const countdown = McpTool.make("countdown", {
  input: Schema.Struct({ from: Schema.Int }),
  handler: ({ from }, context) =>
    Effect.gen(function*() {
      for (let n = from; n > 0; n--) {
        yield* context.reportProgress({ progress: from - n + 1, total: from })
        yield* context.log("info", `countdown at ${n}`)
        yield* Effect.sleep("5 millis")
      }
      return "liftoff"
    })
})

const ask = McpTool.make("ask", {
  input: Schema.Struct({ question: Schema.String }),
  handler: ({ question }, context) =>
    Effect.gen(function*() {
      const answer = yield* context.createMessage({
        messages: [{ role: "user", content: { type: "text", text: question } }],
        maxTokens: 10
      })
      const settings = yield* context.elicit({
        message: "Units?",
        schema: Schema.Struct({ units: Schema.Literals(["metric", "imperial"]) })
      })
      const units = settings.action === "accept" ? settings.content.units : "none"
      return `${(answer.content as { readonly text: string }).text} in ${units}`
    })
})

const test_reconnection = McpTool.make("test_reconnection", {
  description: "Ends its own SSE connection mid-call (SEP-1699)",
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function*() {
      yield* McpHttpServer.closeSseStream
      yield* Effect.sleep("100 millis")
      return "Reconnection test completed"
    })
})

const extra = McpTool.make("extra", { input: Schema.Struct({}), handler: () => Effect.succeed("added later") })

const serve = (options: NodeMcpHttpServer.Options) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({
      name: "http-interop",
      version: "1.0.0",
      capabilities: { tools: { listChanged: true } }
    })
    for (const tool of [weather, countdown, ask, test_reconnection]) yield* server.register(tool)
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    return { server, url }
  })

/** The official SDK's client, connected to our server. */
const connectSdkClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client(
        { name: "official-sdk", version: "1.0.0" },
        { capabilities: { sampling: {}, elicitation: { form: {} } } }
      )
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        model: "fake",
        role: "assistant",
        content: { type: "text", text: "sunny" }
      }))
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { units: "metric" } }))
      const logs: Array<unknown> = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params.data)
      })
      const listChanged: Array<string> = []
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        listChanged.push("tools")
      })
      const transport = new StreamableHTTPClientTransport(new URL(url))
      await client.connect(transport)
      return { client, transport, logs, listChanged }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

// -----------------------------------------------------------------------------
// tests
// -----------------------------------------------------------------------------

for (const responseMode of ["json", "sse"] as const) {
  describe(`interop: official SDK client → our HTTP server (${responseMode} answers)`, () => {
    it.live("initializes with a session id; tools with structured output (checked by the SDK)", () =>
      Effect.gen(function*() {
        const { server, url } = yield* serve({ responseMode })
        const { client, transport } = yield* connectSdkClient(url)
        assert.isString(transport.sessionId)
        assert.strictEqual(client.getServerVersion()?.name, "http-interop")
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(tools.map((t) => t.name), ["ask", "countdown", "test_reconnection", "weather"])
        const result = yield* Effect.promise(() => client.callTool({ name: "weather", arguments: { city: "Oslo" } }))
        assert.deepStrictEqual(result.structuredContent, { city: "Oslo", celsius: 21.5 })
        assert.strictEqual(yield* server.sessionCount, 1)
      }).pipe(Effect.scoped))

    it.live("progress and logging arrive on the POST's SSE stream", () =>
      Effect.gen(function*() {
        const { url } = yield* serve({ responseMode })
        const { client, logs } = yield* connectSdkClient(url)
        yield* Effect.promise(() => client.setLoggingLevel("info"))
        const progress: Array<number> = []
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "countdown", arguments: { from: 3 } }, undefined, {
            onprogress: (p) => progress.push(p.progress)
          })
        )
        assert.strictEqual(textOf(result), "liftoff")
        assert.deepStrictEqual(progress, [1, 2, 3])
        assert.deepStrictEqual(logs, ["countdown at 3", "countdown at 2", "countdown at 1"])
      }).pipe(Effect.scoped))

    it.live("sampling and elicitation requests go out on the POST stream; the SDK client answers them", () =>
      Effect.gen(function*() {
        const { url } = yield* serve({ responseMode })
        const { client } = yield* connectSdkClient(url)
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "ask", arguments: { question: "weather?" } })
        )
        assert.strictEqual(textOf(result), "sunny in metric")
      }).pipe(Effect.scoped))

    it.live("list_changed reaches the client on the GET stream; DELETE ends the session", () =>
      Effect.gen(function*() {
        const { server, url } = yield* serve({ responseMode })
        const { client, listChanged, transport } = yield* connectSdkClient(url)
        // the SDK opens its GET stream after `initialized`; wait until the server sees it
        yield* Effect.sleep("100 millis")
        yield* server.register(extra)
        yield* waitFor(() => listChanged.length === 1)
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.include(tools.map((t) => t.name), "extra")
        yield* Effect.promise(() => transport.terminateSession())
        assert.strictEqual(yield* server.sessionCount, 0)
      }).pipe(Effect.scoped))
  })
}

describe("interop: SEP-1699 polling with the SDK client", () => {
  it.live("the SDK client reconnects with Last-Event-ID after the server ends the POST connection", () =>
    Effect.gen(function*() {
      const { url } = yield* serve({ responseMode: "sse", retry: "50 millis" })
      const { client } = yield* connectSdkClient(url)
      const result = yield* Effect.promise(() => client.callTool({ name: "test_reconnection", arguments: {} }))
      assert.strictEqual(textOf(result), "Reconnection test completed")
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// the conformance suite's transport scenarios
// -----------------------------------------------------------------------------

const conformance = (url: string, scenario: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-mcp-conformance-"))),
    (out) =>
      Effect.promise(() =>
        new Promise<{ readonly code: number; readonly output: string }>((resolve) =>
          execFile(
            process.execPath,
            [
              "node_modules/@modelcontextprotocol/conformance/dist/index.js",
              "server",
              "--url",
              url,
              "--scenario",
              scenario,
              "-o",
              out
            ],
            { cwd: root, timeout: 60_000 },
            (error, stdout, stderr) =>
              resolve({
                code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
                output: stdout + stderr
              })
          )
        )
      ).pipe(Effect.map(({ code, output }) => {
        const checks = readdirSync(out).flatMap((dir) =>
          JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")) as Array<
            { readonly id: string; readonly status: string }
          >
        )
        return { code, output, checks }
      })),
    (out) => Effect.sync(() => rmSync(out, { recursive: true, force: true }))
  )

describe("conformance suite, transport scenarios", () => {
  for (const scenario of ["dns-rebinding-protection", "server-sse-multiple-streams", "server-sse-polling"]) {
    it.live(scenario, () =>
      Effect.gen(function*() {
        const { url } = yield* serve({ responseMode: "sse", retry: "100 millis" })
        const { checks, code, output } = yield* conformance(url, scenario)
        assert.strictEqual(code, 0, output)
        const verdicts = checks.filter((check) => check.status !== "INFO")
        assert.isAbove(verdicts.length, 1, output)
        assert.deepStrictEqual(verdicts.filter((check) => check.status !== "SUCCESS"), [], output)
      }).pipe(Effect.scoped), 60_000)
  }
})
