import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ["--conditions=development", ...args], { cwd: root, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, stdout, stderr }))
  })

describe("NodeMcpRuntime", () => {
  it("runs the demo in a child process: it prints the exchange and exits 0", async () => {
    const { code, stdout } = await run(["scratchpad/demo.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, "negotiated protocol version: 2025-11-25")
    assert.include(stdout, "ping: ok")
    assert.include(stdout, "echo -> [{\"type\":\"text\",\"text\":\"hello, MCP\"}]")
    assert.include(stdout, "add -> {\"sum\":42}")
  })

  it("sends log lines to stderr, never stdout", async () => {
    const script = "import { NodeMcpRuntime } from '@effect-mcp/platform-node'; import { Effect } from 'effect';" +
      " NodeMcpRuntime.runMain(Effect.logError('to stderr'))"
    const { code, stdout, stderr } = await run(["--input-type=module", "-e", script])
    assert.strictEqual(code, 0)
    assert.strictEqual(stdout, "")
    assert.include(stderr, "to stderr")
  })
})
