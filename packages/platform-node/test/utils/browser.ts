/**
 * Running our code in a real browser, for tests: an entry bundled for the
 * browser with rolldown ({@link bundleForBrowser}: every Node built-in an
 * error that names its importer, so a bundle that builds pulls no `node:`
 * module), a page and its scripts served from a `node:http` server on
 * 127.0.0.1 ({@link servePage}), Debian's Chromium launched headless through
 * `playwright-core` ({@link launchChromium}, `MCP_CHROMIUM` or
 * `/usr/bin/chromium`; a missing binary is a failure that says to
 * `apt-get install chromium`, never a skip), and a page opened in it whose
 * console errors, uncaught exceptions and failed requests are collected
 * ({@link openPage}). Everything is scoped: the scope's end closes the page,
 * the browser and the server, and {@link chromiumLeftovers} tells whether any
 * of Chromium's processes outlived it.
 */
import { Data, Effect, type Scope } from "effect"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import { type Browser, chromium, type Page, type Request } from "playwright-core"
import { listenLoopback } from "../fixtures/listen.ts"
import { type Bundle, bundle } from "./bundle.ts"

// -----------------------------------------------------------------------------
// bundling
// -----------------------------------------------------------------------------

/** A bundle that did not build: rolldown's message (for a Node built-in: the module and its importer). */
export class BundleError extends Data.TaggedError("BundleError")<{ readonly message: string }> {}

/** An entry bundled for the browser: one ES module, and the modules that went into it (absolute paths). */
export type BrowserBundle = Bundle

/**
 * Bundles `entry` (a path from the repository root, or absolute) for the
 * browser (`utils/bundle.ts`): the `development` condition first (the
 * workspace packages from their TypeScript sources, as the tests run them),
 * then `browser`, with an inline source map (and the entry's text in
 * `replace` replaced: see `BundleOptions`). Fails with a {@link BundleError}
 * when the module graph imports a Node built-in, or for any other build error.
 *
 * The graph is what the entry reaches: a barrel's modules that the entry does
 * not use are not even loaded when their package declares `sideEffects: []`
 * (ours do), so an app importing `McpClient` from `@effect-mcp/core` is
 * checked for what it really pulls in.
 */
export const bundleForBrowser = (
  entry: string,
  replace?: Readonly<Record<string, string>>
): Effect.Effect<BrowserBundle, BundleError> =>
  Effect.tryPromise({
    try: () =>
      bundle(entry, {
        platform: "a browser",
        conditions: ["development", "browser", "import", "default"],
        sourcemap: true,
        replace
      }),
    // rolldown's message without the stack lines of each error it lists
    catch: (error) =>
      new BundleError({
        message: (error instanceof Error ? error.message : String(error))
          .split("\n")
          .filter((line) => !/^\s+at /.test(line))
          .join("\n")
      })
  })

// -----------------------------------------------------------------------------
// serving
// -----------------------------------------------------------------------------

/** A file a page server answers with. */
export interface PageFile {
  readonly contentType: string
  readonly body: string
}

/** A page server: its origin (`http://127.0.0.1:<port>`), and the paths asked for so far. */
export interface ServedPage {
  readonly origin: string
  readonly requested: () => ReadonlyArray<string>
}

/**
 * Serves `files` (by path, e.g. `/` and `/client.js`) from a `node:http`
 * server on 127.0.0.1 and an ephemeral port for the scope; any other path
 * gets `404`, any method but `GET` and `HEAD` `405`. Nothing is cached
 * (`Cache-Control: no-store`).
 */
export const servePage = (files: Readonly<Record<string, PageFile>>): Effect.Effect<ServedPage, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requested: Array<string> = []
    const server = Http.createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname
      requested.push(`${request.method} ${path}`)
      const file = files[path]
      if (request.method !== "GET" && request.method !== "HEAD") {
        response.writeHead(405, { allow: "GET, HEAD" }).end()
      } else if (file === undefined) {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
      } else {
        response.writeHead(200, { "content-type": file.contentType, "cache-control": "no-store" }).end(file.body)
      }
    })
    const port = yield* listenLoopback(server)
    return { origin: `http://127.0.0.1:${port}`, requested: () => [...requested] }
  })

/** The files of a page running one bundled module: `html` at `/` (its script: `/client.js`), the bundle at `/client.js`. */
export const pageFiles = (html: string, bundle: BrowserBundle): Record<string, PageFile> => ({
  "/": { contentType: "text/html; charset=utf-8", body: html },
  "/client.js": { contentType: "text/javascript; charset=utf-8", body: bundle.code }
})

// -----------------------------------------------------------------------------
// Chromium
// -----------------------------------------------------------------------------

/** Where Chromium is: `MCP_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export const chromiumPath = (): string => process.env.MCP_CHROMIUM ?? "/usr/bin/chromium"

/** A headless Chromium: playwright's `Browser`, and the pid of Chromium's main process. */
export interface LaunchedChromium {
  readonly browser: Browser
  readonly pid: number
}

/**
 * Launches Chromium headless for the scope (a playwright browser server in
 * this process, connected to): its end closes the browser (SIGKILL to its
 * process group if it takes more than 10 s). A missing binary fails with a
 * message that says how to install it: the browser tests fail, they are
 * never skipped.
 */
