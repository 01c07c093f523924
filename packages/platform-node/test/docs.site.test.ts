/**
 * The documentation site as a reader gets it. The site (`docs/`, VitePress) is
 * built by `npm run docs:build` when its build (`docs/.vitepress/dist`) is
 * missing or older than any of its sources (the pages and the config under
 * `docs/`, the files they include as code, the examples under
 * `scratchpad/docs/`, the public modules `packages/*\/src/*.ts` the API
 * reference is generated from, TypeDoc's config), and that build prints no
 * warning; `DOCS_REBUILD=1` builds it anyway, and `DOCS_DIST=<dir>` checks
 * another built site instead (never built). The link checker
 * (`scripts/docs-links.mjs`) passes on the build, and fails, naming page and
 * link, on a small site with broken links.
 *
 * Then every page of the build (but the not-found page) is served from
 * 127.0.0.1, as `vitepress preview` serves it, and opened in Debian's Chromium
 * (headless, `playwright-core`, see `utils/browser.ts`): its title is its own
 * (not empty, not the not-found page's), its `<h1>` is its own and its content
 * renders, it logs no console error and throws nothing, every request it
 * makes goes to the site and is answered below 400, and it asks no other host.
 * On a guide page, a click in the sidebar navigates inside the app (the URL
 * and the heading change, the page is not reloaded). Screenshots of the
 * landing page and of a guide page are saved in
 * `packages/platform-node/test-output/docs/` for a person to look at. No
 * process of the Chromium is left afterwards. A missing Chromium fails the
 * test (`apt-get install chromium`, or `MCP_CHROMIUM`); it is never skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, relative, resolve, sep } from "node:path"
import type { Page, Request } from "playwright-core"
import { chromiumLeftovers, launchChromium, openPage } from "./utils/browser.ts"
import { root } from "./utils/runtimes.ts"
import { serveSite } from "./utils/staticSite.ts"
import { waitFor } from "./utils/wait.ts"

const DOCS = join(root, "docs")
/** The build: VitePress's, or a built site named by `DOCS_DIST` (checked as it is, never built). */
const DIST = process.env.DOCS_DIST === undefined ? join(DOCS, ".vitepress", "dist") : resolve(process.env.DOCS_DIST)
const CHECKER = join(root, "scripts", "docs-links.mjs")
const OUTPUT = join(root, "packages", "platform-node", "test-output", "docs")

/** How long a build may take (TypeDoc, then VitePress, on a loaded 2-core machine). */
const BUILD_BOUND = 240_000
/** The tests' own bound once the site is built. */
const TEST_BOUND = 150_000

// -----------------------------------------------------------------------------
// files
// -----------------------------------------------------------------------------

/** Every file under `dir` (none when it does not exist), skipping the directories `skip` (absolute). */
const filesUnder = (dir: string, skip: ReadonlyArray<string> = []): Array<string> => {
  if (!existsSync(dir)) return []
  const files: Array<string> = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (!skip.includes(path) && entry.name !== "node_modules") files.push(...filesUnder(path, skip))
    } else if (entry.isFile()) files.push(path)
  }
  return files
}

