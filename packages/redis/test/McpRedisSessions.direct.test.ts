/**
 * The direct hop of the Redis session registry (`McpRedisSessions.Options.direct`):
 * forwarded requests go straight to their owner over HTTP on 127.0.0.1, Redis
 * only telling where the owner listens; pub/sub carries what the hop cannot.
 * Real redis-server, real HTTP. That the hop and not pub/sub carried a
 * request is told by Redis's count of `PUBLISH`es.
 */
import type { McpSessionRegistry } from "@effect-mcp/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Queue, Ref, Stream } from "effect"
import { readFileSync } from "node:fs"
import { connect as connectTcp } from "node:net"
import * as RedisServer from "./utils/redisServer.ts"
import { bytes, eventually, published, record, replica, request, serveEndless, text } from "./utils/sessions.ts"

const direct = { direct: { secret: "test-secret" } } as const

/** The address a replica advertises: its heartbeat's value. */
const advertised = (
  redis: { readonly send: <A>(command: string, ...args: ReadonlyArray<string>) => Effect.Effect<A, unknown> },
  replicaId: string
) => Effect.orDie(redis.send<string | null>("GET", `test:replicas:${replicaId}`))

const portOf = (address: string | null) => Number(new URL(address!).port)

/** A raw request to a hop, as anyone on the network could send it. */
const raw = (
  port: number,
  init: {
    readonly path?: string
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: Uint8Array
  }
) =>
  Effect.promise(() =>
    fetch(`http://127.0.0.1:${port}${init.path ?? "/.mcp-relay/v1"}`, {
      method: init.method ?? "POST",
      headers: { "x-mcp-relay-method": "POST", "x-mcp-relay-url": "/mcp", ...init.headers },
      ...((init.method ?? "POST") === "POST" ? { body: init.body ?? "{}" } : {})
    }).then(async (response) => ({ status: response.status, body: await response.text() }))
  )

/** Whether something accepts connections on the port. */
const listening = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const socket = connectTcp(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

/** The client sockets to a port, in any state (`/proc/net/tcp`): a closed one lingers in TIME_WAIT. */
const clientSockets = (port: number) =>
  Effect.sync(() =>
    readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1).filter((line) => {
      const remote = line.trim().split(/\s+/)[2]
      return remote !== undefined && parseInt(remote.split(":")[1]!, 16) === port
    }).length
  )

const collect = (body: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(body), (chunks) => chunks.map(text).join(""))

const json = bytes(`{"jsonrpc":"2.0","id":1,"result":{}}`)

/** Serves every request with `json`, whole, counting them. */
const serveJson = (registry: McpSessionRegistry.Service) =>
  Effect.gen(function*() {
    const served = yield* Ref.make(0)
    const received = yield* Queue.unbounded<McpSessionRegistry.ForwardedRequest>()
    yield* registry.serve((forwarded) =>
      Effect.as(
        Effect.andThen(Ref.update(served, (n) => n + 1), Queue.offer(received, forwarded)),
        { status: 200, headers: { "content-type": "application/json" }, body: Stream.die("unused"), whole: json }
      )
    )
    return { served: Ref.get(served), received }
  })

