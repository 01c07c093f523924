/**
 * stdio servers keep stdout for the protocol: output through Effect's
 * `Console`, `globalThis.console` and `process.stdout.write` by anything but
 * the transport goes to stderr while the server runs (`redirectConsole`,
 * default on), checked with real child processes; the patch is undone when
 * its scope closes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as InternalConsole from "../src/internal/console.ts"
import { clientInfo, connectStdio, textOf } from "./utils/client.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/stdio-console-server.ts", import.meta.url))

const TOOL_LINES = ["hello", "world", "info line", "debug line", "raw write"]

/** Runs the fixture with `lines` on stdin (then closed); its exit code, stdout and stderr. */
const runFixture = (env: Record<string, string>) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(process.execPath, ["--conditions=development", fixture], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "speak" } }
    ]
    child.stdin.end(lines.map((line) => JSON.stringify(line)).join("\n") + "\n")
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("NodeMcpStdio: stdout is the protocol's", () => {
  it.live(
    "Console.log, console.log/info/debug and process.stdout.write go to stderr; stdout carries only JSON-RPC",
    () =>
      Effect.gen(function*() {
        const { code, stderr, stdout } = yield* runFixture({})
        assert.strictEqual(code, 0)
        const lines = stdout.trim().split("\n")
        const messages = lines.map((line) => JSON.parse(line))
        assert.isTrue(messages.every((message) => message.jsonrpc === "2.0"), stdout)
        assert.deepStrictEqual(messages.map((m) => m.id), [1, 2])
        assert.deepStrictEqual(messages[1].result.content, [{ type: "text", text: "spoken" }])
        for (const line of ["starting", ...TOOL_LINES]) {
          assert.include(stderr.split("\n"), line, `stderr lacks ${line}`)
          assert.notInclude(stdout, line)
        }
      }),
    { timeout: 30_000 }
  )

  it.live("our client works with such a server; the child's stderr has both lines", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connectStdio({
        command: process.execPath,
        args: ["--conditions=development", fixture],
        cwd: root,
        stderr: "capture"
      })
      // the tool takes no arguments: its listed inputSchema is an empty object schema
      const { tools } = yield* client.listTools()
      assert.deepStrictEqual(tools.map((tool) => [tool.name, tool.inputSchema]), [["speak", {
        type: "object",
        properties: {}
      }]])
      assert.strictEqual(textOf(yield* client.callTool("speak")), "spoken")
      assert.strictEqual(textOf(yield* client.callTool("speak", {})), "spoken")
      yield* Scope.close(scope, Exit.void)
      const tail = yield* transport.stderrTail
      assert.include(tail, "hello")
      assert.include(tail, "world")
    }), { timeout: 30_000 })

  it.live(
    "redirectConsole: false leaves stdout alone (the stray lines land in the protocol stream)",
    () =>
      Effect.gen(function*() {
        const { stdout } = yield* runFixture({ REDIRECT_CONSOLE: "false" })
        const lines = stdout.trim().split("\n")
        assert.include(lines, "hello")
        assert.include(lines, "world")
        assert.include(lines, "starting")
      }),
    { timeout: 30_000 }
  )

  it.effect("the redirect patches globalThis.console and process.stdout.write for its scope only, nested", () =>
    Effect.gen(function*() {
      const log = globalThis.console.log
      const info = globalThis.console.info
      const write = process.stdout.write
      const outer = yield* Scope.make()
      yield* InternalConsole.redirect.pipe(Scope.provide(outer))
      assert.isTrue(InternalConsole.isRedirected())
      assert.notStrictEqual(globalThis.console.log, log)
      assert.notStrictEqual(process.stdout.write, write)
      const inner = yield* Scope.make()
      yield* InternalConsole.redirect.pipe(Scope.provide(inner))
      yield* Scope.close(inner, Exit.void)
      // the outer holder still redirects
      assert.notStrictEqual(globalThis.console.log, log)
      yield* Scope.close(outer, Exit.void)
      assert.isFalse(InternalConsole.isRedirected())
      assert.strictEqual(globalThis.console.log, log)
      assert.strictEqual(globalThis.console.info, info)
      assert.strictEqual(process.stdout.write, write)
    }))
})
