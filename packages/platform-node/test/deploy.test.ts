/**
 * The README's "Deploy" section, file by file (`scratchpad/deploy/`): each
 * deployment of the notes server run as its runtime runs it and driven by our
 * client. Node (`node.ts` on Node, from the `node` devDependency), Bun
 * (`bun.ts` on `Bun.serve`), Deno (`deno.ts` on `Deno.serve`, only
 * `--allow-env=PORT --allow-net=127.0.0.1`): both eras, a tool called and an
 * elicitation answered, then SIGTERM and exit 0. Hono (`hono.ts`'s app) and
 * Next.js (`next/app/mcp/route.ts`'s methods) served on `node:http`. The
 * Worker (`worker.ts`) bundled with every Node built-in an error and served
 * by workerd, in the modern era. The browser client (`browser.ts`) bundled
 * the same way and run in Chromium against our Node server (another origin,
 * let in by CORS), its `prompt()` answered as a user would. Each
 * file compiles: `npm run typecheck` checks the Node, Hono, Next.js, Worker
 * and browser files (`scratchpad/deploy/tsconfig*.json`, Bun's against
 * `@types/bun`); Deno's is checked here against the types its binary prints
 * (`deno types`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Notes } from "../../../scratchpad/deploy/notes.ts"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { listenWebHandler } from "./fixtures/webHandlerHttp.ts"
import { bundleForBrowser, launchChromium, openPage, pageFiles, servePage } from "./utils/browser.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"
import { resolveBinary, root, type Runtime, runtimes, serveOn } from "./utils/runtimes.ts"
import { waitFor } from "./utils/wait.ts"
import { bundleForWorkers, serveWorker } from "./utils/workerd.ts"

const DEPLOY = "scratchpad/deploy"

/** Node from the `node` devDependency, as `npm run` gives it. */
const nodeRuntime: Runtime = {
  name: "Node",
  pkg: "node",
  binary: (dir) => join(dir, "bin", "node"),
  args: (entry) => ["--conditions=development", entry]
}

const byName = (name: string) => runtimes.find((runtime) => runtime.name === name)!

/** Our client in `era`, answering "Which title?" with `title`: the tools listed, `ask_title` called. */
const drive = (url: string, era: "modern" | "legacy", title: string) =>
  Effect.gen(function*() {
    const client = yield* connectOver(NodeMcpHttpClient.layer({ url }), {
      era,
      elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { title } }) }
    })
    assert.strictEqual(client.era, era)
    assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name).sort(), ["add_note", "ask_title"])
    assert.strictEqual(textOf(yield* client.callTool("add_note", { title: "a", body: "b" })), "saved a")
    assert.strictEqual(textOf(yield* client.callTool("ask_title", {})), `saved ${title}`)
  }).pipe(Effect.scoped)

