// `npm run pack:check`: the four packages as a user gets them from the registry.
//
//   node scripts/pack-check.mjs [--json FILE] [--quickstart DIR] [--keep]
//
// 1. builds them (`tsc -b packages/cli packages/redis`) and `npm pack`s each into a temporary directory
//    (through their prepack/postpack scripts, which drop the `development` condition);
// 2. checks every tarball: what it ships (dist, src, bin, README, LICENSE), that its `exports`
//    never resolve to `.ts` and every target exists, that the source maps resolve, and that the
//    repository's package.json is left as it was; then `publint --strict` and
//    `attw --profile esm-only` on the tarball;
// 3. in a fresh app outside the repository (`"type": "module"`), installs the four tarballs,
//    `effect` and `@effect/platform-node` (the newest 4.x on the registry), `typescript@6.0.3`
//    and `@types/node@22`; checks that each shared package (effect, …) is there once; compiles
//    the README's quick-start (scratchpad/quickstart/*.ts) and the packages' README examples
//    with `tsc --strict` and `skipLibCheck: false`, and a file importing every public module
//    under TypeScript 6's default `types: []`; runs the stdio client against the stdio server,
//    and the packed `effect-mcp` command against the HTTP server and the stdio server, with
//    plain `node`;
// 4. in another fresh app, installs the @effect-mcp/cli tarball alone (its `effect-mcp` is
//    bundled: effect and every dependency inside, every peer optional): checks that nothing else
//    is installed, and runs `npx effect-mcp --help` and `list tools` against the quick-start
//    server, alone and as a group of ten from a config;
// 5. measures node_modules for @effect-mcp/core + @effect-mcp/platform-node + peers, and for
//    @modelcontextprotocol/sdk alone, each in an app of its own.
//
// Every check is one line of the summary; `--json FILE` writes `{passed, failed, checks}` for
// .ci/summary.mjs. Exits 1 when any check failed. Every child process has a time limit and
// is killed (its process group) at the end.
import { spawn } from "node:child_process"
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { basename, dirname, join, posix, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const argv = process.argv.slice(2)
const option = (name) => {
  const index = argv.indexOf(name)
  return index === -1 ? undefined : argv[index + 1]
}
const jsonOut = option("--json")
const quickstartDir = resolve(root, option("--quickstart") ?? "scratchpad/quickstart")
const keep = argv.includes("--keep")

const PACKAGES = [
  { dir: "packages/core", name: "@effect-mcp/core" },
  { dir: "packages/platform-node", name: "@effect-mcp/platform-node" },
  { dir: "packages/redis", name: "@effect-mcp/redis" },
  { dir: "packages/cli", name: "@effect-mcp/cli" }
]
const QUICKSTART = ["server.ts", "client.ts", "http-server.ts"]
const README_EXAMPLES = ["packages/core/README.md", "packages/platform-node/README.md", "packages/redis/README.md"]
const TYPESCRIPT = "typescript@6.0.3"
const TYPES_NODE = "@types/node@22"

const started = performance.now()
const checks = []
const footprints = {}
const tarballSizes = []
const children = new Set()
const temps = []

const elapsed = (since) => `${((performance.now() - since) / 1000).toFixed(1)}s`
const record = (name, ok, detail = "") => {
  checks.push({ name, ok, detail })
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail === "" ? "" : `: ${detail}`}`)
  return ok
}
const section = (title) => console.log(`\n== ${title} (${elapsed(started)})`)
const indent = (text, max = 4000) => {
  const trimmed = text.trim()
  const cut = trimmed.length > max ? `${trimmed.slice(0, max)}\n… (${trimmed.length - max} more characters)` : trimmed
  return cut.split("\n").map((line) => `    ${line}`).join("\n")
}
const tempDir = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} kB`
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

// children run on this Node (22+, as `npm run` puts the repo's node@22 first on PATH), also
// when they start `node` or `npx` themselves
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
  NO_COLOR: "1"
}
delete env.NODE_OPTIONS
for (const key of Object.keys(env)) {
  // `npm run` passes the repository's config down (e.g. npm_config_local_prefix); the apps
  // must be installed as projects of their own
  if (key.startsWith("npm_") && !key.startsWith("npm_config_")) delete env[key]
  if (["npm_config_local_prefix", "npm_config_prefix", "npm_config_workspace", "npm_config_json"].includes(key)) {
    delete env[key]
  }
}

