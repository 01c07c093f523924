/**
 * Gateways as replicas, in process: two gateways, each with a group of its
 * own over the same server behind, and a change bus between them. A list
 * change one replica sees behind reaches the clients of the other, whose
 * own connection was told nothing: it looks again behind. The same with
 * real processes and Redis is in packages/redis (gateway.cluster.e2e.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema, Stream } from "effect"
import * as McpChangeBus from "../src/McpChangeBus.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpGateway from "../src/McpGateway.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { linkedBuses } from "./utils/linkedBuses.ts"
import { ValidatorLayer } from "./utils/validator.ts"

describe("McpGateway replicas", () => {
  it.effect("a list change seen behind by one replica reaches the clients of another", () =>
    Effect.gen(function*() {
      // one (legacy) server behind; `later` shows up without a word to anyone (its list depends on the world)
      let shown = false
      const later = McpTool.make("later", { handler: () => Effect.succeed("later") })
      const behind = yield* McpServer.make({
        name: "behind",
        version: "1.0.0",
        visible: (definition) => !("tool" in definition && definition.tool.name === "later") || shown
      })
      yield* behind.register(McpTool.make("now", { input: Schema.Struct({}), handler: () => Effect.succeed("now") }))
      yield* behind.register(later)
      const buses = yield* linkedBuses

      const replica = (bus: McpChangeBus.Service) =>
        Effect.gen(function*() {
          const group = yield* McpGroup.make({
            servers: { up: McpGroup.inMemory(Layer.succeed(McpServer.McpServer, behind), { era: "legacy" }) },
            client: McpGateway.clientOptions,
            liveness: false
          }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
          const server = yield* McpGateway.make().pipe(
            Effect.provideService(McpGroup.McpGroup, group),
            Effect.provideService(McpChangeBus.McpChangeBus, bus)
          )
          const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
          yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
          const client = yield* McpClient.make({ clientInfo, era: "legacy" }).pipe(
            Effect.provideService(McpTransport.McpTransport, clientEnd),
            Effect.provide(ValidatorLayer)
          )
          return { group, client }
        })
      const a = yield* replica(buses.a)
      const b = yield* replica(buses.b)
      const names = (client: McpClient.Client) =>
        Effect.map(client.listTools(), (result) => result.tools.map((tool) => tool.name).sort())
      assert.deepStrictEqual(yield* names(b.client), ["now"])

      // `b`'s client hears twice: the news from `a`, then `b`'s own change once it looked again
      const heard = yield* b.client.notificationsOf("notifications/tools/list_changed").pipe(
        Stream.take(2),
        Stream.runDrain,
        Effect.forkChild({ startImmediately: true })
      )
      shown = true
      // replica `a` looks again behind (as on its own connection's list_changed)
      yield* Effect.flatMap(a.group.client("up"), (client) => client.tools.refresh)
      assert.deepStrictEqual(yield* names(a.client), ["later", "now"])
      yield* Fiber.join(heard)
      assert.deepStrictEqual(yield* names(b.client), ["later", "now"])
    }))
})
