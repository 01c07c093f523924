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
import { type Bundle, bundle, type SourceEntry } from "./bundle.ts"

/** The compatibility date the Workers run with (no flags). */
export const COMPATIBILITY_DATE = "2026-07-28"

/** The export conditions wrangler resolves a Worker's imports with, in order. */
export const CONDITIONS = ["workerd", "worker", "browser", "import", "module", "default"]

/** The bundled Worker: one ES module. */
export type WorkerBundle = Bundle

/**
 * Bundles `entry` (a path from the repository root, or a `SourceEntry`) into
 * one ES module for workerd (`utils/bundle.ts`, the conditions of
 * `CONDITIONS`). Rejects when anything it reaches imports a Node built-in:
 * the error names the module and its importer.
 */
export const bundleForWorkers = (entry: string | SourceEntry): Promise<WorkerBundle> =>
  bundle(entry, { platform: "a Worker", conditions: CONDITIONS })

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
export const startWorker = async (
  worker: { readonly code: string },
  options: WorkerOptions = {}
): Promise<ServedWorker> => {
  const mf = new Miniflare({
    modules: true,
    script: worker.code,
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
export const serveWorker = (worker: { readonly code: string }, options?: WorkerOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startWorker(worker, options)),
    (served) => Effect.promise(() => served.dispose())
  )
