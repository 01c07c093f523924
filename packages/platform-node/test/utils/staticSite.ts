/**
 * A built static site served for a test, as `vitepress preview` serves one
 * (its clean URLs): `/` and `/guide/` are the directories' `index.html`,
 * `/guide/x` is `guide/x.html`, any other path a file of the site, and
 * anything else `404` with the site's `404.html`. A `node:http` server on
 * 127.0.0.1 and an ephemeral port, for the scope; it records the paths asked
 * of it. Files are read from disk for each request (binary as it is), never
 * from outside the site's directory; the hashed assets (`<base>assets/`) may
 * be cached for good, anything else is revalidated (`no-cache`).
 */
import { Effect, type Scope } from "effect"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as Http from "node:http"
import { extname, join, resolve, sep } from "node:path"
import { listenLoopback } from "../fixtures/listen.ts"

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".xml": "application/xml",
  ".webmanifest": "application/manifest+json"
}

/** A served site: its origin (`http://127.0.0.1:<port>`), and the requests so far (`METHOD path status`). */
export interface ServedSite {
  readonly origin: string
  readonly requested: () => ReadonlyArray<string>
}

/** The file of `dir` that answers the URL path `path` (already decoded), clean URLs first; `undefined` when none. */
const fileFor = (dir: string, path: string): string | undefined => {
  const rootDir = resolve(dir)
  const candidates = path.endsWith("/")
    ? [`${path}index.html`]
    : [path, `${path}.html`, `${path}/index.html`]
  for (const candidate of candidates) {
    const file = resolve(rootDir, `.${candidate}`)
    if (file !== rootDir && !file.startsWith(rootDir + sep)) continue
    if (existsSync(file) && statSync(file).isFile()) return file
  }
  return undefined
}

/**
 * Serves the built site in `dir` for the scope (GET and HEAD; anything else
 * `405`) under `base` (the site's `base`, `/` unless built with another):
 * `<base>guide/x` is `guide/x.html`, and a path outside the base is not found.
 */
export const serveSite = (dir: string, base = "/"): Effect.Effect<ServedSite, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requested: Array<string> = []
    const server = Http.createServer((request, response) => {
      const pathname = new URL(request.url ?? "/", "http://127.0.0.1").pathname
      // VitePress's assets are named by their hash: cached for good, as a host serves them
      const cache = pathname.startsWith(`${base}assets/`) ? "public, max-age=31536000, immutable" : "no-cache"
      const answer = (status: number, headers: Http.OutgoingHttpHeaders, body?: Buffer | string) => {
        requested.push(`${request.method} ${request.url} ${status}`)
        response.writeHead(status, { "cache-control": status === 200 ? cache : "no-store", ...headers })
        response.end(request.method === "HEAD" ? undefined : body)
      }
      if (request.method !== "GET" && request.method !== "HEAD") return answer(405, { allow: "GET, HEAD" })
      let path: string
      try {
        path = decodeURIComponent(pathname)
      } catch {
        return answer(400, { "content-type": "text/plain" }, "bad path\n")
      }
      const file = path.startsWith(base) ? fileFor(dir, `/${path.slice(base.length)}`) : undefined
      if (file !== undefined) {
        return answer(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }, readFileSync(file))
      }
      const notFound = join(dir, "404.html")
      return existsSync(notFound)
        ? answer(404, { "content-type": TYPES[".html"] }, readFileSync(notFound))
        : answer(404, { "content-type": "text/plain" }, "not found\n")
    })
    const port = yield* listenLoopback(server)
    return { origin: `http://127.0.0.1:${port}`, requested: () => [...requested] }
  })
