import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const run = (args: ReadonlyArray<string>, env?: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=development", ...args],
      { cwd: root, timeout: 50_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, stdout, stderr })
    )
  })

/** The pids of the live processes whose environment holds `marker` (children inherit it). */
const processesWith = (marker: string): ReadonlyArray<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1").includes(marker) ? [Number(pid)] : []
    } catch {
      return [] // gone meanwhile, or not ours
    }
  })

describe("NodeMcpRuntime", () => {
  it(
    "runs the group demo in a child process: three servers, one call each, a disconnect, exit 0, no process left",
    async () => {
      const id = randomUUID()
      const { code, stdout } = await run(["scratchpad/demo.ts"], { EFFECT_MCP_DEMO_RUN: id })
      assert.strictEqual(code, 0)
      const lines = stdout.trimEnd().split("\n")
      // the three servers, of three kinds, all up
      assert.deepStrictEqual(lines.slice(0, 3), [
        "server example: Stdio, example-server 1.0.0, up",
        "server calculator: StreamableHttp, calculator 1.0.0, up",
        "server memory: InMemory, memory 1.0.0, up"
      ])
      // the aggregated tools with their servers, in order of the servers (each server's in name order)
      assert.deepStrictEqual(lines.slice(3, 8).map((line) => line.trim().split(/\s+/).slice(0, 2)), [
        ["tools:"],
        ["countdown", "example"],
        ["weather", "example"],
        ["add", "calculator"],
        ["echo", "memory"]
      ])
      assert.deepStrictEqual(lines.slice(8), [
        "example/weather -> {\"city\":\"Lisbon\",\"celsius\":21.5,\"conditions\":\"sunny\"}",
        "calculator/add -> {\"sum\":42}",
        "memory/echo -> hello from memory",
        "disconnected example: 4 tools, 1 resource, 1 template, 1 prompt -> 2 tools, 0 resources, 0 templates, 0 prompts",
        "servers now: calculator, memory",
        "tools now: add (calculator), echo (memory)"
      ])
      // the stdio server (which inherited the marker) is gone with the demo
      assert.deepStrictEqual(processesWith(`EFFECT_MCP_DEMO_RUN=${id}`), [])
    },
    60_000
  )

  it("sends log lines to stderr, never stdout", async () => {
    const script = "import { NodeMcpRuntime } from '@effect-mcp/platform-node'; import { Effect } from 'effect';" +
      " NodeMcpRuntime.runMain(Effect.logError('to stderr'))"
    const { code, stdout, stderr } = await run(["--input-type=module", "-e", script])
    assert.strictEqual(code, 0)
    assert.strictEqual(stdout, "")
    assert.include(stderr, "to stderr")
  }, 60_000)
})
