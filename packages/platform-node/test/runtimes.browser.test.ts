/**
 * Our client in a real browser: `scratchpad/runtimes/browser-client.ts`
 * (`McpClient` over `McpHttpClient` on `FetchHttpClient`), bundled by
 * rolldown with every Node built-in an error, served with its page from one
 * port on 127.0.0.1 and run by Debian's Chromium (headless, through
 * `playwright-core`) against `NodeMcpHttpServer` on another port: a
 * cross-origin page, let in by `allowedOrigins` and `cors` naming its
 * origin and nothing else. In both eras the page connects, lists the tools,
 * calls one, answers an elicitation from the form it shows (the test types
 * the answer in, as a user would), sees the tools list change after a call
 * that adds a tool (legacy: on the session's GET stream; 2026-07-28: on
 * `subscriptions/listen`), calls the new one, and disconnects when the user
 * presses Disconnect (legacy: a DELETE). Before and after Disconnect the page
 * logs no console error, throws nothing, no request fails and none is
 * answered with an error status; what the page cancels itself (its
 * long-lived stream at Disconnect, a POST's SSE stream once its answer is in)
 * is told apart from failures. The CORS preflight of a modern request allows
 * its standard headers. The bundle check itself: the browser client and
 * every module of `@effect-mcp/core` bundle; an entry that pulls `node:fs`
 * (or bare `fs`) through another module does not, and the error names that
 * module; the quick-start client (stdio, Node-only) does not either. After
 * each browser test, no process of that Chromium is left.
 *
 * A missing Chromium fails these tests (`apt-get install chromium`, or
 * `MCP_CHROMIUM`); they are never skipped.
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { send } from "./fixtures/rawHttp.ts"
import { bundleForBrowser, chromiumLeftovers, launchChromium, openPage, pageFiles, servePage } from "./utils/browser.ts"
import { root } from "./utils/runtimes.ts"
import { waitFor } from "./utils/wait.ts"

const ENTRY = "scratchpad/runtimes/browser-client.ts"
const HTML = readFileSync(join(root, "scratchpad/runtimes/browser.html"), "utf8")
const MODERN = "2026-07-28"

// -----------------------------------------------------------------------------
// the server
// -----------------------------------------------------------------------------

/** A fresh server: `greet`, `ask_name` (elicits), `add_extra` (registers `extra`: the tools list changes). */
const makeServer = () => {
  const greet = McpTool.make("greet", {
    input: Schema.Struct({ name: Schema.String }),
    handler: ({ name }, context) => Effect.succeed(`Hello, ${name}! [${context.era}]`)
  })
  const askName = McpTool.make("ask_name", {
    input: Schema.Struct({}),
    handler: (_, context) =>
      Effect.map(
        context.elicit({ message: "What is your name?", schema: Schema.Struct({ name: Schema.String }) }),
        (answer) => `Hello, ${answer.action === "accept" ? answer.content.name : "stranger"}! [${context.era}]`
      )
  })
  const extra = McpTool.make("extra", { input: Schema.Struct({}), handler: () => Effect.succeed("extra here") })
  const addExtra = McpTool.make("add_extra", {
    input: Schema.Struct({}),
    handler: () => Effect.flatMap(McpServer.McpServer, (server) => Effect.as(server.register(extra), "added"))
  })
  return McpServer.register(greet, askName, addExtra).pipe(
    Layer.provideMerge(McpServer.layer({ name: "browser-test", version: "1.0.0" }))
  )
}

/** The server on 127.0.0.1 for the scope, open to `origin` only (Origin guard and CORS); its endpoint's URL. */
const serveMcp = (origin: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer({ allowedOrigins: [origin], cors: { origins: [origin] } }).pipe(
        Layer.provide(makeServer())
      )
    )
    return yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  })

// -----------------------------------------------------------------------------
// the page
// -----------------------------------------------------------------------------

