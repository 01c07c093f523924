/**
 * The authorizers against real HTTP servers on 127.0.0.1: a tiny
 * "authorization server" that redirects to the redirect URI, the loopback
 * listener receiving the redirect.
 */
import { McpError } from "@effect-mcp/core"
import { NodeMcpAuthorizer } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"

/** A fake authorization endpoint: `handler` answers, requests are recorded. */
const startAs = (handler: (url: URL, res: Http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly base: string; readonly seen: Array<string> }>((resume) => {
      const seen: Array<string> = []
      const server = Http.createServer((req, res) => {
        seen.push(req.url ?? "")
        handler(new URL(req.url ?? "/", "http://127.0.0.1"), res)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen })))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.close(() =>
          resume(Effect.void)
        )
        server.closeAllConnections()
      })
  )

/** Redirects `/authorize` to `redirect_uri` with a code and the state; `/login` to `/authorize`. */
const redirecting = (url: URL, res: Http.ServerResponse) => {
  if (url.pathname === "/login") {
    res.writeHead(302, { location: `/authorize${url.search}` }).end()
    return
  }
  if (url.pathname !== "/authorize") {
    res.writeHead(404).end()
    return
  }
  const target = new URL(url.searchParams.get("redirect_uri")!)
  target.searchParams.set("code", "the-code")
  target.searchParams.set("state", url.searchParams.get("state") ?? "")
  res.writeHead(302, { location: target.href }).end()
}

const authorizationUrl = (base: string, path: string, redirectUri: string, state: string) => {
  const url = new URL(path, base)
  url.searchParams.set("response_type", "code")
  url.searchParams.set("redirect_uri", redirectUri)
  url.searchParams.set("state", state)
  return url
}

const fetchEffect = (url: string | URL) =>
  Effect.tryPromise({
    try: () => fetch(url).then(async (res) => ({ status: res.status, body: await res.text() })),
    catch: (cause) => McpError.transport(`fetch failed: ${String(cause)}`)
  })

/** The server's open connections once they settled (polled 10 ms apart, at most 100 times). */
const openConnections = (server: Http.Server) =>
  Effect.gen(function*() {
    let count = -1
    for (let attempt = 0; attempt < 100 && count !== 0; attempt++) {
      if (attempt > 0) yield* Effect.sleep("10 millis")
      count = yield* Effect.callback<number>((resume) => {
        server.getConnections((_error, n) => resume(Effect.succeed(n)))
      })
    }
    return count
  })

const authKind = (exit: Exit.Exit<unknown, McpError.McpError>) => {
  if (!Exit.isFailure(exit)) return "success"
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  return error?._tag === "Fail" && error.error.reason._tag === "AuthError" ? error.error.reason : undefined
}

describe("NodeMcpAuthorizer.makeHeadless", () => {
  it.live("returns the redirect to the redirect URI (following redirects inside the AS)", () =>
    Effect.gen(function*() {
      const as = yield* startAs(redirecting)
      const authorizer = NodeMcpAuthorizer.makeHeadless()
      assert.strictEqual(authorizer.redirectUri, "http://127.0.0.1/callback")
      const direct = yield* authorizer.authorize(authorizationUrl(as.base, "/authorize", authorizer.redirectUri, "s1"))
      assert.strictEqual(direct.origin + direct.pathname, "http://127.0.0.1/callback")
      assert.strictEqual(direct.searchParams.get("code"), "the-code")
      assert.strictEqual(direct.searchParams.get("state"), "s1")
      const viaLogin = yield* authorizer.authorize(authorizationUrl(as.base, "/login", authorizer.redirectUri, "s2"))
      assert.strictEqual(viaLogin.searchParams.get("state"), "s2")
      assert.deepStrictEqual(as.seen.map((path) => path.split("?")[0]), ["/authorize", "/login", "/authorize"])
      // no connection is kept open to the authorization server
      assert.strictEqual(yield* openConnections(as.server), 0)
    }))

  it.live("resolves a relative Location against the request URL", () =>
    Effect.gen(function*() {
      const as = yield* startAs((_url, res) => res.writeHead(303, { location: "/cb?code=x&state=y" }).end())
      const authorizer = NodeMcpAuthorizer.makeHeadless({ redirectUri: "http://127.0.0.1:1/cb" })
      const url = new URL("/authorize?state=y", as.base)
      const result = yield* authorizer.authorize(url).pipe(Effect.exit)
      // the relative location stays on the AS: it is no redirect to the redirect URI (port 1), so it is followed
      // until the bound; with the redirect_uri parameter naming the AS's /cb it is returned
      assert.strictEqual(authKind(result) !== "success", true)
      const named = new URL(`/authorize?state=y&redirect_uri=${encodeURIComponent(`${as.base}/cb`)}`, as.base)
      const ok = yield* authorizer.authorize(named)
      assert.strictEqual(ok.href, `${as.base}/cb?code=x&state=y`)
    }))

  it.live("a non-redirect answer is an Authorization error with the status and the body", () =>
    Effect.gen(function*() {
      const as = yield* startAs((_url, res) =>
        res.writeHead(401, { "content-type": "text/plain" }).end("login   required\n")
      )
      const exit = yield* NodeMcpAuthorizer.makeHeadless().authorize(new URL("/authorize", as.base)).pipe(Effect.exit)
      const reason = authKind(exit)
      assert.ok(typeof reason === "object" && reason !== null)
      assert.strictEqual(reason.kind, "Authorization")
      assert.strictEqual(reason.status, 401)
      assert.include(reason.description, "login required")
    }))
})

