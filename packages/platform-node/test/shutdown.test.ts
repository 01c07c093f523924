/**
 * Shutting a Streamable HTTP server down, in real child processes (run with
 * `NodeMcpRuntime.runMain`): on SIGTERM or SIGINT with streams open (a legacy
 * session's GET stream, a POST whose tool never ends, a 2026-07-28
 * `subscriptions/listen` stream) the process exits within 2 s with code 130
 * (the runtime's code for an interrupted program), and every stream is
 * answered and ends cleanly (a complete chunked response, not a cut
 * connection). Both ways of serving: `NodeMcpHttpServer.layer`, and the route
 * mounted in an `HttpRouter` app on `NodeHttpServer.layer` with its defaults
 * (`McpHttpServer.withGracefulShutdown`); and the README's mounting example,
 * `scratchpad/http-mount.ts`. The clients use one keep-alive agent, as
 * browsers and `fetch` do.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect } from "effect"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import { fileURLToPath } from "node:url"
import { send } from "./fixtures/rawHttp.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/shutdown-server.ts", import.meta.url))

// -----------------------------------------------------------------------------
// A child process
// -----------------------------------------------------------------------------

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** Starts `node --conditions=development <args>` and waits for `listening on <url>`; killed when the scope closes. */
const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<Exit>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--conditions=development", ...args], {
          cwd: root,
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => (stderr += chunk))
    child.on("exit", (code, signal) => Deferred.doneUnsafe(exited, Effect.succeed({ code, signal })))
    const url = yield* Effect.callback<string>((resume) => {
      let out = ""
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        out += chunk
        const match = /^listening on (\S+)\n/.exec(out)
        if (match !== null) resume(Effect.succeed(match[1]!))
      })
      child.on("exit", (code) =>
        resume(Effect.die(new Error(`the server exited with ${code} before listening: ${stderr}`))))
    }).pipe(Effect.timeout("20 seconds"))
    /** Sends `signal`, then waits (at most 10 s) for the exit: how long it took, how it ended, its stderr. */
    const stop = (signal: NodeJS.Signals) =>
      Effect.gen(function*() {
        const before = yield* Clock.currentTimeMillis
        child.kill(signal)
        const exit = yield* Deferred.await(exited).pipe(Effect.timeout("10 seconds"))
        return { ...exit, millis: (yield* Clock.currentTimeMillis) - before, stderr }
      })
    return { url, stop }
  })

// -----------------------------------------------------------------------------
// Raw HTTP, through one keep-alive agent
// -----------------------------------------------------------------------------

const keepAlive = Effect.acquireRelease(
  Effect.sync(() => new Http.Agent({ keepAlive: true })),
  (agent) => Effect.sync(() => agent.destroy())
)

/** An SSE response read message by message (each wait at most 5 s). */
interface SseReader {
  readonly status: number
  readonly next: Effect.Effect<any>
  /** Whether the response ended cleanly (`"end"`) or its connection was cut (`"cut"`). */
  readonly ended: Effect.Effect<"end" | "cut">
}

const openSse = (
  agent: Http.Agent,
  url: string,
  options: { readonly method: string; readonly headers: Http.OutgoingHttpHeaders; readonly body?: unknown }
) =>
  Effect.callback<SseReader>((resume) => {
    const req = Http.request(url, { method: options.method, headers: options.headers, agent }, (response) => {
      const ended = Deferred.makeUnsafe<"end" | "cut">()
      const messages: Array<unknown> = []
      const waiting: Array<(message: unknown) => void> = []
      let buffer = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        buffer += chunk
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const data = buffer.slice(0, end).split("\n").filter((line) => line.startsWith("data: ")).map((line) =>
            line.slice(6)
          )
          buffer = buffer.slice(end + 2)
          if (data.length === 0 || data.join("") === "") continue // a comment, a priming event
          const message = JSON.parse(data.join("\n"))
          const waiter = waiting.shift()
          if (waiter !== undefined) waiter(message)
          else messages.push(message)
        }
      })
      response.on("end", () => Deferred.doneUnsafe(ended, Effect.succeed("end")))
      response.on("close", () => Deferred.doneUnsafe(ended, Effect.succeed("cut")))
      resume(Effect.succeed({
        status: response.statusCode!,
        next: Effect.callback<unknown>((resume) => {
          if (messages.length > 0) resume(Effect.succeed(messages.shift()))
          else waiting.push((message) => resume(Effect.succeed(message)))
        }).pipe(Effect.timeout("5 seconds"), Effect.orDie),
        ended: Deferred.await(ended).pipe(Effect.timeout("5 seconds"), Effect.orDie)
      }))
    })
    req.on("error", () => undefined)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })

// -----------------------------------------------------------------------------
// MCP
// -----------------------------------------------------------------------------

const LEGACY = "2025-11-25"
const MODERN = "2026-07-28"

const headers = (extra: Http.OutgoingHttpHeaders = {}): Http.OutgoingHttpHeaders => ({
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": LEGACY,
  ...extra
})

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

/** `initialize` and `notifications/initialized`: the session id and the initialize result. */
const openSession = (agent: Http.Agent, url: string) =>
  Effect.gen(function*() {
    const reply = yield* send(url, {
      agent,
      headers: headers(),
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      }
    })
    assert.strictEqual(reply.status, 200, reply.body)
    const session = reply.headers["mcp-session-id"] as string
    const done = yield* send(url, {
      agent,
      headers: headers({ "mcp-session-id": session }),
      body: { jsonrpc: "2.0", method: "notifications/initialized" }
    })
    assert.strictEqual(done.status, 202)
    return { session, result: JSON.parse(reply.body).result }
  })

