/**
 * vitest globalSetup of packages/cli: the CLI tests run the built
 * `dist/bin.js` as a process, so build it (`tsc -b packages/cli`, which builds
 * core and platform-node first) when it is missing or older than a source.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../..", import.meta.url))
const packages = ["core", "platform-node", "redis", "cli"]

const newest = (dir: string): number => {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

const stale = (): string | undefined => {
  if (!existsSync(join(root, "packages/cli/dist/bin.js"))) return "packages/cli/dist/bin.js is missing"
  for (const name of packages) {
    const info = join(root, "packages", name, "dist/.tsbuildinfo")
    if (!existsSync(info)) return `packages/${name} was never built`
    if (newest(join(root, "packages", name, "src")) > statSync(info).mtimeMs) return `packages/${name}/src changed`
  }
  return undefined
}

export default function setup(): void {
  const why = stale()
  if (why === undefined) return
  const started = performance.now()
  try {
    execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-b", "packages/cli"], {
      cwd: root,
      stdio: "pipe",
      timeout: 300_000
    })
  } catch (error) {
    // type errors elsewhere still emit: only a missing bin is fatal
    const output = String((error as { stdout?: unknown }).stdout ?? "")
    process.stderr.write(`[cli globalSetup] tsc -b packages/cli reported errors:\n${output.slice(0, 4000)}\n`)
    if (!existsSync(join(root, "packages/cli/dist/bin.js"))) throw error
  }
  process.stderr.write(
    `[cli globalSetup] built packages/cli (${why}) in ${Math.round(performance.now() - started)} ms\n`
  )
}
