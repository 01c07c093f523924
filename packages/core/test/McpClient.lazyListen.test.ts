/**
 * 2026-07-28: a client opens a `subscriptions/listen` stream only when
 * something follows changes, and once for what becomes followed together;
 * counted as the server sees the requests (a recording middleware). A
 * one-shot call opens none; a list read once is not followed; a list read
 * again is followed and fetched once its stream is acknowledged; a list
 * fetched before the acknowledgement is fetched again (a change between the
 * two is not missed).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpPrompt from "../src/McpPrompt.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { rawPeer, settle } from "./utils/peer.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})
const late = McpTool.make("late", { input: Schema.Struct({}), handler: () => Effect.succeed("late") })
const hello = McpPrompt.make({ name: "hello", get: () => Effect.succeed("hello") })
const file = McpResource.make({ uri: "file:///x", name: "x", read: () => Effect.succeed("x") })

interface Seen {
  readonly method: string
  readonly params: unknown
}

/** Our server, recording every request it is sent (method and params). */
const recordingServer = Effect.gen(function*() {
  const seen: Array<Seen> = []
  const server = yield* McpServer.make({
    name: "recorded",
    version: "1.0.0",
    middleware: [(context, method, params, next) =>
      Effect.suspend(() => {
        if (context.kind === "request") seen.push({ method, params })
        return next
      })]
  })
  for (const definition of [echo, hello, file]) yield* server.register(definition)
  const methods = () => seen.map((request) => request.method)
  const count = (method: string) => methods().filter((name) => name === method).length
  const listens = () =>
    seen.filter((request) => request.method === "subscriptions/listen").map((request) =>
      (request.params as { readonly notifications: unknown }).notifications
    )
  return { server, seen, methods, count, listens }
})

const connect = (options: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const recorded = yield* recordingServer
    const link = yield* McpTransport.makeInMemoryLink
    yield* Layer.build(
      McpServer.layerSession.pipe(Layer.provide([link.server, Layer.succeed(McpServer.McpServer, recorded.server)]))
    )
    const client = yield* connectOver(link.client, { era: "modern", ...options })
    return { ...recorded, client }
  })

/** Lets the background work (forked opens, acknowledgements, refreshes) run. */
const quiet = Effect.forEach(Array.from({ length: 10 }), () => settle, { discard: true })

const ALL = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }

describe("McpClient (2026-07-28): what a client that runs once asks", () => {
  it.effect("a call: server/discover, tools/list (for the tool's outputSchema), tools/call; no listen", () =>
    Effect.gen(function*() {
      const { client, methods } = yield* connect()
      assert.strictEqual(textOf(yield* client.callTool("echo", { text: "hi" })), "hi")
      yield* quiet
      assert.deepStrictEqual(methods(), ["server/discover", "tools/call", "tools/list"])
    }))

  it.effect("every list read once: each fetched once, no listen", () =>
    Effect.gen(function*() {
      const { client, count, methods } = yield* connect()
      yield* Effect.all([client.tools.get, client.prompts.get, client.resources.get, client.resourceTemplates.get], {
        concurrency: "unbounded"
      })
      yield* client.callTool("echo", { text: "hi" })
      yield* quiet
      for (const method of ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]) {
        assert.strictEqual(count(method), 1, method)
      }
      assert.strictEqual(count("subscriptions/listen"), 0, methods().join(", "))
    }))

  it.effect("concurrent first readers share one fetch and follow nothing", () =>
    Effect.gen(function*() {
      const { client, count } = yield* connect()
      yield* Effect.all([client.tools.get, client.tools.get, client.tools.get], { concurrency: "unbounded" })
      yield* quiet
      assert.strictEqual(count("tools/list"), 1)
      assert.strictEqual(count("subscriptions/listen"), 0)
    }))
})