/** The session's GET stream. */
const openGet = (agent: Http.Agent, url: string, session: string) =>
  openSse(agent, url, {
    method: "GET",
    headers: { accept: "text/event-stream", "mcp-protocol-version": LEGACY, "mcp-session-id": session }
  })

/** A 2026-07-28 `subscriptions/listen` stream, once acknowledged. */
const openListen = (agent: Http.Agent, url: string) =>
  Effect.gen(function*() {
    const listen = yield* openSse(agent, url, {
      method: "POST",
      headers: headers({ "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen" }),
      body: {
        jsonrpc: "2.0",
        id: "listen",
        method: "subscriptions/listen",
        params: { _meta: modernMeta, notifications: { toolsListChanged: true } }
      }
    })
    assert.strictEqual(listen.status, 200)
    assert.strictEqual((yield* listen.next).method, "notifications/subscriptions/acknowledged")
    return listen
  })

/** After shutdown: a listen stream answers its request, then ends cleanly. */
const assertListenEnded = (listen: SseReader) =>
  Effect.gen(function*() {
    const answer = yield* listen.next
    assert.strictEqual(answer.id, "listen")
    assert.isDefined(answer.result, JSON.stringify(answer))
    assert.strictEqual(yield* listen.ended, "end")
  })

/** A clean exit of an interrupted `runMain` program, within 2 s of the signal. */
const assertExited = (exit: Exit & { readonly millis: number; readonly stderr: string }) => {
  assert.deepStrictEqual({ code: exit.code, signal: exit.signal }, { code: 130, signal: null }, exit.stderr)
  assert.isBelow(exit.millis, 2000, exit.stderr)
}

// -----------------------------------------------------------------------------
// Tests
// -----------------------------------------------------------------------------

describe("shutdown with streams open", () => {
  const cases = [
    { mode: "standalone", signal: "SIGTERM" },
    { mode: "mounted", signal: "SIGTERM" },
    { mode: "mounted", signal: "SIGINT" }
  ] as const
  for (const { mode, signal } of cases) {
    it.live(
      `${mode} (${signal}): exit 130 within 2 s; the GET stream ends, the tool in flight is answered with an error, the listen stream completes`,
      () =>
        Effect.gen(function*() {
          const { stop, url } = yield* start([fixture, mode])
          const agent = yield* keepAlive
          const { session } = yield* openSession(agent, url)
          const get = yield* openGet(agent, url, session)
          assert.strictEqual(get.status, 200)
          const call = yield* openSse(agent, url, {
            method: "POST",
            headers: headers({ "mcp-session-id": session }),
            body: {
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: { name: "hang", arguments: {}, _meta: { progressToken: "p" } }
            }
          })
          assert.strictEqual((yield* call.next).method, "notifications/progress")
          const listen = yield* openListen(agent, url)

          assertExited(yield* stop(signal))

          assert.strictEqual(yield* get.ended, "end")
          const answer = yield* call.next
          assert.strictEqual(answer.id, 1)
          assert.strictEqual(answer.error.code, -32000)
          assert.include(answer.error.message, "shutting down")
          assert.strictEqual(yield* call.ended, "end")
          yield* assertListenEnded(listen)
        }).pipe(Effect.scoped),
      30_000
    )
  }
})

describe("scratchpad/http-mount.ts: an HttpRouter app with the MCP server at /mcp", () => {
  const example = "scratchpad/http-mount.ts"

  it.live("prints its URL; GET /health and the MCP endpoint answer on the same server", () =>
    Effect.gen(function*() {
      const { url } = yield* start([example], { PORT: "0" })
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
      const agent = yield* keepAlive
      const health = yield* send(`${url}/health`, { agent, method: "GET" })
      assert.deepStrictEqual([health.status, health.body], [200, "ok"])
      const mcp = `${url}/mcp`
      const { result, session } = yield* openSession(agent, mcp)
      assert.strictEqual(result.serverInfo.name, "adder")
      const sum = yield* send(mcp, {
        agent,
        headers: headers({ "mcp-session-id": session }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 40, b: 2 } } }
      })
      assert.strictEqual(sum.status, 200, sum.body)
      assert.deepStrictEqual(JSON.parse(sum.body).result.structuredContent, { sum: 42 })
      const missing = yield* send(`${url}/nothing`, { agent, method: "GET" })
      assert.strictEqual(missing.status, 404)
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "SIGTERM with a GET stream and a listen stream open: exit 130 within 2 s, both streams end cleanly",
    () =>
      Effect.gen(function*() {
        const { stop, url } = yield* start([example])
        const agent = yield* keepAlive
        const mcp = `${url}/mcp`
        const { session } = yield* openSession(agent, mcp)
        const get = yield* openGet(agent, mcp, session)
        assert.strictEqual(get.status, 200)
        const listen = yield* openListen(agent, mcp)

        assertExited(yield* stop("SIGTERM"))

        assert.strictEqual(yield* get.ended, "end")
        yield* assertListenEnded(listen)
      }).pipe(Effect.scoped),
    30_000
  )
})
