// The package.json that gets published, for `npm pack` / `npm publish` of a workspace package:
//
//   node ../../scripts/pack-manifest.mjs prepack    (the package's "prepack" script)
//   node ../../scripts/pack-manifest.mjs postpack   (its "postpack" script)
//
// In the repository, `exports` has a `development` condition pointing at `./src/*.ts`, so
// that tests, examples and benches run the TypeScript sources directly
// (`node --conditions=development`, `customConditions` in tsconfig.json). A published
// package must never resolve to `.ts` (bundlers such as Vite turn `development` on by
// default), and npm's `publishConfig` cannot override `exports`: so `prepack` saves
// package.json beside itself, writes it again without any `development` condition (and
// without `scripts`), and `postpack` puts the saved file back, byte for byte. A backup left
// by an interrupted pack is restored before anything else.
//
// `prepack` also deletes build output whose source is gone (dist/X.js, .d.ts and maps without
// a src/X.ts: `tsc -b` never removes them), so a renamed module is not published twice.
//
// Run in the package's directory (npm runs lifecycle scripts there).
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const [phase] = process.argv.slice(2)
const manifest = resolve("package.json")
const backup = resolve(".package.json.prepack")

/** `exports` with every `development` key removed, at any depth. */
const stripDevelopment = (value) => {
  if (Array.isArray(value)) return value.map(stripDevelopment)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.entries(value).filter(([key]) => key !== "development").map(([key, inner]) => [key, stripDevelopment(inner)])
  )
}

/** Deletes dist files without a source in src (stale output of a removed or renamed module). */
const pruneStale = (dist = resolve("dist")) => {
  if (!existsSync(dist)) return
  for (const entry of readdirSync(dist, { withFileTypes: true })) {
    const path = join(dist, entry.name)
    if (entry.isDirectory()) {
      pruneStale(path)
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true })
      continue
    }
    const base = relative(resolve("dist"), path).match(/^(.*?)(\.d\.ts\.map|\.js\.map|\.d\.ts|\.js)$/)?.[1]
    if (base === undefined) continue
    if (!existsSync(resolve("src", `${base}.ts`)) && !existsSync(resolve("src", `${base}.tsx`))) {
      console.error(`prepack: deleting stale ${relative(process.cwd(), path)} (no src/${base}.ts)`)
      rmSync(path)
    }
  }
}

const restore = () => {
  if (existsSync(backup)) renameSync(backup, manifest)
}

if (phase === "prepack") {
  restore()
  pruneStale()
  const text = readFileSync(manifest, "utf8")
  const json = JSON.parse(text)
  writeFileSync(backup, text)
  if (json.exports !== undefined) json.exports = stripDevelopment(json.exports)
  // prepack/postpack point into the repository (../../scripts): nothing for an installed copy
  // (npm runs postpack from the manifest it read before prepack)
  delete json.scripts
  writeFileSync(manifest, JSON.stringify(json, null, 2) + "\n")
} else if (phase === "postpack") {
  restore()
} else {
  console.error("usage: node scripts/pack-manifest.mjs prepack|postpack")
  process.exit(2)
}
