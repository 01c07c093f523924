// Whether ../dist/bundle/effect-mcp.mjs is what the compiled packages of this repository would
// bundle now (effect-mcp.js asks when a build is newer than the bundle; the CLI's Ctrl-C test and
// bench/cli.ts ask before running the bundle). A published package has no build info: its
// bundle is always current.
//
// scripts/build-cli.mjs writes dist/bundle/built-from.json: the SHA-1 of each package's
// dist/.tsbuildinfo when it bundled. A `tsc -b` that rebuilt a package changes its build info;
// one that found it up to date may still touch its timestamp (its content stays), so a build
// info newer than the bundle is compared by content.
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"

export const PACKAGES = ["cli", "core", "platform-node", "redis"]

const at = (path) => new URL(path, import.meta.url)
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs

/** The build info of a package of this repository, beside this one (packages/NAME/dist/.tsbuildinfo). */
export const buildInfo = (name) => at(`../../${name}/dist/.tsbuildinfo`)
export const bundle = at("../dist/bundle/effect-mcp.mjs")
export const stamp = at("../dist/bundle/built-from.json")

/** `undefined` when the bundle is current, else why not. */
export const bundleProblem = () => {
  const bundled = mtime(bundle)
  if (bundled === undefined) return "dist/bundle/effect-mcp.mjs is missing"
  const newer = PACKAGES.filter((name) => (mtime(buildInfo(name)) ?? -Infinity) > bundled)
  if (newer.length === 0) return undefined
  let built
  try {
    built = JSON.parse(readFileSync(stamp, "utf8"))
  } catch {
    return `packages/${newer[0]} was built after the bundle`
  }
  const changed = newer.find((name) => built[name] !== digest(buildInfo(name)))
  return changed === undefined ? undefined : `packages/${changed} was built after the bundle`
}

/** The SHA-1 of a file, or undefined when it does not exist. */
export const digest = (url) => {
  try {
    return createHash("sha1").update(readFileSync(url)).digest("hex")
  } catch {
    return undefined
  }
}
