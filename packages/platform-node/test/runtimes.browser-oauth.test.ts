/**
 * OAuth from a real browser: `scratchpad/runtimes/browser-oauth.ts` (core's
 * `McpOAuth` on the page's `fetch`, with `McpOAuthRedirect`'s redirect
 * authorizer and `sessionStorage` store), bundled by rolldown with every
 * Node built-in an error, served at `/` and `/callback` from one port on
 * 127.0.0.1 and run by Debian's Chromium (headless, `playwright-core`)
 * against a protected `NodeMcpHttpServer` (`auth`: tokens of the test
 * authorization server, checked against its JWKS) on another port and the
 * test authorization server (fixtures/authServer.ts, which authorizes
 * without a user) on a third, both letting the page's origin in by CORS.
 *
 * The page meets the `401`, discovers, registers, navigates to the
 * authorization server, comes back to `/callback`, completes and calls a
 * tool. Then: the tool call succeeded with the user's token, the tokens are
 * in `sessionStorage` (not `localStorage`), `document.cookie` holds nothing,
 * no pending authorization (state, verifier) is left, and the authorization
 * server saw PKCE S256 checked against the stored verifier. No Chromium
 * process is left afterwards.
 *
 * The Authorization guide's page (`scratchpad/docs/auth-redirect.ts`, its
 * server's URL replaced at bundle time by the test server's) goes through the
 * same flow, with the same checks.
 *
 * A missing Chromium fails this test (`apt-get install chromium`, or
 * `MCP_CHROMIUM`); it is never skipped.
 */
