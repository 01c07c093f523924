/**
 * The Authorization guide's server and client (`scratchpad/docs/auth-server.ts`,
 * `scratchpad/docs/auth-client.ts`), each run as a process as its page says,
 * against the tests' authorization server (fixtures/authServer.ts, which
 * authorizes without a user) on 127.0.0.1: the server is given its resource,
 * its authorization server's issuer and its port in its environment; the
 * client the server's URL, a configuration directory of its own (where its
 * token file goes) and, first on PATH, an `xdg-open` that is a browser
 * without a screen (fixtures/headless-browser.mjs: it follows the
 * authorization server's redirect back to the client's loopback listener).
 *
 * The first run signs in (discovery, registration, one authorization with
 * PKCE S256, one code exchange) and prints what the server's `whoami` saw:
 * the token's subject and scopes, checked by the server against the
 * authorization server's key set. The tokens are in the client's file
 * (`$XDG_CONFIG_HOME/effect-mcp/auth.json`, mode 0600). A second run signs
 * in no more: no browser, no authorization, no token request. A request
 * without a token is refused with the challenge naming the server's metadata.
 */
import { McpAuth } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { startAuthServer } from "./fixtures/authServer.ts"
import { send } from "./fixtures/rawHttp.ts"
import { freePort } from "./utils/everything.ts"
import { isRunning } from "./utils/process.ts"
import { root } from "./utils/runtimes.ts"

const BROWSER = fileURLToPath(new URL("fixtures/headless-browser.mjs", import.meta.url))

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-mcp-docs-auth-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

interface Run {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Its exit code once it exited (at most 60 s, then it is killed and this dies). */
  readonly exit: Effect.Effect<number | null>
}

/** `node --conditions=development <script>` from the repository's root with `env`; SIGKILLed with the scope if still running. */
const node = (script: string, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync((): Run => {
      const child = spawn(process.execPath, ["--conditions=development", script], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      const exit = Effect.callback<number | null>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
        child.once("exit", (code) => resume(Effect.succeed(code)))
      }).pipe(
        Effect.timeoutOrElse({
          duration: "60 seconds",
          orElse: () => Effect.die(new Error(`${script} did not exit\nstdout: ${stdout}\nstderr: ${stderr}`))
        })
      )
      return { child, stdout: () => stdout, stderr: () => stderr, exit }
    }),
    ({ child }) =>
      Effect.callback<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGKILL")
      })
  )

/** `GET <url>` answers 200 (at most 30 s, 50 ms apart; dies with the server's stderr otherwise). */
const readyAt = (url: string, server: Run) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 600; attempt++) {
      if (server.child.exitCode !== null) break
      const status = yield* Effect.callback<number>((resume) => {
        Http.get(url, { agent: false }, (response) => {
          response.resume()
          resume(Effect.succeed(response.statusCode ?? 0))
        }).once("error", () => resume(Effect.succeed(0)))
      })
      if (status === 200) return
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`the server never got ready at ${url}\nstderr: ${server.stderr()}`))
  })

describe("the Authorization guide's server and client, run as processes", () => {
  it.live(
    "signs in once through the loopback redirect, then uses the stored tokens; the server knows the user",
    () =>
      Effect.gen(function*() {
        const as = yield* startAuthServer({ scopesSupported: ["mcp:read", "mcp:admin"] })
        // where the guide's server looks for the key set (RFC 8414 leaves the path to the authorization server)
        as.serveJson("/.well-known/jwks.json", as.publicJwks)
        const port = yield* freePort
        const url = `http://127.0.0.1:${port}/mcp`
        const server = yield* node("scratchpad/docs/auth-server.ts", {
          PORT: String(port),
          MCP_RESOURCE: url,
          AUTH_ISSUER: as.issuer
        })
        yield* readyAt(`http://127.0.0.1:${port}/readyz`, server)

        // no token: refused, the challenge naming the server's metadata
        const refused = yield* send(url, {
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: { jsonrpc: "2.0", id: 1, method: "ping" }
        })
        assert.strictEqual(refused.status, 401)
        assert.include(
          String(refused.headers["www-authenticate"]),
          `resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`
        )

        const dir = yield* tempDir
        const log = Path.join(dir, "browser.log")
        Fs.writeFileSync(Path.join(dir, "xdg-open"), `#!/bin/sh\nexec "${process.execPath}" "${BROWSER}" "$@"\n`, {
          mode: 0o755
        })
        const clientEnv = {
          MCP_URL: url,
          XDG_CONFIG_HOME: Path.join(dir, "config"),
          PATH: `${dir}${Path.delimiter}${process.env.PATH ?? ""}`,
          HEADLESS_BROWSER_LOG: log
        }
        const runClient = Effect.gen(function*() {
          const client = yield* node("scratchpad/docs/auth-client.ts", clientEnv)
          const code = yield* client.exit
          assert.strictEqual(code, 0, client.stderr())
          return client.stdout()
        }).pipe(Effect.scoped)

        // first run: the browser opened once, on the authorization server, and came back to the client
        const first = yield* runClient
        assert.strictEqual(as.issued.length, 1)
        const issued = as.issued[0]!
        assert.strictEqual(first, `${issued.claims.sub} (${issued.claims.scope})\n`)
        assert.strictEqual(issued.claims.sub, "user-1")
        assert.strictEqual(issued.claims.aud, McpAuth.canonicalResource(url))
        assert.include(issued.claims.scope!.split(" "), "mcp:read")
        const opened = Fs.readFileSync(log, "utf8").trim().split("\n")
        assert.strictEqual(opened.length, 1)
        const [authorizationUrl, landed, status] = opened[0]!.split(" ")
        assert.isTrue(authorizationUrl!.startsWith(`${as.endpoints.authorization}?`), authorizationUrl)
        assert.match(landed!, /^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/)
        assert.strictEqual(status, "200")
        assert.strictEqual(as.requestsTo("/register").length, 1)
        const authorizations = as.requestsTo("/authorize")
        assert.strictEqual(authorizations.length, 1)
        assert.strictEqual(authorizations[0]!.query.code_challenge_method, "S256")
        assert.strictEqual(authorizations[0]!.query.resource, McpAuth.canonicalResource(url))
        assert.strictEqual(as.requestsTo("/token").length, 1)

        // the tokens are in the client's file, readable by its owner only
        const file = Path.join(dir, "config", "effect-mcp", "auth.json")
        assert.strictEqual(Fs.statSync(file).mode & 0o777, 0o600)
        assert.include(Fs.readFileSync(file, "utf8"), issued.token)

        // second run: signed in already; nothing asked of the browser or the authorization server
        const requestsBefore = as.requests.length
        const second = yield* runClient
        assert.strictEqual(second, first)
        assert.strictEqual(Fs.readFileSync(log, "utf8").trim().split("\n").length, 1)
        assert.deepStrictEqual(as.requests.slice(requestsBefore).map((request) => request.path), [])

        // the server stops on SIGTERM (`NodeMcpRuntime.runMain`: interrupted, status 130)
        server.child.kill("SIGTERM")
        assert.strictEqual(yield* server.exit, 130)
        assert.isFalse(isRunning(server.child.pid!))
      }).pipe(Effect.scoped),
    120_000
  )
})
