/**
 * `npm run demo:gateway` (scratchpad/gateway-cluster/demo.ts) as a newcomer
 * runs it: a 2026-07-28 client's rounds on a legacy tool land on three
 * replicas while the call behind runs once, the holder's SIGKILL mid-round
 * is told to the retry at once; it exits 0 and leaves nothing running (every
 * process it started, the legacy children included, found by a marker in
 * their environment, is gone).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as GatewayCluster from "./utils/gatewayCluster.ts"
import * as RedisServer from "./utils/redisServer.ts"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

describe.skipIf(!RedisServer.available)("npm run demo:gateway", () => {
  it.live(
    "tells of rounds on three replicas and of the holder's SIGKILL, exits 0 and leaves nothing running",
    () =>
      Effect.gen(function*() {
        const marker = globalThis.crypto.randomUUID()
        const { code, output } = yield* Effect.callback<{ readonly code: number | null; readonly output: string }>(
          (resume) => {
            const child = spawn("npm", ["run", "--silent", "demo:gateway"], {
              cwd: ROOT,
              // its own redis-server, not one of the environment's; the cluster's processes carry the marker
              env: { ...process.env, REDIS_URL: "", [GatewayCluster.MARK]: marker },
              stdio: ["ignore", "pipe", "pipe"]
            })
            let output = ""
            child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
            child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
            child.on("exit", (code) => resume(Effect.succeed({ code, output })))
          }
        ).pipe(Effect.timeout("90 seconds"))
        assert.strictEqual(code, 0, output)
        assert.match(output, /-> confirm_twice demo-1: blue, green \(pid \d+\)/)
        assert.match(
          output,
          /the call and its two retries landed on \w, \w, \w \(3 replicas\); \w held the call, which ran 1 time behind/
        )
        assert.match(output, /SIGKILL replica (\w), which holds the call/)
        assert.match(output, /-> the retry, on \w, failed \d+ ms after the kill with -32602: .*which is gone/)
        assert.match(output, /the call behind ran 1 time: never again elsewhere/)
        assert.match(output, /legacy__echo -> echo demo-5/)
        assert.deepStrictEqual(GatewayCluster.marked(`${GatewayCluster.MARK}=${marker}`), [])
      }),
    120_000
  )
})
