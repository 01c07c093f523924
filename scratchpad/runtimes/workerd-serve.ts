/**
 * Serves a Worker on workerd (miniflare), locally: bundles the entry as a
 * user would (packages/platform-node/test/utils/workerd.ts: rolldown, every
 * Node built-in an error) and serves it on 127.0.0.1, an ephemeral port, with
 * no `nodejs_compat` flag.
 *
 *   node --conditions=development scratchpad/runtimes/workerd-serve.ts [ENTRY]
 *
 * ENTRY defaults to scratchpad/runtimes/workerd-conformance.ts (the
 * conformance Worker; `npm run conformance -- --only server-workerd` runs
 * this). Prints `listening on http://127.0.0.1:PORT/mcp` once it serves;
 * SIGTERM or SIGINT disposes miniflare (workerd stops) and exits 0 (1 if that
 * failed). Our packages are bundled from their dist/ (run `npx tsc -b` first).
 */
import { bundleForWorkers, startWorker } from "../../packages/platform-node/test/utils/workerd.ts"

const entry = process.argv[2] ?? "scratchpad/runtimes/workerd-conformance.ts"

const signals = ["SIGTERM", "SIGINT"] as const

const main = async () => {
  const before = new Set(signals.flatMap((signal) => process.listeners(signal)))
  const served = await startWorker(await bundleForWorkers(entry))
  // miniflare's exit hook would exit at once (status 143 / 130), workerd killed: we dispose
  // instead (its hook on "exit" stays, so workerd never outlives this process)
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.has(listener)) process.removeListener(signal, listener)
    }
  }
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    served.dispose().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("stopping failed:", error)
        process.exit(1)
      }
    )
  }
  for (const signal of signals) process.on(signal, stop)
  console.log(`listening on ${new URL("/mcp", served.url).href}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
