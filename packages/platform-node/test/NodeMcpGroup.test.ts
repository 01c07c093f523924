/**
 * McpGroup on Node with real child processes and real servers on 127.0.0.1:
 * concurrent connection, collisions and the name hook, atomic aggregation,
 * routing, disconnect, list_changed, kill -9 and reconnection under
 * TestClock, the process tree gone after the group's scope closes (every
 * server at once), server-everything over stdio beside our own
 * HTTP server, every transport of the connector, and `mcp.json` files.
 */
import { McpError, McpGroup, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Schedule, Schema, Scope, Stream } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import * as SocketServer from "effect/socket/SocketServer"
import { TestClock } from "effect/testing"
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpGroup from "../src/NodeMcpGroup.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import * as NodeMcpSseServer from "../src/NodeMcpSseServer.ts"
import * as NodeMcpWebSocket from "../src/NodeMcpWebSocket.ts"
import { textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/group-server.mjs", import.meta.url))
const everything = realpathSync(`${root}node_modules/.bin/mcp-server-everything`)

/** A fixture server named `name`. */
const server = (name: string, env: Record<string, string> = {}): McpGroup.StdioParams =>
  McpGroup.stdio(process.execPath, [fixture], { env: { GROUP_NAME: name, ...env } })

const makeGroup = (options: McpGroup.Options) =>
  McpGroup.make(options).pipe(Effect.provide([NodeMcpGroup.layerConnector(), NodeJsonSchemaValidator.layer]))

/** A fresh directory for log files, removed with the test's scope. */
const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-group-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const readLog = (file: string): ReadonlyArray<string> => readFileSync(file, "utf8").trim().split("\n")

const startedPid = (file: string, name: string): number => {
  const line = readLog(file).find((entry) => entry.startsWith(`start ${name} `))
  return Number(line?.split(" ")[2])
}

const pidsOf = (group: McpGroup.Group, tool: string) =>
  Effect.map(
    group.callTool(tool),
    (result) => JSON.parse(textOf(result)) as { readonly pid: number; readonly grandchildren: ReadonlyArray<number> }
  )

const until = (group: McpGroup.Group, ready: (servers: ReadonlyArray<McpGroup.ServerStatus>) => boolean) =>
  group.serverChanges.pipe(Stream.filter(ready), Stream.runHead, Effect.asVoid)

const statusOf = (servers: ReadonlyArray<McpGroup.ServerStatus>, name: string) =>
  servers.find((entry) => entry.name === name)?.status

// our own server, for the HTTP, SSE, WebSocket and in-memory transports
const add = McpTool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})
const ourServer = (name: string) =>
  McpServer.register(add).pipe(Layer.provideMerge(McpServer.layer({ name, version: "1.0.0" })))

const httpUrl = (context: Context.Context<HttpServer.HttpServer>, path: string) =>
  HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address) + path

// -----------------------------------------------------------------------------

