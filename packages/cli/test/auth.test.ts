/**
 * OAuth in the built `effect-mcp`, run as a process: a protected MCP server
 * and its authorization server run in this process on 127.0.0.1 (the
 * platform-node fixture); the "browser" is a script (`EFFECT_MCP_BROWSER`)
 * that requests the authorization URL and follows its redirect to the CLI's
 * loopback listener. The first call signs in, the second uses the token in
 * the auth file, `logout` forgets it, and the next call signs in again.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { startAuthServer, startProtectedServer } from "../../platform-node/test/fixtures/authServer.ts"
import { assertExit, runCli, tempDir } from "./utils/cli.ts"

const files = tempDir({})
afterAll(() => files.cleanup())

// follows every redirect (the authorization server's, then the one to the
// loopback callback) like a browser whose user is signed in and consents
const browserScript = files.path("browser.mjs")
writeFileSync(
  browserScript,
  `const url = process.argv[process.argv.length - 1]
const res = await fetch(url)
const body = await res.text()
if (res.status !== 200) { console.error("browser: HTTP " + res.status + " " + body.slice(0, 200)); process.exit(1) }
`
)
const browser = `${process.execPath} ${browserScript}`

const setup = (name: string, oauth?: Record<string, unknown>) =>
  Effect.gen(function*() {
    const as = yield* startAuthServer()
    const server = yield* startProtectedServer(as)
    const config = files.path(`${name}.json`)
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          secure: { url: server.url, ...(oauth === undefined ? {} : { oauth }) },
          local: { command: process.execPath, args: ["-e", "0"] }
        }
      })
    )
    const authFile = files.path(`${name}-auth/auth.json`)
    const run = (args: ReadonlyArray<string>, env?: Record<string, string>) =>
      runCli([...args, "--config", config, "--server", "secure"], {
        env: { EFFECT_MCP_BROWSER: browser, EFFECT_MCP_AUTH_FILE: authFile, ...env }
      })
    const authorizations = () => as.requestsTo("/authorize").length
    const tokenRequests = () => as.requestsTo("/token").length
    const stored = () =>
      JSON.parse(readFileSync(authFile, "utf8")) as { tokens: Record<string, any>; clients: Record<string, any> }
    return { as, server, config, authFile, run, authorizations, tokenRequests, stored }
  })

/** A port that was free a moment ago (for a fixed `callbackPort`). */
const freePort = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("effect-mcp OAuth", () => {
  it.live("signs in on first use, reuses the stored token, and logout forces a new sign-in", () =>
    Effect.gen(function*() {
      const t = yield* setup("flow")

      const first = yield* t.run(["call", "echo", "--args", "{\"text\":\"hello\"}"])
      assertExit(first, 0)
      assert.strictEqual(first.stdout.trim(), "hello")
      assert.strictEqual(t.authorizations(), 1)
      // the authorization URL is printed on stderr for a user to paste
      assert.include(first.stderr, t.as.endpoints.authorization)
      // the token file is private and holds the server's tokens and the registration
      assert.strictEqual(statSync(t.authFile).mode & 0o777, 0o600)
      assert.strictEqual(statSync(t.authFile.replace(/\/auth\.json$/, "")).mode & 0o777, 0o700)
      const afterFirst = t.stored()
      assert.hasAllKeys(afterFirst.tokens, [t.server.resource])
      assert.isString(afterFirst.tokens[t.server.resource].accessToken)
      assert.lengthOf(Object.keys(afterFirst.clients), 1)
      const tokens = t.tokenRequests()

      // the second run uses the stored token: no authorization, no token request
      const second = yield* t.run(["call", "whoami", "--json"])
      assertExit(second, 0)
      assert.strictEqual(t.authorizations(), 1)
      assert.strictEqual(t.tokenRequests(), tokens)
      assert.include(second.stdout, "user-1")
      assert.notInclude(second.stderr, t.as.endpoints.authorization)

      // --auth-file wins over EFFECT_MCP_AUTH_FILE: another file, another sign-in
      const otherFile = files.path("flow-other.json")
      const elsewhere = yield* t.run(["call", "echo", "--args", "{\"text\":\"x\"}", "--auth-file", otherFile])
      assertExit(elsewhere, 0)
      assert.strictEqual(t.authorizations(), 2)
      assert.strictEqual(statSync(otherFile).mode & 0o777, 0o600)

      // logout forgets the tokens (the client registration stays)
      const logout = yield* t.run(["logout", "secure"])
      assertExit(logout, 0)
      assert.strictEqual(logout.stdout.trim(), `signed out of secure (${t.server.resource})`)
      assert.deepStrictEqual(t.stored().tokens, {})
      assert.deepStrictEqual(t.stored().clients, afterFirst.clients)
      const again = yield* t.run(["logout", "secure", "--json"])
      assertExit(again, 0)
      assert.deepStrictEqual(JSON.parse(again.stdout), {
        server: "secure",
        resource: t.server.resource,
        signedOut: false
      })

      // and the next call signs in again
      const third = yield* t.run(["call", "echo", "--args", "{\"text\":\"back\"}"])
      assertExit(third, 0)
      assert.strictEqual(third.stdout.trim(), "back")
      assert.strictEqual(t.authorizations(), 3)
      // (NodeMcpOAuth registers again when the loopback port, so the redirect URI, changed)
      assert.isAtLeast(t.as.requestsTo("/register").length, 2)
      assert.hasAllKeys(t.stored().tokens, [t.server.resource])

      // login: signs in ahead of time, or reuses the stored token
      const loggedOut = yield* t.run(["logout", "secure"])
      assertExit(loggedOut, 0)
      const login = yield* t.run(["login", "secure"])
      assertExit(login, 0)
      assert.strictEqual(login.stdout.trim(), `signed in to secure (${t.server.resource})`)
      assert.strictEqual(t.authorizations(), 4)
      const loginAgain = yield* t.run(["login", "secure", "--json"])
      assertExit(loginAgain, 0)
      assert.deepStrictEqual(JSON.parse(loginAgain.stdout), {
        server: "secure",
        resource: t.server.resource,
        signedIn: true
      })
      assert.strictEqual(t.authorizations(), 4)
    }))

  for (const callback of ["a fixed callbackPort", "an ephemeral callback port"] as const) {
    it.live(`an expired token is refreshed silently, with ${callback}`, () =>
      Effect.gen(function*() {
        const port = callback === "a fixed callbackPort" ? yield* freePort : undefined
        const t = yield* setup("refresh", port === undefined ? undefined : { callbackPort: port })
        const first = yield* t.run(["call", "echo", "--args", "{\"text\":\"hello\"}"])
        assertExit(first, 0)
        if (port !== undefined) assert.include(first.stderr, encodeURIComponent(`http://127.0.0.1:${port}/callback`))
        const tokens = t.tokenRequests()
        const saved = t.stored()
        assert.isString(saved.tokens[t.server.resource].refreshToken)
        saved.tokens[t.server.resource].expiresAt = 1_000
        writeFileSync(t.authFile, JSON.stringify(saved), { mode: 0o600 })

        const refreshed = yield* t.run(["call", "echo", "--args", "{\"text\":\"fresh\"}"])
        assertExit(refreshed, 0)
        assert.strictEqual(refreshed.stdout.trim(), "fresh")
        assert.strictEqual(t.authorizations(), 1)
        assert.strictEqual(t.as.requestsTo("/register").length, 1)
        const grants = t.as.requestsTo("/token").slice(tokens).map((request) => request.form?.grant_type)
        assert.deepStrictEqual(grants, ["refresh_token"])
        const after = t.stored().tokens[t.server.resource]
        assert.isAbove(after.expiresAt, 1_000)
        assert.notStrictEqual(after.accessToken, saved.tokens[t.server.resource].accessToken)
        assert.notInclude(refreshed.stderr, "Open this URL")
      }))
  }

  it.live("a refused sign-in exits 5; logout of a stdio or unknown server is a usage error", () =>
    Effect.gen(function*() {
      const t = yield* setup("deny")
      t.as.config.deny = true
      const denied = yield* t.run(["call", "echo", "--args", "{\"text\":\"hello\"}"])
      assertExit(denied, 5)
      assert.match(denied.stderr, /authorization failed/)
      assert.include(denied.stderr, "access_denied")
      assert.strictEqual(denied.stdout, "")

      const stdio = yield* runCli(["logout", "local", "--config", t.config, "--auth-file", t.authFile])
      assertExit(stdio, 2)
      assert.include(stdio.stderr, "not an HTTP server")
      const unknown = yield* runCli(["logout", "nope", "--config", t.config, "--auth-file", t.authFile])
      assertExit(unknown, 2)
      assert.include(unknown.stderr, "unknown server \"nope\"")
    }))

  it.live("a corrupt auth file exits 5 and is left alone", () =>
    Effect.gen(function*() {
      const t = yield* setup("corrupt")
      const dir = t.authFile.replace(/\/auth\.json$/, "")
      yield* Effect.sync(() => {
        mkdirSync(dir, { recursive: true })
        writeFileSync(t.authFile, "{ not json")
      })
      const ran = yield* t.run(["call", "echo", "--args", "{\"text\":\"hello\"}"])
      assertExit(ran, 5)
      assert.include(ran.stderr, "is corrupt")
      assert.strictEqual(readFileSync(t.authFile, "utf8"), "{ not json")
    }))
})
