/**
 * The workerd server of `bench/runtimes.ts`: a Worker bundle (one ES module,
 * bundled by `runtimes.ts` with `bundleForWorkers` from
 * `runtime-ours-worker.ts` or `runtime-official-worker.mjs`) served by workerd
 * through miniflare (`startWorker` of `packages/platform-node/test/utils/workerd.ts`:
 * 127.0.0.1, an ephemeral port, no compatibility flags). Requests go to
 * workerd's own socket; this Node process only starts and stops it (workerd
 * is its child). Prints `{"url":…,"runtime":…}` once it serves; when stdin
 * ends, disposes miniflare (workerd exits) and exits.
 *
 *   node bench/servers/runtime-workerd.ts BUNDLE.mjs
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { startWorker } from "../../packages/platform-node/test/utils/workerd.ts"

const file = process.argv[2]
if (file === undefined) {
  process.stderr.write("usage: node bench/servers/runtime-workerd.ts BUNDLE.mjs\n")
  process.exit(2)
}

const workerd = (createRequire(import.meta.url)("workerd/package.json") as { version: string }).version
const served = await startWorker({ code: readFileSync(file, "utf8") })

process.stdout.write(`${JSON.stringify({ url: new URL("/mcp", served.url).href, runtime: `workerd ${workerd}` })}\n`)
process.stdin.on("data", () => undefined)
process.stdin.on("end", () => {
  setTimeout(() => process.exit(0), 3000).unref()
  served.dispose().finally(() => process.exit(0))
})
