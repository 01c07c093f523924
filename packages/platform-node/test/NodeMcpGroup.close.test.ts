/**
 * Closing a group of real stdio servers that will not stop
 * (`fixtures/stubborn-server.mjs`: they ignore the end of their stdin and
 * SIGTERM, and so does a grandchild each): the servers close at once, in
 * about one closeTimeout + termTimeout, and nothing is left running. And
 * stdio clients closing at once share their reads of the process table.
 *
 * The tests of a file run one after the other (the project's default): the
 * second one counts this worker's reads of the process table.
 */
import { McpGroup } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { fileURLToPath } from "node:url"
import * as ProcessTree from "../src/internal/processTree.ts"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpGroup from "../src/NodeMcpGroup.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"
import { textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"

const fixture = fileURLToPath(new URL("./fixtures/stubborn-server.mjs", import.meta.url))

const CLOSE_MILLIS = 400
const TERM_MILLIS = 400

describe("NodeMcpGroup: closing", () => {
  it.live("ten servers that ignore stdin's end and SIGTERM close at once, in about one closeTimeout + termTimeout", () =>
    Effect.gen(function*() {
      // closed by hand; the test's scope closes it too if the test fails first
      const scope = yield* Scope.fork(yield* Effect.scope, "sequential")
      const names = Array.from({ length: 10 }, (_, i) => `s${i}`)
      const group = yield* McpGroup.make({
        servers: Object.fromEntries(
          names.map((
            name
          ) => [
            name,
            McpGroup.stdio(process.execPath, [fixture], { env: { STUBBORN_NAME: name, STUBBORN_GRANDCHILD: "1" } })
          ])
        ),
        nameHook: McpGroup.prefixed(),
        liveness: false
      }).pipe(
        Effect.provide([
          NodeMcpGroup.layerConnector({
            stderr: "ignore",
            shutdown: { closeTimeout: `${CLOSE_MILLIS} millis`, termTimeout: `${TERM_MILLIS} millis` }
          }),
          NodeJsonSchemaValidator.layer
        ]),
        Scope.provide(scope)
      )
      const pids: Array<number> = []
      for (const name of names) {
        const { grandchild, pid } = JSON.parse(textOf(yield* group.callTool(`${name}__pids`))) as {
          readonly pid: number
          readonly grandchild: number
        }
        pids.push(pid, grandchild)
      }
      assert.deepStrictEqual(pids.map(isRunning), pids.map(() => true))
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = performance.now() - started
      // one closeTimeout + termTimeout (800 ms) and a little; one after the other, ten would take 8 s
      assert.isAtLeast(elapsed, CLOSE_MILLIS + TERM_MILLIS - 50)
      assert.isBelow(elapsed, 3_000)
      assert.deepStrictEqual(pids.map(isRunning), pids.map(() => false))
    }))

  it.live("fifty stdio clients closing at once share their reads of the process table", () =>
    Effect.gen(function*() {
      // `sleep` never reads its stdin: each close waits closeTimeout, then SIGTERM ends it
      const testScope = yield* Effect.scope
      const clients = yield* Effect.forEach(Array.from({ length: 50 }), () =>
        Effect.gen(function*() {
          const scope = yield* Scope.fork(testScope, "sequential")
          const client = yield* NodeMcpStdio.makeClient({
            command: "sleep",
            args: ["300"],
            stderr: "ignore",
            shutdown: { closeTimeout: "100 millis" }
          }).pipe(Scope.provide(scope))
          return { scope, pid: client.pid }
        }), { concurrency: "unbounded" })
      const before = ProcessTree.scanCounts()
      const started = performance.now()
      yield* Effect.forEach(clients, ({ scope }) => Scope.close(scope, Exit.void), { concurrency: "unbounded" })
      const elapsed = performance.now() - started
      const after = ProcessTree.scanCounts()
      const requests = after.requests - before.requests
      const reads = after.reads - before.reads
      // each close asks for a table at least twice (before stdin is closed, before SIGTERM)
      assert.isAtLeast(requests, 100)
      assert.isAtMost(reads, 15, `${reads} reads for ${requests} requests`)
      assert.isBelow(elapsed, 3_000)
      assert.deepStrictEqual(clients.map(({ pid }) => isRunning(pid)), clients.map(() => false))
    }))
})
