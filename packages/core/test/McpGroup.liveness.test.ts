/**
 * McpGroup liveness under TestClock, with in-memory servers that can stop
 * answering: a modern one whose middleware blocks every request (its
 * `server/discover`, the modern ping, included), and a legacy one behind a
 * link that drops everything sent to it (its `ping` included). A silent
 * server is pinged, marked down after the configured misses (its calls then
 * fail at once, the others keep answering), and reconnected once it answers
 * again; `group.client(server)` follows it to the new connection. Settings
 * per group and per server, and `false`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schedule, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as McpError from "../src/McpError.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { textOf } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const echo = (server: string, name = "echo") =>
  McpTool.make(name, {
    input: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(`${server}:${text}`)
  })

/** A server that can stop answering: while `hung.now`, every request waits forever. */
const hangable = (name: string, tool: string) =>
  Effect.gen(function*() {
    const hung = { now: false }
    const requests: Array<string> = []
    const server = yield* McpServer.make({
      name: `${name}-server`,
      version: "1.0.0",
      middleware: [(_context, method, _params, next) =>
        Effect.suspend(() => {
          requests.push(method)
          return hung.now ? Effect.never : next
        })]
    })
    yield* server.register(echo(name, tool))
    return { hung, requests, layer: Layer.succeed(McpServer.McpServer, server) }
  })

const plain = (name: string, tool: string) =>
  McpServer.register(echo(name, tool)).pipe(
    Layer.provideMerge(McpServer.layer({ name: `${name}-server`, version: "1.0.0" }))
  )

/**
 * A connector of `test://<name>` servers over in-memory links that can be
 * frozen: while frozen, what the client sends is dropped (the server never
 * answers), as with a process that hangs.
 */
const makeFreezable = (servers: Record<string, Layer.Layer<McpServer.McpServer>>) => {
  const frozen = new Set<string>()
  const connector = Layer.succeed(McpGroup.Connector, {
    transport: (params) => {
      const url = (params as { readonly url: string }).url
      return Layer.effect(
        McpTransport.McpTransport,
        Effect.gen(function*() {
          const inner = yield* Layer.build(McpGroup.transportInMemory(servers[url]!))
          const base = Context.get(inner, McpTransport.McpTransport)
          return McpTransport.McpTransport.of({
            ...base,
            send: (frame) => frozen.has(url) ? Effect.void : base.send(frame)
          })
        })
      )
    }
  })
  return { connector, frozen }
}

const until = (group: McpGroup.Group, ready: (servers: ReadonlyArray<McpGroup.ServerStatus>) => boolean) =>
  group.serverChanges.pipe(Stream.filter(ready), Stream.runHead, Effect.asVoid)

const statusOf = (group: McpGroup.Group, name: string) =>
  Effect.map(group.servers, (servers) => servers.find((server) => server.name === name))

/**
 * Moves the clock one second at a time, `seconds` times, and records when
 * each server was first seen down (`undefined`: never).
 */
const downTimes = (group: McpGroup.Group, seconds: number) =>
  Effect.gen(function*() {
    const times: Record<string, number> = {}
    for (let elapsed = 1; elapsed <= seconds; elapsed++) {
      yield* TestClock.adjust("1 second")
      for (const server of yield* group.servers) {
        if (server.status === "down" && times[server.name] === undefined) times[server.name] = elapsed
      }
    }
    return times
  })

/** Moves the clock one second at a time (at most `seconds`) until `name` is down; the seconds it took. */
const secondsUntilDown = (group: McpGroup.Group, name: string, seconds: number) =>
  Effect.gen(function*() {
    for (let elapsed = 1; elapsed <= seconds; elapsed++) {
      yield* TestClock.adjust("1 second")
      if ((yield* statusOf(group, name))?.status === "down") return elapsed
    }
    return -1
  })

/** Moves the clock one second at a time (at most `seconds`) until `done()`; the seconds it took. */
const secondsUntil = (done: () => boolean, seconds: number) =>
  Effect.gen(function*() {
    for (let elapsed = 1; elapsed <= seconds; elapsed++) {
      yield* TestClock.adjust("1 second")
      if (done()) return elapsed
    }
    return -1
  })

const unavailable = (error: McpError.McpError) => {
  assert.strictEqual(error.reason._tag, "ServerUnavailableError", error.message)
  return error.reason as McpError.ServerUnavailableError
}