/** Runs a command to its end (or its time limit: then its process group is killed). */
const run = (command, args, { cwd = root, timeoutMs = 60_000, extraEnv = {} } = {}) =>
  new Promise((resolvePromise) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...env, ...extraEnv },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child, "SIGKILL")
    }, timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      children.delete(child)
      resolvePromise({ code: -1, stdout, stderr: `${stderr}${error.message}`, timedOut })
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      children.delete(child)
      resolvePromise({ code: code ?? -1, signal, stdout, stderr, timedOut })
    })
  })

const killGroup = (child, signal) => {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    try {
      child.kill(signal)
    } catch {
      // already gone
    }
  }
}

const describe = (result) =>
  result.timedOut ? "timed out" : `exit ${result.code}${result.signal ? ` (${result.signal})` : ""}`
const output = (result) => indent(`${result.stdout}\n${result.stderr}`)

const binOf = (pkg, name) => {
  const dir = join(root, "node_modules", pkg)
  const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  return join(dir, typeof json.bin === "string" ? json.bin : json.bin[name])
}
const node = (args, options) => run(process.execPath, args, options)

const freePort = () =>
  new Promise((resolvePromise, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolvePromise(port))
    })
  })

/** `npm view NAME@RANGE version`: the newest version in the range. */
const newest = async (name, range) => {
  const result = await run("npm", ["view", `${name}@${range}`, "version", "--json"], { timeoutMs: 30_000 })
  if (result.code !== 0) throw new Error(`npm view ${name}: ${describe(result)}\n${result.stderr}`)
  const parsed = JSON.parse(result.stdout)
  const versions = Array.isArray(parsed) ? parsed : [parsed]
  return versions.sort(compareVersions).at(-1)
}
const compareVersions = (a, b) => {
  const [pa, pb] = [a, b].map((v) => v.split(/[.+-]/).slice(0, 3).map(Number))
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i]
  return 0
}

/** The packages under a node_modules (nested ones too), each with the bytes of its files. */
const footprint = (nodeModules) => {
  const sizes = []
  const bytesOf = (dir) => {
    let bytes = 0
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) bytes += entry.name === "node_modules" ? 0 : bytesOf(path)
      else if (entry.isFile()) bytes += statSync(path).size
    }
    return bytes
  }
  const visitModules = (dir) => {
    if (!existsSync(dir)) return
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === ".bin" || entry.name === ".cache") continue
      const path = join(dir, entry.name)
      if (entry.name.startsWith("@")) {
        for (const scoped of readdirSync(path, { withFileTypes: true })) {
          if (scoped.isDirectory()) visitPackage(join(path, scoped.name), `${entry.name}/${scoped.name}`)
        }
      } else visitPackage(path, entry.name)
    }
  }
  const visitPackage = (dir, name) => {
    if (!existsSync(join(dir, "package.json"))) return
    sizes.push({ name, bytes: bytesOf(dir) })
    visitModules(join(dir, "node_modules"))
  }
  visitModules(nodeModules)
  const sum = (names) => {
    const picked = sizes.filter((entry) => names === undefined || names.includes(entry.name))
    return {
      packages: picked.length,
      bytes: picked.reduce((total, entry) => total + entry.bytes, 0),
      names: picked.map((entry) => entry.name).sort()
    }
  }
  return sum
}

/** Every directory holding package NAME under nodeModules, nested node_modules included. */
const findPackages = (nodeModules, name) => {
  const found = []
  const visit = (dir) => {
    if (!existsSync(dir)) return
    const candidate = join(dir, name)
    if (existsSync(join(candidate, "package.json"))) found.push(candidate)
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === ".bin") continue
      const path = join(dir, entry.name)
      const packages = entry.name.startsWith("@")
        ? readdirSync(path, { withFileTypes: true }).filter((inner) => inner.isDirectory()).map((inner) =>
          join(path, inner.name)
        )
        : [path]
      for (const pkg of packages) visit(join(pkg, "node_modules"))
    }
  }
  visit(nodeModules)
  return found
}

const relativeToRoot = (path) => (path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path)

