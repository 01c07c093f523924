/**
 * The runtimes the tests run our servers on besides Node: Bun and Deno, their
 * binaries from the `bun` and `deno` devDependencies in node_modules (never a
 * global install), each running an entry (a path from the repository root)
 * from the TypeScript sources with the `development` condition. A missing
 * binary is an error that says what to do: these tests fail, they are never
 * skipped.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root, where the runtimes run. */
export const root = fileURLToPath(new URL("../../../..", import.meta.url))

/** What a run may do on Deno (Bun asks nothing): read these variables, use the network on 127.0.0.1. */
export interface Permissions {
  readonly env?: ReadonlyArray<string> | undefined
  readonly net?: boolean | undefined
}

/** A runtime, installed by an npm package. */
export interface Runtime {
  readonly name: string
  /** The npm package that installs the binary. */
  readonly pkg: string
  /** The binary inside that package. */
  readonly binary: (packageDir: string) => string
  /** The arguments that run `entry`. */
  readonly args: (entry: string, permissions?: Permissions) => ReadonlyArray<string>
}

const windows = process.platform === "win32"

/** Bun and Deno. */
export const runtimes: ReadonlyArray<Runtime> = [
  {
    name: "Bun",
    pkg: "bun",
    // `bin/bun.exe` on every platform: the package's install script puts the native binary there
    binary: (dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin: { bun: string } }
      return join(dir, manifest.bin.bun)
    },
    // --no-install: resolve from node_modules only, never fetch a package
    args: (entry) => ["--no-install", "--conditions=development", entry]
  },
  {
    name: "Deno",
    pkg: "deno",
    // the native binary itself, not the package's `bin.cjs` (a Node wrapper that would sit between us and it)
    binary: (dir) => join(dir, windows ? "deno.exe" : "deno"),
    // only the permissions asked for; --no-prompt turns a missing one into an error.
    // With the network, --unstable-no-legacy-abort: `request.signal` aborts when the client goes away,
    // not also once a response was delivered (Deno's legacy behaviour, which it warns about on stderr).
    // Effect's web handler reads that signal as "the client aborted" and interrupts the request's fiber
    // on it, as on Bun and Node: the flag gives Deno the same meaning.
    // --node-modules-dir=manual: use the workspace's node_modules as it is, never install into it
    args: (entry, permissions = {}) => [
      "run",
      "--no-prompt",
      ...(permissions.env !== undefined && permissions.env.length > 0 ? [`--allow-env=${permissions.env.join(",")}`] : []),
      ...(permissions.net === true ? ["--allow-net=127.0.0.1", "--unstable-no-legacy-abort"] : []),
      "--node-modules-dir=manual",
      "--conditions=development",
      entry
    ]
  }
]

const require = createRequire(join(root, "package.json"))

/** The runtime's binary from node_modules; a missing one is an error that says what to do. */
export const resolveBinary = (runtime: Runtime): string => {
  let dir: string
  try {
    dir = dirname(require.resolve(`${runtime.pkg}/package.json`))
  } catch {
    throw new Error(
      `${runtime.name}: the "${runtime.pkg}" devDependency is not installed in ${root}node_modules (run npm install)`
    )
  }
  const binary = runtime.binary(dir)
  if (!existsSync(binary)) {
    throw new Error(
      `${runtime.name}: no binary at ${binary} (the "${runtime.pkg}" package's install script did not run: npm rebuild ${runtime.pkg})`
    )
  }
  return binary
}
