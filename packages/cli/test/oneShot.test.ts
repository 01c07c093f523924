/**
 * A command that runs once asks only what it needs: against a 2026-07-28
 * Streamable HTTP server in this process that records every request,
 * `call`, `list`, `read` and `prompt` open no `subscriptions/listen` stream
 * and fetch each list at most once (the group lists what the server offers
 * when it connects: its views route the command); a call that runs as a
 * task opens one stream, for that task only.
 */
import { McpPrompt, McpResource, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { assertExit, runCli } from "./utils/cli.ts"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})
const hello = McpPrompt.make({ name: "hello", get: () => Effect.succeed("hello there") })
const render = McpTool.make("render", {
  input: Schema.Struct({}),
  task: "required",
  handler: () => Effect.succeed("rendered")
})
const readme = McpResource.make({ uri: "docs://readme", name: "readme", read: () => Effect.succeed("read me") })

/** Our server over Streamable HTTP on 127.0.0.1, recording the method of every request (and the listens' filters). */
const recordingServer = Effect.gen(function*() {
  const methods: Array<string> = []
  const filters: Array<unknown> = []
  const server = yield* McpServer.make({
    name: "recorded",
    version: "1.0.0",
    tasks: { pollInterval: "50 millis" },
    middleware: [(context, method, params, next) =>
      Effect.suspend(() => {
        if (context.kind === "request") methods.push(method)
        if (method === "subscriptions/listen") {
          filters.push((params as { readonly notifications: unknown }).notifications)
        }
        return next
      })]
  })
  for (const definition of [echo, render, hello, readme]) yield* server.register(definition)
  const context = yield* Layer.build(
    NodeMcpHttpServer.layer().pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
  )
  const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  // what the server was asked since the last call
  const take = () => methods.splice(0, methods.length)
  return { url, take, filters }
})

// what the group asks of a server when it connects: the handshake and every list the server offers
const CONNECT = ["server/discover", "prompts/list", "resources/list", "resources/templates/list", "tools/list"]

const sorted = (methods: ReadonlyArray<string>) => [...methods].sort()

describe("effect-mcp: a one-shot command against a 2026-07-28 server", () => {
  it.live(
    "call, list, read, prompt: no subscriptions/listen, every list fetched once",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { take, url } = yield* recordingServer
        const runs = [
          { args: ["call", "echo", "--args", JSON.stringify({ text: "hi" })], out: "hi", then: "tools/call" },
          { args: ["list", "tools"], out: "echo", then: undefined },
          { args: ["read", "docs://readme"], out: "read me", then: "resources/read" },
          { args: ["prompt", "hello"], out: "hello there", then: "prompts/get" }
        ]
        for (const run of runs) {
          const ran = yield* runCli(["--url", url, ...run.args])
          assertExit(ran, 0)
          assert.include(ran.stdout, run.out)
          const seen = take()
          assert.deepStrictEqual(
            sorted(seen),
            sorted(run.then === undefined ? CONNECT : [...CONNECT, run.then]),
            `${run.args.join(" ")}: ${seen.join(", ")}`
          )
          assert.notInclude(seen, "subscriptions/listen")
        }
      })),
    120_000
  )

  it.live(
    "a call that runs as a task: one subscriptions/listen, for that task only",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { filters, take, url } = yield* recordingServer
        const ran = yield* runCli(["--url", url, "call", "render"])
        assertExit(ran, 0)
        assert.strictEqual(ran.stdout, "rendered\n")
        const seen = take()
        assert.strictEqual(seen.filter((method) => method === "subscriptions/listen").length, 1, seen.join(", "))
        assert.strictEqual(seen.filter((method) => method === "tools/list").length, 1, seen.join(", "))
        assert.deepStrictEqual(Object.keys(filters[0] as object), ["taskIds"])
      })),
    60_000
  )
})
