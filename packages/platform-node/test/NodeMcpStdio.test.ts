/**
 * stdio, both sides, with real processes: the `runServer` one-liner exits 0
 * when stdin ends; the client transport spawns a server, reports its exit or
 * crash to every pending call at once, shuts its whole process tree down on
 * scope close (stdin → SIGTERM → SIGKILL), merges the environment and
 * forwards or captures stderr.
 */
import { JsonRpc, McpClient, type McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { execFile, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"
import { clientInfo, connectStdio, textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const rawServer = (
  env: Record<string, string> = {},
  options: Partial<NodeMcpStdio.ClientOptions> = {}
): NodeMcpStdio.ClientOptions => ({
  command: process.execPath,
  args: [fixture("stdio-raw-server.mjs")],
  env,
  stderr: "capture",
  ...options
})

const transportError = (error: McpError.McpError) => {
  assert.strictEqual(error.reason._tag, "TransportError")
  return error.reason as McpError.TransportError
}

describe("NodeMcpStdio.runServer", () => {
  it("serves stdio, logs only to stderr, and exits 0 when stdin ends", async () => {
    const child = spawn(process.execPath, ["--conditions=development", fixture("stdio-run-server.ts")], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "info" } },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }
    ]
    child.stdin.end(lines.map((line) => JSON.stringify(line)).join("\n") + "\n")
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    assert.strictEqual(code, 0)
    // every stdout line is a JSON-RPC message
    const messages = stdout.trim().split("\n").map((line) => JSON.parse(line))
    assert.isTrue(messages.every((message) => message.jsonrpc === "2.0"))
    assert.deepStrictEqual(messages.filter((m) => "id" in m).map((m) => m.id), [1, 2, 3])
    assert.deepStrictEqual(messages.find((m) => m.id === 3).result.content, [{ type: "text", text: "hi" }])
    // the handler's log went to the client as a notification, and to stderr
    assert.deepStrictEqual(
      messages.filter((m) => m.method === "notifications/message").map((m) => m.params.data),
      ["echo hi"]
    )
    assert.include(stderr, "run-server starting")
    assert.include(stderr, "echo hi")
  })

  it.live("our client over our stdio client transport: calls, then scope close ends it with exit 0 (no signal)", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connectStdio({
        command: process.execPath,
        args: ["--conditions=development", fixture("stdio-run-server.ts")],
        cwd: root,
        stderr: "capture",
        shutdown: { closeTimeout: "5 seconds" }
      })
      assert.strictEqual(client.serverInfo.name, "run-server")
      assert.strictEqual(textOf(yield* client.callTool("echo", { text: "over stdio" })), "over stdio")
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = performance.now() - started
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
      assert.isBelow(elapsed, 2_000, "the server exits on its own once stdin is closed")
      assert.isFalse(isRunning(transport.pid))
    }))
})

