// Preloaded (`node --import ./startup-count.mjs server.mjs`) by the start-up
// benchmark: records every module the process loads (ES modules and CommonJS,
// through `module.registerHooks`) and, on SIGUSR2, writes the list as JSON to
// the file named by STARTUP_COUNT_OUT.
import { writeFileSync } from "node:fs"
import { registerHooks } from "node:module"

const loaded = new Set()
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url)
    return nextLoad(url, context)
  }
})

const out = process.env.STARTUP_COUNT_OUT
if (out !== undefined) {
  process.on("SIGUSR2", () => {
    writeFileSync(out, JSON.stringify([...loaded]))
  })
}