describe("McpGroup: liveness", () => {
  it.effect("a modern server that stops answering (server/discover included) is marked down after the configured misses, fails fast, and comes back; client(server) follows it", () =>
    Effect.gen(function*() {
      const b = yield* hangable("b", "shout")
      const group = yield* McpGroup.make({
        servers: {
          a: McpGroup.inMemory(plain("a", "echo")),
          b: McpGroup.inMemory(b.layer, { era: "modern" })
        },
        reconnect: Schedule.spaced("1 second"),
        liveness: { interval: "30 seconds", timeout: "5 seconds", maxMissed: 2 },
        client: { initializeTimeout: "2 seconds" }
      }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
      const client = yield* group.client("b")
      const first = client.session
      assert.strictEqual(client.era, "modern")
      assert.strictEqual(textOf(yield* client.callTool("shout", { text: "x" })), "b:x")

      // a silent server is pinged (a modern one with server/discover) within two intervals, and answers
      const before = b.requests.length
      const pinged = yield* secondsUntil(() => b.requests.slice(before).includes("server/discover"), 60)
      assert.isAbove(pinged, 0)
      assert.strictEqual((yield* statusOf(group, "b"))?.status, "up")

      b.hung.now = true
      // silent for 30 s, a ping unanswered for 5 s, twice: down 70 s later
      assert.strictEqual(yield* secondsUntilDown(group, "b", 120), 70)
      const down = (yield* statusOf(group, "b"))!
      assert.isTrue(down.reconnecting)
      assert.include(down.error?.message ?? "", "stopped answering: 2 pings in a row")

      // its calls fail at once, naming it; the other server answers
      const call = unavailable(yield* Effect.flip(group.callTool("shout", { text: "x" })))
      assert.strictEqual(call.server, "b")
      assert.strictEqual(unavailable(yield* Effect.flip(client.callTool("shout", { text: "x" }))).server, "b")
      assert.strictEqual(unavailable(yield* Effect.flip(group.client("b"))).server, "b")
      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "x" })), "a:x")
      assert.isFalse(yield* first.isOpen)

      // still hung: the attempt 1 s later times out (2 s) and it stays down
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("2 seconds")
      yield* until(group, (servers) => servers[1]?.error?.message.includes("timed out") === true)
      assert.strictEqual((yield* statusOf(group, "b"))?.status, "down")

      // answering again: the next attempt brings it back, and the client follows it
      b.hung.now = false
      yield* TestClock.adjust("1 second")
      yield* until(group, (servers) => servers[1]?.status === "up")
      assert.notStrictEqual(client.session, first)
      assert.isTrue(yield* client.session.isOpen)
      assert.strictEqual(textOf(yield* client.callTool("shout", { text: "back" })), "b:back")
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "back" })), "b:back")
      assert.strictEqual(yield* group.client("b"), client, "the same handle")
    }))

  it.effect("a legacy server whose link drops everything (ping included) is marked down after exactly maxMissed × (interval + timeout)", () =>
    Effect.gen(function*() {
      const { connector, frozen } = makeFreezable({ "test://b": plain("b", "shout") })
      const group = yield* McpGroup.make({
        servers: { b: McpGroup.http("test://b", { era: "legacy" }) },
        reconnect: Schedule.spaced("1 second"),
        liveness: { interval: "10 seconds", timeout: "2 seconds", maxMissed: 3 }
      }).pipe(Effect.provide([connector, ValidatorLayer]))
      const client = yield* group.client("b")
      assert.strictEqual(client.era, "legacy")
      const first = client.session
      frozen.add("test://b")
      assert.strictEqual(yield* secondsUntilDown(group, "b", 60), 36)
      assert.include((yield* statusOf(group, "b"))?.error?.message ?? "", "3 pings in a row")
      assert.strictEqual(unavailable(yield* Effect.flip(client.ping())).server, "b")
      frozen.delete("test://b")
      yield* TestClock.adjust("1 second")
      yield* until(group, (servers) => servers[0]?.status === "up")
      assert.notStrictEqual(client.session, first)
      assert.strictEqual(textOf(yield* client.callTool("shout", { text: "x" })), "b:x")
    }))

  it.effect("liveness: false never pings; a server's own settings are laid over the group's", () =>
    Effect.gen(function*() {
      const a = yield* hangable("a", "echo")
      const b = yield* hangable("b", "shout")
      const c = yield* hangable("c", "whisper")
      const group = yield* McpGroup.make({
        servers: {
          a: McpGroup.inMemory(a.layer, { era: "modern" }),
          b: { params: McpGroup.inMemory(b.layer, { era: "modern" }), liveness: { interval: "10 seconds" } },
          c: { params: McpGroup.inMemory(c.layer, { era: "modern" }), liveness: false }
        },
        reconnect: false,
        liveness: false
      }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
      const d = yield* hangable("d", "say")
      yield* group.connect("d", McpGroup.inMemory(d.layer, { era: "modern" }), {
        liveness: { timeout: "1 second", maxMissed: 1 }
      })
      for (const server of [a, b, c, d]) server.hung.now = true
      // b: every 10 s, 10 s timeout (default), 2 misses (default), and it spoke during its first interval
      // (its subscriptions/listen stream opened): 10 + 2 × (10 + 10); d: every 30 s (default), 1 s, 1 miss
      assert.deepStrictEqual(yield* downTimes(group, 60), { b: 50, d: 31 })
      yield* TestClock.adjust("1 hour")
      assert.deepStrictEqual((yield* group.servers).map((server) => server.status), ["up", "down", "up", "down"])
      // a's only server/discover was the handshake
      assert.deepStrictEqual(a.requests.filter((method) => method === "server/discover"), ["server/discover"])
    }))

  it.effect("a ping answered with an error counts as an answer", () =>
    Effect.gen(function*() {
      // the first discover is the client's handshake; every later one (the pings) is refused
      let discovers = 0
      const server = yield* McpServer.make({
        name: "refuser",
        version: "1.0.0",
        middleware: [(_context, method, _params, next) =>
          method === "server/discover" && ++discovers > 1 ? Effect.fail(McpError.protocol(-32603, "not now")) : next]
      })
      yield* server.register(echo("r", "say"))
      const group = yield* McpGroup.make({
        servers: { r: McpGroup.inMemory(Layer.succeed(McpServer.McpServer, server), { era: "modern" }) },
        reconnect: false,
        liveness: { interval: "10 seconds", timeout: "1 second", maxMissed: 1 }
      }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
      yield* TestClock.adjust("1 minute")
      assert.isAbove(discovers, 3)
      assert.strictEqual((yield* statusOf(group, "r"))?.status, "up")
      assert.strictEqual(textOf(yield* group.callTool("say", { text: "x" })), "r:x")
    }))
})