/** The files the pages include as code (`<<< @/path`, `@` being `docs/`), wherever they are. */
const included = (pages: ReadonlyArray<string>): Array<string> =>
  pages.filter((file) => file.endsWith(".md")).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/^\s*<<<\s+@\/([^\s{#[]+)/gm)].map((match) => resolve(DOCS, match[1]!))
  ).filter(existsSync)

/**
 * The sources of the build: the pages and config under `docs/`, the files they include as code, the
 * examples under `scratchpad/docs/`, the modules the API reference documents, TypeDoc's config.
 */
const sources = (): Array<string> => {
  const docs = filesUnder(DOCS, [DIST, join(DOCS, ".vitepress", "cache"), join(DOCS, ".vitepress", ".temp")])
  return [
    ...docs,
    ...included(docs),
    ...filesUnder(join(root, "scratchpad", "docs")),
    ...readdirSync(join(root, "packages")).flatMap((pkg) =>
      filesUnder(join(root, "packages", pkg, "src")).filter((file) =>
        dirname(file) === join(root, "packages", pkg, "src") && file.endsWith(".ts")
      )
    ),
    ...["typedoc.json", "tsconfig.typedoc.json", "scripts/typedoc-modules.mjs"].map((file) => join(root, file)).filter(
      existsSync
    )
  ]
}

/** Why the build must be (re)made, or `undefined` when it is newer than every source. */
const staleness = (): string | undefined => {
  if (process.env.DOCS_DIST !== undefined) return undefined
  if (process.env.DOCS_REBUILD === "1") return "DOCS_REBUILD=1"
  const index = join(DIST, "index.html")
  if (!existsSync(index)) return `no ${relative(root, index)}`
  const built = statSync(index).mtimeMs
  const newer = sources().find((file) => statSync(file).mtimeMs > built)
  return newer === undefined ? undefined : `${relative(root, newer)} is newer than the build`
}

/** The HTML pages of a built site, as paths relative to it with `/` separators. */
const pagesOf = (dist: string): Array<string> =>
  filesUnder(dist).filter((file) => file.endsWith(".html")).map((file) => relative(dist, file).split(sep).join("/"))
    .sort()

/** The URL path of a page under clean URLs: `index.html` → `/`, `guide/index.html` → `/guide/`, `guide/x.html` → `/guide/x`. */
const routeOf = (file: string): string =>
  file === "index.html"
    ? "/"
    : file.endsWith("/index.html")
    ? `/${file.slice(0, -"index.html".length)}`
    : `/${file.slice(0, -".html".length)}`

/** The site's base, as the pages' app script carries it (`<base>assets/app.<hash>.js`); `/` when none says. */
const baseOf = (dist: string): string =>
  /<script type="module" src="(\/(?:[^"]*\/)?)assets\/app\.[\w-]+\.js"/.exec(
    readFileSync(join(dist, "index.html"), "utf8")
  )?.[1] ?? "/"

/** Decodes the character references VitePress writes in text (numeric ones, and a few names). */
const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp);/gi, (_, ref: string) => {
    const lower = ref.toLowerCase()
    if (lower.startsWith("#x")) return String.fromCodePoint(parseInt(lower.slice(2), 16))
    if (lower.startsWith("#")) return String.fromCodePoint(parseInt(lower.slice(1), 10))
    return ({ amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " } as Record<string, string>)[lower] ?? ""
  })

/** Text as compared: tags stripped, references decoded, zero-width spaces dropped, whitespace collapsed. */
const plain = (html: string) =>
  decodeEntities(html.replace(/<[^>]*>/g, "")).replace(/\u200b/g, "").replace(/\s+/g, " ").trim()

/** What the built HTML of a page says it is: its `<title>` and its first `<h1>`'s text. */
const builtPage = (dist: string, file: string) => {
  const html = readFileSync(join(dist, file), "utf8")
  return {
    title: plain(/<title>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? ""),
    h1: plain(/<h1[\s>][\s\S]*?<\/h1>/.exec(html)?.[0] ?? "")
  }
}

// -----------------------------------------------------------------------------
// processes
// -----------------------------------------------------------------------------

interface Ran {
  readonly code: number | null
  readonly output: string
}

/**
 * Runs `command args` in the repository's root with Node 22 first on the PATH,
 * stdout and stderr together; killed (its whole group) after `bound` ms.
 */
const run = (command: string, args: ReadonlyArray<string>, bound: number): Effect.Effect<Ran> =>
  Effect.callback<Ran>((resume) => {
    const child = spawn(command, [...args], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
        FORCE_COLOR: "0",
        NO_COLOR: "1"
      }
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => {
      output += `\n(killed after ${bound} ms)\n`
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    }, bound)
    child.on("error", (error) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code: -1, output: `${output}\n${error.message}` }))
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      // without the colours some tools print anyway
      resume(Effect.succeed({ code, output: output.replace(/\u001b\[[0-9;]*m/g, "") }))
    })
  })