describe("NodeMcpGroup: stdio servers", () => {
  it.live("connects 5 servers concurrently: every initialize arrives before any is answered", () =>
    Effect.gen(function*() {
      const log = join(yield* tempDir, "log")
      const names = ["s1", "s2", "s3", "s4", "s5"]
      const started = performance.now()
      const group = yield* makeGroup({
        servers: Object.fromEntries(
          names.map((name) => [name, server(name, { GROUP_DELAY_MS: "400", GROUP_LOG: log })])
        ),
        nameHook: McpGroup.prefixed()
      })
      const elapsed = performance.now() - started
      const lines = readLog(log)
      const initialized = lines.flatMap((line, index) => line.startsWith("initialize ") ? [index] : [])
      const answered = lines.flatMap((line, index) => line.startsWith("answer ") ? [index] : [])
      assert.strictEqual(initialized.length, 5)
      assert.isBelow(Math.max(...initialized), Math.min(...answered), lines.join("\n"))
      assert.isBelow(elapsed, 5 * 400, "far less than one after the other")
      assert.deepStrictEqual(
        (yield* group.servers).map((entry) => [entry.name, entry.status]),
        names.map((name) => [name, "up"])
      )
      // the views in the order given, whatever order they connected in
      assert.deepStrictEqual(
        (yield* group.tools).filter((entry) => entry.tool.name === "echo").map((entry) => entry.name),
        names.map((name) => `${name}__echo`)
      )
      for (const name of names) {
        assert.strictEqual(textOf(yield* group.callTool(`${name}__echo`, { text: "hi" })), `${name}:echo:hi`)
      }
    }))

  it.live("collisions fail with an error naming both servers, and the hook namespaces them", () =>
    Effect.gen(function*() {
      const log = join(yield* tempDir, "log")
      const error = yield* makeGroup({
        servers: { a: server("a", { GROUP_LOG: log }), b: server("b", { GROUP_LOG: log }) }
      }).pipe(Effect.scoped, Effect.flip)
      assert.deepStrictEqual(
        error.reason,
        new McpError.NameCollisionError({ kind: "tool", name: "echo", servers: ["a", "b"] })
      )
      assert.isFalse(isRunning(startedPid(log, "a")))
      assert.isFalse(isRunning(startedPid(log, "b")))

      const group = yield* makeGroup({
        servers: { a: server("a"), b: server("b") },
        nameHook: McpGroup.prefixed({ separator: "." })
      })
      assert.strictEqual(textOf(yield* group.callTool("b.echo", { text: "hi" })), "b:echo:hi")
      assert.strictEqual(textOf(yield* group.callTool("a.echo", { text: "hi" })), "a:echo:hi")
      assert.deepStrictEqual(
        (yield* group.tools).map((entry) => entry.name),
        ["a.echo", "a.pids", "a.add-tool", "a.remove-tool", "b.echo", "b.pids", "b.add-tool", "b.remove-tool"]
      )
    }))

  it.live("atomic: a colliding server, or one whose listing fails, leaves the group as it was and its process ends", () =>
    Effect.gen(function*() {
      const log = join(yield* tempDir, "log")
      const group = yield* makeGroup({ servers: { a: server("a", { GROUP_TOOLS: "echo,shout" }) } })
      const before = yield* group.views
      const collides = yield* Effect.flip(
        group.connect("c", server("c", { GROUP_TOOLS: "whisper,shout", GROUP_LOG: log }))
      )
      assert.deepStrictEqual(
        collides.reason,
        new McpError.NameCollisionError({ kind: "tool", name: "shout", servers: ["a", "c"] })
      )
      const fails = yield* Effect.flip(
        group.connect("d", server("d", { GROUP_TOOLS: "quiet", GROUP_FAIL_LIST: "1", GROUP_LOG: log }))
      )
      assert.strictEqual(fails.reason._tag, "ProtocolError")
      assert.include(fails.message, "d cannot list its tools")
      assert.strictEqual(yield* group.views, before)
      assert.deepStrictEqual((yield* group.servers).map((entry) => entry.name), ["a"])
      assert.isFalse(isRunning(startedPid(log, "c")))
      assert.isFalse(isRunning(startedPid(log, "d")))
      assert.include(readLog(log), "exit c")
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "x" })), "a:shout:x")
    }))

  it.live("disconnect of one server kills its process; the others keep working", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: { a: server("a"), b: server("b"), c: server("c") },
        nameHook: McpGroup.prefixed()
      })
      const pids = {
        a: (yield* pidsOf(group, "a__pids")).pid,
        b: (yield* pidsOf(group, "b__pids")).pid,
        c: (yield* pidsOf(group, "c__pids")).pid
      }
      yield* group.disconnect("b")
      assert.isFalse(isRunning(pids.b))
      assert.isTrue(isRunning(pids.a))
      assert.isTrue(isRunning(pids.c))
      assert.deepStrictEqual((yield* group.servers).map((entry) => entry.name), ["a", "c"])
      assert.isFalse((yield* group.tools).some((entry) => entry.server === "b"))
      assert.strictEqual((yield* Effect.flip(group.callTool("b__echo"))).reason._tag, "NotFoundError")
      assert.strictEqual(textOf(yield* group.callTool("a__echo", { text: "x" })), "a:echo:x")
      assert.strictEqual(textOf(yield* group.callTool("c__echo", { text: "x" })), "c:echo:x")
    }))

  it.live("list_changed refreshes that server's part of the views", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({ servers: { a: server("a"), b: server("b") }, nameHook: McpGroup.prefixed() })
      const seen = yield* group.changes.pipe(
        Stream.filter((views) => views.tools.some((entry) => entry.name === "b__fresh")),
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      yield* group.callTool("b__add-tool", { name: "fresh" })
      yield* Fiber.join(seen)
      assert.strictEqual(textOf(yield* group.callTool("b__fresh", { text: "new" })), "b:fresh:new")
      yield* group.callTool("b__remove-tool", { name: "fresh" })
      yield* group.changes.pipe(
        Stream.filter((views) => !views.tools.some((entry) => entry.name === "b__fresh")),
        Stream.runHead
      )
      assert.deepStrictEqual(
        (yield* group.tools).map((entry) => entry.name).filter((name) => name.endsWith("echo")),
        ["a__echo", "b__echo"]
      )
    }))

  it.effect("kill -9 of one server: its components are withdrawn, calls fail naming it, and it comes back on the schedule (TestClock)", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: { a: server("a"), b: server("b") },
        nameHook: McpGroup.prefixed(),
        reconnect: Schedule.spaced("5 seconds")
      })
      const killed = (yield* pidsOf(group, "b__pids")).pid
      process.kill(killed, "SIGKILL")
      yield* until(group, (servers) => statusOf(servers, "b") === "down")
      const down = (yield* group.servers)[1]!
      assert.strictEqual(down.error?.reason._tag, "TransportError")
      assert.include(down.error?.message ?? "", "SIGKILL")
      assert.isTrue(down.reconnecting)
      assert.isFalse((yield* group.tools).some((entry) => entry.server === "b"))
      const error = yield* Effect.flip(group.callTool("b__echo", { text: "x" }))
      assert.strictEqual(error.reason._tag, "ServerUnavailableError")
      assert.strictEqual((error.reason as McpError.ServerUnavailableError).server, "b")
      assert.include(error.message, `server "b" is unavailable: it is down`)
      assert.strictEqual(textOf(yield* group.callTool("a__echo", { text: "x" })), "a:echo:x")

      yield* TestClock.adjust("5 seconds")
      yield* until(group, (servers) => statusOf(servers, "b") === "up")
      assert.strictEqual(textOf(yield* group.callTool("b__echo", { text: "back" })), "b:echo:back")
      const revived = (yield* pidsOf(group, "b__pids")).pid
      assert.notStrictEqual(revived, killed)
      assert.isFalse(isRunning(killed))
    }))

  it.live("closing the group's scope leaves no process (grandchildren included), every server closed", () =>
    Effect.gen(function*() {
      const log = join(yield* tempDir, "log")
      const scope = yield* Scope.make()
      const env = { GROUP_GRANDCHILDREN: "1", GROUP_LOG: log }
      const group = yield* makeGroup({
        servers: { a: server("a", env), b: server("b", env) },
        nameHook: McpGroup.prefixed()
      }).pipe(Scope.provide(scope))
      yield* group.connect("c", server("c", env))
      const all: Array<number> = []
      for (const name of ["a", "b", "c"]) {
        const { pid, grandchildren } = yield* pidsOf(group, `${name}__pids`)
        assert.strictEqual(grandchildren.length, 2)
        all.push(pid, ...grandchildren)
      }
      assert.deepStrictEqual(all.map(isRunning), all.map(() => true))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(all.map(isRunning), all.map(() => false))
      assert.deepStrictEqual(readLog(log).filter((line) => line.startsWith("exit ")).sort(), [
        "exit a",
        "exit b",
        "exit c"
      ])
    }))
})

