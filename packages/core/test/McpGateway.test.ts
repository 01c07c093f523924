/**
 * McpGateway over in-memory servers of ours, in each pair of eras (the
 * client in front, the server behind): aggregation under model-safe names,
 * forwarding with progress, logs and cancellation, a server's questions
 * answered by the client in front (real requests or input-required rounds,
 * the call behind run once), list_changed, filters and a per-request
 * policy, resource subscriptions, and servers that fail.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, Schema, Scope, Stream } from "effect"

import * as McpClient from "../src/McpClient.ts"
import * as McpGateway from "../src/McpGateway.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, textOf } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

type Era = "modern" | "legacy"
const PAIRS: ReadonlyArray<readonly [Era, Era]> = [["legacy", "legacy"], ["legacy", "modern"], ["modern", "legacy"], [
  "modern",
  "modern"
]]

/** What the servers behind saw. */
interface Seen {
  runs: number
  cancelled: number
  started: Deferred.Deferred<void>
}

const Name = Schema.Struct({ name: Schema.String })

const upstream = (seen: Seen) => {
  const ask = McpTool.make("ask", {
    description: "Asks for a name",
    handler: (_, context) =>
      Effect.gen(function*() {
        seen.runs++
        const answer = yield* context.elicit({ message: "Name?", schema: Name })
        return answer.action === "accept" ? `hello ${answer.content.name}` : answer.action
      })
  })
  const count = McpTool.make("count", {
    description: "Counts, with progress and logs",
    input: Schema.Struct({ to: Schema.Int }),
    annotations: { readOnlyHint: true },
    _meta: { "example.com/owner": "tests" },
    handler: ({ to }, context) =>
      Effect.gen(function*() {
        for (let i = 1; i <= to; i++) {
          yield* context.reportProgress({ progress: i, total: to })
          yield* context.log("info", `step ${i}`)
        }
        return `counted to ${to}`
      })
  })
  const wait = McpTool.make("wait", {
    description: "Waits until cancelled",
    handler: () =>
      Effect.andThen(Deferred.succeed(seen.started, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Effect.sync(() => seen.cancelled++))
      )
  })
  const odd = McpTool.make("odd name/with:chars", { handler: () => Effect.succeed("odd") })
  const readme = McpResource.make({ uri: "mem://readme", name: "readme", read: () => Effect.succeed("read me") })
  return McpServer.layer({ name: "upstream", version: "1.0.0" }, ask, count, wait, odd, readme)
}

const newSeen = Effect.map(Deferred.make<void>(), (started): Seen => ({ runs: 0, cancelled: 0, started }))