/** `npm run <script>` with the npm that runs this test when known (`npm_execpath`), by this Node. */
const npmRun = (script: string, bound: number) => {
  const cli = process.env.npm_execpath
  return cli !== undefined && /npm-cli\.[cm]?js$/.test(cli)
    ? run(process.execPath, [cli, "run", script], bound)
    : run("npm", ["run", script], bound)
}

/** The link checker on `dist`. */
const checkLinks = (dist: string, ...args: Array<string>) => run(process.execPath, [CHECKER, dist, ...args], 60_000)

/** The lines of a build's output that warn: `warn` in any case, or Rollup's `(!)`. */
const warningsIn = (output: string) => output.split("\n").filter((line) => /warn|\(!\)/i.test(line))

/** What building did: whether it ran, why, its output. */
interface Build {
  readonly rebuilt: boolean
  readonly why: string | undefined
  readonly code: number | null
  readonly output: string
}

/** The site, built once per run of this file when stale (its output kept in `test-output/docs/build.log`). */
const site = Effect.runSync(Effect.cached(Effect.gen(function*() {
  const why = staleness()
  if (why === undefined) return { rebuilt: false, why, code: 0, output: "" } satisfies Build
  const { code, output } = yield* npmRun("docs:build", BUILD_BOUND)
  mkdirSync(OUTPUT, { recursive: true })
  writeFileSync(join(OUTPUT, "build.log"), output)
  return { rebuilt: true, why, code, output } satisfies Build
})))

/** The site, failing the test with the build's output if it did not build. */
const built = Effect.gen(function*() {
  const build = yield* site
  if (build.code !== 0) {
    return yield* Effect.die(new Error(`npm run docs:build exited with ${build.code} (${build.why}):\n${build.output}`))
  }
  return build
})

// -----------------------------------------------------------------------------
// a small site with broken links, for the checker
// -----------------------------------------------------------------------------

/** A page of a fixture site: a title, an `<h1>` (none when `h1` is `undefined`), and `body`. */
const fixturePage = (h1: string | undefined, body: string) =>
  `<!DOCTYPE html><html><head><title>${
    h1 ?? "untitled"
  }</title><script type="module" src="/assets/app.abc123.js"></script></head>` +
  `<body><div id="app">${h1 === undefined ? "" : `<h1 id="top-heading">${h1}</h1>`}${body}</div></body></html>\n`

/** Writes `files` into a fresh temporary directory for the scope; its path. */
const fixtureSite = (files: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "docs-links-"))
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, file)), { recursive: true })
        writeFileSync(join(dir, file), text)
      }
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

// -----------------------------------------------------------------------------
// the tests
// -----------------------------------------------------------------------------