const tarList = async (tarball) => {
  const result = await run("tar", ["-tzf", tarball], { timeoutMs: 30_000 })
  if (result.code !== 0) throw new Error(`tar -tzf ${tarball}: ${result.stderr}`)
  return result.stdout.split("\n").filter((line) => line !== "" && !line.endsWith("/")).map((line) =>
    line.replace(/^package\//, "")
  )
}

// -----------------------------------------------------------------------------

const checkTarball = (pkg, tarball, files, extracted) => {
  const problems = []
  const fileSet = new Set(files)
  const allowed = /^(dist\/|src\/|bin\/|package\.json$|README\.md$|CHANGELOG\.md$|LICENSE$)/
  for (const file of files) {
    if (!allowed.test(file)) problems.push(`unexpected file ${file}`)
    if (/tsbuildinfo/.test(file)) problems.push(`build info shipped: ${file}`)
    if (/\.(test|spec)\.[cm]?[jt]sx?$/.test(file) || /^(test|tests|coverage)\//.test(file)) {
      problems.push(`test file shipped: ${file}`)
    }
  }
  for (const required of ["package.json", "README.md", "CHANGELOG.md", "LICENSE"]) {
    if (!fileSet.has(required)) problems.push(`missing ${required}`)
  }
  const manifest = JSON.parse(readFileSync(join(extracted, "package.json"), "utf8"))
  const targets = []
  const walkExports = (value, path) => {
    if (typeof value === "string") targets.push({ path, target: value })
    else if (Array.isArray(value)) value.forEach((inner, i) => walkExports(inner, `${path}[${i}]`))
    else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) {
        if (key === "development") problems.push(`exports${path}.development is published`)
        walkExports(inner, `${path}.${key}`)
      }
    }
  }
  walkExports(manifest.exports, "")
  if (manifest.exports === undefined) problems.push("no exports")
  for (const { path, target } of targets) {
    if (/\.[cm]?ts$/.test(target) && !/\.d\.[cm]?ts$/.test(target)) {
      problems.push(`exports${path} resolves to TypeScript source ${target}`)
    }
    const concrete = target.replace("*", "index").replace(/^\.\//, "")
    if (!fileSet.has(concrete)) problems.push(`exports${path} -> ${target}: ${concrete} is not in the tarball`)
  }
  for (
    const [name, target] of Object.entries(
      typeof manifest.bin === "string" ? { [manifest.name]: manifest.bin } : manifest.bin ?? {}
    )
  ) {
    if (!fileSet.has(target.replace(/^\.\//, ""))) problems.push(`bin ${name} -> ${target} is not in the tarball`)
  }
  if (manifest.scripts !== undefined) {
    problems.push(`scripts in the published manifest: ${Object.keys(manifest.scripts).join(", ")}`)
  }
  if (pkg.name === "@effect-mcp/cli") {
    // the command is bundled (scripts/build-cli.mjs): it needs no package installed beside it
    for (
      const file of [
        "dist/bundle/effect-mcp.mjs",
        "dist/bundle/THIRD-PARTY-LICENSES.txt",
        "dist/McpCli.js",
        "dist/McpCli.d.ts"
      ]
    ) {
      if (!fileSet.has(file)) problems.push(`missing ${file}`)
    }
    const dependencies = Object.keys(manifest.dependencies ?? {})
    if (dependencies.length > 0) problems.push(`dependencies of a bundled command: ${dependencies.join(", ")}`)
    const required = Object.keys(manifest.peerDependencies ?? {}).filter((name) =>
      manifest.peerDependenciesMeta?.[name]?.optional !== true
    )
    if (required.length > 0) {
      problems.push(`peer dependencies not optional (the bundled command needs none): ${required.join(", ")}`)
    }
  }
  // every dist .js has its .d.ts; every source map's sources are shipped
  let maps = 0
  for (const file of files) {
    if (file.startsWith("dist/") && file.endsWith(".js") && !fileSet.has(file.replace(/\.js$/, ".d.ts"))) {
      problems.push(`${file} has no .d.ts`)
    }
    if (!file.endsWith(".map")) continue
    maps += 1
    const map = JSON.parse(readFileSync(join(extracted, file), "utf8"))
    for (const source of map.sources ?? []) {
      const resolved = posix.normalize(posix.join(posix.dirname(file), map.sourceRoot ?? "", source))
      if (!fileSet.has(resolved)) problems.push(`${file}: source ${source} (${resolved}) is not shipped`)
    }
  }
  if (maps === 0) problems.push("no source maps")
  return { problems, manifest, maps }
}

const main = async () => {
  const major = Number(process.versions.node.split(".")[0])
  if (!record("node >= 22", major >= 22, `running on ${process.version} (${process.execPath})`)) return

  // started now, awaited later: the registry's versions, and the SDK's app (needs nothing of ours)
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  const pins = {
    effect: rootManifest.devDependencies.effect,
    "@effect/platform-node": rootManifest.devDependencies["@effect/platform-node"],
    sdk: rootManifest.devDependencies["@modelcontextprotocol/sdk"]
  }
  const peerRange = JSON.parse(readFileSync(join(root, "packages/core/package.json"), "utf8")).peerDependencies.effect
  const versions = Promise.all([newest("effect", peerRange), newest("@effect/platform-node", peerRange)]).then(
    (found) => ({ found }),
    (error) => ({ error })
  )
  const app = tempDir("effect-mcp-app-")
  const oursApp = tempDir("effect-mcp-footprint-")
  const sdkApp = tempDir("effect-mcp-sdk-footprint-")
  const cliApp = tempDir("effect-mcp-cli-alone-")
  for (
    const [dir, name] of [[app, "pack-check-app"], [oursApp, "pack-check-ours"], [sdkApp, "pack-check-sdk"], [
      cliApp,
      "pack-check-cli"
    ]]
  ) {
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name, version: "0.0.0", private: true, type: "module" }, null, 2) + "\n"
    )
  }
  const install = (cwd, specs) =>
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...specs], { cwd, timeoutMs: 240_000 })
  const sdkInstall = install(sdkApp, [`@modelcontextprotocol/sdk@${pins.sdk}`])

  // --- build ------------------------------------------------------------------
  section("build")
  const tsc = binOf("typescript", "tsc")
  const build = await node([tsc, "-b", "packages/cli", "packages/redis"], { timeoutMs: 240_000 })
  if (!record("build (tsc -b packages/cli packages/redis)", build.code === 0, describe(build))) {
    console.log(output(build))
    return
  }

  // --- pack -------------------------------------------------------------------
  section("pack")
  const work = tempDir("effect-mcp-pack-")
  const tarballs = join(work, "tarballs")
  mkdirSync(tarballs)
  const before = new Map(PACKAGES.map(({ dir }) => [dir, readFileSync(join(root, dir, "package.json"), "utf8")]))
  const pack = await run(
    "npm",
    ["pack", ...PACKAGES.flatMap(({ dir }) => ["--workspace", dir]), "--pack-destination", tarballs, "--json"],
    { timeoutMs: 240_000 }
  )
  if (!record("npm pack", pack.code === 0, describe(pack))) {
    console.log(output(pack))
    return
  }
  const packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("[")))
  const byName = new Map(packed.map((entry) => [entry.name, entry]))
  const tarballOf = new Map()
  const publicModules = new Map()
  const sizes = []
  for (const pkg of PACKAGES) {
    const entry = byName.get(pkg.name)
    if (entry === undefined) {
      record(`pack ${pkg.name}`, false, "not in npm pack's output")
      continue
    }
    const tarball = join(tarballs, entry.filename)
    const after = readFileSync(join(root, pkg.dir, "package.json"), "utf8")
    const leftover = existsSync(join(root, pkg.dir, ".package.json.prepack"))
    const extracted = join(work, "extracted", basename(pkg.dir))
    mkdirSync(extracted, { recursive: true })
    const untar = await run("tar", ["-xzf", tarball, "-C", extracted, "--strip-components=1"], { timeoutMs: 30_000 })
    if (untar.code !== 0) {
      record(`pack ${pkg.name}`, false, `tar -xzf: ${describe(untar)}`)
      continue
    }
    const files = await tarList(tarball)
    const { manifest, maps, problems } = checkTarball(pkg, tarball, files, extracted)
    if (after !== before.get(pkg.dir)) problems.push("package.json in the repository was not restored after packing")
    if (leftover) problems.push(".package.json.prepack left behind")
    // the subpaths `./*` publishes: dist/<Module>.js
    publicModules.set(
      pkg.name,
      manifest.exports?.["./*"] === undefined
        ? []
        : files.filter((file) => /^dist\/[A-Za-z]\w*\.js$/.test(file) && file !== "dist/index.js").map((file) =>
          file.slice(5, -3)
        )
    )
    sizes.push({ name: pkg.name, size: entry.size, unpacked: entry.unpackedSize, files: files.length })
    if (
      record(
        `pack ${pkg.name}`,
        problems.length === 0,
        `${entry.filename}: ${kb(entry.size)} packed, ${
          kb(entry.unpackedSize)
        } unpacked, ${files.length} files, ${maps} source maps` +
          (problems.length === 0 ? "" : `\n${indent(problems.slice(0, 30).join("\n"))}`)
      )
    ) tarballOf.set(pkg.name, tarball)
  }
  if (PACKAGES.some((pkg) => !tarballOf.has(pkg.name))) return

  // --- versions -----------------------------------------------------------------
  const resolved = await versions
  if (resolved.error !== undefined) {
    record("registry versions", false, String(resolved.error))
    return
  }
  const [effectVersion, platformVersion] = resolved.found
  const note = (name, version, pin) =>
    version === pin
      ? `${name} ${version}: the newest in ${peerRange} on the registry is the repository's pin, no other 4.x patch to test against`
      : `${name} ${version}: the newest in ${peerRange} on the registry (the repository pins ${pin})`
  record(
    "registry versions",
    true,
    `${note("effect", effectVersion, pins.effect)}; ${
      note("@effect/platform-node", platformVersion, pins["@effect/platform-node"])
    }`
  )

  // --- installs, while publint and attw run ---------------------------------------
  section("publint, attw; install the apps")
  const tgz = (name) => tarballOf.get(name)
  const effectSpecs = [`effect@${effectVersion}`, `@effect/platform-node@${platformVersion}`]
  const installs = Promise.all([
    install(app, [...PACKAGES.map((pkg) => tgz(pkg.name)), ...effectSpecs, TYPESCRIPT, TYPES_NODE]),
    install(oursApp, [tgz("@effect-mcp/core"), tgz("@effect-mcp/platform-node"), ...effectSpecs]),
    sdkInstall,
    // the command alone: its peers are optional, so nothing else comes
    install(cliApp, [tgz("@effect-mcp/cli")])
  ])
  const publint = binOf("publint", "publint")
  const attw = binOf("@arethetypeswrong/cli", "attw")
  const lints = await Promise.all(
    PACKAGES.map(async (pkg) => {
      const tarball = tgz(pkg.name)
      const modules = publicModules.get(pkg.name)
      const entrypoints = modules.length === 0 ? [] : ["--include-entrypoints", ...modules.map((name) => `./${name}`)]
      const [lint, types] = await Promise.all([
        node([publint, "run", tarball, "--strict", "--level", "suggestion"], { timeoutMs: 120_000 }),
        node([
          attw,
          tarball,
          "--profile",
          "esm-only",
          "--format",
          "table-flipped",
          "--no-emoji",
          "--no-color",
          ...entrypoints
        ], {
          timeoutMs: 120_000
        })
      ])
      return { lint, modules, pkg, types }
    })
  )
  for (const { lint, modules, pkg, types } of lints) {
    const lintText = `${lint.stdout}\n${lint.stderr}`.replace(/^(Running publint|Unpacking tarball|Linting).*\n?/gm, "")
      .trim()
    record(
      `publint --strict ${pkg.name}`,
      lint.code === 0,
      `${describe(lint)}: ${lint.code === 0 && lintText === "All good!" ? "all good" : `\n${indent(lintText)}`}`
    )
    record(
      `attw --profile esm-only ${pkg.name}`,
      types.code === 0,
      `${describe(types)}: ${types.code === 0 ? "no problems" : "problems"} in ${
        modules.length + 1
      } entrypoints (node16 from ESM, bundler)` +
        (types.code === 0 ? "" : `\n${indent(`${types.stdout}\n${types.stderr}`, 8000)}`)
    )
  }
  const installStarted = performance.now()
  const [appInstall, oursInstall, sdkInstalled, cliInstall] = await installs
  if (
    !record(
      "install the tarballs in a fresh app",
      appInstall.code === 0,
      `${app}: ${describe(appInstall)} (waited ${elapsed(installStarted)} after the lints)`
    )
  ) {
    console.log(output(appInstall))
    return
  }
  // peers resolved once: a second effect (or @types/node) would break types and Context tags
  const copies = ["effect", "@effect/platform-node", "@effect-mcp/core", "@effect-mcp/platform-node", "@types/node"]
    .map((name) => {
      const found = findPackages(join(app, "node_modules"), name)
      return { found, name }
    })
  const duplicated = copies.filter(({ found }) => found.length !== 1)
  record(
    "one copy of each shared package in the app",
    duplicated.length === 0,
    copies.map(({ found, name }) =>
      `${name} ${
        found.map((dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version).join(" + ") || "missing"
      }`
    ).join(", ")
  )

  // --- compile --------------------------------------------------------------------
  section("compile with tsc --strict, skipLibCheck: false")
  const sources = []
  const missing = QUICKSTART.filter((file) => !existsSync(join(quickstartDir, file)))
  record(
    `quick-start files in ${relativeToRoot(quickstartDir)}`,
    missing.length === 0,
    missing.length === 0 ? QUICKSTART.join(", ") : `missing: ${missing.join(", ")}`
  )
  for (const file of QUICKSTART.filter((file) => !missing.includes(file))) {
    cpSync(join(quickstartDir, file), join(app, file))
    sources.push(file)
  }
  for (const readme of README_EXAMPLES) {
    const blocks = [...readFileSync(join(root, readme), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) =>
      match[1]
    )
    blocks.forEach((block, i) => {
      const file = `readme-${basename(dirname(readme))}-${i + 1}.ts`
      writeFileSync(join(app, file), block)
      sources.push(file)
    })
  }
  const strict = {
    strict: true,
    skipLibCheck: false,
    module: "NodeNext",
    moduleResolution: "NodeNext",
    target: "ES2022"
  }
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify(
      { compilerOptions: { ...strict, types: ["node"], noEmitOnError: true, rootDir: "." }, files: sources },
      null,
      2
    ) + "\n"
  )
  // every public module imported in a file that uses no Node global, under TypeScript 6's
  // default `types: []`: the packages' declarations must bring what they need themselves
  const imports = PACKAGES.flatMap((
    pkg
  ) => [pkg.name, ...publicModules.get(pkg.name).map((name) => `${pkg.name}/${name}`)])
  writeFileSync(
    join(app, "imports.ts"),
    imports.map((specifier, i) => `import * as M${i} from "${specifier}"\n`).join("") +
      `export const modules = [${imports.map((_, i) => `M${i}`).join(", ")}]\n`
  )
  writeFileSync(
    join(app, "tsconfig.imports.json"),
    JSON.stringify({ compilerOptions: { ...strict, noEmit: true }, files: ["imports.ts"] }, null, 2) + "\n"
  )
  const appTsc = join(app, "node_modules", "typescript", "bin", "tsc")
  const [compile, compileImports, version] = await Promise.all([
    node([appTsc, "-p", "tsconfig.json", "--pretty", "false"], { cwd: app, timeoutMs: 240_000 }),
    node([appTsc, "-p", "tsconfig.imports.json", "--pretty", "false"], { cwd: app, timeoutMs: 240_000 }),
    node([appTsc, "--version"], { cwd: app, timeoutMs: 30_000 })
  ])
  const ts = version.stdout.trim().replace(/^Version /, "")
  record(
    `tsc ${ts} --strict ${sources.join(" ")} (types: ["node"])`,
    compile.code === 0,
    compile.code === 0 ? describe(compile) : `${describe(compile)}\n${output(compile)}`
  )
  record(
    `tsc ${ts} --strict, default types: [], importing ${imports.length} public modules`,
    compileImports.code === 0,
    compileImports.code === 0 ? describe(compileImports) : `${describe(compileImports)}\n${output(compileImports)}`
  )

  // --- run ------------------------------------------------------------------------------
  if (compile.code === 0 && missing.length === 0) {
    section("run with plain node")
    const client = await node(["client.js", "node", "server.js"], { cwd: app, timeoutMs: 60_000 })
    record(
      "node client.js node server.js (stdio)",
      client.code === 0 && /add_note/.test(client.stdout),
      `${describe(client)}\n${output(client)}`
    )

    const npx = (args, timeoutMs = 60_000) =>
      run("npx", ["--no-install", "effect-mcp", ...args], { cwd: app, timeoutMs })
    const help = await npx(["--help"])
    record(
      "npx effect-mcp --help (the packed bin)",
      help.code === 0 && /USAGE/.test(help.stdout),
      describe(help) + (help.code === 0 ? "" : `\n${output(help)}`)
    )

    const port = await freePort()
    const server = spawn(process.execPath, ["http-server.js"], {
      cwd: app,
      env: { ...env, PORT: String(port) },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(server)
    let serverOut = ""
    let serverErr = ""
    server.stderr.on("data", (chunk) => (serverErr += chunk))
    const listening = await new Promise((resolvePromise) => {
      const timer = setTimeout(() => resolvePromise(undefined), 30_000)
      server.stdout.on("data", (chunk) => {
        serverOut += chunk
        const match = /listening on (\S+)/.exec(serverOut)
        if (match !== null) {
          clearTimeout(timer)
          resolvePromise(match[1])
        }
      })
      server.on("close", () => {
        clearTimeout(timer)
        children.delete(server)
        resolvePromise(undefined)
      })
    })
    const url = `http://127.0.0.1:${port}/mcp`
    if (
      record(
        `PORT=${port} node http-server.js`,
        listening !== undefined,
        listening === undefined
          ? `no "listening on" line\n${indent(`${serverOut}\n${serverErr}`)}`
          : `listening on ${listening}`
      )
    ) {
      const call = await npx(["--url", url, "call", "add_note", "--args", JSON.stringify({ title: "a", body: "b" })])
      record(
        `npx effect-mcp --url ${url} call add_note --args '{"title":"a","body":"b"}'`,
        call.code === 0,
        `${describe(call)}\n${output(call)}`
      )
    }
    // SIGTERM, then SIGKILL after 5 s: the server's whole process group
    const stopped = await new Promise((resolvePromise) => {
      if (server.exitCode !== null || server.signalCode !== null) return resolvePromise(true)
      const timer = setTimeout(() => {
        killGroup(server, "SIGKILL")
        resolvePromise(false)
      }, 5_000)
      server.once("close", () => {
        clearTimeout(timer)
        resolvePromise(true)
      })
      killGroup(server, "SIGTERM")
    })
    if (!stopped) console.log("    http-server.js did not stop on SIGTERM within 5 s: killed")

    const list = await npx(["--stdio", "node server.js", "list", "tools"])
    record(
      "npx effect-mcp --stdio \"node server.js\" list tools",
      list.code === 0 && /add_note/.test(list.stdout),
      `${describe(list)}\n${output(list)}`
    )

    // --- the command alone ----------------------------------------------------------------
    section("@effect-mcp/cli alone: the bundled command, nothing else installed")
    if (
      record(
        "install the @effect-mcp/cli tarball alone in a fresh app",
        cliInstall.code === 0,
        `${cliApp}: ${describe(cliInstall)}`
      )
    ) {
      const installed = footprint(join(cliApp, "node_modules"))()
      record(
        "@effect-mcp/cli alone brings no other package (its peers are optional)",
        installed.names.length === 1 && installed.names[0] === "@effect-mcp/cli",
        `${installed.packages} package(s), ${mb(installed.bytes)}: ${installed.names.join(", ")}`
      )
      footprints.cli = { packages: installed.packages, megabytes: Number((installed.bytes / 1024 / 1024).toFixed(1)) }
      const alone = (args) => run("npx", ["--no-install", "effect-mcp", ...args], { cwd: cliApp, timeoutMs: 60_000 })
      const timed = async (args) => {
        const since = performance.now()
        const result = await alone(args)
        return { result, ms: Math.round(performance.now() - since) }
      }
      const serverJs = join(app, "server.js")
      const { ms: helpMs, result: helpAlone } = await timed(["--help"])
      record(
        "npx effect-mcp --help (the command alone)",
        helpAlone.code === 0 && /USAGE/.test(helpAlone.stdout),
        `${describe(helpAlone)}, ${helpMs} ms with npx` + (helpAlone.code === 0 ? "" : `\n${output(helpAlone)}`)
      )
      const { ms: listMs, result: listAlone } = await timed(["--stdio", `node ${serverJs}`, "list", "tools"])
      record(
        `npx effect-mcp --stdio "node ${serverJs}" list tools (the command alone)`,
        listAlone.code === 0 && /add_note/.test(listAlone.stdout),
        `${describe(listAlone)}, ${listMs} ms with npx\n${output(listAlone)}`
      )
      // ten servers from ./mcp.json, as a group; their tools share names, hence --qualify
      const servers = Object.fromEntries(
        Array.from({ length: 10 }, (_, i) => [`notes${i + 1}`, { command: process.execPath, args: [serverJs] }])
      )
      writeFileSync(join(cliApp, "mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2) + "\n")
      const { ms: groupMs, result: group } = await timed(["list", "tools", "--qualify"])
      const qualified = group.stdout.split("\n").filter((line) => /^notes\d+_add_note\s/.test(line)).length
      record(
        "npx effect-mcp list tools --qualify over ten servers from ./mcp.json (the command alone)",
        group.code === 0 && qualified === 10,
        `${describe(group)}, ${qualified} of 10 servers' add_note listed, ${groupMs} ms with npx` +
          (group.code === 0 && qualified === 10 ? "" : `\n${output(group)}`)
      )
    } else console.log(output(cliInstall))
  }

  // --- footprint ------------------------------------------------------------------------------
  section("node_modules footprint")
  if (
    record(
      "install @effect-mcp/core + @effect-mcp/platform-node + peers in an app",
      oursInstall.code === 0,
      describe(oursInstall)
    )
  ) {
    const part = footprint(join(oursApp, "node_modules"))
    const all = part()
    const ours = part([
      "@effect-mcp/core",
      "@effect-mcp/platform-node",
      "@cfworker/json-schema",
      "jose",
      "oauth4webapi"
    ])
    const effect = part(["effect"])
    const peers = part(all.names.filter((name) => !ours.names.includes(name) && name !== "effect"))
    console.log(`    total: ${all.packages} packages, ${mb(all.bytes)}`)
    console.log(
      `      @effect-mcp/core + @effect-mcp/platform-node and their own dependencies: ${ours.packages} packages, ${
        mb(ours.bytes)
      } (${ours.names.sort().join(", ")})`
    )
    console.log(`      effect: ${mb(effect.bytes)}`)
    console.log(
      `      @effect/platform-node and what it brings: ${peers.packages} packages, ${mb(peers.bytes)} (${
        peers.names.sort().join(", ")
      })`
    )
    footprints.ours = { packages: all.packages, megabytes: Number((all.bytes / 1024 / 1024).toFixed(1)) }
  } else console.log(output(oursInstall))
  if (
    record(
      `install @modelcontextprotocol/sdk@${pins.sdk} alone in an app`,
      sdkInstalled.code === 0,
      describe(sdkInstalled)
    )
  ) {
    const sdk = footprint(join(sdkApp, "node_modules"))()
    console.log(`    total: ${sdk.packages} packages, ${mb(sdk.bytes)}`)
    footprints.sdk = { packages: sdk.packages, megabytes: Number((sdk.bytes / 1024 / 1024).toFixed(1)) }
  } else console.log(output(sdkInstalled))

  console.log("\n== tarballs")
  for (const { files, name, size, unpacked } of sizes) {
    console.log(
      `    ${name.padEnd(28)} ${kb(size).padStart(10)} packed ${kb(unpacked).padStart(11)} unpacked ${
        String(files).padStart(5)
      } files`
    )
  }
  tarballSizes.push(...sizes)
}

const killChildren = () => {
  for (const child of children) killGroup(child, "SIGKILL")
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    killChildren()
    if (!keep) { for (const dir of temps) rmSync(dir, { recursive: true, force: true }) }
    process.exit(130)
  })
}

try {
  await main()
} catch (error) {
  record("pack check", false, error instanceof Error ? error.stack ?? error.message : String(error))
} finally {
  killChildren()
  if (keep) {
    if (temps.length > 0) console.log(`kept: ${temps.join(" ")}`)
  } else {
    const cleaning = performance.now()
    await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })))
    console.log(`\n(temporary directories removed in ${elapsed(cleaning)})`)
  }
}
const failed = checks.filter((check) => !check.ok)
console.log(
  `\n== pack check: ${checks.length - failed.length} of ${checks.length} checks passed in ${elapsed(started)}`
)
for (const check of failed) console.log(`   failed: ${check.name}`)
if (jsonOut !== undefined) {
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        passed: checks.length - failed.length,
        failed: failed.length,
        seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
        tarballs: tarballSizes,
        footprints,
        checks
      },
      null,
      2
    ) + "\n"
  )
}
process.exit(failed.length === 0 ? 0 : 1)