/** What `browser-client.ts` leaves in `window.results`. */
interface Results {
  readonly era?: string
  readonly protocolVersion?: string
  readonly serverName?: string
  readonly tools?: ReadonlyArray<string>
  readonly greeting?: string
  readonly elicitation?: { readonly message: string; readonly answer: string; readonly result: string }
  readonly added?: string
  readonly toolsAfterChange?: ReadonlyArray<string>
  readonly extra?: string
  readonly done?: boolean
  readonly closed?: boolean
  readonly error?: string
}

const bundle = Effect.runSync(Effect.cached(bundleForBrowser(ENTRY)))

/**
 * The page in `era` against a fresh server, in Chromium: the user answers the
 * elicitation with `name`, and once the page is done, presses Disconnect.
 * Returns the page's results, log, the requests it made to the MCP endpoint
 * and what went wrong (both before and after Disconnect), the requests it
 * cancelled (idem), the paths asked of the page's own server, and the pid of
 * the Chromium, which is closed by then.
 */
const runPage = (era: "modern" | "legacy", name: string) =>
  Effect.gen(function*() {
    const files = pageFiles(HTML, yield* bundle)
    const site = yield* servePage(files)
    const mcp = yield* serveMcp(site.origin)
    assert.notStrictEqual(new URL(mcp).origin, site.origin)
    const chromium = yield* launchChromium()
    const pageUrl = `${site.origin}/?server=${encodeURIComponent(mcp)}&era=${era}`
    const { cancelled, page, problems, requests } = yield* openPage(chromium.browser, pageUrl)
    // what the page did and went through, for a failure's message
    const state = () =>
      Effect.promise(() => page.evaluate("window.results")).pipe(
        Effect.map((results) => JSON.stringify({ results, problems: problems(), requests: requests() }, null, 2))
      )
    const orExplain = <A>(what: string, wait: () => Promise<A>) =>
      Effect.tryPromise(wait).pipe(
        Effect.catch((error) =>
          Effect.flatMap(state(), (seen) => Effect.die(new Error(`${what}: ${String(error)}\n${seen}`)))
        )
      )
    // the user sees the server's question, types an answer, sends the form
    yield* orExplain("no elicitation form", () =>
      page.waitForSelector("#elicitation", { state: "visible", timeout: 30_000 }))
    const question = yield* Effect.promise(() =>
      page.textContent("#question")
    )
    yield* Effect.promise(() => page.fill("#answer", name))
    yield* Effect.promise(() => page.click("#elicitation button[type=submit]"))
    yield* orExplain("the page did not finish", () =>
      page.waitForFunction("window.results.done === true || window.results.error !== undefined", undefined, {
        timeout: 30_000
      }))
    const results = (yield* Effect.promise(() =>
      page.evaluate("window.results")
    )) as Results
    const log = yield* Effect.promise(() => page.locator("#log li").allTextContents())
    const connected = { problems: problems(), requests: requests(), cancelled: cancelled() }
    // what the check after the test looks for is there while Chromium runs: its main process and its helpers
    const running = chromiumLeftovers(chromium.pid)
    // the user disconnects: the client ends its session
    yield* Effect.promise(() => page.click("#disconnect"))
    yield* orExplain("the page did not disconnect", () =>
      page.waitForFunction("window.results.closed === true || window.results.error !== undefined", undefined, {
        timeout: 30_000
      }))
    const closed = (yield* Effect.promise(() =>
      page.evaluate("window.results.closed")
    )) as boolean | undefined
    const all = requests()
    const disconnected = {
      problems: problems(),
      requests: all.slice(connected.requests.length),
      cancelled: cancelled().slice(connected.cancelled.length)
    }
    const toMcp = (lines: ReadonlyArray<string>) =>
      lines.filter((line) =>
        line.split(" ")[1] === mcp
      ).map((line) => line.replace(` ${mcp}`, ""))
    return {
      results,
      closed,
      log,
      question,
      connected: { ...connected, requests: toMcp(connected.requests), cancelled: toMcp(connected.cancelled) },
      disconnected: {
        ...disconnected,
        requests: toMcp(disconnected.requests),
        cancelled: toMcp(disconnected.cancelled)
      },
      origin: site.origin,
      pageUrl,
      pageRequests: all.filter((line) => line.split(" ")[1] !== mcp),
      requested: site.requested(),
      running,
      pid: chromium.pid
    }
  }).pipe(Effect.scoped)