describe("McpClient (2026-07-28): a client that follows changes", () => {
  it.effect("lists followed together: one listen with the whole filter; fetched after its acknowledgement, once", () =>
    Effect.gen(function*() {
      const { client, count, listens } = yield* connect()
      const followers = yield* Effect.forEach(
        [client.tools, client.prompts, client.resources, client.resourceTemplates] as const,
        (list: McpClient.CachedList<unknown>) =>
          Effect.forkChild(Stream.runDrain(list.changes), { startImmediately: true })
      )
      yield* Effect.all([client.tools.get, client.prompts.get, client.resources.get, client.resourceTemplates.get], {
        concurrency: "unbounded"
      })
      yield* quiet
      assert.deepStrictEqual(listens(), [ALL])
      for (const method of ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]) {
        assert.strictEqual(count(method), 1, method)
      }
      yield* Fiber.interruptAll(followers)
    }))

  it.effect("lists read first, then followed (as a group does): one listen; each fetched again after its acknowledgement", () =>
    Effect.gen(function*() {
      const { client, count, listens } = yield* connect()
      yield* Effect.all([client.tools.get, client.prompts.get, client.resources.get, client.resourceTemplates.get], {
        concurrency: "unbounded"
      })
      for (const list of [client.tools, client.prompts, client.resources, client.resourceTemplates] as const) {
        yield* Effect.forkChild(Stream.runDrain((list as McpClient.CachedList<unknown>).changes), {
          startImmediately: true
        })
      }
      yield* quiet
      assert.deepStrictEqual(listens(), [ALL])
      // fetched before the stream was acknowledged: they might have changed meanwhile
      for (const method of ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]) {
        assert.strictEqual(count(method), 2, method)
      }
    }))

  it.effect("a change between the first fetch and the acknowledgement is not missed", () =>
    Effect.gen(function*() {
      const { client, server } = yield* connect()
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["echo"])
      // nothing follows the list yet: the server has no one to tell
      yield* server.register(late)
      const seen = yield* client.tools.changes.pipe(
        Stream.filter((tools) => tools.some((tool) => tool.name === "late")),
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      yield* quiet
      assert.isDefined(seen.pollUnsafe(), "the list with `late` arrived")
    }))

  it.effect("a list read again: followed from then on, fetched once after the acknowledgement, then served from the cache", () =>
    Effect.gen(function*() {
      const { client, count, listens, server } = yield* connect()
      yield* client.tools.get
      yield* quiet
      assert.strictEqual(count("subscriptions/listen"), 0)
      yield* server.register(late)
      // the second read sees the change (nothing followed the list since the first)
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["echo", "late"])
      yield* quiet
      assert.deepStrictEqual(listens(), [{ toolsListChanged: true }])
      assert.strictEqual(count("tools/list"), 2)
      yield* client.tools.get
      yield* quiet
      assert.strictEqual(count("tools/list"), 2)
      // and it follows the server's changes
      yield* server.unregister(late)
      yield* quiet
      assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["echo"])
      assert.strictEqual(count("tools/list"), 3)
      assert.strictEqual(count("subscriptions/listen"), 1)
    }))

  it.effect("a watched resource joins the filter: the stream is reopened with it", () =>
    Effect.gen(function*() {
      const { client, listens } = yield* connect()
      const follower = yield* Effect.forkChild(Stream.runDrain(client.tools.changes), { startImmediately: true })
      yield* quiet
      const watching = yield* Effect.forkChild(Stream.runDrain(client.watchResource("file:///x")), {
        startImmediately: true
      })
      yield* quiet
      assert.deepStrictEqual(listens(), [{ toolsListChanged: true }, {
        toolsListChanged: true,
        resourceSubscriptions: ["file:///x"]
      }])
      yield* Fiber.interruptAll([follower, watching])
    }))

  it.effect("followLists: false follows nothing, a group's lists included", () =>
    Effect.gen(function*() {
      const { client, count } = yield* connect({ followLists: false })
      yield* client.tools.get
      yield* client.tools.get
      yield* Effect.forkChild(Stream.runDrain(client.tools.changes), { startImmediately: true })
      yield* quiet
      assert.strictEqual(count("tools/list"), 1)
      assert.strictEqual(count("subscriptions/listen"), 0)
      // a group (which follows every list it shows) of such clients
      const other = yield* recordingServer
      const group = yield* McpGroup.make({
        servers: { r: McpGroup.inMemory(Layer.succeed(McpServer.McpServer, other.server), { era: "modern" }) },
        client: { followLists: false },
        reconnect: false,
        liveness: false
      }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "hi" })), "hi")
      yield* quiet
      assert.strictEqual(other.count("subscriptions/listen"), 0)
      assert.strictEqual(other.count("tools/list"), 1)
      assert.strictEqual(other.count("tools/call"), 1)
    }))

  it.effect("a followed list is fetched once its stream is acknowledged; a dropped stream is reopened after 1 s (TestClock)", () =>
    Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      const server = yield* rawPeer(serverEnd)
      const connecting = yield* Effect.forkChild(
        connectOver(Layer.succeed(McpTransport.McpTransport, clientEnd), { era: "modern" }),
        { startImmediately: true }
      )
      const discover = (yield* server.next) as JsonRpc.Request
      yield* server.send(JsonRpc.success(discover.id, {
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: { listChanged: true } }
      }))
      const client = yield* Fiber.join(connecting)
      const acknowledge = (listen: JsonRpc.Request) =>
        server.send(JsonRpc.notification("notifications/subscriptions/acknowledged", {
          _meta: { "io.modelcontextprotocol/subscriptionId": listen.id },
          notifications: { toolsListChanged: true }
        }))
      const answerList = Effect.gen(function*() {
        const list = (yield* server.next) as JsonRpc.Request
        assert.strictEqual(list.method, "tools/list")
        yield* server.send(JsonRpc.success(list.id, { resultType: "complete", tools: [] }))
      })

      yield* Effect.forkChild(Stream.runDrain(client.tools.changes), { startImmediately: true })
      const listen = (yield* server.next) as JsonRpc.Request
      assert.strictEqual(listen.method, "subscriptions/listen")
      assert.deepStrictEqual((listen.params as { readonly notifications: unknown }).notifications, {
        toolsListChanged: true
      })
      // the list is asked for only once the stream is acknowledged: no change can fall between the two
      const listing = yield* Effect.forkChild(client.tools.get, { startImmediately: true })
      yield* settle
      assert.strictEqual(yield* server.backlog, 0)
      yield* acknowledge(listen)
      yield* answerList
      assert.deepStrictEqual(yield* Fiber.join(listing), [])

      // dropped: reopened after the backoff, and the list fetched again once that one is acknowledged
      yield* server.send(JsonRpc.failure(listen.id, { code: -32603, message: "gone" }))
      yield* settle
      assert.strictEqual(yield* server.backlog, 0)
      yield* TestClock.adjust("1 second")
      const again = (yield* server.next) as JsonRpc.Request
      assert.strictEqual(again.method, "subscriptions/listen")
      assert.deepStrictEqual((again.params as { readonly notifications: unknown }).notifications, {
        toolsListChanged: true
      })
      yield* acknowledge(again)
      yield* answerList
    }))
})