describe("NodeMcpGroup: mixed transports", () => {
  it.live("server-everything over stdio and our own server over Streamable HTTP in one group", () =>
    Effect.gen(function*() {
      const http = yield* Layer.build(NodeMcpHttpServer.layer().pipe(Layer.provide(ourServer("ours-http"))))
      const scope = yield* Scope.make()
      const group = yield* makeGroup({
        servers: {
          everything: McpGroup.stdio(process.execPath, [everything, "stdio"], {
            env: { GZIP_ALLOWED_DOMAINS: "127.0.0.1" }
          }),
          ours: McpGroup.http(httpUrl(http, "/mcp"))
        },
        nameHook: McpGroup.prefixed()
      }).pipe(Scope.provide(scope))
      const servers = yield* group.servers
      assert.deepStrictEqual(servers.map((entry) => [entry.name, entry.status, entry.serverInfo?.name]), [
        ["everything", "up", "mcp-servers/everything"],
        ["ours", "up", "ours-http"]
      ])
      const tools = (yield* group.tools).map((entry) => entry.name)
      assert.include(tools, "everything__echo")
      assert.include(tools, "everything__get-sum")
      assert.include(tools, "ours__add")
      assert.deepStrictEqual(textOf(yield* group.callTool("everything__echo", { message: "hi" })), "Echo: hi")
      const sum = yield* group.callTool("ours__add", { a: 20, b: 22 })
      assert.deepStrictEqual(sum.structuredContent, { sum: 42 })
      // resources and prompts come from everything only: read by URI, through its template, and complete
      const features = yield* group.readResource("demo://resource/static/document/features.md")
      assert.isAbove(features.contents.length, 0)
      const dynamic = yield* group.readResource("demo://resource/dynamic/text/3")
      assert.strictEqual(dynamic.contents[0]?.uri, "demo://resource/dynamic/text/3")
      assert.include((yield* group.prompts).map((entry) => entry.name), "everything__simple-prompt")
      const prompt = yield* group.getPrompt("everything__args-prompt", { city: "Oslo", state: "Oslo" })
      assert.isAbove(prompt.messages.length, 0)
      const departments = yield* group.complete({ type: "ref/prompt", name: "everything__completable-prompt" }, {
        name: "department",
        value: "S"
      })
      assert.deepStrictEqual(departments.completion.values, ["Sales", "Support"])
      // a notification from everything, tagged with its name
      const client = yield* group.client("everything")
      const notifications = yield* group.subscribe.pipe(Scope.provide(scope))
      const logged = yield* notifications.pipe(
        Stream.filter((item) => item.notification.method === "notifications/message"),
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      yield* client.setLoggingLevel("debug")
      yield* group.callTool("everything__toggle-simulated-logging")
      const first = yield* Fiber.join(logged)
      assert.strictEqual(first._tag === "Some" ? first.value.server : undefined, "everything")
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(yield* client.session.isOpen)
    }))

  it.live("an HTTP server that goes away is noticed at the next call, marked down, and reconnected once it is back", () =>
    Effect.gen(function*() {
      const first = yield* Scope.make()
      const http = yield* Layer.buildWithScope(
        NodeMcpHttpServer.layer().pipe(Layer.provide(ourServer("ours-http"))),
        first
      )
      const url = httpUrl(http, "/mcp")
      const port = Number(new URL(url).port)
      const group = yield* makeGroup({
        servers: { a: server("a"), ours: McpGroup.http(url) },
        nameHook: McpGroup.prefixed(),
        reconnect: Schedule.spaced("200 millis")
      })
      assert.deepStrictEqual((yield* group.callTool("ours__add", { a: 1, b: 1 })).structuredContent, { sum: 2 })
      yield* Scope.close(first, Exit.void)
      // the session stays open over HTTP: the failed call makes the group check, and the check fails too
      const failed = yield* Effect.flip(group.callTool("ours__add", { a: 1, b: 1 }))
      assert.strictEqual(failed.reason._tag, "TransportError")
      yield* until(group, (servers) => statusOf(servers, "ours") === "down")
      const down = yield* Effect.flip(group.callTool("ours__add", { a: 1, b: 1 }))
      assert.strictEqual(down.reason._tag, "ServerUnavailableError")
      assert.strictEqual((down.reason as McpError.ServerUnavailableError).server, "ours")
      assert.strictEqual(textOf(yield* group.callTool("a__echo", { text: "x" })), "a:echo:x")
      // back on the same port
      yield* Layer.build(NodeMcpHttpServer.layer({ port }).pipe(Layer.provide(ourServer("ours-http-2"))))
      yield* until(group, (servers) => statusOf(servers, "ours") === "up")
      assert.strictEqual((yield* group.servers)[1]?.serverInfo?.name, "ours-http-2")
      assert.deepStrictEqual((yield* group.callTool("ours__add", { a: 2, b: 2 })).structuredContent, { sum: 4 })
    }))

  it.live("every transport of the connector: stdio, Streamable HTTP, HTTP+SSE, WebSocket, in-memory", () =>
    Effect.gen(function*() {
      const http = yield* Layer.build(NodeMcpHttpServer.layer().pipe(Layer.provide(ourServer("ours-http"))))
      const sse = yield* Layer.build(NodeMcpSseServer.layer().pipe(Layer.provide(ourServer("ours-sse"))))
      const ws = yield* Layer.build(NodeMcpWebSocket.layerServer().pipe(Layer.provide(ourServer("ours-ws"))))
      const wsAddress = Context.get(ws, SocketServer.SocketServer).address
      const wsPort = wsAddress._tag === "UnixPathAddress" ? 0 : wsAddress.port
      const group = yield* makeGroup({
        servers: {
          stdio: server("stdio"),
          http: McpGroup.http(httpUrl(http, "/mcp")),
          sse: McpGroup.sse(httpUrl(sse, "/sse")),
          ws: McpGroup.websocket(`ws://127.0.0.1:${wsPort}`),
          memory: McpGroup.inMemory(ourServer("ours-memory"))
        },
        nameHook: McpGroup.prefixed()
      })
      assert.deepStrictEqual((yield* group.servers).map((entry) => entry.serverInfo?.name), [
        "group-stdio",
        "ours-http",
        "ours-sse",
        "ours-ws",
        "ours-memory"
      ])
      for (const name of ["http", "sse", "ws", "memory"]) {
        const result = yield* group.callTool(`${name}__add`, { a: 1, b: 2 })
        assert.deepStrictEqual(result.structuredContent, { sum: 3 }, name)
      }
      assert.strictEqual(textOf(yield* group.callTool("stdio__echo", { text: "x" })), "stdio:echo:x")
    }))
})

describe("NodeMcpGroup: mcp.json", () => {
  it.live("loadConfig reads and decodes a file; layerConfig connects its servers", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "mcp.json")
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: {
            one: { command: process.execPath, args: [fixture], env: { GROUP_NAME: "one", GROUP_TOOLS: "first" } },
            two: { command: process.execPath, args: [fixture], env: { GROUP_NAME: "two", GROUP_TOOLS: "second" } },
            remote: { url: "http://127.0.0.1:1/mcp", disabled: true }
          }
        })
      )
      const servers = yield* NodeMcpGroup.loadConfig(file)
      assert.deepStrictEqual(Object.keys(servers), ["one", "two"])
      assert.deepStrictEqual(servers.one, {
        _tag: "Stdio",
        command: process.execPath,
        args: [fixture],
        env: { GROUP_NAME: "one", GROUP_TOOLS: "first" }
      })
      const context = yield* Layer.build(NodeMcpGroup.layerConfig(file, { nameHook: McpGroup.prefixed() }))
      const group = Context.get(context, McpGroup.McpGroup)
      assert.strictEqual(textOf(yield* group.callTool("two__second", { text: "x" })), "two:second:x")

      const missing = yield* Effect.flip(NodeMcpGroup.loadConfig(join(dir, "nope.json")))
      assert.strictEqual(missing.reason._tag, "ConfigError")
      assert.include(missing.message, "nope.json: cannot be read")
      const bad = join(dir, "bad.json")
      writeFileSync(bad, JSON.stringify({ mcpServers: { broken: { command: "x", args: "--flag" } } }))
      const invalid = yield* Effect.flip(NodeMcpGroup.loadConfig(bad))
      assert.deepStrictEqual(
        [
          invalid.reason._tag,
          (invalid.reason as McpError.ConfigError).server,
          (invalid.reason as McpError.ConfigError).field
        ],
        ["ConfigError", "broken", "args"]
      )
      assert.strictEqual(invalid.message, `${bad}: server "broken": args: Expected array, got "--flag"`)
    }))
})