/** Runs the page in `era`, then checks that its Chromium left no process behind. */
const inBrowser = (era: "modern" | "legacy", name: string) =>
  Effect.gen(function*() {
    const run = yield* runPage(era, name)
    yield* waitFor(() => chromiumLeftovers(run.pid).length === 0).pipe(
      Effect.catchDefect(() => Effect.die(new Error(`Chromium left: ${chromiumLeftovers(run.pid).join(", ")}`)))
    )
    return run
  })

const NO_PROBLEMS = { consoleErrors: [], pageErrors: [], failedRequests: [], errorResponses: [] }

// -----------------------------------------------------------------------------
// the tests
// -----------------------------------------------------------------------------

describe("our client in Chromium (a cross-origin page, FetchHttpClient)", () => {
  for (const [era, name] of [["modern", "Ada"], ["legacy", "Lu"]] as const) {
    it.live(
      `${era}: lists and calls tools, answers an elicitation from the page, follows the list change`,
      () =>
        Effect.gen(function*() {
          const run = yield* inBrowser(era, name)
          const { connected, disconnected, results } = run
          assert.isUndefined(results.error, results.error)
          assert.isTrue(results.done)
          assert.strictEqual(results.era, era)
          if (era === "modern") assert.strictEqual(results.protocolVersion, MODERN)
          else assert.notStrictEqual(results.protocolVersion, MODERN)
          assert.strictEqual(results.serverName, "browser-test")
          assert.deepStrictEqual(results.tools, ["add_extra", "ask_name", "greet"])
          assert.strictEqual(results.greeting, `Hello, browser! [${era}]`)
          assert.strictEqual(run.question, "What is your name?")
          assert.deepStrictEqual(results.elicitation, {
            message: "What is your name?",
            answer: name,
            result: `Hello, ${name}! [${era}]`
          })
          assert.strictEqual(results.added, "added")
          assert.deepStrictEqual(results.toolsAfterChange, ["add_extra", "ask_name", "extra", "greet"])
          assert.strictEqual(results.extra, "extra here")
          assert.strictEqual(run.log.length, 6)
          assert.isTrue(run.closed)
          assert.isAbove(run.running.length, 1, run.running.join(", "))

          // nothing failed, before or after Disconnect: no console error, no exception, every request answered 2xx
          assert.deepStrictEqual(connected.problems, NO_PROBLEMS)
          assert.deepStrictEqual(disconnected.problems, NO_PROBLEMS)
          assert.deepStrictEqual(run.requested, ["GET /", "GET /client.js"])
          // and nothing else: the page, its script, the MCP endpoint
          assert.deepStrictEqual(run.pageRequests, [`GET ${run.pageUrl}`, `GET ${run.origin}/client.js`])
          // what the page cancelled itself: while connected, only POSTs whose answers had arrived
          // (the client stops reading a POST's SSE stream once its response is in)
          for (const line of connected.cancelled) {
            assert.match(line, /^POST (tools\/call|tools\/list|server\/discover)$/)
          }
          if (era === "modern") {
            // list changes come on `subscriptions/listen`: no session, no GET stream, no DELETE;
            // Disconnect closes the listen stream
            assert.include(connected.requests, "POST subscriptions/listen")
            assert.isFalse(connected.requests.some((line) => line.startsWith("GET") || line.startsWith("DELETE")))
            assert.isFalse(connected.requests.includes("POST initialize"))
            for (const line of disconnected.cancelled) assert.strictEqual(line, "POST subscriptions/listen")
          } else {
            // a session: initialize, its GET stream (on which list_changed arrives), DELETE on Disconnect
            assert.strictEqual(connected.requests[0], "POST initialize")
            assert.include(connected.requests, "GET")
            assert.isFalse(connected.requests.some((line) => line.includes("subscriptions/listen")))
            assert.include(disconnected.requests, "DELETE")
            for (const line of disconnected.cancelled) assert.strictEqual(line, "GET")
          }
        }),
      90_000
    )
  }
})

