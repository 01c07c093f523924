/**
 * Tasks through a group: `callToolTask` routed by group name (a handle whose
 * steps go to the server's current connection), `callTool` waiting for a
 * required tool's task, and a task resumed by id through `client(server)`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import { textOf } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const server = (release: Deferred.Deferred<void>) =>
  McpServer.layer(
    { name: "ci", version: "1.0.0" },
    McpTool.make("build", {
      input: Schema.Struct({ target: Schema.String }),
      task: "required",
      handler: ({ target }) => Effect.as(Deferred.await(release), `built ${target}`)
    })
  )

const makeGroup = (options: McpGroup.Options) =>
  McpGroup.make(options).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))

describe("McpGroup: tasks", () => {
  it.effect("callToolTask by group name, the task resumed by id on the server's client, callTool waiting", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const group = yield* makeGroup({ servers: { ci: McpGroup.inMemory(server(release)) } })
      const task = yield* group.callToolTask("build", { target: "app" })
      assert.notStrictEqual(task.taskId, "")
      assert.strictEqual((yield* task.poll).status, "working")
      const client = yield* group.client("ci")
      const again = client.task(task.taskId)
      assert.strictEqual((yield* again.poll).status, "working")
      const waiting = yield* Effect.forkChild(group.callTool("build", { target: "lib" }))
      yield* Deferred.succeed(release, undefined)
      for (let i = 0; i < 5 && waiting.pollUnsafe() === undefined; i++) yield* TestClock.adjust("1 second")
      assert.strictEqual(textOf(yield* Fiber.join(waiting)), "built lib")
      assert.strictEqual(textOf(yield* again.result), "built app")
    }).pipe(Effect.scoped))
})