describe("NodeMcpStdio.makeClient", () => {
  it.live(
    "servers that exit at once fail their handshakes promptly, however the write races the exit",
    () =>
      Effect.gen(function*() {
        // many at a time: the exit lands before, during or after the initialize write
        const exits = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          () =>
            Effect.scoped(
              McpClient.make({ clientInfo }).pipe(
                Effect.provide(Layer.merge(
                  NodeMcpStdio.layerClient({
                    command: process.execPath,
                    args: ["-e", "process.exit(7)"],
                    stderr: "capture"
                  }),
                  NodeJsonSchemaValidator.layer
                )),
                Effect.timeout("15 seconds"),
                Effect.flip
              )
            ),
          { concurrency: "unbounded" }
        )
        for (const error of exits) {
          assert.strictEqual(error._tag, "McpError")
          if (error._tag === "McpError") assert.strictEqual(error.reason._tag, "TransportError")
        }
      }),
    60_000
  )

  it.live("kill -9 of the server mid-call fails the pending call within 1 s, with the signal", () =>
    Effect.gen(function*() {
      const sleeping = yield* Deferred.make<void>()
      const { client, transport } = yield* connectStdio(rawServer({}, {
        onStderr: (text) => text.includes("sleeping") ? Deferred.succeed(sleeping, undefined) : Effect.void
      }))
      const call = yield* client.callTool("sleep").pipe(Effect.flip, Effect.forkChild({ startImmediately: true }))
      yield* Deferred.await(sleeping)
      const killed = performance.now()
      process.kill(transport.pid, "SIGKILL")
      const error = yield* Fiber.join(call)
      const elapsed = performance.now() - killed
      assert.isBelow(elapsed, 1_000)
      const reason = transportError(error)
      assert.include(reason.description, "SIGKILL")
      assert.isUndefined(reason.exitCode)
      assert.strictEqual(reason.signal, "SIGKILL")
      assert.include(reason.stderr ?? "", "sleeping")
      assert.deepStrictEqual(yield* transport.exitStatus, { code: null, signal: "SIGKILL" })
      // the session is over: later calls fail at once
      const later = yield* Effect.flip(client.ping())
      assert.strictEqual(later._tag, "McpError")
    }))

  it.live("a crash (exit 3 after writing to stderr) fails every pending call with code 3 and the stderr tail", () =>
    Effect.gen(function*() {
      const sleeping = yield* Deferred.make<void>()
      const { client } = yield* connectStdio(rawServer({}, {
        onStderr: (text) => text.includes("sleeping") ? Deferred.succeed(sleeping, undefined) : Effect.void
      }))
      const pending = yield* client.callTool("sleep").pipe(Effect.flip, Effect.forkChild({ startImmediately: true }))
      yield* Deferred.await(sleeping)
      const crash = yield* Effect.flip(client.callTool("crash", { code: 3 }))
      const other = yield* Fiber.join(pending)
      for (const error of [crash, other]) {
        const reason = transportError(error)
        assert.strictEqual(reason.exitCode, 3)
        assert.include(reason.stderr ?? "", "fatal: something broke")
        assert.include(reason.description, "exited with code 3: fatal: something broke")
      }
    }))

  it.live("scope close leaves no child or grandchild (sh -c wrapper; grandchildren in the group and in their own session)", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connectStdio({
        command: "sh",
        args: ["-c", `"${process.execPath}" "${fixture("stdio-raw-server.mjs")}"; echo wrapper-done >&2`],
        env: { STDIO_FIXTURE_GRANDCHILDREN: "1" },
        stderr: "capture",
        shutdown: { closeTimeout: "2 seconds", termTimeout: "2 seconds" }
      })
      const pids = JSON.parse(textOf(yield* client.callTool("pids"))) as {
        readonly pid: number
        readonly ppid: number
        readonly grandchildren: ReadonlyArray<number>
      }
      assert.strictEqual(pids.ppid, transport.pid, "the server runs under the sh wrapper")
      assert.strictEqual(pids.grandchildren.length, 2)
      const all = [transport.pid, pids.pid, ...pids.grandchildren]
      assert.deepStrictEqual(all.map(isRunning), [true, true, true, true])
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(all.map(isRunning), [false, false, false, false])
      // the wrapper itself ended normally: stdin closed, the server exited, sh went on and exited
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
      assert.include(yield* transport.stderrTail, "wrapper-done")
    }))

  it.live("a server that ignores stdin close and SIGTERM is killed with SIGKILL after the configured delays", () =>
    Effect.gen(function*() {
      let stderr = ""
      const scope = yield* Scope.make()
      const transport = yield* NodeMcpStdio.makeClient(rawServer(
        { STDIO_FIXTURE_IGNORE_EOF: "1", STDIO_FIXTURE_IGNORE_SIGTERM: "1" },
        {
          shutdown: { closeTimeout: "300 millis", termTimeout: "300 millis" },
          onStderr: (text) =>
            Effect.sync(() => {
              stderr += text
            })
        }
      )).pipe(Scope.provide(scope))
      yield* transport.send(JsonRpc.request(1, "ping"))
      yield* Stream.runHead(transport.incoming)
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = performance.now() - started
      assert.deepStrictEqual(yield* transport.exitStatus, { code: null, signal: "SIGKILL" })
      assert.isAtLeast(elapsed, 580)
      assert.isBelow(elapsed, 1_500)
      // it saw stdin close, then SIGTERM, then died
      assert.match(stderr, /stdin closed\n[\s\S]*got SIGTERM, ignoring it\n/)
      assert.isFalse(isRunning(transport.pid))
    }))

  it.live("a server that exits on stdin close is not signalled, and the close takes no longer than its exit", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const transport = yield* NodeMcpStdio.makeClient(rawServer()).pipe(Scope.provide(scope))
      yield* transport.send(JsonRpc.request(1, "ping"))
      const reply = yield* Stream.runHead(transport.incoming)
      assert.deepStrictEqual(Option.getOrUndefined(reply), { jsonrpc: "2.0", id: 1, result: {} })
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      assert.isBelow(performance.now() - started, 1_000)
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
      assert.include(yield* transport.stderrTail, "stdin closed")
      // after close, sending fails
      const error = yield* Effect.flip(transport.send(JsonRpc.request(2, "ping")))
      assert.strictEqual(error.reason._tag, "ClosedError")
    }))

  it.live("env is laid over this process's environment: PATH kept, variables added and removed", () =>
    Effect.gen(function*() {
      const { client } = yield* connectStdio(rawServer({}, { env: { FOO: "bar", HOME: undefined } }))
      const env = JSON.parse(textOf(yield* client.callTool("env")))
      assert.deepStrictEqual(env, { PATH: process.env.PATH ?? null, FOO: "bar", HOME: null })
    }))

  it.live("a command that cannot be started fails with a TransportError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(NodeMcpStdio.makeClient({ command: "/nonexistent/mcp-server" }))
      const reason = transportError(error)
      assert.include(reason.description, "could not start /nonexistent/mcp-server")
      assert.include(reason.description, "ENOENT")
      const badCwd = yield* Effect.flip(NodeMcpStdio.makeClient({ command: process.execPath, cwd: "/nonexistent/dir" }))
      assert.strictEqual(badCwd.reason._tag, "TransportError")
    }))

  it.live("the child exiting with no call pending ends the session", () =>
    Effect.gen(function*() {
      const { client, transport } = yield* connectStdio(rawServer())
      process.kill(transport.pid, "SIGTERM")
      yield* client.session.awaitClose
      const error = yield* Effect.flip(client.ping())
      assert.strictEqual(error.reason._tag, "ClosedError")
      assert.deepStrictEqual(yield* transport.exitStatus, { code: null, signal: "SIGTERM" })
    }))

  describe("stderr modes (a host process running the client; what reaches its stderr)", () => {
    const runHost = (mode: NodeMcpStdio.StderrMode) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ["--conditions=development", fixture("stdio-stderr-host.ts"), mode],
          { cwd: root, timeout: 30_000 },
          (error, stdout, stderr) =>
            resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, stdout, stderr })
        )
      })

    it("forward (default): shown on the host's stderr, captured and kept", async () => {
      const { code, stderr, stdout } = await runHost("forward")
      assert.strictEqual(code, 0)
      assert.include(stderr, "hello from stderr")
      const result = JSON.parse(stdout)
      assert.include(result.captured, "hello from stderr")
      assert.include(result.tail, "hello from stderr")
    })

    it("capture: not shown, but captured and kept", async () => {
      const { code, stderr, stdout } = await runHost("capture")
      assert.strictEqual(code, 0)
      assert.notInclude(stderr, "hello from stderr")
      const result = JSON.parse(stdout)
      assert.include(result.captured, "hello from stderr")
      assert.include(result.tail, "stdin closed")
    })

    it("inherit: the child writes to the host's stderr itself; nothing is captured", async () => {
      const { code, stderr, stdout } = await runHost("inherit")
      assert.strictEqual(code, 0)
      assert.include(stderr, "hello from stderr")
      assert.deepStrictEqual(JSON.parse(stdout), { captured: "", tail: "" })
    })

    it("ignore: discarded", async () => {
      const { code, stderr, stdout } = await runHost("ignore")
      assert.strictEqual(code, 0)
      assert.notInclude(stderr, "hello from stderr")
      assert.deepStrictEqual(JSON.parse(stdout), { captured: "", tail: "" })
    })
  })
})
