/**
 * McpGroup liveness on Node, with real processes and sockets: a stdio server
 * that hangs (SIGSTOP) is marked down after its missed pings, its process
 * tree killed and a new process connected, which `group.client(server)`
 * talks to; a Streamable HTTP server (server-everything) that dies is
 * noticed by the end of its GET stream, without any call and without pings,
 * and reconnected once it is back.
 */
import { McpError, McpGroup } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schedule, Scope, Stream } from "effect"
import { fileURLToPath } from "node:url"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpGroup from "../src/NodeMcpGroup.ts"
import { textOf } from "./utils/client.ts"
import * as Everything from "./utils/everything.ts"
import { isRunning } from "./utils/process.ts"
import { waitFor } from "./utils/wait.ts"

const fixture = fileURLToPath(new URL("./fixtures/group-server.mjs", import.meta.url))

const makeGroup = (options: McpGroup.Options) =>
  McpGroup.make(options).pipe(
    Effect.provide([
      NodeMcpGroup.layerConnector({
        stderr: "capture",
        shutdown: { closeTimeout: "200 millis", termTimeout: "200 millis", killTimeout: "1 second" }
      }),
      NodeJsonSchemaValidator.layer
    ])
  )

const until = (group: McpGroup.Group, ready: (servers: ReadonlyArray<McpGroup.ServerStatus>) => boolean) =>
  group.serverChanges.pipe(
    Stream.filter(ready),
    Stream.runHead,
    Effect.timeout("15 seconds"),
    Effect.orDie,
    Effect.asVoid
  )

const statusOf = (servers: ReadonlyArray<McpGroup.ServerStatus>, name: string) =>
  servers.find((entry) => entry.name === name)?.status

const pidsOf = (client: { readonly callTool: McpGroup.Group["callTool"] }) =>
  Effect.map(
    client.callTool("pids"),
    (result) => JSON.parse(textOf(result)) as { readonly pid: number; readonly grandchildren: ReadonlyArray<number> }
  )

describe("NodeMcpGroup: liveness", () => {
  it.live("a stdio server that hangs is marked down after its missed pings, its process tree killed, and a new process connected", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.stdio(process.execPath, [fixture], { env: { GROUP_NAME: "a" } }),
          b: McpGroup.stdio(process.execPath, [fixture], { env: { GROUP_NAME: "b", GROUP_GRANDCHILDREN: "1" } })
        },
        nameHook: McpGroup.prefixed(),
        reconnect: Schedule.spaced("100 millis"),
        liveness: { interval: "300 millis", timeout: "300 millis", maxMissed: 2 }
      })
      const client = yield* group.client("b")
      const before = yield* pidsOf(client)
      const tree = [before.pid, ...before.grandchildren]
      assert.deepStrictEqual(tree.map(isRunning), [true, true, true])

      // stopped: alive, answering nothing
      process.kill(before.pid, "SIGSTOP")
      yield* until(group, (servers) => statusOf(servers, "b") === "down")
      const down = (yield* group.servers).find((server) => server.name === "b")!
      assert.include(down.error?.message ?? "", "stopped answering")
      const failed = yield* Effect.flip(client.callTool("pids"))
      assert.strictEqual(failed.reason._tag, "ServerUnavailableError")
      assert.strictEqual((failed.reason as McpError.ServerUnavailableError).server, "b")
      assert.strictEqual(textOf(yield* group.callTool("a__echo", { text: "x" })), "a:echo:x")

      // killed with its tree, and replaced by a new process
      yield* until(group, (servers) => statusOf(servers, "b") === "up")
      yield* waitFor(() => tree.every((pid) => !isRunning(pid)))
      const after = yield* pidsOf(client)
      assert.notStrictEqual(after.pid, before.pid)
      assert.isTrue(isRunning(after.pid))
      assert.strictEqual(textOf(yield* client.callTool("echo", { text: "again" })), "b:echo:again")
    }))

  it.live("a Streamable HTTP server that dies is noticed by the end of its GET stream (no call, no ping), and reconnected once it is back", () =>
    Effect.gen(function*() {
      const port = yield* Everything.freePort
      const first = yield* Scope.make()
      const remote = yield* Everything.http("first", port).pipe(Scope.provide(first))
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.stdio(process.execPath, [fixture], { env: { GROUP_NAME: "a" } }),
          b: McpGroup.http(remote.url)
        },
        nameHook: McpGroup.prefixed({ separator: "_" }),
        reconnect: Schedule.spaced("200 millis"),
        liveness: false
      })
      const client = yield* group.client("b")
      assert.strictEqual(client.era, "legacy")
      const env = () =>
        Effect.map(
          client.callTool("get-env"),
          (result) => (JSON.parse(textOf(result)) as Record<string, string>).INSTANCE
        )
      assert.strictEqual(yield* env(), "first")

      yield* Scope.close(first, Exit.void)
      yield* until(group, (servers) => statusOf(servers, "b") === "down")
      const down = (yield* group.servers).find((server) => server.name === "b")!
      assert.isTrue(down.reconnecting)
      assert.strictEqual(
        (yield* Effect.flip(group.callTool("b_echo", { message: "x" }))).reason._tag,
        "ServerUnavailableError"
      )
      assert.strictEqual(textOf(yield* group.callTool("a_echo", { text: "x" })), "a:echo:x")

      // back on the same port: reconnected, and the client follows it
      yield* Everything.http("second", port)
      yield* until(group, (servers) => statusOf(servers, "b") === "up")
      assert.strictEqual(yield* env(), "second")
    }))
})
