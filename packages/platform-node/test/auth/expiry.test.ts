/**
 * Open SSE connections and token expiry on a protected server, on real
 * sockets (127.0.0.1, ephemeral ports) and the TestClock: a GET stream, a
 * POST's stream and a legacy SSE stream end when the token they were opened
 * with expires, and not before; the Streamable HTTP streams are resumed with
 * a fresh token and nothing is lost; a token without `expiresAt` is never
 * cut.
 */
import { McpAuth, McpError, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer, Queue, Schema } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import * as NodeMcpHttpServer from "../../src/NodeMcpHttpServer.ts"
import * as NodeMcpSseServer from "../../src/NodeMcpSseServer.ts"
import { initialize, mcpHeaders, openSession, send } from "../fixtures/rawHttp.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

/** `t60` expires 60 s after the (test) epoch, `t120` at 120 s, `forever` never. */
const verify = (token: string) => {
  const expiresAt = token === "t60" ? 60 : token === "t120" ? 120 : token === "forever" ? undefined : null
  return expiresAt === null
    ? Effect.fail(McpError.auth("Unauthorized", "unknown token"))
    : Effect.succeed<McpAuth.AuthInfo>({ token, subject: "dave", scopes: [], expiresAt, claims: {} })
}

const AUTH = { authorizationServers: ["http://127.0.0.1/as"], verify, requireAudience: false } as const

const Toggle = McpTool.make("toggle", { input: Schema.Struct({}), handler: () => Effect.succeed("toggled") })

const makeWait = (gate: Queue.Queue<void>) =>
  McpTool.make("wait", {
    input: Schema.Struct({}),
    handler: () => Effect.as(Queue.take(gate), "waited")
  })

const serveHttp = (options: NodeMcpHttpServer.Options = {}) =>
  Effect.gen(function*() {
    const gate = yield* Queue.unbounded<void>()
    const mcp = yield* McpServer.make({ name: "expiry", version: "1.0.0" })
    yield* mcp.register(Toggle)
    yield* mcp.register(makeWait(gate))
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer({ ...options, auth: AUTH }).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)))
    )
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    return { url, mcp, gate }
  })

/** A response read as it arrives (an SSE stream); the connection is dropped with the scope. */
interface Live {
  readonly status: number
  readonly text: () => string
  /** Completed when the response ends (or its connection closes). */
  readonly ended: Deferred.Deferred<void>
  /** Waits until the body so far contains `needle` (`count` times). */
  readonly until: (needle: string, count?: number) => Effect.Effect<void>
  /** The id of the last SSE event received. */
  readonly lastEventId: () => string | undefined
}

const open = (
  url: string,
  options: { readonly method: string; readonly headers: Http.OutgoingHttpHeaders; readonly body?: unknown }
) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly live: Live; readonly request: Http.ClientRequest }>((resume) => {
      const request = Http.request(
        url,
        { method: options.method, headers: options.headers, agent: false },
        (response) => {
          let text = ""
          const waiters: Array<{ readonly ready: () => boolean; readonly done: () => void }> = []
          const ended = Deferred.makeUnsafe<void>()
          const finish = () => Deferred.doneUnsafe(ended, Effect.void)
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => {
            text += chunk
            for (const waiter of waiters.splice(0)) {
              if (waiter.ready()) waiter.done()
              else waiters.push(waiter)
            }
          })
          response.on("end", finish)
          response.on("close", finish)
          const live: Live = {
            status: response.statusCode!,
            text: () => text,
            ended,
            until: (needle, count = 1) =>
              Effect.callback<void>((done) => {
                const ready = () => occurrences(text, needle) >= count
                if (ready()) return done(Effect.void)
                waiters.push({ ready, done: () => done(Effect.void) })
              }),
            lastEventId: () => [...text.matchAll(/^id: ?(.*)$/gm)].at(-1)?.[1]
          }
          resume(Effect.succeed({ live, request }))
        }
      )
      request.on("error", () => undefined)
      request.end(options.body === undefined ? undefined : JSON.stringify(options.body))
    }),
    ({ request }) => Effect.sync(() => request.destroy())
  ).pipe(Effect.map(({ live }) => live))

const getHeaders = (token: string, session: string, lastEventId?: string) =>
  mcpHeaders({ token: token, session: session }, {
    accept: "text/event-stream",
    ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId })
  })

const LIST_CHANGED = "notifications/tools/list_changed"

const occurrences = (text: string, needle: string) => text.split(needle).length - 1

// -----------------------------------------------------------------------------
// Streamable HTTP
// -----------------------------------------------------------------------------

