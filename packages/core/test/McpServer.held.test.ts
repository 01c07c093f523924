/**
 * Held calls (2026-07-28): a tool declared with `hold` runs once per call,
 * whatever its rounds of asks; the retry resumes it by the held call its
 * sealed `requestState` names. Bounded in count and in time (on the test
 * clock); a cancelled request cancels its held call; progress and logs go to
 * the request attached at the time.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, textOf } from "./utils/client.ts"
import { rawPeer, settle } from "./utils/peer.ts"

const meta = (extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  ...extra
})

const Name = Schema.Struct({ name: Schema.String })

/** A server with `tools`, and raw peers on connections of their own. */
const serve = (tools: ReadonlyArray<McpTool.McpTool<never>>, options: Partial<McpServer.Options> = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "held", version: "1.0.0", ...options })
    for (const tool of tools) yield* server.register(tool)
    const connect = Effect.gen(function*() {
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      return yield* rawPeer(clientEnd)
    })
    return { server, peer: yield* connect, connect }
  })

type Peer = Effect.Success<ReturnType<typeof serve>>["peer"]
type Answer = {
  readonly id: number
  readonly result?: any
  readonly error?: any
  readonly method?: string
  readonly params?: any
}

let nextId = 0
const send = (peer: Peer, name: string, extra: Record<string, unknown> = {}, metaExtra?: Record<string, unknown>) =>
  Effect.gen(function*() {
    const id = ++nextId
    yield* peer.send(JsonRpc.request(id, "tools/call", { name, arguments: {}, _meta: meta(metaExtra), ...extra }))
    return id
  })
const call = (peer: Peer, name: string, extra: Record<string, unknown> = {}, metaExtra?: Record<string, unknown>) =>
  Effect.andThen(send(peer, name, extra, metaExtra), peer.next as Effect.Effect<Answer>)

const accept = (name: string) => ({ action: "accept", content: { name } })

// the heap in use after a full collection (the collector exposed for this measure)
v8.setFlagsFromString("--expose_gc")
const collect = vm.runInNewContext("gc") as () => void
const retainedHeap = () => {
  collect()
  return process.memoryUsage().heapUsed
}

