/**
 * An entry bundled as an app for a platform without Node would bundle it:
 * rolldown, one ES module (dynamic imports inlined), platform `browser`, the
 * export conditions the platform's tooling resolves with, and every Node
 * built-in (`node:fs`, bare `fs`, `fs/promises`, ...) an error that names the
 * module importing it, before anything else resolves it: a bundle that builds
 * pulls in no Node module. For the browser (`utils/browser.ts`) and for
 * Workers (`utils/workerd.ts`).
 */
import { isBuiltin } from "node:module"
import { isAbsolute, resolve } from "node:path"
import { type Plugin, rolldown } from "rolldown"
import { root } from "./runtimes.ts"

/** An entry that is no file: its source, whose imports are absolute paths or packages. */
export interface SourceEntry {
  /** How errors name it. */
  readonly name: string
  readonly source: string
}

/** One ES module, and the modules that went into it (absolute paths). */
export interface Bundle {
  readonly code: string
  readonly modules: ReadonlyArray<string>
}

/** How to bundle for a platform. */
export interface BundleOptions {
  /** The platform, as the error about a Node built-in names it ("a browser", "a Worker"). */
  readonly platform: string
  /** The export conditions, in order. */
  readonly conditions: ReadonlyArray<string>
  /** An inline source map. Default `false`. */
  readonly sourcemap?: boolean | undefined
  /**
   * Text of the entry module replaced (each key by its value, everywhere in
   * it), as an app's bundler sets its configuration: a test points an
   * example at its own servers.
   */
  readonly replace?: Readonly<Record<string, string>> | undefined
}

const VIRTUAL = "\0entry:"

const nameOf = (importer: string | undefined) =>
  importer === undefined
    ? "the entry"
    : importer.startsWith(VIRTUAL)
    ? `the entry "${importer.slice(VIRTUAL.length)}"`
    : importer

/** Fails the bundle at each Node built-in, naming it and its importer. */
const noNodeBuiltins = (platform: string): Plugin => ({
  name: "no-node-builtins",
  resolveId(id, importer) {
    if (id.startsWith("node:") || isBuiltin(id)) {
      this.error(`the Node built-in "${id}" is imported by ${nameOf(importer)}: ${platform} has none`)
    }
    return null
  }
})

const replaceIn = (input: string, replace: Readonly<Record<string, string>>): Plugin => ({
  name: "replace",
  transform: (code, id) =>
    id === input
      ? Object.entries(replace).reduce((replaced, [from, to]) => replaced.replaceAll(from, to), code)
      : null
})

const sourceEntry = (entry: SourceEntry): Plugin => ({
  name: "source-entry",
  resolveId: (id) => id === VIRTUAL + entry.name ? id : null,
  load: (id) => id === VIRTUAL + entry.name ? entry.source : null
})

/**
 * Bundles `entry` (a path from the repository's root, an absolute path, or a
 * {@link SourceEntry}); rejects when anything it reaches imports a Node
 * built-in, or for any other build error.
 */
export const bundle = async (entry: string | SourceEntry, options: BundleOptions): Promise<Bundle> => {
  const input = typeof entry === "string" ? (isAbsolute(entry) ? entry : resolve(root, entry)) : VIRTUAL + entry.name
  const built = await rolldown({
    input,
    cwd: root,
    platform: "browser",
    resolve: { conditionNames: [...options.conditions] },
    plugins: [
      noNodeBuiltins(options.platform),
      ...(typeof entry === "string" ? [] : [sourceEntry(entry)]),
      ...(options.replace === undefined ? [] : [replaceIn(input, options.replace)])
    ],
    logLevel: "silent"
  })
  try {
    const { output } = await built.generate({
      format: "esm",
      codeSplitting: false,
      ...(options.sourcemap === true && { sourcemap: "inline" as const })
    })
    const chunk = output[0]
    return { code: chunk.code, modules: chunk.moduleIds }
  } finally {
    await built.close()
  }
}