describe.skipIf(!RedisServer.available)("McpRedisSessions, direct hop", () => {
  it.live("advertises the hop's address in its heartbeat (a replica without it keeps \"1\"), and shares a secret made once", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, { direct: {} })
      const b = yield* replica(server.url)
      expect(yield* advertised(a.redis, a.registry.replicaId)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(yield* advertised(a.redis, b.registry.replicaId)).toBe("1")
      // liveness asks whether the key exists, whatever its value
      yield* a.registry.register(record("s1", a.registry.replicaId))
      yield* b.registry.register(record("s2", b.registry.replicaId))
      const live = (id: string) =>
        Effect.map(a.registry.lookup(id), (found) => found._tag === "Some" && found.value.live)
      expect([yield* live("s1"), yield* live("s2")]).toEqual([true, true])
      // no secret configured: the first replica made one, kept in Redis for the others
      const secret = yield* Effect.orDie(a.redis.send<string | null>("GET", "test:secret:relay"))
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const c = yield* replica(server.url, { direct: {} })
      yield* serveJson(c.registry)
      const before = yield* published(a.redis)
      const response = yield* Effect.scoped(a.registry.forward(c.registry.replicaId, request))
      expect(text(response.whole!)).toBe(text(json))
      expect((yield* published(a.redis)) - before).toBe(0)
      expect(yield* Effect.orDie(a.redis.send<string | null>("GET", "test:secret:relay"))).toBe(secret)
    }).pipe(Effect.scoped))

  it.live("a wildcard host without an address to advertise is refused when the layer is built", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const exit = yield* Effect.exit(replica(server.url, { direct: { host: "0.0.0.0" } }))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(String(Cause.squash((exit as Exit.Failure<unknown, unknown>).cause))).toMatch(/set direct\.advertise/)
    }).pipe(Effect.scoped))

  it.live("forwards a JSON answer over the hop, not on pub/sub: the request arrives as it was sent", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const b = yield* replica(server.url, direct)
      const { received, served } = yield* serveJson(a.registry)
      const before = yield* published(a.redis)
      const response = yield* Effect.scoped(b.registry.forward(a.registry.replicaId, request))
      expect([response.status, response.headers, text(response.whole!)]).toEqual([
        200,
        { "content-type": "application/json" },
        text(json)
      ])
      expect(yield* collect(response.body)).toBe(text(json))
      const got = yield* Queue.take(received)
      expect({ ...got, body: text(got.body) }).toEqual({ ...request, body: text(request.body) })
      // a Host, and a GET without a body, arrive as they were
      const get: McpSessionRegistry.ForwardedRequest = {
        method: "GET",
        url: "/mcp",
        headers: { host: "mcp.example.com:8443", accept: "text/event-stream", "mcp-session-id": "s1" },
        body: new Uint8Array(0)
      }
      yield* Effect.scoped(b.registry.forward(a.registry.replicaId, get))
      const gotGet = yield* Queue.take(received)
      expect({ ...gotGet, body: gotGet.body.length }).toEqual({ ...get, body: 0 })
      expect(yield* served).toBe(2)
      expect((yield* published(a.redis)) - before).toBe(0)
      // on keep-alive connections (the pool may open a second while the first is being released), none closed
      const port = portOf(yield* advertised(a.redis, a.registry.replicaId))
      for (let i = 0; i < 20; i++) yield* Effect.scoped(b.registry.forward(a.registry.replicaId, request))
      expect(yield* clientSockets(port)).toBeLessThanOrEqual(2)
    }).pipe(Effect.scoped))

  it.live("streams a body over the hop as it is written; the handler's scope closes once it is", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const b = yield* replica(server.url, direct)
      const handlerClosed = yield* Deferred.make<void>()
      const writes = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      yield* a.registry.serve(() =>
        Effect.gen(function*() {
          yield* Effect.addFinalizer(() => Deferred.succeed(handlerClosed, undefined))
          return { status: 202, headers: { "content-type": "text/event-stream" }, body: Stream.fromQueue(writes) }
        })
      )
      const before = yield* published(a.redis)
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      expect([response.status, response.headers, response.whole]).toEqual([
        202,
        { "content-type": "text/event-stream" },
        undefined
      ])
      const chunks = yield* Queue.unbounded<Uint8Array>()
      // (chunks come as Buffers)
      const reader = yield* response.body.pipe(
        Stream.runForEach((chunk) => Queue.offer(chunks, Uint8Array.from(chunk))),
        Effect.forkChild
      )
      const binary = Uint8Array.from({ length: 256 }, (_, i) => i)
      // each chunk arrives before the next is written
      for (const part of [bytes("event: message\ndata: 1\n\n"), binary, bytes("event: message\ndata: 2\n\n")]) {
        yield* Queue.offer(writes, part)
        expect(yield* Queue.take(chunks).pipe(Effect.timeout("5 seconds"))).toEqual(part)
      }
      expect(yield* Deferred.isDone(handlerClosed)).toBe(false)
      yield* Queue.end(writes)
      yield* Fiber.join(reader).pipe(Effect.timeout("5 seconds"))
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
      expect((yield* published(a.redis)) - before).toBe(0)
    }).pipe(Effect.scoped))

  it.live("falls back to pub/sub when the owner advertises no address", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url, direct)
      const { served } = yield* serveJson(a.registry)
      const before = yield* published(a.redis)
      const response = yield* Effect.scoped(b.registry.forward(a.registry.replicaId, request))
      expect(text(response.whole!)).toBe(text(json))
      expect(yield* served).toBe(1)
      // the request, and its answer in one message
      expect((yield* published(a.redis)) - before).toBe(2)
    }).pipe(Effect.scoped))

  it.live("falls back to pub/sub when the owner's address refuses connections, then reads the address again", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const closed = yield* RedisServer.freePort
      // "a" advertises a port nobody listens on
      const refusing = yield* replica(server.url, {
        replicaId: "a",
        direct: { ...direct.direct, advertise: `http://127.0.0.1:${closed}` }
      })
      const b = yield* replica(server.url, direct)
      const refusingServed = yield* serveJson(refusing.registry)
      let before = yield* published(b.redis)
      const response = yield* Effect.scoped(b.registry.forward("a", request))
      expect(text(response.whole!)).toBe(text(json))
      expect(yield* refusingServed.served).toBe(1)
      // the request, and its answer in one message
      expect((yield* published(b.redis)) - before).toBe(2)
      yield* refusing.close

      // "a" on an address that works, known to b; then "a" again, elsewhere
      const first = yield* replica(server.url, { replicaId: "a", ...direct })
      yield* serveJson(first.registry)
      before = yield* published(b.redis)
      yield* Effect.scoped(b.registry.forward("a", request))
      expect((yield* published(b.redis)) - before).toBe(0)
      yield* first.close
      const again = yield* replica(server.url, { replicaId: "a", ...direct })
      const againServed = yield* serveJson(again.registry)
      // the address b kept refuses: pub/sub carries the request, and b forgets that address
      before = yield* published(b.redis)
      yield* Effect.scoped(b.registry.forward("a", request))
      expect((yield* published(b.redis)) - before).toBe(2)
      // the next request reads the new one
      before = yield* published(b.redis)
      yield* Effect.scoped(b.registry.forward("a", request))
      expect((yield* published(b.redis)) - before).toBe(0)
      expect(yield* againServed.served).toBe(2)
    }).pipe(Effect.scoped))

  it.live("an owner that does not serve answers 503, and pub/sub then fails at once: nobody listens", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const b = yield* replica(server.url, direct)
      const port = portOf(yield* advertised(a.redis, a.registry.replicaId))
      expect(
        (yield* raw(port, { headers: { "x-mcp-relay-secret": "test-secret", "x-mcp-relay-to": a.registry.replicaId } }))
          .status
      )
        .toBe(503)
      const start = Date.now()
      const error = yield* Effect.flip(Effect.scoped(b.registry.forward(a.registry.replicaId, request)))
      expect(error.reason._tag).toBe("ServerUnavailableError")
      expect(error.message).toMatch(/not listening/)
      expect(Date.now() - start).toBeLessThan(500)
    }).pipe(Effect.scoped))

  it.live("ATTACK: a request to the hop without the secret, or with another, is refused (401) and never reaches the handler; nor does a body beyond 64 MiB", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const { served } = yield* serveJson(a.registry)
      const port = portOf(yield* advertised(a.redis, a.registry.replicaId))
      const to = { "x-mcp-relay-to": a.registry.replicaId }
      const statuses = []
      for (
        const headers of [
          to,
          { ...to, "x-mcp-relay-secret": "" },
          { ...to, "x-mcp-relay-secret": "test-secreT" },
          { ...to, "x-mcp-relay-secret": "test-secret-and-more" },
          { ...to, "x-mcp-relay-secret": "test" }
        ]
      ) statuses.push((yield* raw(port, { headers })).status)
      expect(statuses).toEqual([401, 401, 401, 401, 401])
      // anything but the hop's path is not found, with the secret or without
      const secret = { ...to, "x-mcp-relay-secret": "test-secret" }
      expect((yield* raw(port, { path: "/mcp", headers: secret })).status).toBe(404)
      expect((yield* raw(port, { path: "/", method: "GET" })).status).toBe(404)
      expect((yield* raw(port, { method: "GET", headers: secret })).status).toBe(404)
      // the secret, but meant for another replica
      expect((yield* raw(port, { headers: { ...secret, "x-mcp-relay-to": "someone-else" } })).status).toBe(421)
      // the secret, and a body beyond any endpoint's bound
      expect((yield* raw(port, { headers: secret, body: new Uint8Array(65 * 1024 * 1024) })).status).toBe(413)
      expect(yield* served).toBe(0)
      // the right secret is served
      const ok = yield* raw(port, { headers: secret })
      expect([ok.status, ok.body]).toEqual([200, text(json)])
      expect(yield* served).toBe(1)

      // a replica with another secret is refused on the hop; its request goes on pub/sub, once
      const stranger = yield* replica(server.url, { direct: { secret: "another-secret" } })
      const before = yield* published(a.redis)
      expect(text((yield* Effect.scoped(stranger.registry.forward(a.registry.replicaId, request))).whole!)).toBe(
        text(json)
      )
      expect(text((yield* Effect.scoped(stranger.registry.forward(a.registry.replicaId, request))).whole!)).toBe(
        text(json)
      )
      expect((yield* published(a.redis)) - before).toBe(4)
      expect(yield* served).toBe(3)
    }).pipe(Effect.scoped))

  it.live("closing the forwarder's scope aborts the hop request: the owner's handler is interrupted", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const b = yield* replica(server.url, direct)
      const handlerClosed = yield* serveEndless(a.registry)
      const before = yield* published(a.redis)
      yield* Effect.gen(function*() {
        const response = yield* b.registry.forward(a.registry.replicaId, request)
        const first = yield* response.body.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds"))
        expect(first.map(text)).toEqual(["first"])
        yield* Effect.sleep("100 millis")
        expect(yield* Deferred.isDone(handlerClosed)).toBe(false)
      }).pipe(Effect.scoped)
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
      expect((yield* published(a.redis)) - before).toBe(0)
    }).pipe(Effect.scoped))

  it.live("forwardTimeout bounds the head over the hop; the owner's handler is interrupted", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const b = yield* replica(server.url, { ...direct, forwardTimeout: "300 millis" })
      const handlerClosed = yield* Deferred.make<void>()
      yield* a.registry.serve(() =>
        Effect.andThen(Effect.addFinalizer(() => Deferred.succeed(handlerClosed, undefined)), Effect.never)
      )
      const start = Date.now()
      const error = yield* Effect.flip(Effect.scoped(b.registry.forward(a.registry.replicaId, request)))
      expect(error.message).toMatch(/did not answer within 300 ms/)
      expect(Date.now() - start).toBeGreaterThanOrEqual(290)
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped))

  it.live("the body fails within a second when the owner's listener closes mid-stream, not at a heartbeat poll", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      // a forwarder that polls heartbeats rarely: only the connection can tell it in time
      const b = yield* replica(server.url, { ...direct, heartbeatInterval: "5 seconds", heartbeatTtl: "15 seconds" })
      yield* serveEndless(a.registry)
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      const chunks = yield* Queue.unbounded<Uint8Array>()
      const reader = yield* response.body.pipe(
        Stream.runForEach((chunk) => Queue.offer(chunks, chunk)),
        Effect.forkChild
      )
      expect(text(yield* Queue.take(chunks).pipe(Effect.timeout("5 seconds")))).toBe("first")
      yield* Effect.sleep("200 millis")
      expect(reader.pollUnsafe()).toBeUndefined()
      const start = Date.now()
      yield* a.close
      const exit = yield* Fiber.await(reader).pipe(Effect.timeout("5 seconds"))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Cause.squash((exit as Exit.Failure<void, unknown>).cause))).toMatch(/was cut/)
      expect(Date.now() - start).toBeLessThan(1000)
    }).pipe(Effect.scoped))

  it.live("a streamed body fails within heartbeatTtl when the owner's heartbeat stops; the owner's ends when the forwarder's does", () =>
    Effect.gen(function*() {
      // looser than the other tests' 100 / 300 ms: on a loaded machine a heartbeat 300 ms late let the
      // forwarder's own lapse, and the owner cut the body before the test stopped the owner's
      const timing = { ...direct, heartbeatInterval: "250 millis", heartbeatTtl: "1 second" } as const
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, timing)
      const b = yield* replica(server.url, timing)
      yield* serveEndless(a.registry)
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      const reader = yield* Stream.runDrain(response.body).pipe(Effect.forkChild({ startImmediately: true }))
      // a body that is merely quiet goes on, longer than a heartbeat lives
      yield* Effect.sleep("1200 millis")
      expect(reader.pollUnsafe()).toBeUndefined()
      // the owner's Redis "dies": its heartbeat stops, its listener stays
      yield* a.kill
      const exit = yield* Fiber.await(reader).pipe(Effect.timeout("5 seconds"))
      const why = String(Cause.squash((exit as Exit.Failure<void, unknown>).cause))
      expect(why, why).toMatch(/is gone/)

      const c = yield* replica(server.url, timing)
      const d = yield* replica(server.url, timing)
      const handlerClosed = yield* serveEndless(c.registry)
      const second = yield* d.registry.forward(c.registry.replicaId, request)
      yield* second.body.pipe(Stream.take(1), Stream.runDrain, Effect.timeout("5 seconds"))
      yield* Effect.sleep("1200 millis")
      expect(yield* Deferred.isDone(handlerClosed)).toBe(false)
      yield* d.kill
      const start = Date.now()
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
      // heartbeatTtl, then at most a poll or two
      expect(Date.now() - start).toBeLessThan(2000)
    }).pipe(Effect.scoped))

  it.live("nothing listens on the hop's port once the registry's scope closes, its connections in use included", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, direct)
      const b = yield* replica(server.url, direct)
      const port = portOf(yield* advertised(a.redis, a.registry.replicaId))
      yield* serveEndless(a.registry)
      // one connection busy with a stream, others idle in the forwarder's pool
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      yield* Stream.runDrain(response.body).pipe(Effect.forkChild({ startImmediately: true }))
      expect(yield* listening(port)).toBe(true)
      const start = Date.now()
      yield* a.close
      expect(Date.now() - start).toBeLessThan(1000)
      expect(yield* listening(port)).toBe(false)
      // and its heartbeat is gone with it
      yield* eventually(
        Effect.map(advertised(b.redis, a.registry.replicaId), (value) => value === null),
        "the heartbeat is deleted"
      )
    }).pipe(Effect.scoped))
})