/** A gateway over one upstream speaking `behind`, and a client speaking `front`. */
const setup = (
  front: Era,
  behind: Era,
  seen: Seen,
  options: { readonly gateway?: McpGateway.Options; readonly client?: Partial<McpClient.Options> } = {}
) =>
  Effect.gen(function*() {
    const group = yield* McpGroup.make({
      servers: { up: McpGroup.inMemory(upstream(seen), { era: behind }) },
      client: McpGateway.clientOptions,
      liveness: false
    }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
    const server = yield* McpGateway.make(options.gateway).pipe(Effect.provideService(McpGroup.McpGroup, group))
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
    const client = yield* McpClient.make({
      clientInfo,
      era: front,
      elicitation: { form: () => Effect.succeed({ action: "accept", content: { name: "ada" } }) },
      ...options.client
    }).pipe(Effect.provideService(McpTransport.McpTransport, clientEnd), Effect.provide(ValidatorLayer))
    return { client, group, server }
  })

describe("McpGateway", () => {
  for (const [front, behind] of PAIRS) {
    describe(`${front} client, ${behind} server`, () => {
      it.effect("lists the tools under safe names, listings passed through", () =>
        Effect.gen(function*() {
          const seen = yield* newSeen
          const { client } = yield* setup(front, behind, seen)
          const tools = yield* client.listTools()
          const names = tools.tools.map((tool) => tool.name).sort()
          assert.strictEqual(names.length, 4)
          assert.includeMembers(names, ["ask", "count", "wait"])
          const odd = names.find((name) => name.startsWith("odd"))!
          assert.match(odd, /^[a-zA-Z0-9_-]{1,64}$/)
          assert.strictEqual(textOf(yield* client.callTool(odd, {})), "odd")
          const count = tools.tools.find((tool) => tool.name === "count")!
          assert.deepStrictEqual(count.annotations, { readOnlyHint: true })
          assert.deepStrictEqual(count._meta, { "example.com/owner": "tests" })
          assert.deepStrictEqual(count.inputSchema.required, ["to"])
        }))

      it.effect("a server's question is answered by the client in front; the call behind runs once", () =>
        Effect.gen(function*() {
          const seen = yield* newSeen
          const { client } = yield* setup(front, behind, seen)
          assert.strictEqual(textOf(yield* client.callTool("ask", {})), "hello ada")
          assert.strictEqual(seen.runs, behind === "modern" ? 2 : 1)
        }))

      it.effect("progress and logs reach the client in order, before the result", () =>
        Effect.gen(function*() {
          const seen = yield* newSeen
          const { client } = yield* setup(front, behind, seen)
          yield* client.setLoggingLevel("info")
          const logs = yield* client.notificationsOf("notifications/message").pipe(
            Stream.take(3),
            Stream.runCollect,
            Effect.forkChild({ startImmediately: true })
          )
          const progress: Array<number> = []
          const result = yield* client.callTool("count", { to: 3 }, {
            onProgress: (p) => Effect.sync(() => progress.push(p.progress))
          })
          assert.strictEqual(textOf(result), "counted to 3")
          assert.deepStrictEqual(progress, [1, 2, 3])
          const received = yield* Fiber.join(logs)
          assert.deepStrictEqual(received.map((log) => log.data), ["step 1", "step 2", "step 3"])
        }))

      it.effect("cancelling in front interrupts the handler behind", () =>
        Effect.gen(function*() {
          const seen = yield* newSeen
          const { client } = yield* setup(front, behind, seen)
          const call = yield* client.callTool("wait", {}).pipe(Effect.forkChild({ startImmediately: true }))
          yield* Deferred.await(seen.started)
          yield* Fiber.interrupt(call)
          // the cancellation travels through the gateway
          yield* Effect.repeat(Effect.sync(() => seen.cancelled), { until: (n) => n > 0, times: 1000 })
          assert.strictEqual(seen.cancelled, 1)
        }))
    })
  }

  it.effect("a legacy client's session that closes cancels its calls behind", () =>
    Effect.gen(function*() {
      for (const behind of ["legacy", "modern"] as const) {
        const seen = yield* newSeen
        const { server } = yield* setup("legacy", behind, seen)
        // a second client, on a connection of its own that closes (the gateway and its group stay)
        const session = yield* Scope.make()
        const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair.pipe(Scope.provide(session))
        yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd), Scope.provide(session))
        const client = yield* McpClient.make({ clientInfo, era: "legacy" }).pipe(
          Effect.provideService(McpTransport.McpTransport, clientEnd),
          Effect.provide(ValidatorLayer),
          Scope.provide(session)
        )
        yield* client.callTool("wait", {}).pipe(Effect.ignore, Effect.forkDetach({ startImmediately: true }))
        yield* Deferred.await(seen.started)
        yield* Scope.close(session, Exit.void)
        yield* Effect.repeat(Effect.sync(() => seen.cancelled), { until: (n) => n > 0, times: 1000 })
        assert.strictEqual(seen.cancelled, 1)
      }
    }))

  it.effect("a tool added behind is announced in front under its name", () =>
    Effect.gen(function*() {
      const seen = yield* newSeen
      const { client, group } = yield* setup("legacy", "legacy", seen)
      const changed = yield* client.notificationsOf("notifications/tools/list_changed").pipe(
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      const extra = McpServer.layer(
        { name: "extra", version: "1.0.0" },
        McpTool.make("fresh", { handler: () => Effect.succeed("new") })
      )
      yield* group.connect("extra", McpGroup.inMemory(extra))
      assert.isTrue(Option.isSome(yield* Fiber.join(changed)))
      assert.include((yield* client.listTools()).tools.map((tool) => tool.name), "fresh")
      assert.strictEqual(textOf(yield* client.callTool("fresh", {})), "new")
    }))

  it.effect("filters hide tools; a hidden tool is unknown to calls", () =>
    Effect.gen(function*() {
      const seen = yield* newSeen
      const { client } = yield* setup("modern", "legacy", seen, {
        gateway: { upstreams: { up: { tools: { allow: ["c*", "ask", "wait"], deny: ["wait"] } } } }
      })
      assert.deepStrictEqual((yield* client.listTools()).tools.map((tool) => tool.name).sort(), ["ask", "count"])
      const refused = yield* client.session.request(McpSchema.CallTool, { name: "wait", arguments: {} }).pipe(
        Effect.flip
      )
      assert.strictEqual(refused.reason._tag, "ProtocolError")
      assert.match(refused.message, /Unknown tool: wait/)
    }))

  it.effect("a server that leaves takes its tools away in front", () =>
    Effect.gen(function*() {
      const seen = yield* newSeen
      const { client, group } = yield* setup("legacy", "modern", seen)
      const changed = yield* client.notificationsOf("notifications/tools/list_changed").pipe(
        Stream.runHead,
        Effect.forkChild({ startImmediately: true })
      )
      // an answer: the session's handshake is over on the gateway's side too
      assert.strictEqual((yield* client.listTools()).tools.length, 4)
      yield* group.disconnect("up")
      yield* Fiber.join(changed)
      assert.strictEqual((yield* client.listTools()).tools.length, 0)
      const refused = yield* client.session.request(McpSchema.CallTool, { name: "count", arguments: { to: 1 } }).pipe(
        Effect.flip
      )
      assert.match(refused.message, /Unknown tool: count/)
    }))
})
