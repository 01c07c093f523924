#!/usr/bin/env node
// The `effect-mcp` executable. It runs the CLI bundled (../dist/bundle/effect-mcp.mjs, made by
// scripts/build-cli.mjs with rolldown: effect and every dependency inside, the lazy parts as
// chunks), which starts several times faster than the compiled modules of dist/ and needs no
// other package installed. This file is committed (dist is not) so that npm links the command
// even before a build; in the repository, `npm install` / `npm ci` build both through the root
// "prepare" script.
import { statSync } from "node:fs"
import module from "node:module"

// Node's compile cache: later runs skip compiling the bundle (it must be on before the import
// below, hence a dynamic one); NODE_DISABLE_COMPILE_CACHE=1 turns it off
module.enableCompileCache?.()

const at = (path) => new URL(path, import.meta.url)
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs
const bundle = at("../dist/bundle/effect-mcp.mjs")
const compiled = at("../dist/bin.js")

// In the repository, a `tsc -b` that rebuilt a package after the last bundling leaves the bundle
// stale: then the compiled dist/bin.js runs (slower, same behaviour). Only when a package's build
// info is newer than the bundle is it looked at more closely (bundle-state.js). A published
// package has no build info.
const bundled = mtime(bundle)
const current = bundled !== undefined &&
  (["cli", "core", "platform-node", "redis"].every((name) =>
    (mtime(at(`../../${name}/dist/.tsbuildinfo`)) ?? -Infinity) <= bundled
  ) || (await import("./bundle-state.js")).bundleProblem() === undefined)
if (current) {
  await import(bundle.href)
} else if (mtime(compiled) !== undefined) {
  await import(compiled.href)
} else {
  process.stderr.write("effect-mcp: dist/ is missing; build it first (`npm run build` in the repository)\n")
  process.exit(1)
}
