/**
 * Issue 15, finding 1: the OAuth client must never hand a browser (or the
 * OS opener behind it) a URL of another scheme than `https:` (or `http:` on a
 * loopback host). A malicious MCP server controls the authorization server
 * metadata through its protected resource metadata, hence the
 * `authorization_endpoint`: `file:` and custom protocol handlers would reach
 * the OS through `xdg-open` / `open`.
 *
 * Checked three times: when the metadata is validated (sign-in fails with a
 * `Refused` AuthError before any registration or authorization request), in
 * the authorizers (loopback and headless: nothing printed, opened or
 * requested), and in the openers themselves (`openBrowser`, `openWith`:
 * nothing run). The opener is recorded: a function, or a script named
 * `xdg-open` / `open` first on PATH, as the default opener runs it.
 */
import { McpError } from "@effect-mcp/core"
import { NodeMcpAuthorizer } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { authKind, connect } from "../fixtures/oauthClient.ts"

/** The authorization endpoints a malicious server could publish. */
const MALICIOUS = [
  "file:///tmp/payload.desktop",
  "javascript:alert(document.cookie)",
  "vscode://evil.extension/run?cmd=calc",
  "data:text/html,<script>alert(1)</script>",
  "http://auth.example.com/authorize"
] as const

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-mcp-opener-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A shell script at `<dir>/<name>` that appends its arguments, one line per run, to `<dir>/opened`. */
const recordingScript = (dir: string, name: string) => {
  const script = Path.join(dir, name)
  Fs.writeFileSync(script, `#!/bin/sh\necho "$@" >> "${Path.join(dir, "opened")}"\n`, { mode: 0o755 })
  return script
}

/** What the recording scripts of `dir` were run with (waits a little for a detached script to write). */
const opened = (dir: string) =>
  Effect.gen(function*() {
    const file = Path.join(dir, "opened")
    // bounded: 20 × 25 ms
    for (let i = 0; i < 20 && !Fs.existsSync(file); i++) yield* Effect.sleep("25 millis")
    return Fs.existsSync(file) ? Fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []
  })

/** PATH with `dir` first, for the scope (the default opener runs `xdg-open` / `open` from PATH). */
const pathFirst = (dir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = process.env.PATH
      process.env.PATH = `${dir}${Path.delimiter}${saved ?? ""}`
      return saved
    }),
    (saved) => Effect.sync(() => void (process.env.PATH = saved))
  )

const reasonOf = (exit: Exit.Exit<unknown, McpError.McpError>) => {
  if (!Exit.isFailure(exit)) return undefined
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  return failure?._tag === "Fail" && failure.error.reason._tag === "AuthError" ? failure.error.reason : undefined
}

/** Nothing reached the authorization server past its metadata. */
const assertNothingAfterMetadata = (as: { readonly requestsTo: (path: string) => ReadonlyArray<unknown> }) => {
  assert.strictEqual(as.requestsTo("/register").length, 0, "no registration")
  assert.strictEqual(as.requestsTo("/authorize").length, 0, "no authorization request")
  assert.strictEqual(as.requestsTo("/token").length, 0, "no token request")
}

