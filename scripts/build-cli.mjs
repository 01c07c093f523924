// The `effect-mcp` command bundled: one minified ES module with effect and every other
// dependency inside, and the parts our packages import lazily (the HTTP server, OAuth, Redis,
// WebSocket, the JSON Schema validator, …) as chunks loaded on first use: README "Production"'s
// recipe applied to the CLI. Node then reads and compiles a few files instead of ~400 modules.
//
//   node scripts/build-cli.mjs [--outdir DIR] [--quiet]
//
// Input: packages/cli/dist/bin.js, the compiled bin (`tsc -b packages/cli` first: the root
// `prepare` and `build` scripts and the package's `prepack` run both). Our packages resolve to
// their compiled dist/ (no `development` condition), as they would once installed.
//
// Output (default packages/cli/dist/bundle/):
//   effect-mcp.mjs                the entry: packages/cli/bin/effect-mcp.js imports it
//   chunks/*.mjs                  the lazily loaded parts
//   THIRD-PARTY-LICENSES.txt      the license of every package whose code is inside
//   built-from.json               the SHA-1 of each package's dist/.tsbuildinfo bundled from
//                                 (packages/cli/bin/bundle-state.js: is the bundle current?)
// The files end in .mjs so that the prepack step's pruning of stale tsc output (dist/X.js
// without src/X.ts) and pack-check's ".js has a .d.ts" rule leave them alone.
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const argv = process.argv.slice(2)
const option = (name) => {
  const index = argv.indexOf(name)
  return index === -1 ? undefined : argv[index + 1]
}
const outdir = resolve(option("--outdir") ?? join(root, "packages/cli/dist/bundle"))
const quiet = argv.includes("--quiet")
const input = join(root, "packages/cli/dist/bin.js")

if (!existsSync(input)) {
  console.error(`build-cli: ${relative(root, input)} is missing: run \`tsc -b packages/cli\` first`)
  process.exit(1)
}

// -----------------------------------------------------------------------------
// effect/cli's help renderer, made lazy at build time
// -----------------------------------------------------------------------------

// effect/cli/CliOutput (effect 4.1) builds an `Intl.Segmenter` at load, to measure text width
// for help and tables: 9–19 ms of a start here, paid by every command (its module loads with the
// command tree), though only --help and errors print through it. The bundle builds it on first
// use instead, and skips it for printable ASCII, whose width is its length (one grapheme of
// width 1 per character: no marks, controls, emoji or fullwidth characters in that range).
// When effect's code changes so that the patterns no longer match, the module is bundled as it
// is, with a warning.
const SEGMENTER =
  /const graphemeSegmenter = \/\*#__PURE__\*\/new Intl\.Segmenter\(undefined, \{\s*granularity: "grapheme"\s*\}\);/
const DISPLAY_WIDTH = "export const displayWidth = text => {"
const patched = []
const lazySegmenter = {
  name: "effect-mcp:lazy-grapheme-segmenter",
  transform(code, id) {
    if (!/[\\/]effect[\\/]dist[\\/]cli[\\/]CliOutput\.js$/.test(id)) return null
    if (!SEGMENTER.test(code) || code.split(DISPLAY_WIDTH).length !== 2) {
      patched.push(false)
      return null
    }
    patched.push(true)
    return code
      .replace(
        SEGMENTER,
        "let graphemeSegmenter$;\nconst graphemeSegmenter = { segment: (text) => (graphemeSegmenter$ ??= " +
          "new Intl.Segmenter(undefined, { granularity: \"grapheme\" })).segment(text) };"
      )
      .replace(DISPLAY_WIDTH, `${DISPLAY_WIDTH}\n  if (/^[\\x20-\\x7e]*$/.test(text)) return text.length;`)
  }
}

// -----------------------------------------------------------------------------
// `export * from "<CommonJS package>"`, spelled out
// -----------------------------------------------------------------------------

// @effect/platform-node/Undici is `import Undici from "undici"; export * from "undici"; export
// default Undici`. Node finds undici's names with its CommonJS lexer; a bundler cannot see
// them, and rolldown drops the `export *`, so `(await import(".../Undici.js")).Agent` is
// undefined in a bundle (the HTTP client and OAuth fail with "Agent is not a constructor"). The
// names are read here from undici itself and exported one by one.
const CJS_REEXPORTS = [{ id: /[\\/]@effect[\\/]platform-node[\\/]dist[\\/]Undici\.js$/, from: "undici" }]
const reexported = new Set()
const cjsReexports = {
  name: "effect-mcp:cjs-reexports",
  transform(code, id) {
    const entry = CJS_REEXPORTS.find((candidate) => candidate.id.test(id))
    if (entry === undefined) return null
    if (!code.includes(`export * from ${JSON.stringify(entry.from)}`)) return null
    reexported.add(entry.from)
    const names = Object.keys(createRequire(id)(entry.from)).filter((name) =>
      name !== "default" && /^[A-Za-z_$][\w$]*$/.test(name)
    )
    return [
      `import Module from ${JSON.stringify(entry.from)}`,
      "export default Module",
      `export const { ${names.join(", ")} } = Module`
    ].join("\n")
  }
}