import { McpAuth, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import * as NodeMcpJwtVerifier from "../src/NodeMcpJwtVerifier.ts"
import { startAuthServer } from "./fixtures/authServer.ts"
import {
  bundleForBrowser,
  chromiumLeftovers,
  launchChromium,
  openPage,
  type PageFile,
  pageFiles,
  servePage
} from "./utils/browser.ts"
import { root } from "./utils/runtimes.ts"
import { waitFor } from "./utils/wait.ts"

const ENTRY = "scratchpad/runtimes/browser-oauth.ts"
/** The Authorization guide's page: its server's URL is replaced at bundle time by the test server's. */
const DOCS_ENTRY = "scratchpad/docs/auth-redirect.ts"
const DOCS_SERVER = "https://mcp.example.com/mcp"
const HTML = readFileSync(join(root, "scratchpad/runtimes/browser-oauth.html"), "utf8")

/** What `browser-oauth.ts` leaves in `window.results`. */
interface Results {
  readonly page?: string
  readonly completed?: string
  readonly scope?: string
  readonly whoami?: string
  readonly location?: string
  readonly done?: boolean
  readonly error?: string
}

const whoami = McpTool.make("whoami", {
  description: "Who the token says you are",
  input: Schema.Struct({}),
  handler: () => Effect.map(McpAuth.CurrentAuth, (auth) => `${auth?.subject} with ${auth?.scopes.join(" ")}`)
})

/**
 * Everything on 127.0.0.1, the page `entry` in Chromium, until it is done;
 * what it and the servers saw. `browser-oauth.ts` is told its server in the
 * page's address (`?server=`); the guide's page by its bundle (`DOCS_SERVER`
 * replaced).
 */
const signInFromPage = (entry: typeof ENTRY | typeof DOCS_ENTRY) =>
  Effect.gen(function*() {
    // filled once the MCP server's URL is known (the guide's page is bundled with it)
    const files: Record<string, PageFile> = {}
    const site = yield* servePage(files)
    const as = yield* startAuthServer({ scopesSupported: ["mcp:read"], cors: [site.origin] })
    const server = yield* Layer.build(
      NodeMcpHttpServer.layer({
        allowedOrigins: [site.origin],
        cors: { origins: [site.origin] },
        auth: {
          authorizationServers: [as.issuer],
          verify: NodeMcpJwtVerifier.make({ jwksUrl: as.endpoints.jwks, issuer: as.issuer }),
          scopesSupported: ["mcp:read"],
          requiredScopes: ["mcp:read"]
        }
      }).pipe(
        Layer.provide(McpServer.register(whoami)),
        Layer.provide(McpServer.layer({ name: "protected", version: "1.0.0" }))
      )
    )
    const mcp = yield* Effect.provideContext(NodeMcpHttpServer.url(), server)
    const bundle = yield* bundleForBrowser(entry, entry === DOCS_ENTRY ? { [DOCS_SERVER]: mcp } : undefined)
    const served = pageFiles(HTML, bundle)
    Object.assign(files, served, { "/callback": served["/"]! })
    const chromium = yield* launchChromium()
    const pageUrl = entry === DOCS_ENTRY ? `${site.origin}/` : `${site.origin}/?server=${encodeURIComponent(mcp)}`
    const { page, problems, requests } = yield* openPage(chromium.browser, pageUrl)
    const explain = () =>
      Effect.promise(() => page.evaluate("window.results").catch(() => undefined)).pipe(
        Effect.map((results) =>
          JSON.stringify({ url: page.url(), results, problems: problems(), requests: requests() }, null, 2)
        )
      )
    yield* Effect.tryPromise(() =>
      page.waitForFunction(
        "location.pathname === '/' && window.results !== undefined && window.results.page === 'callback' && (window.results.done === true || window.results.error !== undefined)",
        undefined,
        { timeout: 45_000 }
      )
    ).pipe(
      Effect.catch((error) =>
        Effect.flatMap(explain(), (seen) => Effect.die(new Error(`the page did not finish: ${String(error)}\n${seen}`)))
      )
    )
    const results = (yield* Effect.promise(() => page.evaluate("window.results"))) as Results
    const storage = (yield* Effect.promise(() =>
      page.evaluate(`(() => {
      const entries = (store) => Object.fromEntries(Array.from({ length: store.length }, (_, i) => store.key(i)).map((key) => [key, store.getItem(key)]))
      return { session: entries(sessionStorage), local: entries(localStorage), cookie: document.cookie }
    })()`)
    )) as { readonly session: Record<string, string>; readonly local: Record<string, string>; readonly cookie: string }
    const cookies = yield* Effect.promise(() => page.context().cookies())
    return {
      results,
      storage,
      cookies,
      problems: problems(),
      requests: requests(),
      as,
      mcp,
      origin: site.origin,
      requested: site.requested(),
      pid: chromium.pid
    }
  }).pipe(Effect.scoped)

type Run = Effect.Success<ReturnType<typeof signInFromPage>>

/** What holds for either page: signed in by a redirect, the tool answered, tokens in sessionStorage only. */
const assertSignedIn = (run: Run) =>
  Effect.gen(function*() {
    const { as, results, storage } = run
    assert.isUndefined(results.error, results.error)
    assert.isTrue(results.done)
    assert.strictEqual(results.page, "callback")
    // the tool call succeeded with the user's token
    assert.strictEqual(results.whoami, "user-1 with mcp:read")

    // tokens in sessionStorage, under the MCP server; nothing in localStorage or any cookie
    const tokens = JSON.parse(
      storage.session[`effect-mcp:tokens:${McpAuth.canonicalResource(run.mcp)}`]!
    ) as McpAuth.Tokens
    assert.strictEqual(tokens.accessToken, as.issued[0]!.token)
    assert.deepStrictEqual(storage.local, {})
    assert.strictEqual(storage.cookie, "")
    assert.deepStrictEqual(run.cookies, [])
    // the state / verifier record is gone
    assert.deepStrictEqual(Object.keys(storage.session).filter((key) => key.includes(":pending:")), [])

    // the authorization server: one registration, one authorization (PKCE S256, state, resource), one exchange
    assert.strictEqual(as.requestsTo("/register").length, 1)
    const authorizations = as.requestsTo("/authorize")
    assert.strictEqual(authorizations.length, 1)
    const query = authorizations[0]!.query
    assert.strictEqual(query.code_challenge_method, "S256")
    assert.strictEqual(query.redirect_uri, `${run.origin}/callback`)
    assert.strictEqual(query.resource, McpAuth.canonicalResource(run.mcp))
    assert.isAtLeast(query.state!.length, 16)
    const exchanges = as.requestsTo("/token")
    assert.strictEqual(exchanges.length, 1)
    assert.strictEqual(exchanges[0]!.status, 200)
    assert.strictEqual(exchanges[0]!.form!.grant_type, "authorization_code")
    assert.strictEqual(
      createHash("sha256").update(exchanges[0]!.form!.code_verifier!).digest("base64url"),
      query.code_challenge
    )
    // the page went where it should: its own server (app page, callback page, script), and nothing failed
    assert.deepStrictEqual(run.requested, ["GET /", "GET /client.js", "GET /callback", "GET /client.js"])
    assert.deepStrictEqual(run.problems.pageErrors, [])
    // at most: the client's own `subscriptions/listen` stream, closed with it once `whoami` answered
    // (before the server's answer began, so Chromium counts it as failed rather than cancelled)
    for (const line of run.problems.failedRequests) {
      assert.strictEqual(line, `POST ${run.mcp} subscriptions/listen: net::ERR_ABORTED`)
    }
    // the only refusals: the MCP server's 401 before the sign-in (which Chromium also logs as a console error)
    assert.isAtLeast(run.problems.errorResponses.length, 1)
    for (const line of run.problems.errorResponses) assert.match(line, new RegExp(`^401 (POST|GET) ${run.mcp}`))
    for (const line of run.problems.consoleErrors) assert.match(line, /status of 401 \(Unauthorized\)/)

    yield* waitFor(() => chromiumLeftovers(run.pid).length === 0).pipe(
      Effect.catchDefect(() => Effect.die(new Error(`Chromium left: ${chromiumLeftovers(run.pid).join(", ")}`)))
    )
  })

describe("OAuth from a page in Chromium (redirect flow, sessionStorage)", () => {
  it.live(
    "signs in by redirecting the page, completes on /callback, calls a tool; tokens in sessionStorage only",
    () =>
      Effect.gen(function*() {
        const run = yield* signInFromPage(ENTRY)
        yield* assertSignedIn(run)
        // what this page reports besides: where the tokens went, their scope, the address bar after
        assert.strictEqual(run.results.completed, McpAuth.canonicalResource(run.mcp))
        assert.strictEqual(run.results.scope, "mcp:read")
        assert.strictEqual(run.results.location, `${run.origin}/`)
      }),
    90_000
  )

  it.live(
    "the Authorization guide's page (scratchpad/docs/auth-redirect.ts) signs in the same way",
    () => Effect.flatMap(signInFromPage(DOCS_ENTRY), assertSignedIn),
    90_000
  )
})