describe("CORS for a 2026-07-28 page (what Chromium asked for above)", () => {
  it.live("a preflight asking for Mcp-Method, Mcp-Name and Mcp-Param-* gets them allowed, besides the MCP headers", () =>
    Effect.gen(function*() {
      const origin = "http://127.0.0.1:9"
      const mcp = yield* serveMcp(origin)
      const answer = yield* send(mcp, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers":
            "content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version,x-other"
        }
      })
      assert.strictEqual(answer.status, 204)
      assert.strictEqual(answer.headers["access-control-allow-origin"], origin)
      assert.strictEqual(
        answer.headers["access-control-allow-headers"],
        "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name, mcp-param-region"
      )
    }).pipe(Effect.scoped))
})

/** Writes `files` into a fresh temporary directory for the scope; its path. */
const tempEntry = (files: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "browser-bundle-"))
      for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text)
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

describe("bundling for the browser: Node built-ins are errors", () => {
  // the quick-start client (scratchpad/quickstart/client.ts) is a stdio client, Node-only: the browser
  // client is the entry an app author would bundle
  it.effect("the browser client bundles, with our client and nothing from platform-node", () =>
    Effect.gen(function*() {
      const { code, modules } = yield* bundle
      assert.isAbove(code.length, 0)
      assert.isTrue(modules.some((module) => module.endsWith("packages/core/src/McpClient.ts")))
      assert.isTrue(modules.some((module) => module.endsWith("packages/core/src/McpHttpClient.ts")))
      assert.isFalse(modules.some((module) => module.includes("packages/platform-node/")))
    }))

  it.effect("every module of @effect-mcp/core bundles (the whole barrel used)", () =>
    Effect.gen(function*() {
      const dir = yield* tempEntry({
        "entry.ts": `import * as Core from "${
          join(root, "packages/core/src/index.ts")
        }"\nconsole.log(Object.values(Core))\n`
      })
      const { modules } = yield* bundleForBrowser(join(dir, "entry.ts"))
      for (const module of ["McpServer", "McpHttpServer", "McpGateway", "McpGroup", "McpSkills", "McpWebSocket"]) {
        assert.isTrue(modules.some((id) => id.endsWith(`packages/core/src/${module}.ts`)), module)
      }
    }), 60_000)

  it.effect("an entry that pulls node:fs through another module fails, naming that module", () =>
    Effect.gen(function*() {
      const dir = yield* tempEntry({
        "entry.ts": `import { read } from "./store.ts"\nconsole.log(read())\n`,
        "store.ts":
          `import { readFileSync } from "node:fs"\nexport const read = () => readFileSync("/etc/hostname", "utf8")\n`
      })
      const error = yield* Effect.flip(bundleForBrowser(join(dir, "entry.ts")))
      assert.strictEqual(error._tag, "BundleError")
      assert.include(error.message, `the Node built-in "node:fs" is imported by ${join(dir, "store.ts")}`)
    }))

  it.effect("a bare built-in (fs/promises) is refused as well", () =>
    Effect.gen(function*() {
      const dir = yield* tempEntry({
        "entry.ts": `import { readFile } from "fs/promises"\nconsole.log(readFile)\n`
      })
      const error = yield* Effect.flip(bundleForBrowser(join(dir, "entry.ts")))
      assert.include(error.message, `the Node built-in "fs/promises" is imported by ${join(dir, "entry.ts")}`)
    }))

  it.effect("the quick-start client (stdio) is Node-only: its bundle fails", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(bundleForBrowser("scratchpad/quickstart/client.ts"))
      assert.match(
        error.message,
        /the Node built-in "(node:)?[a-z_/]+" is imported by .*packages\/platform-node\/src\//
      )
    }), 60_000)
})
