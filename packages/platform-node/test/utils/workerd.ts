/**
 * Cloudflare Workers, locally: an entry bundled as a user would bundle it
 * (`bundleForWorkers`: rolldown, one ESM file, the conditions wrangler uses,
 * every Node built-in an error naming its importer) and served by workerd
 * through miniflare on 127.0.0.1, an ephemeral port (`startWorker`, or
 * `serveWorker` for a scope). No `nodejs_compat` flag: a Worker that needs
 * Node fails here.
 *
 * Our packages are bundled as published: their `default` export condition,
 * `dist/*.js` (built by `npx tsc -b`, and by `npm ci`'s `prepare`), not the
 * `development` condition's sources. Run `npx tsc -b` after changing them.
 */
import { Effect } from "effect"
import { Miniflare } from "miniflare"
import { builtinModules } from "node:module"
import { isAbsolute, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { rolldown, type Plugin } from "rolldown"

/** The repository's root: entries are paths from it, and packages resolve from its node_modules. */
export const root = fileURLToPath(new URL("../../../..", import.meta.url))

/** The compatibility date the Workers run with (no flags). */
export const COMPATIBILITY_DATE = "2026-07-28"

/** The export conditions wrangler resolves a Worker's imports with, in order. */
export const CONDITIONS = ["workerd", "worker", "browser", "import", "module", "default"]

/** An entry that is no file: its source, whose imports are absolute paths or packages. */
export interface SourceEntry {
  /** How errors name it. */
  readonly name: string
  readonly source: string
}

/** The bundled Worker: one ES module. */
export interface WorkerBundle {
  readonly code: string
}

const VIRTUAL = "\0worker-entry:"

const nodeBuiltins = new Set(builtinModules)
const isNodeBuiltin = (id: string) => id.startsWith("node:") || nodeBuiltins.has(id) || nodeBuiltins.has(id.split("/")[0]!)

const nameOf = (importer: string | undefined) =>
  importer === undefined
    ? "the entry"
    : importer.startsWith(VIRTUAL)
    ? `the entry "${importer.slice(VIRTUAL.length)}"`
    : relative(root, importer)

/** Fails the bundle at each Node built-in, naming it and its importer. */
const noNodeBuiltins: Plugin = {
  name: "no-node-builtins",
  resolveId(id, importer) {
    if (isNodeBuiltin(id)) this.error(`a Worker cannot import the Node built-in "${id}" (imported by ${nameOf(importer)})`)
    return null
  }
}

const sourceEntry = (entry: SourceEntry): Plugin => ({
  name: "source-entry",
  resolveId: (id) => id === VIRTUAL + entry.name ? id : null,
  load: (id) => id === VIRTUAL + entry.name ? entry.source : null
})

/**
 * Bundles `entry` (a path from the repository root, or a `SourceEntry`) into
 * one ES module for workerd: platform `browser`, the conditions of
 * `CONDITIONS`, dynamic imports inlined. Rejects when anything it reaches
 * imports a Node built-in (`node:*` or bare `fs`, `path`, ...): the error names
 * the module and its importer.
 */
export const bundleForWorkers = async (entry: string | SourceEntry): Promise<WorkerBundle> => {
  const input = typeof entry === "string" ? (isAbsolute(entry) ? entry : resolve(root, entry)) : VIRTUAL + entry.name
  const bundle = await rolldown({
    input,
    cwd: root,
    platform: "browser",
    resolve: { conditionNames: CONDITIONS },
    plugins: [noNodeBuiltins, ...(typeof entry === "string" ? [] : [sourceEntry(entry)])],
    logLevel: "silent"
  })
  try {
    const { output } = await bundle.generate({ format: "esm", codeSplitting: false })
    return { code: output[0].code }
  } finally {
    await bundle.close()
  }
}

/** A Worker served by workerd: its URL (`http://127.0.0.1:PORT/`), and `dispose`. */
export interface ServedWorker {
  readonly url: URL
  readonly dispose: () => Promise<void>
}

/** Options of `startWorker`. */
export interface WorkerOptions {
  /** Plain-text variables, the Worker's `env`. */
  readonly bindings?: Record<string, string> | undefined
}

/**
 * Starts `bundle` on workerd (miniflare, 127.0.0.1, an ephemeral port,
 * `COMPATIBILITY_DATE`, no compatibility flags); resolves once it listens.
 */
export const startWorker = async (bundle: WorkerBundle, options: WorkerOptions = {}): Promise<ServedWorker> => {
  const mf = new Miniflare({
    modules: true,
    script: bundle.code,
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: options.bindings ?? {},
    host: "127.0.0.1",
    port: 0
  })
  try {
    const url = await mf.ready
    return { url, dispose: () => mf.dispose() }
  } catch (error) {
    await mf.dispose().catch(() => undefined)
    throw error
  }
}

/** `startWorker` for the scope: disposed when it ends. */
export const serveWorker = (bundle: WorkerBundle, options?: WorkerOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startWorker(bundle, options)),
    (served) => Effect.promise(() => served.dispose())
  )