const started = performance.now()
const { digest, buildInfo, PACKAGES } = await import("../packages/cli/bin/bundle-state.js")
// taken before bundling: a build running meanwhile makes the bundle look stale, not current
const builtFrom = Object.fromEntries(PACKAGES.map((name) => [name, digest(buildInfo(name))]))
const { build } = await import("rolldown")
rmSync(outdir, { recursive: true, force: true })
const warnings = []
const result = await build({
  input,
  platform: "node",
  plugins: [lazySegmenter, cjsReexports],
  onLog: (level, log) => {
    if (level === "warn") warnings.push(log)
  },
  output: {
    dir: outdir,
    format: "esm",
    minify: true,
    entryFileNames: "effect-mcp.mjs",
    chunkFileNames: "chunks/[name]-[hash].mjs",
    // everything the entry imports statically in the entry itself: a start reads it and
    // rolldown's small runtime chunk, not the many common chunks the automatic splitting makes
    // of the modules the lazy parts share with it
    codeSplitting: { groups: [{ name: "main", tags: ["$initial"] }] },
    // no comments at all: the licenses are collected in THIRD-PARTY-LICENSES.txt instead
    comments: false
  }
})

// -----------------------------------------------------------------------------
// What is inside: packages and their licenses
// -----------------------------------------------------------------------------

/** The package a bundled module belongs to: its directory holding a package.json with a name. */
const packageDirOf = (id) => {
  if (id.startsWith("\0") || !id.startsWith("/")) return undefined
  let dir = dirname(id)
  while (dir !== dirname(dir)) {
    const manifest = join(dir, "package.json")
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, "utf8"))
      // nested package.json files that only set "type" are not packages
      if (typeof json.name === "string") return dir
    }
    dir = dirname(dir)
  }
  return undefined
}

const chunks = result.output.filter((file) => file.type === "chunk")
const packages = new Map()
const perChunk = []
for (const chunk of chunks) {
  const names = new Map()
  for (const id of chunk.moduleIds) {
    const dir = packageDirOf(id)
    if (dir === undefined) continue
    const real = realpathSync(dir)
    const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
    names.set(json.name, (names.get(json.name) ?? 0) + 1)
    if (!packages.has(json.name)) {
      packages.set(json.name, { dir: real, version: json.version, license: json.license ?? "(none given)" })
    }
  }
  perChunk.push({ file: chunk.fileName, bytes: Buffer.byteLength(chunk.code), names })
}

const licenseText = (dir) => {
  const file = readdirSync(dir).find((name) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(name))
  return file === undefined ? undefined : readFileSync(join(dir, file), "utf8").trim()
}
const ours = (dir) => dir.startsWith(join(root, "packages") + sep)
const notices = [
  "The `effect-mcp` command (dist/bundle/) contains code of the packages below, each under its own license.",
  ""
]
for (const [name, { dir, license, version }] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
  notices.push("-".repeat(78), `${name}@${version} (${license})${ours(dir) ? ": this repository" : ""}`, "")
  const text = licenseText(dir) ?? (ours(dir) ? licenseText(root) : undefined)
  notices.push(text ?? "(no license file in the package)", "")
}
mkdirSync(outdir, { recursive: true })
writeFileSync(join(outdir, "THIRD-PARTY-LICENSES.txt"), notices.join("\n"))
writeFileSync(join(outdir, "built-from.json"), JSON.stringify(builtFrom, null, 2) + "\n")

// -----------------------------------------------------------------------------
// Report
// -----------------------------------------------------------------------------

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`
const total = perChunk.reduce((sum, chunk) => sum + chunk.bytes, 0)
const entry = perChunk.find((chunk) => chunk.file === "effect-mcp.mjs")
if (!quiet) {
  console.log(
    `build-cli: ${relative(root, outdir)}/effect-mcp.mjs ${kb(entry.bytes)} + ${perChunk.length - 1} chunks, ${
      kb(total)
    } in all, ` +
      `${packages.size} packages inside, in ${Math.round(performance.now() - started)} ms`
  )
  for (const chunk of perChunk.sort((a, b) => b.bytes - a.bytes)) {
    const top = [...chunk.names].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([name, count]) => `${name} (${count})`)
    console.log(`  ${chunk.file.padEnd(44)} ${kb(chunk.bytes).padStart(8)}  ${top.join(", ")}`)
  }
}
// a lazy import of a module the entry also imports statically loads nothing more: said once, listed
// without --quiet; anything else is printed
const plain = (text) => text.replace(/\x1b\[[0-9;]*m/g, "")
const ineffective = warnings.filter((warning) => warning.code === "INEFFECTIVE_DYNAMIC_IMPORT")
if (ineffective.length > 0 && !quiet) {
  console.log(`  ${ineffective.length} lazy import(s) of modules also imported statically (no chunk of their own):`)
  for (const warning of ineffective) {
    console.log(
      `    ${plain(warning.message).replace(/^\[INEFFECTIVE_DYNAMIC_IMPORT\]\s*/, "").split(" is dynamically")[0]}`
    )
  }
}
for (const { from } of CJS_REEXPORTS.filter(({ from }) => !reexported.has(from))) {
  console.warn(
    `build-cli: warning: no \`export * from "${from}"\` was rewritten: check that the bundle still finds its names`
  )
}
if (!patched.includes(true)) {
  console.warn(
    "build-cli: warning: effect/cli/CliOutput did not match: its Intl.Segmenter is built at load (slower start)"
  )
}
for (const warning of warnings.filter((warning) => warning.code !== "INEFFECTIVE_DYNAMIC_IMPORT")) {
  console.warn(`build-cli: warning: ${plain(warning.message)}`)
}