describe("the docs site: its build and its links", () => {
  it.live("builds (when stale) with no warning", () =>
    Effect.gen(function*() {
      const build = yield* built
      if (build.rebuilt) {
        assert.deepStrictEqual(warningsIn(build.output), [], `the build warned (${build.why}):\n${build.output}`)
      }
      assert.isTrue(existsSync(join(DIST, "index.html")))
      assert.isTrue(existsSync(join(DIST, "404.html")))
    }), BUILD_BOUND + TEST_BOUND)

  it.live("the link checker passes on the built site", () =>
    Effect.gen(function*() {
      yield* built
      const { code, output } = yield* checkLinks(DIST)
      assert.strictEqual(code, 0, output)
      assert.match(output.trim(), /^\d+ pages, \d+ links, \d+ anchors: ok$/)
      const pages = Number(/^(\d+) pages/.exec(output.trim())?.[1])
      assert.strictEqual(pages, pagesOf(DIST).length)
    }), BUILD_BOUND + TEST_BOUND)

  it.live("the link checker fails on a missing page and a missing anchor, naming each", () =>
    Effect.gen(function*() {
      const dir = yield* fixtureSite({
        "index.html": fixturePage(
          "Home",
          `<a href="/missing">gone</a> <a href="/other#nope">no such anchor</a> <a href="/other#here">fine</a> <a href="#top-heading">fine</a>`
        ),
        "other.html": fixturePage("Other", `<h2 id="here">Here</h2><a href="./">home</a>`),
        "assets/app.abc123.js": "export {}\n"
      })
      const { code, output } = yield* checkLinks(dir)
      assert.strictEqual(code, 1, output)
      const lines = output.trim().split("\n")
      assert.include(lines, "index.html → /missing: no page or file missing (looked for missing.html)")
      assert.include(lines, "index.html → /other#nope: no id \"nope\" on other.html")
      assert.strictEqual(lines.length, 3, output)
      assert.strictEqual(lines[2], "2 broken links in 2 pages")
    }))

  it.live("the link checker's other rules: http: and javascript: links, an empty page, a directory without its slash, a misspelt anchor, the base", () =>
    Effect.gen(function*() {
      const dir = yield* fixtureSite({
        "index.html": fixturePage(
          "Home",
          `<a href="http://example.com/">insecure</a> <a href="javascript:void(0)">script</a> <a href="https://example.com/">fine</a>` +
            `<a href="mailto:a@example.com">fine</a> <a href="/guide">a directory</a> <a href="/guide/#%C3%A9t%C3%A9">accents</a>` +
            `<a href="/guide/#r%C3%A9sum%C3%A9">fine</a> <img src="/logo.svg"> <img src="/missing.png">`
        ),
        "guide/index.html": fixturePage("Guide", `<h2 id="résumé">Résumé</h2><h2 id="ete">Été</h2>`),
        "empty.html": fixturePage(undefined, "<p>nothing</p>"),
        "logo.svg": "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
        "assets/app.abc123.js": "export {}\n"
      })
      const { code, output } = yield* checkLinks(dir)
      assert.strictEqual(code, 1, output)
      assert.deepStrictEqual(output.trim().split("\n"), [
        "empty.html → (the page): no <h1>: an empty page",
        "index.html → http://example.com/: an http: link (use https:, or write a local address as code)",
        "index.html → javascript:void(0): a javascript: link",
        "index.html → /guide: guide/ is a directory: link to /guide/ with its slash",
        "index.html → /guide/#%C3%A9t%C3%A9: no id \"été\" on guide/index.html (did you mean #ete?)",
        "index.html → /missing.png: no page or file missing.png",
        "6 broken links in 3 pages"
      ])
      // the same site under a base it was not built with: every root-relative link leaves it
      const based = yield* checkLinks(dir, "--base", "/docs/")
      assert.strictEqual(based.code, 1)
      assert.include(based.output, "index.html → /logo.svg: outside the site's base /docs/")
    }))
})

/** In the page: its first `<h1>`'s text, as {@link plain} has it. */
const H1_TEXT = `(document.querySelector("h1")?.textContent ?? "").replace(/\\u200b/g, "").replace(/\\s+/g, " ").trim()`

/**
 * Waits (at most 10 s) until the app has hydrated the page (Vue marks its container with its app
 * once mounted: a mismatch is logged by then) and the browser has been idle once after (the
 * prefetches VitePress starts when idle are under way). Dies when the app never mounts.
 */
const settled = (page: Page) =>
  Effect.promise(() =>
    page.waitForFunction("document.querySelector('#app')?.__vue_app__ !== undefined", undefined, { timeout: 10_000 })
      .then(() =>
        page.evaluate("new Promise((resolve) => requestIdleCallback(() => resolve(true), { timeout: 2000 }))")
      )
  )

/** {@link settled}, dying with what went wrong on the page when its app never mounts. */
const settledOrExplain = ({ page, problems }: { readonly page: Page; readonly problems: () => unknown }) =>
  settled(page).pipe(
    Effect.catchDefect(() =>
      Effect.die(new Error(`the app did not mount at ${page.url()}: ${JSON.stringify(problems(), null, 2)}`))
    )
  )

