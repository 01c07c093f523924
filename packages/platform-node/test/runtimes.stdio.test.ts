/**
 * The quick-start stdio server (`scratchpad/quickstart/server.ts`), unchanged,
 * run by Bun and by Deno (their binaries from the `bun` and `deno`
 * devDependencies in node_modules, never a global install) and driven over
 * stdio by our client in each era and by the official clients (v1
 * `@modelcontextprotocol/sdk` in the legacy era, v2 `@modelcontextprotocol/client`
 * pinned to 2026-07-28). Each runtime resolves `@effect-mcp/*` through the
 * workspace's node_modules with the `development` condition (the TypeScript
 * sources), as `node --conditions=development` does; Deno runs with no
 * permission at all. Closing the client ends the server: it exits with code
 * 0 on its own (stdin closed) and its pid is gone. And stdout stays the
 * protocol's on each runtime (`redirectConsole`: Bun's native `console` and
 * Deno's `process.stdout` included), with the console fixture.
 *
 * A runtime whose binary is missing fails these tests (run `npm install`); it
 * is never skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client as V2Client } from "@modelcontextprotocol/client"
import { StdioClientTransport as V2StdioTransport } from "@modelcontextprotocol/client/stdio"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as V1StdioTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Exit, Scope } from "effect"
import { execFile, spawn } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { clientInfo, connectStdio, textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"
import { resolveBinary, root, type Runtime, runtimes } from "./utils/runtimes.ts"
import { waitFor } from "./utils/wait.ts"

const SERVER = "scratchpad/quickstart/server.ts"
const CONSOLE_FIXTURE = "packages/platform-node/test/fixtures/stdio-console-server.ts"
const MODERN = "2026-07-28"
const execFileAsync = promisify(execFile)

// -----------------------------------------------------------------------------
// the runs (the runtimes and their binaries: utils/runtimes.ts)
// -----------------------------------------------------------------------------

/**
 * Runs the console fixture (a server whose tool writes to stdout in every way)
 * on `runtime` with an initialize and a call on stdin, then stdin closed: its
 * exit code, stdout and stderr (killed after 20 s).
 */
