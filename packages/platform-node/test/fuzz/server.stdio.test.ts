/**
 * Fuzz, our server over stdio: seeded mutations of valid client frames (see
 * `frames.ts`) sent one per line to the example server (a real child
 * process), each followed by a ping. Asserted: the ping is always answered
 * (no crash), every stdout line is a JSON-RPC message, the child's RSS stays
 * bounded, and each frame gets the answer JSON-RPC 2.0 / MCP prescribe
 * (disagreements are collected and printed with one example each).
 *
 * `FUZZ_RUNS=10000 npx vitest run packages/platform-node/test/fuzz` for more rounds.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { fileURLToPath } from "node:url"
import {
  awaitsAnswer,
  clientCorpus,
  expectedAnswer,
  expectedBatch,
  type Json,
  judge,
  judgeBatch,
  mutatedBatch,
  mutatedFrame,
  numRuns,
  seed,
  Tally
} from "./frames.ts"
import { isResponse, rssOf, StdioPeer } from "./peer.ts"

const root = fileURLToPath(new URL("../../../..", import.meta.url))
const RUNS = numRuns(1000)
/**
 * The example server, its heap capped: a leak of what it was sent would end
 * it (and the next ping would go unanswered) long before the RSS bound.
 */
const serverArgs = ["--max-old-space-size=128", "--conditions=development", "scratchpad/example-server.ts"]
/** The child's RSS may not pass this, whatever it was sent. */
const RSS_BOUND = 400 * 1024 * 1024

const tally = new Tally("stdio server")
let crashed: string | undefined
let badLines: ReadonlyArray<string> = []
let rss: { before: number | undefined; after: number | undefined } = { before: undefined, after: undefined }

describe("fuzz: our server over stdio", () => {
  it("survives mutated frames: pings answered, only JSON-RPC on stdout, RSS bounded", async () => {
    const peer = new StdioPeer(process.execPath, serverArgs, root)
    try {
      peer.write(JSON.stringify({
        jsonrpc: "2.0",
        id: "init",
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }
      }))
      assert.isTrue(await peer.waitFor((messages) => messages.some((m) => m.id === "init"), 20_000), peer.stderr)
      peer.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
      peer.take()
      rss.before = rssOf(peer.child.pid!)
      let counter = 0
      /** The request ids sent in this session so far (MCP forbids reusing one). */
      const used = new Set<Json>()
      await fc.assert(
        fc.asyncProperty(mutatedFrame(clientCorpus, () => 10_000 + counter), async (frame) => {
          counter++
          const ping = `ping-${counter}`
          const expected = expectedAnswer(frame.bytes, "server", used)
          peer.write(frame.bytes)
          peer.write(JSON.stringify({ jsonrpc: "2.0", id: ping, method: "ping" }))
          const pinged = await peer.waitFor((messages) => messages.some((m) => m.id === ping), 10_000)
          if (!pinged) {
            crashed = `no answer to the ping after ${frame.how} (exit ${JSON.stringify(peer.exited)}): ${
              peer.stderr.slice(-500)
            }`
            throw new Error(crashed)
          }
          if (awaitsAnswer(expected)) {
            // answers may overtake each other: wait for one besides the ping's
            await peer.waitFor((messages) => messages.some((m) => isResponse(m) && m.id !== ping), 2_000)
          }
          const responses = peer.take().filter((m) => isResponse(m) && m.id !== ping)
          const arrays = peer.takeBatches()
          const problem = arrays.length > 0
            ? `answered with an array in a 2025-11-25 session: ${JSON.stringify(arrays).slice(0, 300)}`
            : judge(expected, responses)
          tally.record(frame, problem, expected)
          if (peer.badLines.length > 0) {
            throw new Error(`not JSON-RPC on stdout after ${frame.how}: ${peer.badLines[0]}`)
          }
        }),
        { seed, numRuns: RUNS, endOnFailure: true }
      )
      rss.after = rssOf(peer.child.pid!)
      badLines = peer.badLines
    } finally {
      await peer.close()
      console.error(tally.report())
      console.error(`[fuzz stdio server] RSS before ${rss.before} after ${rss.after} bytes`)
    }
    assert.isUndefined(crashed)
    assert.deepStrictEqual(badLines, [])
    if (rss.after !== undefined) assert.isBelow(rss.after, RSS_BOUND)
  }, Math.max(120_000, RUNS * 60))

  it("answers every frame per JSON-RPC 2.0 / MCP", () => {
    assert.isAbove(tally.sent, 0)
    assert.deepStrictEqual(tally.problems(), [])
  })
})