describe("NodeMcpAuthorizer.makeLoopback", () => {
  it.live("receives the redirect from the AS through the opened URL", () =>
    Effect.gen(function*() {
      const as = yield* startAs(redirecting)
      const pages: Array<{ status: number; body: string }> = []
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
        print: false,
        successHtml: "<p>done</p>",
        open: (url) => Effect.asVoid(Effect.tap(fetchEffect(url), (page) => Effect.sync(() => pages.push(page))))
      })
      assert.match(authorizer.redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
      const result = yield* authorizer.authorize(
        authorizationUrl(as.base, "/authorize", authorizer.redirectUri, "st-1")
      )
      assert.strictEqual(result.origin + result.pathname, authorizer.redirectUri)
      assert.strictEqual(result.searchParams.get("code"), "the-code")
      assert.strictEqual(result.searchParams.get("state"), "st-1")
      assert.deepStrictEqual(pages, [{ status: 200, body: "<p>done</p>" }])
      // the callback was consumed: replaying it is refused
      const replay = yield* fetchEffect(result)
      assert.strictEqual(replay.status, 400)
    }))

  it.live("ignores callbacks with another state (400) and other paths (404)", () =>
    Effect.gen(function*() {
      const statuses: Array<number> = []
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
        print: false,
        open: (url) =>
          Effect.gen(function*() {
            const callback = new URL(url.searchParams.get("redirect_uri")!)
            statuses.push((yield* fetchEffect(new URL("/elsewhere?state=right", callback))).status)
            statuses.push((yield* fetchEffect(`${callback.href}?code=evil&state=wrong`)).status)
            statuses.push((yield* fetchEffect(`${callback.href}?code=good&state=right`)).status)
          })
      })
      const url = new URL("http://127.0.0.1:1/authorize")
      url.searchParams.set("redirect_uri", authorizer.redirectUri)
      url.searchParams.set("state", "right")
      const result = yield* authorizer.authorize(url)
      assert.strictEqual(result.searchParams.get("code"), "good")
      assert.deepStrictEqual(statuses, [404, 400, 200])
    }))

  it.live("survives a request target that is no URL", () =>
    Effect.gen(function*() {
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({ print: false })
      const port = Number(new URL(authorizer.redirectUri).port)
      const answer = yield* Effect.callback<string>((resume) => {
        let text = ""
        const socket = Net.connect(port, "127.0.0.1", () =>
          socket.write("GET http://a:b:c/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        socket.setEncoding("utf8")
        socket.on("data", (chunk: string) => (text += chunk))
        socket.on("close", () =>
          resume(Effect.succeed(text)))
      })
      assert.match(answer, /^HTTP\/1\.1 404/)
      assert.strictEqual((yield* fetchEffect(`${authorizer.redirectUri}?state=none`)).status, 400)
    }))

  it.effect("times out without a redirect", () =>
    Effect.gen(function*() {
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
        print: false,
        open: () => Effect.void,
        timeout: "2 minutes"
      })
      const fiber = yield* authorizer.authorize(new URL("http://127.0.0.1:1/authorize?state=x")).pipe(
        Effect.exit,
        Effect.forkChild({ startImmediately: true })
      )
      yield* TestClock.adjust("119 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 second")
      const reason = authKind(yield* Fiber.join(fiber))
      assert.ok(typeof reason === "object" && reason !== null)
      assert.strictEqual(reason.kind, "Authorization")
      assert.include(reason.description, "within 2m")
    }))

  it.live("a failing custom opener fails the authorization", () =>
    Effect.gen(function*() {
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
        print: false,
        open: NodeMcpAuthorizer.openWith("/nonexistent/browser-command")
      })
      const reason = authKind(yield* authorizer.authorize(new URL("http://127.0.0.1:1/a?state=x")).pipe(Effect.exit))
      assert.ok(typeof reason === "object" && reason !== null)
      assert.include(reason.description, "cannot run /nonexistent/browser-command")
    }))

  it.live("closing the scope closes the listener", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({ print: false }).pipe(Scope.provide(scope))
      const before = yield* fetchEffect(`${authorizer.redirectUri}?state=none`)
      assert.strictEqual(before.status, 400)
      yield* Scope.close(scope, Exit.void)
      const after = yield* fetchEffect(`${authorizer.redirectUri}?state=none`).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(after))
    }))
})