const runConsoleFixture = (runtime: Runtime) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(resolveBinary(runtime), [...runtime.args(CONSOLE_FIXTURE, { env: ["REDIRECT_CONSOLE"] })], {
      cwd: root,
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
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("exit", () => clearTimeout(timer))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

// -----------------------------------------------------------------------------
// the tests
// -----------------------------------------------------------------------------

/** What the official clients (v1 and v2) have in common here. */
interface OfficialClient {
  readonly connect: (transport: never) => Promise<void>
  readonly close: () => Promise<void>
  readonly getServerVersion: () => { readonly name: string } | undefined
  readonly listTools: () => Promise<{ readonly tools: ReadonlyArray<{ readonly name: string }> }>
  readonly callTool: (params: { name: string; arguments: Record<string, unknown> }) => Promise<object>
}

/**
 * An official client over stdio lists the quick-start's tools and calls one
 * (and `check`s what it negotiated); closing it ends the server (the pid,
 * read while connected: the transport forgets its child once closed, is gone).
 */
const officialClientRun = <C extends OfficialClient>(
  client: C,
  transport: {
    readonly pid: number | null
    readonly stderr: { on: (event: "data", f: (chunk: Buffer) => void) => unknown } | null
  },
  check?: (client: C) => void
) =>
  Effect.gen(function*() {
    let stderr = ""
    let pid: number | null = null
    transport.stderr?.on("data", (chunk) => (stderr += chunk.toString("utf8")))
    yield* Effect.acquireUseRelease(
      Effect.promise(() => client.connect(transport as never)),
      () =>
        Effect.promise(async () => {
          pid = transport.pid
          assert.strictEqual(client.getServerVersion()?.name, "notes", stderr)
          check?.(client)
          const { tools } = await client.listTools()
          assert.deepStrictEqual(tools.map((tool) => tool.name), ["add_note", "list_notes"])
          const saved = await client.callTool({ name: "add_note", arguments: { title: "groceries", body: "eggs" } })
          assert.strictEqual(textOf(saved), "saved groceries")
        }),
      () => Effect.promise(() => client.close())
    )
    assert.isNumber(pid)
    yield* waitFor(() => !isRunning(pid!))
  })

for (const runtime of runtimes) {
  describe(`the quick-start stdio server on ${runtime.name}`, () => {
    // asynchronous and bounded by the test's own timeout only: a loaded machine may take seconds to start a
    // runtime's binary the first time (a synchronous spawn with a wall-clock bound failed there)
    it(`its binary comes from node_modules (${runtime.pkg}) and runs`, { timeout: 60_000 }, async () => {
      const binary = resolveBinary(runtime)
      assert.isTrue(binary.startsWith(join(root, "node_modules")), binary)
      // a placeholder left by an install without scripts fails here, with what it printed
      const { stdout: version } = await execFileAsync(binary, ["--version"], { encoding: "utf8" })
      assert.match(version, /\d+\.\d+\.\d+/, `${runtime.name}: ${binary} --version printed ${version}`)
    })

    for (const era of ["legacy", "modern"] as const) {
      it.live(`our client (${era}) lists the tools and calls one; closing it ends the server`, () =>
        Effect.gen(function*() {
          const command = resolveBinary(runtime)
          const { client, scope, transport } = yield* connectStdio(
            { command, args: runtime.args(SERVER), cwd: root, stderr: "capture" },
            { era }
          )
          const stderr = () => Effect.runSync(transport.stderrTail)
          assert.strictEqual(client.era, era, stderr())
          assert.strictEqual(client.protocolVersion === MODERN, era === "modern")
          assert.strictEqual(client.serverInfo.name, "notes")
          const tools = yield* client.tools.get
          assert.deepStrictEqual(tools.map((tool) => tool.name), ["add_note", "list_notes"])
          assert.strictEqual(
            textOf(yield* client.callTool("add_note", { title: "groceries", body: "eggs" })),
            "saved groceries"
          )
          assert.strictEqual(textOf(yield* client.callTool("list_notes", {})), "groceries")

          yield* Scope.close(scope, Exit.void)
          // it exits on its own once its stdin closes: code 0, no signal needed
          const status = yield* transport.exitStatus
          assert.deepStrictEqual(status, { code: 0, signal: null }, stderr())
          yield* waitFor(() => !isRunning(transport.pid))
        }))
    }

    it.live("the official v1 client (legacy) lists the tools and calls one; closing it ends the server", () =>
      officialClientRun(
        new V1Client({ name: "official-v1", version: "1.0.0" }),
        new V1StdioTransport({
          command: resolveBinary(runtime),
          args: [...runtime.args(SERVER)],
          cwd: root,
          stderr: "pipe"
        })
      ))

    it.live(`the official v2 client (${MODERN}) lists the tools and calls one; closing it ends the server`, () =>
      officialClientRun(
        new V2Client({ name: "official-v2", version: "2.4.0" }, { versionNegotiation: { mode: { pin: MODERN } } }),
        new V2StdioTransport({
          command: resolveBinary(runtime),
          args: [...runtime.args(SERVER)],
          cwd: root,
          stderr: "pipe"
        }),
        (client) => assert.strictEqual(client.getNegotiatedProtocolVersion(), MODERN)
      ))

    it.live("stdout stays the protocol's: console.log, Console.log and process.stdout.write go to stderr", () =>
      Effect.gen(function*() {
        const { code, stderr, stdout } = yield* runConsoleFixture(runtime)
        assert.strictEqual(code, 0, stderr)
        const messages = stdout.trim().split("\n").map((line) => JSON.parse(line))
        assert.deepStrictEqual(messages.map((message) => [message.jsonrpc, message.id]), [["2.0", 1], ["2.0", 2]])
        assert.deepStrictEqual(messages[1].result.content, [{ type: "text", text: "spoken" }])
        for (const line of ["starting", "hello", "world", "info line", "debug line", "raw write"]) {
          assert.include(stderr.split("\n"), line, `stderr lacks ${line}`)
        }
      }))
  })
}
