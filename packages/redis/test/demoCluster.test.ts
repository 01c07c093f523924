/**
 * `npm run demo:cluster` (scratchpad/cluster/demo.ts) as a newcomer runs it:
 * it tells the story of a replica kill, exits 0, and leaves nothing running
 * (every process it started, found by a marker in their environment, is gone).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as RedisServer from "./utils/redisServer.ts"

const DEMO = fileURLToPath(new URL("../../../scratchpad/cluster/demo.ts", import.meta.url))

// the pids whose environment holds `marker` (children inherit it)
const marked = (marker: string): Array<number> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").includes(marker)
    } catch {
      return false
    }
  }).map(Number)

describe.skipIf(!RedisServer.available)("npm run demo:cluster", () => {
  it.live("drives a client through a replica kill, exits 0 and leaves nothing running", () =>
    Effect.gen(function*() {
      const marker = `EFFECT_MCP_DEMO_MARK=${globalThis.crypto.randomUUID()}`
      const [name, value] = marker.split("=") as [string, string]
      const { code, output } = yield* Effect.callback<{ readonly code: number | null; readonly output: string }>(
        (resume) => {
          const child = spawn(process.execPath, ["--conditions=development", DEMO], {
            // its own redis-server, not one of the environment's
            env: { ...process.env, REDIS_URL: "", [name]: value },
            stdio: ["ignore", "pipe", "pipe"]
          })
          let output = ""
          child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
          child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
          child.on("exit", (code) => resume(Effect.succeed({ code, output })))
        }
      ).pipe(Effect.timeout("60 seconds"))
      assert.strictEqual(code, 0, output)
      assert.match(output, /SIGKILL replica (\w), which holds the session/)
      assert.match(output, /another replica took the session over/)
      assert.match(output, /slept 500 ms; its requests landed on/)
      assert.deepStrictEqual(marked(marker), [])
    }), 90_000)
})