describe("Deploy: a process per runtime", () => {
  // Node's exit status after SIGTERM is 130 (`NodeMcpRuntime.runMain`: interrupted); Bun's and Deno's files exit 0
  const runs = [[nodeRuntime, "node.ts", 130], [byName("Bun"), "bun.ts", 0], [byName("Deno"), "deno.ts", 0]] as const
  for (const [runtime, file, code] of runs) {
    it.live(`${runtime.name}: ${file}, both eras, then SIGTERM ends it`, () =>
      Effect.gen(function*() {
        const server = yield* serveOn(runtime, `${DEPLOY}/${file}`, { PORT: "0" })
        yield* drive(server.url, "modern", "from modern")
        yield* drive(server.url, "legacy", "from legacy")
        const exited = yield* server.stop
        assert.deepStrictEqual(exited, { code, signal: null }, server.stderr())
        yield* waitFor(() => !isRunning(server.pid))
      }).pipe(Effect.scoped), 60_000)
  }

  it("Deno: deno.ts type-checks against the Deno namespace", () => {
    const dir = mkdtempSync(join(tmpdir(), "deploy-deno-"))
    try {
      writeFileSync(
        join(dir, "deno.d.ts"),
        execFileSync(resolveBinary(byName("Deno")), ["types"], { maxBuffer: 64 << 20 })
      )
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({
          extends: join(root, "tsconfig.json"),
          compilerOptions: {
            noEmit: true,
            composite: false,
            incremental: false,
            declaration: false,
            declarationMap: false,
            types: []
          },
          files: [join(root, DEPLOY, "deno.ts"), join(dir, "deno.d.ts")]
        })
      )
      execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], {
        cwd: root,
        encoding: "utf8"
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("Deploy: fetch frameworks", () => {
  it.live("Hono: hono.ts's app, both eras", () =>
    Effect.gen(function*() {
      const { app, dispose } = yield* Effect.promise(() => import("../../../scratchpad/deploy/hono.ts"))
      const served = yield* Effect.acquireRelease(
        Effect.promise(() =>
          listenWebHandler({ fetch: (request) => Promise.resolve(app.fetch(request)), close: dispose }, "hono")
        ),
        (served) => Effect.promise(() => served.close())
      )
      yield* drive(served.url, "modern", "via Hono")
      yield* drive(served.url, "legacy", "via Hono, legacy")
    }).pipe(Effect.scoped))

  it.live("Next.js: route.ts's methods, 2026-07-28 (the legacy era stateless)", () =>
    Effect.gen(function*() {
      const route = yield* Effect.promise(() => import("../../../scratchpad/deploy/next/app/mcp/route.ts"))
      const methods: Record<string, (request: Request) => Promise<Response>> = {
        GET: route.GET,
        POST: route.POST,
        DELETE: route.DELETE
      }
      // what Next.js does with a route module: the method's export answers, any other method is 405
      const fetch = (request: Request) =>
        methods[request.method]?.(request) ?? Promise.resolve(new Response(null, { status: 405 }))
      const served = yield* Effect.acquireRelease(
        Effect.promise(() => listenWebHandler({ fetch, close: () => Promise.resolve() }, "next")),
        (served) => Effect.promise(() => served.close())
      )
      yield* drive(served.url, "modern", "via Next.js")
      // stateless legacy: no session, so no request back to the client; a plain call is served
      const legacy = yield* connectOver(NodeMcpHttpClient.layer({ url: served.url }), { era: "legacy" })
      assert.strictEqual(textOf(yield* legacy.callTool("add_note", { title: "n", body: "b" })), "saved n")
    }).pipe(Effect.scoped))
})

describe("Deploy: Cloudflare Workers and the browser", () => {
  it.live(
    "Workers: worker.ts bundled (no Node built-in) and served by workerd, its secret from env; 2026-07-28",
    () =>
      Effect.gen(function*() {
        const bundle = yield* Effect.promise(() => bundleForWorkers(`${DEPLOY}/worker.ts`))
        const worker = yield* serveWorker(bundle, {
          bindings: { REQUEST_STATE_SECRET: "a secret of at least 32 bytes, for tests" }
        })
        yield* drive(new URL("/mcp", worker.url).href, "modern", "from a Worker")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "the browser: browser.ts bundled (no Node built-in), in Chromium, answers the server's question with prompt()",
    () =>
      Effect.gen(function*() {
        const bundle = yield* bundleForBrowser(`${DEPLOY}/browser.ts`)
        const page = yield* servePage(
          pageFiles(
            `<!doctype html><title>notes</title><link rel="icon" href="data:,"><script type="module" src="/client.js"></script>`,
            bundle
          )
        )
        const server = yield* Layer.build(
          NodeMcpHttpServer.layer({ allowedOrigins: [page.origin], cors: { origins: [page.origin] } }).pipe(
            Layer.provide(Notes)
          )
        ).pipe(Effect.flatMap((context) => NodeMcpHttpServer.url().pipe(Effect.provideContext(context))))
        const { browser } = yield* launchChromium()
        const opened = yield* openPage(browser, `${page.origin}/?server=${encodeURIComponent(server)}`)
        const asked: Array<string> = []
        opened.page.on("dialog", (dialog) => {
          asked.push(dialog.message())
          void dialog.accept("from the page")
        })
        yield* Effect.promise(() => opened.page.getByText("saved from the page").waitFor({ timeout: 20_000 }))
        const shown = yield* Effect.promise(() => opened.page.locator("p").allTextContents())
        assert.deepStrictEqual(shown, ["tools: add_note, ask_title", "saved from the page"])
        assert.deepStrictEqual(asked, ["Which title?"])
        assert.deepStrictEqual(opened.problems(), {
          consoleErrors: [],
          pageErrors: [],
          failedRequests: [],
          errorResponses: []
        })
      }).pipe(Effect.scoped),
    60_000
  )
})