/** After this many pages whose app did not mount, the others are not opened (a broken build would take minutes). */
const GIVE_UP_AFTER = 5

/** What the sweep shares: the pages left to open, and how many did not mount. */
interface Sweep {
  readonly queue: Array<string>
  unmounted: number
}

/**
 * A tab that opens the pages of `sweep` one after the other (an {@link openPage} kept for all of
 * them, so the site's hashed assets come from the cache as for a reader going from page to page)
 * and returns what a person would see wrong on each: `page: problem` lines, `[]` when nothing.
 * What went wrong is taken per page from what the tab saw since the page was asked for. Before the
 * next, the tab waits (at most 5 s) until no request has been under way for 100 ms (VitePress
 * prefetches the pages a page links to once idle); a request of a page that the next navigation
 * still cuts (`net::ERR_ABORTED`) is the test's doing, not a failure of either page.
 */
const tab = (browser: Parameters<typeof openPage>[0], origin: string, base: string, sweep: Sweep) =>
  Effect.gen(function*() {
    const opened = yield* openPage(browser, "about:blank")
    const { page } = opened
    page.setDefaultTimeout(10_000)
    // the requests under way, and those of a page that the next navigation cut (as openPage words them)
    const pending = new Set<Request>()
    let leaving = new Set<Request>()
    const cut: Array<string> = []
    page.on("request", (request) => pending.add(request))
    page.on("requestfinished", (request) => pending.delete(request))
    page.on("requestfailed", (request) => {
      pending.delete(request)
      const reason = request.failure()?.errorText
      if (leaving.has(request) && reason === "net::ERR_ABORTED") {
        cut.push(`${request.method()} ${request.url()}: ${reason}`)
      }
    })
    const found: Array<string> = []
    for (let file = sweep.queue.shift(); file !== undefined; file = sweep.queue.shift()) {
      if (sweep.unmounted >= GIVE_UP_AFTER) {
        found.push(`${file}: not opened (${sweep.unmounted} pages did not mount)`)
        continue
      }
      const before = opened.problems()
      const requestsBefore = opened.requests().length
      leaving = new Set(pending)
      const problems = yield* look(page, `${origin}${base.slice(0, -1)}${routeOf(file)}`, file, sweep)
      // before the next page: no request under way for 100 ms (at most 5 s)
      for (let wait = 0, quiet = 0; wait < 500 && quiet < 10; wait++) {
        yield* Effect.sleep("10 millis")
        quiet = pending.size === 0 ? quiet + 1 : 0
      }
      const after = opened.problems()
      const since = <K extends keyof typeof after>(key: K) => after[key].slice(before[key].length)
      problems.push(
        ...since("consoleErrors").map((text) => `console error: ${text}`),
        ...since("pageErrors").map((text) => `page error: ${text}`),
        ...since("failedRequests").filter((text) => {
          const index = cut.indexOf(text)
          if (index !== -1) cut.splice(index, 1)
          return index === -1
        }).map((text) => `failed request: ${text}`),
        ...since("errorResponses").map((text) => `error response: ${text}`)
      )
      for (const line of opened.requests().slice(requestsBefore)) {
        const requested = line.split(" ")[1] ?? ""
        if (!/^(data|blob):/.test(requested) && new URL(requested).origin !== origin) {
          problems.push(`a request to another host: ${line}`)
        }
      }
      found.push(...problems.map((problem) => `${file}: ${problem}`))
    }
    return found
  }).pipe(Effect.scoped)