export const launchChromium = (): Effect.Effect<LaunchedChromium, never, Scope.Scope> =>
  Effect.gen(function*() {
    const executablePath = chromiumPath()
    if (!existsSync(executablePath)) {
      return yield* Effect.die(
        new Error(
          `no Chromium at ${executablePath} (MCP_CHROMIUM, else /usr/bin/chromium): apt-get install chromium, or set MCP_CHROMIUM to a Chromium binary`
        )
      )
    }
    const server = yield* Effect.acquireRelease(
      Effect.promise(() =>
        chromium.launchServer({
          executablePath,
          headless: true,
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false
        })
      ),
      (server) =>
        Effect.promise(() => server.close()).pipe(
          Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.promise(() => server.kill()) })
        )
    )
    const pid = server.process().pid
    if (pid === undefined) return yield* Effect.die(new Error("Chromium started without a pid"))
    const browser = yield* Effect.acquireRelease(
      Effect.promise(() => chromium.connect(server.wsEndpoint())),
      (browser) => Effect.promise(() => browser.close())
    )
    return { browser, pid }
  })

/**
 * The processes left of a Chromium whose main process was `pid`: the live
 * ones (zombies excluded) in its process group (playwright starts it
 * detached, in a group of its own, which its renderers and helpers share),
 * as `pid command`. Linux only (`/proc`); elsewhere `[]`.
 */
export const chromiumLeftovers = (pid: number): ReadonlyArray<string> => {
  if (process.platform !== "linux") return []
  const left: Array<string> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    const close = stat.lastIndexOf(")")
    const [state, , group] = stat.slice(close + 2).split(" ")
    if (Number(group) === pid && state !== "Z" && state !== "X") {
      left.push(`${entry} ${stat.slice(stat.indexOf("(") + 1, close)}`)
    }
  }
  return left
}

// -----------------------------------------------------------------------------
// pages
// -----------------------------------------------------------------------------

/**
 * What went wrong on a page so far: console errors, uncaught exceptions,
 * requests that failed without an answer (refused by CORS, connection
 * refused, ...: `METHOD url body: reason`), and answers with a status of 400
 * or more (`status METHOD url`).
 */
export interface PageProblems {
  readonly consoleErrors: ReadonlyArray<string>
  readonly pageErrors: ReadonlyArray<string>
  readonly failedRequests: ReadonlyArray<string>
  readonly errorResponses: ReadonlyArray<string>
}

/**
 * A request the page made: `METHOD url`, then, when it has a body, its
 * JSON-RPC `method`, `(response)` for a JSON-RPC response, or else the
 * body's first 200 characters.
 */
export type RequestLine = string

/** An open page, what it requested, and what went wrong on it so far. */
export interface OpenPage {
  readonly page: Page
  readonly problems: () => PageProblems
  /** Every request, in the order made. */
  readonly requests: () => ReadonlyArray<RequestLine>
  /**
   * The requests the page cancelled after their answer began (a `2xx`
   * arrived, then the page stopped reading its body, e.g. a stream it
   * closed): not failures, the page's own doing.
   */
  readonly cancelled: () => ReadonlyArray<RequestLine>
}

const lineOf = (request: Request): RequestLine => {
  const body = request.postData()
  if (body === null) return `${request.method()} ${request.url()}`
  const method = /^\{"jsonrpc":"2\.0",(?:"id":[^,]+,)?"method":"([^"]+)"/.exec(body)?.[1]
  const what = method ??
    (/^\{"jsonrpc":"2\.0","id":[^,]+,"(result|error)":/.test(body) ? "(response)" : body.slice(0, 200))
  return `${request.method()} ${request.url()} ${what}`
}

/**
 * Opens `url` in a fresh browser context of `browser` for the scope (closed
 * at its end), watching it from before the first request: its requests,
 * console messages of type `error`, uncaught exceptions, failed requests,
 * answers of status 400 or more, and requests it cancelled once answered
 * (told apart from failures: see {@link OpenPage}).
 */
export const openPage = (browser: Browser, url: string): Effect.Effect<OpenPage, never, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Effect.acquireRelease(
      Effect.promise(() => browser.newContext()),
      (context) => Effect.promise(() => context.close())
    )
    const page = yield* Effect.promise(() => context.newPage())
    const requests: Array<RequestLine> = []
    const answered = new WeakSet<Request>()
    const cancelled: Array<RequestLine> = []
    const consoleErrors: Array<string> = []
    const pageErrors: Array<string> = []
    const failedRequests: Array<string> = []
    const errorResponses: Array<string> = []
    page.on("request", (request) => requests.push(lineOf(request)))
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text())
    })
    page.on("pageerror", (error) => pageErrors.push(error.stack ?? error.message))
    page.on("response", (response) => {
      if (response.status() >= 400) {
        errorResponses.push(`${response.status()} ${response.request().method()} ${response.url()}`)
      } else if (response.status() >= 200 && response.status() < 300) {
        answered.add(response.request())
      }
    })
    page.on("requestfailed", (request) => {
      const reason = request.failure()?.errorText ?? "failed"
      if (answered.has(request) && reason === "net::ERR_ABORTED") cancelled.push(lineOf(request))
      else failedRequests.push(`${lineOf(request)}: ${reason}`)
    })
    yield* Effect.promise(() => page.goto(url))
    return {
      page,
      requests: () => [...requests],
      cancelled: () => [...cancelled],
      problems: () => ({
        consoleErrors: [...consoleErrors],
        pageErrors: [...pageErrors],
        failedRequests: [...failedRequests],
        errorResponses: [...errorResponses]
      })
    }
  })