describe("protected Streamable HTTP server: open streams and token expiry", () => {
  it.effect("the GET stream ends when its token expires, not before; resumed with a fresh token, nothing lost", () =>
    Effect.gen(function*() {
      const { url, mcp } = yield* serveHttp()
      const session = yield* openSession(url, { token: "t60" })
      const stream = yield* open(url, { method: "GET", headers: getHeaders("t60", session) })
      assert.strictEqual(stream.status, 200)
      yield* stream.until("id:")

      // one second before expiry the stream still delivers
      yield* TestClock.adjust("59 seconds")
      yield* mcp.disable(Toggle)
      yield* stream.until(LIST_CHANGED)
      assert.isFalse(yield* Deferred.isDone(stream.ended))

      // at expiry the connection ends
      yield* TestClock.adjust("1 second")
      yield* Deferred.await(stream.ended)
      const lastEventId = stream.lastEventId()
      assert.ok(lastEventId !== undefined)

      // sent while nobody listens: kept on the stream
      yield* mcp.enable(Toggle)
      // the old token is refused now; a fresh one resumes the stream
      const stale = yield* send(url, { method: "GET", headers: getHeaders("t60", session, lastEventId) })
      assert.strictEqual(stale.status, 401)
      assert.deepStrictEqual(
        McpAuth.bearerChallenge(stale.headers["www-authenticate"] as string)?.params.error_description,
        "the token has expired"
      )
      const resumed = yield* open(url, { method: "GET", headers: getHeaders("t120", session, lastEventId) })
      assert.strictEqual(resumed.status, 200)
      yield* resumed.until(LIST_CHANGED)
      assert.strictEqual(occurrences(resumed.text(), LIST_CHANGED), 1)
      assert.isFalse(yield* Deferred.isDone(resumed.ended))
      // and that connection ends at its own token's expiry
      yield* TestClock.adjust("59 seconds")
      assert.isFalse(yield* Deferred.isDone(resumed.ended))
      yield* TestClock.adjust("1 second")
      yield* Deferred.await(resumed.ended)
    }))

  it.effect("a POST's stream with a pending response ends at expiry; resumed with Last-Event-ID and a fresh token, the response arrives", () =>
    Effect.gen(function*() {
      const { url, gate } = yield* serveHttp({ responseMode: "sse" })
      const session = yield* openSession(url, { token: "t60" })
      const call = yield* open(url, {
        method: "POST",
        headers: mcpHeaders({ token: "t60", session: session }),
        body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "wait", arguments: {} } }
      })
      assert.strictEqual(call.status, 200)
      yield* call.until("id:")
      const primingId = call.lastEventId()!

      yield* TestClock.adjust("59 seconds")
      // a live request still goes through on the same token
      const ping = yield* send(url, {
        headers: mcpHeaders({ token: "t60", session: session }),
        body: { jsonrpc: "2.0", id: 8, method: "ping" }
      })
      assert.strictEqual(ping.status, 200)
      assert.isFalse(yield* Deferred.isDone(call.ended))

      yield* TestClock.adjust("1 second")
      yield* Deferred.await(call.ended)
      assert.notInclude(call.text(), "waited")

      // the handler finishes while the client is away
      yield* Queue.offer(gate, undefined)
      const resumed = yield* open(url, { method: "GET", headers: getHeaders("t120", session, primingId) })
      assert.strictEqual(resumed.status, 200)
      yield* Deferred.await(resumed.ended)
      assert.include(resumed.text(), `"waited"`)
      assert.include(resumed.text(), `"id":7`)
    }))

  it.effect("a stream opened with a token without expiresAt is never cut", () =>
    Effect.gen(function*() {
      const { url, mcp } = yield* serveHttp()
      const session = yield* openSession(url, { token: "forever" })
      const stream = yield* open(url, { method: "GET", headers: getHeaders("forever", session) })
      assert.strictEqual(stream.status, 200)
      yield* stream.until("id:")
      yield* TestClock.adjust("10 days")
      yield* mcp.disable(Toggle)
      yield* stream.until(LIST_CHANGED)
      assert.isFalse(yield* Deferred.isDone(stream.ended))
      yield* TestClock.adjust("100 days")
      yield* mcp.enable(Toggle)
      yield* stream.until(LIST_CHANGED, 2)
      assert.isFalse(yield* Deferred.isDone(stream.ended))
    }))
})

// -----------------------------------------------------------------------------
// legacy SSE
// -----------------------------------------------------------------------------

describe("protected HTTP+SSE server: open streams and token expiry", () => {
  it.effect("the stream (and its session) ends when its token expires, not before", () =>
    Effect.gen(function*() {
      const mcp = yield* McpServer.make({ name: "expiry-sse", version: "1.0.0" })
      yield* mcp.register(Toggle)
      const context = yield* Layer.build(
        NodeMcpSseServer.layer({ auth: AUTH }).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, mcp)))
      )
      const origin = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
      const stream = yield* open(`${origin}/sse`, {
        method: "GET",
        headers: { accept: "text/event-stream", authorization: "Bearer t60" }
      })
      assert.strictEqual(stream.status, 200)
      yield* stream.until("event: endpoint")
      const endpoint = /event: endpoint\ndata: (.*)\n/.exec(stream.text())![1]!

      yield* TestClock.adjust("59 seconds")
      const posted = yield* send(origin + endpoint, {
        headers: { "content-type": "application/json", authorization: "Bearer t60" },
        body: { ...initialize, params: { ...initialize.params, protocolVersion: "2024-11-05" } }
      })
      assert.strictEqual(posted.status, 202)
      yield* stream.until(`"result"`)
      assert.isFalse(yield* Deferred.isDone(stream.ended))
      assert.strictEqual(yield* mcp.sessionCount, 1)

      yield* TestClock.adjust("1 second")
      yield* Deferred.await(stream.ended)
      // the session is gone with its stream
      const late = yield* send(origin + endpoint, {
        headers: { "content-type": "application/json", authorization: "Bearer t120" },
        body: { jsonrpc: "2.0", id: 1, method: "ping" }
      })
      assert.strictEqual(late.status, 404)
      assert.strictEqual(yield* mcp.sessionCount, 0)
    }))
})