/** Opens `url` (the page `file`) in `page` and checks what it shows; the problems seen. */
const look = (page: Page, url: string, file: string, sweep: Sweep) =>
  Effect.gen(function*() {
    const expected = builtPage(DIST, file)
    const problems: Array<string> = []
    const loaded = yield* Effect.exit(Effect.promise(() => page.goto(url, { timeout: 30_000 })))
    if (loaded._tag === "Failure") problems.push(`did not load: ${String(loaded.cause)}`)
    const mounted = yield* settled(page).pipe(Effect.as(true), Effect.catchDefect(() => Effect.succeed(false)))
    if (!mounted) {
      sweep.unmounted++
      problems.push("the app did not mount within 10 s")
    }
    const seen = (yield* Effect.promise(() =>
      page.evaluate(`({
        title: document.title,
        h1: ${H1_TEXT},
        h1Visible: document.querySelector("h1")?.checkVisibility() ?? false,
        content: (document.querySelector(".vp-doc, .VPHome")?.textContent ?? "").trim().length,
        notFound: document.querySelector(".NotFound") !== null
      })`)
    )) as { title: string; h1: string; h1Visible: boolean; content: number; notFound: boolean }
    if (seen.title === "" || seen.title !== expected.title) {
      problems.push(`title ${JSON.stringify(seen.title)}, built as ${JSON.stringify(expected.title)}`)
    }
    if (seen.notFound || /^404\b/.test(seen.title)) problems.push("the not-found page")
    if (seen.h1 === "" || seen.h1 !== expected.h1) {
      problems.push(`h1 ${JSON.stringify(seen.h1)}, built as ${JSON.stringify(expected.h1)}`)
    }
    if (!seen.h1Visible) problems.push("the h1 is not visible")
    if (seen.content === 0) problems.push("no content in .vp-doc or the home page")
    return problems
  }).pipe(
    Effect.catchDefect((defect) => Effect.succeed([defect instanceof Error ? defect.message : String(defect)]))
  )

/**
 * The guide page to look at: "Writing a server" (`guides/server`), else the first page under
 * `guides/` or `guide/`, else the quick start, else the first page but the landing one.
 */