describe("fuzz: our server over stdio, 2025-03-26 batches", () => {
  const tally = new Tally("stdio server, 2025-03-26 batches of valid messages")
  const invalidTally = new Tally("stdio server, 2025-03-26 batches with invalid members (or not batches)")
  let crashed: string | undefined

  it("survives mutated batches: pings answered, only JSON-RPC on stdout", async () => {
    const peer = new StdioPeer(process.execPath, serverArgs, root)
    try {
      peer.write(JSON.stringify({
        jsonrpc: "2.0",
        id: "init",
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }
      }))
      assert.isTrue(await peer.waitFor((messages) => messages.some((m) => m.id === "init"), 20_000), peer.stderr)
      const [init] = peer.take()
      assert.strictEqual((init?.result as { protocolVersion?: string } | undefined)?.protocolVersion, "2025-03-26")
      peer.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
      let counter = 0
      /** The request ids sent in this session so far (MCP forbids reusing one). */
      const used = new Set<Json>()
      await fc.assert(
        fc.asyncProperty(mutatedBatch(clientCorpus, () => 20_000 + counter++), async (frame) => {
          const ping = `ping-${counter}`
          const expected = expectedBatch(frame.bytes, used)
          peer.write(frame.bytes)
          peer.write(JSON.stringify({ jsonrpc: "2.0", id: ping, method: "ping" }))
          const pinged = await peer.waitFor((messages) => messages.some((m) => m.id === ping), 10_000)
          if (!pinged) {
            crashed = `no answer to the ping after ${frame.how} (exit ${JSON.stringify(peer.exited)}): ${
              peer.stderr.slice(-500)
            }`
            throw new Error(crashed)
          }
          const awaited = expected._tag === "Single"
            ? awaitsAnswer(expected.expected)
            : expected.elements.some(awaitsAnswer)
          if (awaited) {
            await peer.waitFor(
              (messages) => peer.batches.length > 0 || messages.some((m) => isResponse(m) && m.id !== ping),
              2_000
            )
          }
          const singles = peer.take().filter((m) => isResponse(m) && m.id !== ping)
          const arrays = peer.takeBatches()
          const allValid = expected._tag === "Batch" &&
            expected.elements.every((e) =>
              e._tag !== "NoneOrInvalid" && e._tag !== "ResponseOrInvalid" &&
              !(e._tag === "Error" && e.codes.includes(-32600))
            )
          ;(allValid ? tally : invalidTally).record(
            frame,
            expected._tag === "Single"
              ? (arrays.length > 0
                ? `expected one message, got an array: ${JSON.stringify(arrays).slice(0, 300)}`
                : judge(expected.expected, singles))
              : judgeBatch(expected.elements, arrays, singles),
            expected._tag === "Single" ? expected.expected : `batch of ${expected.elements.length}`
          )
          if (peer.badLines.length > 0) {
            throw new Error(`not JSON-RPC on stdout after ${frame.how}: ${peer.badLines[0]}`)
          }
        }),
        { seed, numRuns: numRuns(300), endOnFailure: true }
      )
    } finally {
      await peer.close()
      console.error(tally.report())
      console.error(invalidTally.report())
    }
    assert.isUndefined(crashed)
  }, Math.max(120_000, RUNS * 60))

  it("answers batches of valid messages per JSON-RPC 2.0 §6 (one array, one response per request)", () => {
    assert.isAbove(tally.sent, 0)
    assert.deepStrictEqual(tally.problems(), [])
  })

  it("answers batches with invalid members per JSON-RPC 2.0 §6 (an error per invalid member)", () => {
    assert.isAbove(invalidTally.sent, 0)
    assert.deepStrictEqual(invalidTally.problems(), [])
  })
})
