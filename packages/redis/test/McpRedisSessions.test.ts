import type { McpSessionRegistry } from "@effect-mcp/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Option, Queue, Schedule, Scope, Stream } from "effect"
import * as RedisServer from "./utils/redisServer.ts"
import {
  bytes,
  connect,
  endless,
  eventually,
  published,
  record,
  replica,
  request,
  serveEndless,
  text
} from "./utils/sessions.ts"

describe.skipIf(!RedisServer.available)("McpRedisSessions", () => {
  it.live("registers, looks up, touches, releases and removes records shared by replicas", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url, { sessionTtl: "1 minute" })
      const b = yield* replica(server.url, { sessionTtl: "1 minute" })
      expect(a.registry.replicaId).not.toBe(b.registry.replicaId)
      expect(yield* b.registry.lookup("s1")).toEqual(Option.none())

      yield* a.registry.register(record("s1", a.registry.replicaId))
      yield* a.registry.register({ ...record("s2", a.registry.replicaId), principal: undefined })
      expect(yield* b.registry.lookup("s1")).toEqual(
        Option.some({ record: record("s1", a.registry.replicaId), live: true })
      )
      expect(yield* a.registry.lookup("s1")).toEqual(
        Option.some({ record: record("s1", a.registry.replicaId), live: true })
      )
      expect(Option.getOrThrow(yield* b.registry.lookup("s2")).record.principal).toBeUndefined()
      // what the client set since its initialize travels with the record
      const replay = [{ method: "logging/setLevel", params: { level: "debug" } }]
      yield* a.registry.register({ ...record("s3", a.registry.replicaId), replay })
      expect(Option.getOrThrow(yield* b.registry.lookup("s3")).record.replay).toEqual(replay)

      // the record expires sessionTtl after it was last touched
      const pttl = a.redis.send<number>("PTTL", "test:sessions:s1")
      expect(yield* pttl).toBeGreaterThan(50_000)
      yield* a.redis.send("PEXPIRE", "test:sessions:s1", "5000")
      yield* b.registry.touch("s1")
      expect(yield* pttl).toBeGreaterThan(50_000)
      yield* a.redis.send("PEXPIRE", "test:sessions:s1", "1")
      yield* eventually(Effect.map(b.registry.lookup("s1"), Option.isNone), "the record expires")
      yield* a.registry.register(record("s1", a.registry.replicaId))

      // a release by a replica that does not own it changes nothing
      yield* b.registry.release("s1")
      expect(Option.getOrThrow(yield* b.registry.lookup("s1")).record.owner).toBe(a.registry.replicaId)
      yield* a.registry.release("s1")
      expect(yield* b.registry.lookup("s1")).toEqual(Option.some({ record: record("s1", ""), live: false }))
      expect(yield* a.registry.lookup("s1")).toEqual(Option.some({ record: record("s1", ""), live: false }))

      yield* b.registry.remove("s1")
      expect(yield* a.registry.lookup("s1")).toEqual(Option.none())
      // garbage under a session key is no session
      yield* a.redis.send("HSET", "test:sessions:bad", "owner", "x", "initialize", "{not json", "protocolVersion", "v")
      expect(yield* a.registry.lookup("bad")).toEqual(Option.none())
    }).pipe(Effect.scoped))

  it.live("claim is a compare-and-set: of concurrent claimers exactly one wins", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const c = yield* replica(server.url)
      const ids = Array.from({ length: 20 }, (_, i) => `s${i}`)
      yield* Effect.forEach(ids, (id) => a.registry.register(record(id, a.registry.replicaId)))
      const from = a.registry.replicaId
      for (const id of ids) {
        const [wonB, wonC] = yield* Effect.all([b.registry.claim(id, from), c.registry.claim(id, from)], {
          concurrency: 2
        })
        expect(wonB !== wonC).toBe(true)
        const winner = wonB ? b.registry.replicaId : c.registry.replicaId
        expect(Option.getOrThrow(yield* a.registry.lookup(id)).record.owner).toBe(winner)
      }
      // a claim from an owner that is not the current one fails; an unknown session is not claimed
      expect(yield* a.registry.claim("s0", from)).toBe(false)
      expect(yield* a.registry.claim("unknown", "")).toBe(false)
      // a released session is claimed from ""
      yield* a.registry.register(record("r", a.registry.replicaId))
      yield* a.registry.release("r")
      expect(yield* b.registry.claim("r", "")).toBe(true)
      expect(yield* b.registry.lookup("r")).toEqual(
        Option.some({ record: record("r", b.registry.replicaId), live: true })
      )
    }).pipe(Effect.scoped))

  it.live("an owner is dead at once when its layer closes, and within heartbeatTtl when it is killed", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const killed = yield* replica(server.url)
      const observer = yield* replica(server.url)
      yield* a.registry.register(record("s1", a.registry.replicaId))
      yield* killed.registry.register(record("s2", killed.registry.replicaId))
      const live = (id: string) => Effect.map(b.registry.lookup(id), (lookup) => Option.getOrThrow(lookup).live)
      // well past heartbeatTtl: the heartbeats keep them alive
      yield* Effect.sleep("700 millis")
      expect(yield* live("s1")).toBe(true)
      expect(yield* live("s2")).toBe(true)

      yield* a.close
      expect(yield* live("s1")).toBe(false)

      yield* killed.kill
      const start = Date.now()
      expect(yield* live("s2")).toBe(true)
      yield* eventually(Effect.map(live("s2"), (alive) => !alive), "the killed replica's heartbeat expires")
      const elapsed = Date.now() - start
      expect(elapsed).toBeLessThan(1500)
      expect(yield* Effect.map(observer.registry.lookup("s2"), (lookup) => Option.getOrThrow(lookup).live)).toBe(false)
    }).pipe(Effect.scoped))

  it.live("forwards a request to its owner and streams the response back as it is written", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const received = yield* Deferred.make<McpSessionRegistry.ForwardedRequest>()
      const handlerClosed = yield* Deferred.make<void>()
      const writes = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      yield* a.registry.serve((forwarded) =>
        Effect.gen(function*() {
          yield* Effect.addFinalizer(() => Deferred.succeed(handlerClosed, undefined))
          yield* Deferred.succeed(received, forwarded)
          return { status: 202, headers: { "content-type": "text/event-stream" }, body: Stream.fromQueue(writes) }
        })
      )
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      expect(response.status).toBe(202)
      expect(response.headers).toEqual({ "content-type": "text/event-stream" })
      const got = yield* Deferred.await(received)
      expect({ ...got, body: text(got.body) }).toEqual({ ...request, body: text(request.body) })

      const chunks = yield* Queue.unbounded<Uint8Array>()
      const reader = yield* response.body.pipe(
        Stream.runForEach((chunk) => Queue.offer(chunks, chunk)),
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
      expect(yield* Queue.size(chunks)).toBe(0)
      // the handler's scope closes once its response is written
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped))

  it.live("a response whose body is known at once (a JSON answer) comes back in one message", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const json = bytes(`{"jsonrpc":"2.0","id":1,"result":{}}`)
      yield* a.registry.serve(() =>
        Effect.succeed({
          status: 200,
          headers: { "content-type": "application/json" },
          body: Stream.die("unused"),
          whole: json
        })
      )
      const before = yield* published(a.redis)
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      expect([response.status, text(response.whole!)]).toEqual([200, text(json)])
      expect(text(Uint8Array.from((yield* Stream.runCollect(response.body)).flatMap((chunk) => [...chunk])))).toBe(
        text(json)
      )
      // the request, and its answer in one message
      expect((yield* published(a.redis)) - before).toBe(2)
    }).pipe(Effect.scoped))

  it.live(
    "a client that does not read loses the forwarded body beyond 16 MiB buffered, not the forwarder's memory",
    () =>
      Effect.gen(function*() {
        const server = yield* RedisServer.start
        // both replicas share this process, which encodes 20 MiB for pub/sub: on a loaded machine that held
        // the event loop past the tests' 300 ms heartbeat, and the owner counted as gone before the buffer filled
        const patient = { heartbeatInterval: "250 millis", heartbeatTtl: "5 seconds" } as const
        const a = yield* replica(server.url, patient)
        const b = yield* replica(server.url, patient)
        const mebibyte = new Uint8Array(1024 * 1024)
        yield* a.registry.serve(() =>
          Effect.succeed({
            status: 200,
            headers: { "content-type": "text/event-stream" },
            body: Stream.make(...Array.from({ length: 20 }, () => mebibyte))
          })
        )
        const response = yield* b.registry.forward(a.registry.replicaId, request)
        // nothing read until the owner has written it all: the request, the head, 20 chunks and the end
        yield* published(a.redis).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (count) => count >= 23, times: 500 })
        )
        const error = yield* Effect.flip(Stream.runDrain(response.body)).pipe(Effect.timeout("10 seconds"))
        expect(error.message).toMatch(/reads too slowly/)
      }).pipe(Effect.scoped),
    20_000
  )

  it.live("closing the forwarder's scope cancels the request on its owner", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const handlerClosed = yield* serveEndless(a.registry)
      yield* Effect.gen(function*() {
        const response = yield* b.registry.forward(a.registry.replicaId, request)
        const first = yield* response.body.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds"))
        expect(first.map(text)).toEqual(["first"])
        yield* Effect.sleep("100 millis")
        expect(yield* Deferred.isDone(handlerClosed)).toBe(false)
      }).pipe(Effect.scoped)
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped))

  it.live("forwarding to a replica that does not serve fails at once", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const start = Date.now()
      const error = yield* Effect.flip(Effect.scoped(b.registry.forward(a.registry.replicaId, request)))
      expect(error.message).toMatch(/not listening/)
      expect(Date.now() - start).toBeLessThan(500)
      // nor once it stopped serving
      yield* Effect.scoped(a.registry.serve(() => Effect.never))
      const again = yield* Effect.flip(Effect.scoped(b.registry.forward(a.registry.replicaId, request)))
      expect(again.message).toMatch(/not listening/)
    }).pipe(Effect.scoped))

  it.live("forwarding fails after forwardTimeout when the owner does not answer", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url, { forwardTimeout: "300 millis" })
      yield* a.registry.serve(() => Effect.never)
      const start = Date.now()
      const error = yield* Effect.flip(Effect.scoped(b.registry.forward(a.registry.replicaId, request)))
      expect(error.message).toMatch(/did not answer within 300 ms/)
      expect(Date.now() - start).toBeGreaterThanOrEqual(290)
    }).pipe(Effect.scoped))

  it.live("the body fails within heartbeatTtl when the owner dies while writing it", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      yield* a.registry.serve(() => Effect.succeed({ status: 200, headers: {}, body: endless }))
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      const chunks = yield* Queue.unbounded<Uint8Array>()
      const reader = yield* response.body.pipe(
        Stream.runForEach((chunk) => Queue.offer(chunks, chunk)),
        Effect.forkChild
      )
      expect(text(yield* Queue.take(chunks).pipe(Effect.timeout("5 seconds")))).toBe("first")
      // a body that is merely quiet goes on
      yield* Effect.sleep("600 millis")
      expect(reader.pollUnsafe()).toBeUndefined()
      yield* a.kill
      const start = Date.now()
      const exit = yield* Fiber.await(reader).pipe(Effect.timeout("5 seconds"))
      const elapsed = Date.now() - start
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Cause.squash((exit as Exit.Failure<void, unknown>).cause))).toMatch(/is gone/)
      // heartbeatTtl (300 ms) plus a check interval (100 ms), with slack for a loaded machine
      expect(elapsed).toBeLessThan(1500)
    }).pipe(Effect.scoped))

  it.live("the owner stops serving within heartbeatTtl when the forwarder dies", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      const handlerClosed = yield* serveEndless(a.registry)
      const response = yield* b.registry.forward(a.registry.replicaId, request)
      yield* response.body.pipe(Stream.take(1), Stream.runDrain, Effect.timeout("5 seconds"))
      yield* Effect.sleep("600 millis")
      expect(yield* Deferred.isDone(handlerClosed)).toBe(false)
      // the forwarder's subscriptions stay open: only its heartbeat tells it is gone
      yield* b.kill
      const start = Date.now()
      yield* Deferred.await(handlerClosed).pipe(Effect.timeout("5 seconds"))
      expect(Date.now() - start).toBeLessThan(1500)
    }).pipe(Effect.scoped))

  it.live("holds one subscription per channel, and none after the layer closes", () =>
    Effect.gen(function*() {
      const server = yield* RedisServer.start
      const observer = yield* connect(server.url)
      const clients = observer.send<string>("CLIENT", "LIST").pipe(Effect.map((list) => list.trim().split("\n").length))
      const before = yield* clients
      const a = yield* replica(server.url)
      const b = yield* replica(server.url)
      // each: its connection and its replies subscription
      expect(yield* clients).toBe(before + 4)
      const go = yield* Deferred.make<void>()
      const started = yield* Queue.unbounded<void>()
      const handler = (body: string) => () =>
        Effect.succeed({
          status: 200,
          headers: {},
          body: Stream.fromEffect(
            Effect.as(Effect.andThen(Queue.offer(started, undefined), Deferred.await(go)), bytes(body))
          )
        })
      yield* a.registry.serve(handler("first")).pipe(Scope.provide(a.scope))
      expect(yield* clients).toBe(before + 5)
      // a second `serve` shares the subscription, and handles until its scope closes
      const second = yield* Scope.make()
      yield* a.registry.serve(handler("ok")).pipe(Scope.provide(second))
      expect(yield* clients).toBe(before + 5)
      const forwards = yield* Effect.all(
        Array.from({ length: 10 }, () =>
          Effect.scoped(Effect.flatMap(b.registry.forward(a.registry.replicaId, request), (r) =>
            Stream.runCollect(r.body)))),
        { concurrency: 10 }
      ).pipe(Effect.forkChild({ startImmediately: true }))
      // ten requests in flight, on the same subscriptions
      yield* Queue.takeN(started, 10).pipe(Effect.timeout("5 seconds"))
      expect(yield* clients).toBe(before + 5)
      yield* Deferred.succeed(go, undefined)
      const bodies = yield* Fiber.join(forwards)
      expect(bodies.map((body) =>
        body.map(text)
      )).toEqual(Array.from({ length: 10 }, () => ["ok"]))
      yield* Scope.close(second, Exit.void)
      const again = yield* Effect.scoped(
        Effect.flatMap(b.registry.forward(a.registry.replicaId, request), (r) =>
          Stream.runCollect(r.body))
      )
      expect(again.map(text)).toEqual(["first"])
      expect(yield* clients).toBe(before + 5)
      yield* a.close
      yield* b.close
      yield* eventually(Effect.map(clients, (count) => count === before), "the clients are closed")
    }).pipe(Effect.scoped))
})