const guidePage = (pages: ReadonlyArray<string>) =>
  pages.find((file) => file === "guides/server.html") ??
    pages.find((file) => /^guides?\//.test(file)) ??
    pages.find((file) => file.startsWith("getting-started/")) ??
    pages.find((file) => file !== "index.html")

describe("the docs site in Chromium", () => {
  it.live(
    "every page renders its title and content, with no console error, no failed request, no other host; the sidebar navigates in the app",
    () =>
      Effect.gen(function*() {
        yield* built
        const pages = pagesOf(DIST).filter((file) => file !== "404.html")
        assert.include(pages, "index.html")
        const guide = guidePage(pages)
        assert.isDefined(guide, `no page but the landing one in ${pages.join(", ")}`)
        const base = baseOf(DIST)
        mkdirSync(OUTPUT, { recursive: true })

        const { pid, problems, served } = yield* Effect.gen(function*() {
          const served = yield* serveSite(DIST, base)
          const chromium = yield* launchChromium()
          // every page, in three tabs
          const sweep: Sweep = { queue: [...pages], unmounted: 0 }
          const problems = (yield* Effect.forEach(
            [1, 2, 3],
            () => tab(chromium.browser, served.origin, base, sweep),
            { concurrency: "unbounded" }
          )).flat().sort()

          // the landing page and a guide page, for a person to look at (broken or not); each as a first
          // visit (a fresh context, nothing cached), which must go as well
          for (
            const [file, name, fullPage] of [["index.html", "landing.png", true], [guide!, "guide.png", false]] as const
          ) {
            const firstVisit = yield* Effect.scoped(Effect.gen(function*() {
              const opened = yield* openPage(chromium.browser, `${served.origin}${base.slice(0, -1)}${routeOf(file)}`)
              const mounted = Exit.isSuccess(yield* Effect.exit(settled(opened.page)))
              yield* Effect.promise(() =>
                opened.page.screenshot({ path: join(OUTPUT, name), fullPage, timeout: 20_000 })
              )
              const { consoleErrors, errorResponses, failedRequests, pageErrors } = opened.problems()
              return [
                ...(mounted ? [] : ["the app did not mount within 10 s"]),
                ...consoleErrors.map((text) => `console error: ${text}`),
                ...pageErrors.map((text) => `page error: ${text}`),
                ...failedRequests.map((text) => `failed request: ${text}`),
                ...errorResponses.map((text) => `error response: ${text}`)
              ]
            }))
            problems.push(...firstVisit.map((problem) => `${file} (first visit): ${problem}`))
          }
          if (problems.length > 0) return { pid: chromium.pid, problems, served }

          // on the guide page: a click in the sidebar moves to another page without reloading this one
          yield* Effect.scoped(Effect.gen(function*() {
            const from = `${base.slice(0, -1)}${routeOf(guide!)}`
            const opened = yield* openPage(chromium.browser, `${served.origin}${from}`)
            const { page } = opened
            page.setDefaultTimeout(10_000)
            yield* settledOrExplain(opened)
            // the first visible sidebar link to another page of the build
            const hrefs = yield* Effect.promise(() =>
              page.locator(".VPSidebar a.VPLink[href]").evaluateAll((links) =>
                links.filter((link) => link.checkVisibility()).map((link) => link.getAttribute("href") ?? "")
              )
            )
            const pathOf = (href: string) => new URL(href, `${served.origin}${from}`)
            const href = hrefs.find((one) => {
              const to = pathOf(one)
              return to.origin === served.origin && to.pathname !== from &&
                pages.some((file) => `${base.slice(0, -1)}${routeOf(file)}` === to.pathname)
            })
            assert.isDefined(href, `no sidebar link to another page on ${guide}: ${hrefs.join(", ")}`)
            const target = pathOf(href!)
            const targetFile = pages.find((file) => `${base.slice(0, -1)}${routeOf(file)}` === target.pathname)!
            const heading = builtPage(DIST, targetFile).h1
            assert.notStrictEqual(heading, builtPage(DIST, guide!).h1, `${guide} and ${targetFile} have the same h1`)
            yield* Effect.promise(() => page.evaluate("window.__notReloaded = true"))
            const link = page.locator(`.VPSidebar a.VPLink[href="${href!.replace(/["\\]/g, "\\$&")}"]`).filter({
              visible: true
            })
            yield* Effect.promise(() => link.first().click())
            yield* Effect.promise(() => page.waitForURL((url) => url.pathname === target.pathname, { timeout: 10_000 }))
            yield* Effect.promise(() =>
              page.waitForFunction(`${H1_TEXT} === ${JSON.stringify(heading)}`, undefined, { timeout: 10_000 })
            )
            const notReloaded = yield* Effect.promise(() => page.evaluate("window.__notReloaded === true"))
            assert.isTrue(notReloaded, "the sidebar link reloaded the page")
            const after = opened.problems()
            assert.deepStrictEqual(after, { consoleErrors: [], pageErrors: [], failedRequests: [], errorResponses: [] })
          }))

          return { pid: chromium.pid, problems, served }
        }).pipe(Effect.scoped)

        // what the site's server did not answer with 200 (Chromium's own /favicon.ico among them, which the
        // page's events do not show)
        const unanswered = served.requested().filter((line) => !line.endsWith(" 200"))
        assert.deepStrictEqual(
          problems,
          [],
          `${problems.length} problems on ${pages.length} pages:\n${problems.join("\n")}\nnot answered 200: ${
            unanswered.join(", ")
          }`
        )
        // the pages asked for what the build has: no path answered 404
        assert.deepStrictEqual(unanswered, [])
        assert.isTrue(existsSync(join(OUTPUT, "landing.png")))
        assert.isTrue(existsSync(join(OUTPUT, "guide.png")))
        yield* waitFor(() => chromiumLeftovers(pid).length === 0).pipe(
          Effect.catchDefect(() => Effect.die(new Error(`Chromium left: ${chromiumLeftovers(pid).join(", ")}`)))
        )
      }),
    BUILD_BOUND + TEST_BOUND
  )
})
