/**
 * Fuzz, our client over stdio: a fake server (`fixtures/fuzz-replay-server.ts`,
 * a real child process) writes seeded mutations of valid server→client
 * frames (see `frames.ts`) to our `McpClient` on `NodeMcpStdio`, each
 * followed by a ping of its own, and hands back what the client wrote in
 * between. Asserted: the client keeps working (its own ping and the fake
 * server's ping are answered), everything it writes is JSON-RPC, its heap
 * stays bounded, and each frame gets the answer the spec prescribes
 * (disagreements are collected and printed with one example each).
 *
 * `FUZZ_RUNS=10000 npx vitest run packages/platform-node/test/fuzz` for more rounds.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, References } from "effect"
import * as fc from "fast-check"
import { fileURLToPath } from "node:url"
import { connectStdio, textOf } from "../utils/client.ts"
import {
  type Answer,
  awaitsAnswer,
  expectedAnswer,
  type Frame,
  isJsonRpc,
  type Json,
  judge,
  mutatedFrame,
  numRuns,
  seed,
  serverCorpus,
  Tally
} from "./frames.ts"

const root = fileURLToPath(new URL("../../../..", import.meta.url))
const fixture = fileURLToPath(new URL("../fixtures/fuzz-replay-server.ts", import.meta.url))
const RUNS = numRuns(400)
/** Heap growth allowed over the whole run (the client keeps no per-frame state). */
const HEAP_GROWTH_BOUND = 150 * 1024 * 1024

describe("fuzz: our client over stdio", () => {
  const tally = new Tally("stdio client")
  const notJsonRpc: Array<string> = []
  const absorbed: Array<string> = []

  it.live(
    "survives mutated server frames: pings answered both ways, only JSON-RPC written, heap bounded",
    () =>
      Effect.gen(function*() {
        const { client } = yield* connectStdio({
          command: process.execPath,
          args: ["--conditions=development", fixture],
          cwd: root,
          stderr: "capture"
        })
        const heapBefore = process.memoryUsage().heapUsed
        let counter = 0
        /** The request ids the fake server sent so far (MCP forbids reusing one). */
        const used = new Set<Json>()
        const step = (frame: Frame) =>
          Effect.gen(function*() {
            counter++
            const expected = expectedAnswer(frame.bytes, "client", used)
            const replayed = yield* client.callTool("replay", {
              frame: Buffer.from(frame.bytes).toString("base64"),
              await: awaitsAnswer(expected)
            }).pipe(Effect.timeout("10 seconds"), Effect.result)
            if (replayed._tag === "Failure") {
              // a mutated response whose id was our pending call's: it answered the call (allowed)
              absorbed.push(`${frame.how}: ${String(replayed.failure).slice(0, 200)}`)
            } else {
              const lines: ReadonlyArray<string> = JSON.parse(textOf(replayed.success))
              const messages: Array<Answer> = []
              for (const line of lines) {
                let message: unknown
                try {
                  message = JSON.parse(line)
                } catch {
                  message = undefined
                }
                if (isJsonRpc(message)) messages.push(message)
                else notJsonRpc.push(`${frame.how}: ${line.slice(0, 200)}`)
              }
              tally.record(frame, judge(expected, messages.filter((m) => !("method" in m))), expected)
            }
            // the client still works
            yield* client.ping().pipe(Effect.timeout("10 seconds"))
          })
        const outcome = yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              mutatedFrame(serverCorpus, () => `s-${counter}`),
              (frame) => Effect.runPromise(step(frame))
            ),
            { seed, numRuns: RUNS, endOnFailure: true }
          ).then(() => undefined, (error: Error) => error.message.slice(0, 2_000))
        )
        const heapGrowth = process.memoryUsage().heapUsed - heapBefore
        console.error(tally.report())
        console.error(
          `[fuzz stdio client] answered the calls themselves ${absorbed.length}, heap growth ${heapGrowth} bytes`
        )
        console.error(absorbed.slice(0, 3).join("\n"))
        assert.isUndefined(outcome)
        assert.deepStrictEqual(notJsonRpc, [])
        assert.isBelow(heapGrowth, HEAP_GROWTH_BOUND)
      }).pipe(
        // the client warns about every dropped frame: keep the test output to the figures
        Effect.provideService(References.MinimumLogLevel, "Error")
      ),
    Math.max(120_000, RUNS * 60)
  )

  it("answers every frame per JSON-RPC 2.0 / MCP", () => {
    assert.isAbove(tally.sent, 0)
    assert.deepStrictEqual(tally.problems(), [])
  })
})