describe("issue 15 #1: the authorization endpoint a server publishes never reaches a browser unless https", () => {
  it.live.skipIf(process.platform === "win32")(
    "the default opener (xdg-open / open) never receives a file: authorization URL: sign-in is refused",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        recordingScript(dir, "xdg-open")
        recordingScript(dir, "open")
        yield* pathFirst(dir)
        const as = yield* startAuthServer({ metadata: { authorization_endpoint: "file:///tmp/payload.desktop" } })
        const server = yield* startProtectedServer(as)
        const authorizer = yield* NodeMcpAuthorizer.makeLoopback({ print: false, timeout: "2 seconds" })
        const error = yield* Effect.flip(connect({ url: server.url, authorizer }))
        assert.deepStrictEqual(yield* opened(dir), [], "the OS opener was not run")
        assertNothingAfterMetadata(as)
        assert.strictEqual(authKind(error), "Refused")
        assert.include(error.message, "a file: URL")
        assert.include(error.message, "only an https URL")
      })
  )

  for (const endpoint of MALICIOUS) {
    it.live(`${endpoint.split(":")[0]}: (${endpoint.slice(0, 30)}…): refused, a recording opener receives nothing`, () =>
      Effect.gen(function*() {
        const as = yield* startAuthServer({ metadata: { authorization_endpoint: endpoint } })
        const server = yield* startProtectedServer(as)
        const received: Array<string> = []
        const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
          print: false,
          timeout: "2 seconds",
          open: (url) => Effect.sync(() => void received.push(url.href))
        })
        const error = yield* Effect.flip(connect({ url: server.url, authorizer }))
        assert.deepStrictEqual(received, [], "the opener received nothing")
        assertNothingAfterMetadata(as)
        assert.strictEqual(error.reason._tag, "AuthError")
        assert.strictEqual(authKind(error), "Refused")
        assert.include(error.message, "authorization endpoint")
        // the headless authorizer the same
        const headless = yield* Effect.flip(connect({ url: server.url, authorizer: NodeMcpAuthorizer.makeHeadless() }))
        assert.strictEqual(authKind(headless), "Refused")
        assertNothingAfterMetadata(as)
      }))
  }

  it.live("an https authorization endpoint still reaches the opener (the recorder can see a URL)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as)
      const received: Array<string> = []
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
        print: false,
        open: (url) =>
          Effect.sync(() => void received.push(url.href)).pipe(
            // play the browser: follow the authorization URL to the loopback redirect
            Effect.andThen(NodeMcpAuthorizer.makeHeadless().authorize(url)),
            Effect.flatMap((callback) => Effect.promise(() => fetch(callback).then((res) => res.text())))
          )
      })
      yield* connect({ url: server.url, authorizer })
      assert.strictEqual(received.length, 1)
      assert.isTrue(received[0]!.startsWith(`${as.issuer}/authorize?`))
    }))
})

describe("issue 15 #1: the authorizers and openers check the URL themselves (defence in depth)", () => {
  it.live("the loopback authorizer refuses a file: URL: nothing printed or opened, whatever the opener", () =>
    Effect.gen(function*() {
      const received: Array<string> = []
      const authorizer = yield* NodeMcpAuthorizer.makeLoopback({
        print: false,
        open: (url) => Effect.sync(() => void received.push(url.href))
      })
      for (const url of [...MALICIOUS, "http://169.254.169.254/authorize"]) {
        const reason = reasonOf(yield* Effect.exit(authorizer.authorize(new URL(`${url}?state=s`))))
        assert.strictEqual(reason?.kind, "Refused", url)
      }
      assert.deepStrictEqual(received, [])
    }))

  it.live("the headless authorizer refuses a URL of another scheme, first or in a redirect (no request there)", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const server = Http.createServer((req, res) => {
        seen.push(req.url ?? "")
        res.writeHead(302, { location: "file:///tmp/payload.desktop?code=x" }).end()
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const headless = NodeMcpAuthorizer.makeHeadless()
      const first = reasonOf(yield* Effect.exit(headless.authorize(new URL("file:///etc/passwd?state=s"))))
      assert.strictEqual(first?.kind, "Refused")
      const redirected = reasonOf(yield* Effect.exit(headless.authorize(new URL(`${base}/authorize?state=s`))))
      assert.strictEqual(redirected?.kind, "Refused")
      assert.include(redirected?.description ?? "", "file:")
      assert.deepStrictEqual(seen, ["/authorize?state=s"])
    }))

  it.live.skipIf(process.platform === "win32")(
    "openWith and openBrowser run nothing for a file: URL",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const script = recordingScript(dir, "record-browser")
        recordingScript(dir, "xdg-open")
        recordingScript(dir, "open")
        yield* pathFirst(dir)
        for (const url of MALICIOUS) {
          assert.strictEqual(
            reasonOf(yield* Effect.exit(NodeMcpAuthorizer.openWith(script)(new URL(url))))?.kind,
            "Refused"
          )
          assert.strictEqual(reasonOf(yield* Effect.exit(NodeMcpAuthorizer.openBrowser(new URL(url))))?.kind, "Refused")
        }
        assert.deepStrictEqual(yield* opened(dir), [])
        // the recorder does record what may be opened
        yield* NodeMcpAuthorizer.openWith(script)(new URL("https://auth.example.com/authorize?x=1"))
        assert.deepStrictEqual(yield* opened(dir), ["https://auth.example.com/authorize?x=1"])
        assert.isTrue(NodeMcpAuthorizer.isBrowsableUrl(new URL("http://127.0.0.1:8080/authorize")))
        assert.isTrue(NodeMcpAuthorizer.isBrowsableUrl(new URL("http://[::1]:8080/authorize")))
        assert.isFalse(NodeMcpAuthorizer.isBrowsableUrl(new URL("http://example.com/authorize")))
      })
  )
})
