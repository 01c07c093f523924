#!/usr/bin/env node
// The `effect-mcp` executable: runs the compiled CLI in ../dist. This file is committed
// (dist is not) so that npm links the command even before a build; in the repository,
// `npm install` / `npm ci` build dist through the root "prepare" script.
import { existsSync } from "node:fs"
import module from "node:module"

// Node's compile cache: later runs skip compiling the CLI and effect again
// (about a third of start-up); NODE_DISABLE_COMPILE_CACHE=1 turns it off
module.enableCompileCache?.()

const bin = new URL("../dist/bin.js", import.meta.url)
if (!existsSync(bin)) {
  process.stderr.write("effect-mcp: dist/bin.js is missing; build it first (`npm run build` in the repository)\n")
  process.exit(1)
}
await import(bin.href)
