/**
 * Legacy HTTP sessions shared by replicas through an `McpSessionRegistry`,
 * in process: several routes (replicas), each with its own `McpServer`, one
 * registry hub (test/utils/registryHub.ts) and one event store between them.
 * A request for a session another replica holds is forwarded there; one for
 * a session whose replica is gone takes it over; a replica that shuts down
 * hands its sessions over. The same over Redis and real processes is in
 * packages/redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as McpChangeBus from "../src/McpChangeBus.ts"
import * as McpHttpServer from "../src/McpHttpServer.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSessionRegistry from "../src/McpSessionRegistry.ts"
import * as McpTool from "../src/McpTool.ts"
import { linkedBuses } from "./utils/linkedBuses.ts"
import { settle } from "./utils/peer.ts"
import { ACCEPT, call, initialize, initialized } from "./utils/rawMessages.ts"
import { makeHub } from "./utils/registryHub.ts"
import { json, sseOf } from "./utils/sse.ts"

interface Replica {
  readonly server: McpServer.Server
  readonly scope: Scope.Closeable
  readonly request: (
    method: string,
    headers: Record<string, string>,
    body?: unknown
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope>
  readonly post: (
    body: unknown,
    session?: string,
    token?: string
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope>
}

const makeCluster = Effect.gen(function*() {
  const hub = makeHub()
  const store = yield* McpHttpServer.makeEventStoreMemory()

  const replica = (name: string, bus?: McpChangeBus.Service, auth?: McpHttpServer.Options["auth"]) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
      const server = yield* McpServer.make({
        name: "cluster-test",
        version: "1.0.0",
        capabilities: { tools: { listChanged: true } }
      }).pipe(
        bus === undefined ? (self) => self : Effect.provideService(McpChangeBus.McpChangeBus, bus),
        Scope.provide(scope)
      )
      yield* server.register(McpTool.make("whoami", { input: Schema.Struct({}), handler: () => Effect.succeed(name) }))
      yield* server.register(McpResource.make({ uri: "note://1", name: "note", read: () => Effect.succeed("text") }))
      const registry = yield* Scope.provide(hub.replica(name), scope)
      const handler = yield* HttpRouter.toHttpEffect(
        McpHttpServer.layerRoute({ eventStore: store, ...(auth === undefined ? {} : { auth }) }).pipe(
          Layer.provide(Layer.succeed(McpServer.McpServer, server)),
          Layer.provide(Layer.succeed(McpSessionRegistry.McpSessionRegistry, registry))
        )
      ).pipe(Scope.provide(scope))
      const request: Replica["request"] = (method, headers, body) =>
        handler.pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromWeb(
              new Request("http://localhost/mcp", {
                method,
                headers,
                ...(body === undefined ? {} : { body: JSON.stringify(body) })
              })
            )
          ),
          Effect.orDie
        )
      const post: Replica["post"] = (body, session, token) =>
        request("POST", {
          accept: ACCEPT,
          "content-type": "application/json",
          "mcp-protocol-version": "2025-11-25",
          ...(session === undefined ? {} : { "mcp-session-id": session }),
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
        }, body)
      return { server, scope, request, post } satisfies Replica
    })

  const open = (replica: Replica, token?: string) =>
    Effect.gen(function*() {
      const response = yield* Effect.scoped(replica.post(initialize, undefined, token))
      assert.strictEqual(response.status, 200)
      const id = response.headers["mcp-session-id"]!
      assert.strictEqual((yield* Effect.scoped(replica.post(initialized, id, token))).status, 202)
      yield* settle
      return id
    })

  const whoami = (replica: Replica, session: string, id = 1, token?: string) =>
    Effect.scoped(Effect.flatMap(replica.post(call(id, "whoami"), session, token), json)).pipe(
      Effect.map((body) => body.result?.content?.[0]?.text ?? JSON.stringify(body))
    )

  return { hub, store, replica, open, whoami }
})

describe("McpHttpServer with a session registry", () => {
  it.effect("a request for a session another replica holds is served there", () =>
    Effect.gen(function*() {
      const { hub, open, replica, whoami } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const session = yield* open(a)
      assert.strictEqual(hub.records.get(session)?.owner, "a")
      assert.strictEqual(yield* whoami(b, session), "a")
      assert.strictEqual(yield* whoami(a, session, 2), "a")
      assert.strictEqual(hub.forwardedCount(), 1)
      assert.strictEqual(yield* b.server.sessionCount, 0)
      // an unknown session is a 404 on every replica
      assert.strictEqual((yield* Effect.scoped(b.post(call(3, "whoami"), "no-such-session"))).status, 404)
    }))

  it.effect("a session whose replica is gone is taken over, once", () =>
    Effect.gen(function*() {
      const { hub, open, replica, whoami } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const c = yield* replica("c")
      const session = yield* open(a)
      hub.kill("a")
      assert.strictEqual(yield* whoami(b, session), "b")
      assert.strictEqual(hub.records.get(session)?.owner, "b")
      // from then on b holds it: c forwards there
      assert.strictEqual(yield* whoami(c, session, 2), "b")
      assert.strictEqual(yield* b.server.sessionCount, 1)
      assert.strictEqual(yield* c.server.sessionCount, 0)
      // the session b opened again is initialized: lists work, with the client's version
      const list = yield* Effect.scoped(
        Effect.flatMap(b.post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, session), json)
      )
      assert.deepStrictEqual(list.result.tools.map((tool: { name: string }) => tool.name), ["whoami"])
    }))

  it.effect("with auth, a session is another user's on every replica: never forwarded, never taken over", () =>
    Effect.gen(function*() {
      const { hub, open, replica, whoami } = yield* makeCluster
      // a token names its user
      const auth: McpHttpServer.Options["auth"] = {
        resource: "http://localhost/mcp",
        authorizationServers: ["http://localhost/as"],
        verify: (token) => Effect.succeed({ token, subject: token, scopes: [], claims: {} }),
        requireAudience: false
      }
      const a = yield* replica("a", undefined, auth)
      const b = yield* replica("b", undefined, auth)
      const session = yield* open(a, "alice")
      const foreign = yield* Effect.scoped(b.post(call(1, "whoami"), session, "mallory"))
      assert.strictEqual(foreign.status, 404)
      assert.strictEqual(hub.forwardedCount(), 0)
      hub.kill("a")
      assert.strictEqual((yield* Effect.scoped(b.post(call(2, "whoami"), session, "mallory"))).status, 404)
      assert.strictEqual(hub.records.get(session)?.owner, "a")
      // its user's requests are served, the takeover too
      assert.strictEqual(yield* whoami(b, session, 3, "alice"), "b")
    }))

  it.effect("a registry that cannot be reached: 503 for a session held elsewhere; sessions held here go on", () =>
    Effect.gen(function*() {
      const { hub, open, replica, whoami } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const session = yield* open(a)
      hub.setDown(true)
      const refused = yield* Effect.scoped(
        Effect.flatMap(
          b.post(call(1, "whoami"), session),
          (response) => Effect.map(json(response), (body) => [response.status, body.error.message])
        )
      )
      assert.deepStrictEqual(refused, [503, "Service Unavailable: the session registry cannot be reached"])
      assert.strictEqual(yield* whoami(a, session, 2), "a")
    }))

  it.effect("a replica whose heartbeat has not lapsed but that takes no request is gone all the same", () =>
    Effect.gen(function*() {
      const { hub, open, replica, whoami } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const session = yield* open(a)
      hub.silence("a")
      assert.strictEqual(yield* whoami(b, session), "b")
      assert.strictEqual(hub.records.get(session)?.owner, "b")
    }))

  it.effect("the replica that takes a session over sets again what the client set: logging level, resource subscriptions", () =>
    Effect.gen(function*() {
      const { hub, open, replica } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const session = yield* open(a)
      const request = (id: number, method: string, params: object) => ({ jsonrpc: "2.0", id, method, params })
      for (
        const [id, method, params] of [
          [1, "resources/subscribe", { uri: "note://1" }],
          [2, "resources/subscribe", { uri: "note://2" }],
          [3, "resources/unsubscribe", { uri: "note://2" }],
          [4, "logging/setLevel", { level: "debug" }],
          [5, "logging/setLevel", { level: "error" }],
          [6, "resources/subscribe", { uri: "x".repeat(5000) }]
        ] as const
      ) {
        assert.strictEqual((yield* Effect.scoped(a.post(request(id, method, params), session))).status, 200)
      }
      assert.deepStrictEqual(hub.records.get(session)?.replay, [
        { method: "resources/subscribe", params: { uri: "note://1" } },
        { method: "logging/setLevel", params: { level: "error" } }
      ])
      hub.kill("a")
      const stream = yield* sseOf(
        yield* b.request("GET", {
          accept: "text/event-stream",
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25"
        })
      )
      yield* stream.next // priming
      yield* b.server.notifyResourceUpdated("note://2")
      yield* b.server.notifyResourceUpdated("note://1")
      const event = yield* stream.next
      assert.deepStrictEqual(event?._tag === "Event" && JSON.parse(event.data), {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "note://1" }
      })
    }).pipe(Effect.scoped))

  it.effect("a replica that shuts down hands its sessions over; DELETE ends a session everywhere", () =>
    Effect.gen(function*() {
      const { hub, open, replica, whoami } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const session = yield* open(a)
      const other = yield* open(a)
      yield* Scope.close(a.scope, Exit.void)
      assert.strictEqual(hub.records.get(session)?.owner, "")
      assert.strictEqual(yield* whoami(b, session), "b")
      const deleted = yield* Effect.scoped(b.request("DELETE", { "mcp-session-id": other }))
      assert.strictEqual(deleted.status, 204)
      assert.isFalse(hub.records.has(other))
      assert.strictEqual((yield* Effect.scoped(b.post(call(2, "whoami"), other))).status, 404)
    }))

  it.effect("the GET stream resumed on the replica that took the session over misses nothing and repeats nothing", () =>
    Effect.gen(function*() {
      const { hub, open, replica } = yield* makeCluster
      const a = yield* replica("a")
      const b = yield* replica("b")
      const session = yield* open(a)
      const getHeaders = {
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25"
      }
      const first = yield* Scope.make()
      const stream = yield* sseOf(yield* a.request("GET", getHeaders)).pipe(Scope.provide(first))
      const priming = yield* stream.next
      assert.strictEqual(priming?._tag, "Event")
      // two changes on a: the client reads both, but (say) only the first reached it
      const change = (replica: Replica, n: number) =>
        replica.server.register(
          McpTool.make(`extra${n}`, { input: Schema.Struct({}), handler: () => Effect.succeed("") })
        )
      yield* change(a, 1)
      const e1 = yield* stream.next
      yield* change(a, 2)
      const e2 = yield* stream.next
      assert.strictEqual(e1?._tag === "Event" && JSON.parse(e1.data).method, "notifications/tools/list_changed")
      assert.strictEqual(e2?._tag === "Event" && JSON.parse(e2.data).method, "notifications/tools/list_changed")
      yield* Scope.close(first, Exit.void)
      hub.kill("a")
      // resumed on b after e1: e2 again (the client missed it), then b's own events
      const resumed = yield* sseOf(
        yield* b.request("GET", { ...getHeaders, "last-event-id": e1?._tag === "Event" ? e1.id! : "" })
      )
      const replayed = yield* resumed.next
      assert.deepStrictEqual(replayed?._tag === "Event" ? replayed.id : undefined, e2?._tag === "Event" ? e2.id : "")
      yield* change(b, 3)
      const e3 = yield* resumed.next
      assert.strictEqual(e3?._tag === "Event" && JSON.parse(e3.data).method, "notifications/tools/list_changed")
      assert.isTrue(
        e3?._tag === "Event" && e2?._tag === "Event" && e1?._tag === "Event" && e3.id !== e2.id && e3.id !== e1.id
      )
    }).pipe(Effect.scoped))

  it.effect("a change bus tells every replica's sessions of a change made on one", () =>
    Effect.gen(function*() {
      const { open, replica } = yield* makeCluster
      const { a: busA, b: busB } = yield* linkedBuses
      const a = yield* replica("a", busA)
      const b = yield* replica("b", busB)
      const session = yield* open(b)
      const stream = yield* sseOf(
        yield* b.request("GET", {
          accept: "text/event-stream",
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25"
        })
      )
      yield* stream.next // priming
      yield* a.server.register(McpTool.make("fresh", { input: Schema.Struct({}), handler: () => Effect.succeed("") }))
      const event = yield* stream.next
      assert.strictEqual(event?._tag === "Event" && JSON.parse(event.data).method, "notifications/tools/list_changed")
    }).pipe(Effect.scoped))
})