describe("held calls", () => {
  it.effect("run the handler once across rounds; the retry resumes it", () =>
    Effect.gen(function*() {
      let runs = 0
      const twice = McpTool.make("twice", {
        hold: true,
        handler: (_, context) =>
          Effect.gen(function*() {
            runs++ // a side effect before the asks
            const first = yield* context.elicit({ message: "First?", schema: Name, inputKey: "first" })
            const second = yield* context.elicit({ message: "Second?", schema: Name, inputKey: "second" })
            return `${first.action === "accept" ? first.content.name : "-"} ${
              second.action === "accept" ? second.content.name : "-"
            }`
          })
      })
      const { peer, server } = yield* serve([twice])
      const round1 = yield* call(peer, "twice")
      assert.strictEqual(round1.result.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(round1.result.inputRequests), ["first"])
      assert.strictEqual(yield* server.heldCalls.size, 1)
      const round2 = yield* call(peer, "twice", {
        inputResponses: { first: accept("ada") },
        requestState: round1.result.requestState
      })
      assert.deepStrictEqual(Object.keys(round2.result.inputRequests), ["second"])
      const done = yield* call(peer, "twice", {
        inputResponses: { second: accept("grace") },
        requestState: round2.result.requestState
      })
      assert.strictEqual(done.result.resultType, "complete")
      assert.strictEqual(textOf(done.result), "ada grace")
      assert.strictEqual(runs, 1)
      assert.strictEqual(yield* server.heldCalls.size, 0)
      // the state of a finished call resumes nothing
      const late = yield* call(peer, "twice", {
        inputResponses: { second: accept("x") },
        requestState: round2.result.requestState
      })
      assert.strictEqual(late.error.code, JsonRpc.ErrorCode.InvalidParams)
      assert.match(late.error.message, /no longer held/)
      assert.strictEqual(runs, 1)
    }))

  it.effect("our client answers the rounds of a held call transparently", () =>
    Effect.gen(function*() {
      let runs = 0
      const greet = McpTool.make("greet", {
        hold: true,
        handler: (_, context) =>
          Effect.gen(function*() {
            runs++
            const answer = yield* context.elicit({ message: "Name?", schema: Name })
            return answer.action === "accept" ? `hello ${answer.content.name}` : "no"
          })
      })
      const { server } = yield* serve([greet])
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const client = yield* McpClient.make({
        clientInfo,
        elicitation: { form: () => Effect.succeed({ action: "accept", content: { name: "ada" } }), validate: false }
      }).pipe(Effect.provideService(McpTransport.McpTransport, clientEnd))
      assert.strictEqual(client.era, "modern")
      assert.strictEqual(textOf(yield* client.callTool("greet", {})), "hello ada")
      assert.strictEqual(runs, 1)
    }))

  it.effect("a held call waits for its retry at most the ttl, on the clock; then it is cancelled", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const ask = McpTool.make("ask", {
        hold: true,
        handler: (_, context) =>
          context.elicit({ message: "Name?", schema: Name }).pipe(
            Effect.as("asked"),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
      })
      const { peer, server } = yield* serve([ask], { hold: { ttl: "1 minute" } })
      const round = yield* call(peer, "ask")
      assert.strictEqual(round.result.resultType, "input_required")
      yield* TestClock.adjust("59 seconds")
      assert.isFalse(yield* Deferred.isDone(interrupted))
      yield* TestClock.adjust("2 seconds")
      yield* Deferred.await(interrupted)
      assert.strictEqual(yield* server.heldCalls.size, 0)
      const [key] = Object.keys(round.result.inputRequests)
      const late = yield* call(peer, "ask", {
        inputResponses: { [key!]: accept("ada") },
        requestState: round.result.requestState
      })
      assert.strictEqual(late.error.code, JsonRpc.ErrorCode.InvalidParams)
      assert.match(late.error.message, /expired|no longer held/)
    }))

  it.effect("at most `max` calls are held; one more is refused with -32000", () =>
    Effect.gen(function*() {
      const ask = McpTool.make("ask", {
        hold: true,
        handler: (_, context) => Effect.as(context.elicit({ message: "?", schema: Name }), "x")
      })
      const { peer } = yield* serve([ask], { hold: { max: 2 } })
      assert.strictEqual((yield* call(peer, "ask")).result.resultType, "input_required")
      assert.strictEqual((yield* call(peer, "ask")).result.resultType, "input_required")
      const third = yield* call(peer, "ask")
      assert.strictEqual(third.error.code, JsonRpc.ErrorCode.ServerError)
      assert.match(third.error.message, /holds 2 calls/)
    }))

  it.effect(
    "10,000 held calls: all held within a memory bound, the next refused, all gone at the ttl",
    () =>
      Effect.gen(function*() {
        const ask = McpTool.make("ask", {
          hold: true,
          handler: (_, context) => Effect.as(context.elicit({ message: "?", schema: Name }), "x")
        })
        const { peer, server } = yield* serve([ask], { hold: { max: 10_000, ttl: "1 minute" } })
        const before = retainedHeap()
        for (let i = 0; i < 10_000; i++) yield* send(peer, "ask")
        const answers = (yield* peer.take(10_000)) as ReadonlyArray<Answer>
        assert.isTrue(answers.every((answer) => answer.result?.resultType === "input_required"))
        assert.strictEqual(yield* server.heldCalls.size, 10_000)
        // the cap: one more is refused at once
        const refused = yield* call(peer, "ask")
        assert.strictEqual(refused.error.code, JsonRpc.ErrorCode.ServerError)
        // what 10,000 held calls keep (each its handler's fiber, its asks, its expiry; and the
        // 10,000 answers the peer holds), after a collection: measured about 130 MB here
        const grown = (retainedHeap() - before) / (1024 * 1024)
        assert.isBelow(grown, 180, `10,000 held calls keep ${grown.toFixed(0)} MB of heap`)
        yield* TestClock.adjust("61 seconds")
        assert.strictEqual(yield* server.heldCalls.size, 0)
        assert.strictEqual((yield* call(peer, "ask")).result.resultType, "input_required")
      }),
    60_000
  )

  it.effect("cancelling the attached request interrupts the held handler", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const slow = McpTool.make("slow", {
        hold: true,
        handler: (_, context) =>
          Effect.gen(function*() {
            const answer = yield* context.elicit({ message: "Name?", schema: Name, inputKey: "name" })
            yield* Deferred.succeed(started, undefined)
            yield* Effect.never
            return answer.action
          }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      })
      const { peer, server } = yield* serve([slow])
      const round = yield* call(peer, "slow")
      const id = yield* send(peer, "slow", {
        inputResponses: { name: accept("ada") },
        requestState: round.result.requestState
      })
      yield* Deferred.await(started)
      yield* peer.send(JsonRpc.notification("notifications/cancelled", { requestId: id }))
      yield* Deferred.await(interrupted)
      assert.strictEqual(yield* server.heldCalls.size, 0)
    }))

  it.effect("progress and logs go to the request attached at the time, in order", () =>
    Effect.gen(function*() {
      const chatty = McpTool.make("chatty", {
        hold: true,
        handler: (_, context) =>
          Effect.gen(function*() {
            yield* context.reportProgress({ progress: 1 })
            yield* context.log("info", "before")
            const answer = yield* context.elicit({ message: "Name?", schema: Name, inputKey: "name" })
            yield* context.reportProgress({ progress: 2 })
            yield* context.log("info", "after")
            return answer.action
          })
      })
      const { peer } = yield* serve([chatty])
      yield* send(peer, "chatty", {}, { progressToken: "p1", "io.modelcontextprotocol/logLevel": "info" })
      const first = (yield* peer.take(3)) as ReadonlyArray<Answer>
      assert.deepStrictEqual(first.map((frame) => frame.method ?? "answer"), [
        "notifications/progress",
        "notifications/message",
        "answer"
      ])
      assert.strictEqual(first[0]!.params.progressToken, "p1")
      assert.strictEqual(first[1]!.params.data, "before")
      // the retry asks for no logs: it gets the progress on its own token, no log
      yield* send(
        peer,
        "chatty",
        { inputResponses: { name: accept("ada") }, requestState: first[2]!.result.requestState },
        { progressToken: "p2" }
      )
      const second = (yield* peer.take(2)) as ReadonlyArray<Answer>
      assert.strictEqual(second[0]!.method, "notifications/progress")
      assert.strictEqual(second[0]!.params.progressToken, "p2")
      assert.strictEqual(second[1]!.result.resultType, "complete")
      yield* settle
      assert.strictEqual(yield* peer.backlog, 0)
    }))

  it.effect("a retry is refused when another is resuming, forged, or meant for another request", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const slow = McpTool.make("slow", {
        hold: true,
        handler: (_, context) =>
          Effect.gen(function*() {
            yield* context.elicit({ message: "Name?", schema: Name, inputKey: "name" })
            yield* Deferred.await(gate)
            return "done"
          })
      })
      const replayed = McpTool.make("replayed", {
        handler: (_, context) => Effect.as(context.elicit({ message: "Name?", schema: Name, inputKey: "name" }), "ok")
      })
      const { peer } = yield* serve([slow, replayed])
      const round = yield* call(peer, "slow")
      const state = round.result.requestState as string
      // forged
      const forged = yield* call(peer, "slow", { requestState: `${state.slice(0, -4)}AAAA` })
      assert.match(forged.error.message, /forged|malformed/)
      // a held call's state on a request that is not held
      const other = yield* call(peer, "replayed", { requestState: state })
      assert.strictEqual(other.error.code, JsonRpc.ErrorCode.InvalidParams)
      // a replayed request's state on a held tool
      const replayRound = yield* call(peer, "replayed")
      const wrong = yield* call(peer, "slow", { requestState: replayRound.result.requestState })
      assert.strictEqual(wrong.error.code, JsonRpc.ErrorCode.InvalidParams)
      // two retries of one round: the second is refused while the first resumes
      const first = yield* send(peer, "slow", { inputResponses: { name: accept("a") }, requestState: state })
      yield* settle
      const second = yield* call(peer, "slow", { inputResponses: { name: accept("b") }, requestState: state })
      assert.match(second.error.message, /another request is resuming/)
      yield* Deferred.succeed(gate, undefined)
      const answer = (yield* peer.next) as Answer
      assert.strictEqual(answer.id, first)
      assert.strictEqual(textOf(answer.result), "done")
    }))

  it.effect("a legacy session's call of a held tool asks with real requests", () =>
    Effect.gen(function*() {
      const greet = McpTool.make("greet", {
        hold: true,
        handler: (_, context) =>
          Effect.map(context.elicit({ message: "Name?", schema: Name }), (answer) => answer.action)
      })
      const { server } = yield* serve([greet])
      const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
      yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
      const client = yield* McpClient.make({
        clientInfo,
        era: "legacy",
        elicitation: { form: () => Effect.succeed({ action: "decline" }) }
      }).pipe(Effect.provideService(McpTransport.McpTransport, clientEnd))
      const fiber = yield* client.callTool("greet", {}).pipe(Effect.forkChild)
      assert.strictEqual(textOf(yield* Fiber.join(fiber)), "decline")
    }))
})
