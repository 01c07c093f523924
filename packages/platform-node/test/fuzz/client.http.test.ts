/**
 * Fuzz, our client over Streamable HTTP: a fake server (`httpPeer.ts`, a
 * node:http server on 127.0.0.1) answers our `McpClient` on
 * `NodeMcpHttpClient.layer` with seeded, planned answers to one ping: JSON
 * bodies holding a mutated frame (see `frames.ts`: responses to that ping,
 * notifications, server→client requests, invalid UTF-8), SSE streams
 * holding one followed by the ping's response, streams that end without it
 * or mid-event, and wrong content types or statuses. Each fuzzed ping is
 * followed by a well-formed one. Asserted: every fuzzed call succeeds or
 * fails with a typed `McpError` within a bound (never a defect, never a
 * hang), the follow-up always succeeds, the heap stays bounded, and each
 * SSE frame gets the answer the spec prescribes (what the client POSTs back,
 * judged on the text the SSE decoder yields).
 *
 * `FUZZ_RUNS=10000 npx vitest run packages/platform-node/test/fuzz` for more rounds.
 */
import { McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, References } from "effect"
import * as fc from "fast-check"
import * as NodeMcpHttpClient from "../../src/NodeMcpHttpClient.ts"
import { connectOver } from "../utils/client.ts"
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
import { fakeServer, PENDING, type Plan, withPending } from "./httpPeer.ts"

const RUNS = numRuns(100)
/** Heap growth allowed over the whole run (the client keeps no per-call state). */
const HEAP_GROWTH_BOUND = 150 * 1024 * 1024
/** A call slower than this counts as a hang (the client's own request timeout is 0.2 s, which
 * bounds every answer that never brings the ping's response). */
const CALL_BOUND = "4 seconds"

/** Responses to the fuzzed ping (the placeholder id becomes the ping's). */
const responseCorpus: ReadonlyArray<Record<string, unknown>> = [
  { jsonrpc: "2.0", id: PENDING, result: {} },
  { jsonrpc: "2.0", id: PENDING, result: { _meta: { note: "x" } } },
  { jsonrpc: "2.0", id: PENDING, error: { code: -32603, message: "nope" } },
  { jsonrpc: "2.0", id: PENDING, error: { code: -32601, message: "no", data: { why: 1 } } }
]

const encoder = new TextEncoder()
const utf8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const pingResponse = encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: PENDING, result: {} }))
const concat = (...parts: ReadonlyArray<Uint8Array | string>) =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))))
/** One SSE event whose data is `bytes` (split at CR/LF into data lines, as a parser rejoins them with LF). */
const event = (bytes: Uint8Array) => {
  const lines = Buffer.from(bytes).toString("latin1").split(/\r\n|\r|\n/).map((line) => Buffer.from(line, "latin1"))
  return concat("event: message\n", ...lines.flatMap((line) => ["data: ", line, "\n"]), "\n")
}
/** The text a client's SSE parser hands on for `bytes`: UTF-8 decoded with replacement, line breaks as LF. */
const asDecoded = (bytes: Uint8Array) => encoder.encode(utf8(bytes).replace(/\r\n|\r/g, "\n"))

/** A planned answer and what the oracle may say about it. */
interface Case {
  readonly kind: string
  readonly plan: Plan
  /** The frame the client must answer per spec (SSE frames followed by the response), if judged. */
  readonly judged: Frame | undefined
  readonly how: string
}

const frames = (counter: () => number): fc.Arbitrary<Frame> =>
  fc.oneof(
    { weight: 3, arbitrary: mutatedFrame(serverCorpus, () => `s-${counter()}`) },
    { weight: 2, arbitrary: mutatedFrame(responseCorpus, () => PENDING) }
  )

const cases = (counter: () => number): fc.Arbitrary<Case> =>
  frames(counter).chain((frame): fc.Arbitrary<Case> => {
    const sse = "text/event-stream"
    const json = "application/json"
    return fc.oneof(
      fc.constant<Case>({
        kind: "json",
        plan: { status: 200, contentType: json, body: frame.bytes },
        judged: undefined,
        how: frame.how
      }),
      fc.constant<Case>({
        kind: "sse + response",
        plan: { status: 200, contentType: sse, body: concat(event(frame.bytes), event(pingResponse)) },
        judged: { bytes: asDecoded(frame.bytes), how: frame.how },
        how: frame.how
      }),
      fc.constant<Case>({
        kind: "sse only",
        plan: { status: 200, contentType: sse, body: event(frame.bytes) },
        judged: undefined,
        how: frame.how
      }),
      fc.integer({ min: 0, max: 200 }).map((cut): Case => {
        const body = concat(event(frame.bytes), event(pingResponse))
        const at = Math.min(cut, body.length - 1)
        return {
          kind: "sse truncated",
          plan: { status: 200, contentType: sse, body: body.subarray(0, at) },
          judged: undefined,
          how: `${frame.how}; cut at ${at}`
        }
      }),
      fc.constantFrom<[string | undefined, "json" | "sse"]>(
        [undefined, "json"],
        ["text/plain", "json"],
        ["text/html; charset=utf-8", "json"],
        ["application/json-seq", "json"],
        [sse, "json"],
        [json, "sse"],
        ["application/octet-stream", "sse"],
        ["text/event-stream; charset=latin1", "sse"],
        ["APPLICATION/JSON", "json"]
      ).map(([contentType, shape]): Case => ({
        kind: "content type",
        plan: { status: 200, contentType, body: shape === "json" ? pingResponse : event(pingResponse) },
        judged: undefined,
        how: `${contentType} with a ${shape} body`
      })),
      fc.constantFrom(200, 201, 204, 400, 405, 409, 500, 503).map((status): Case => ({
        kind: "status",
        plan: {
          status,
          contentType: status === 204 ? undefined : json,
          body: status === 204 ? new Uint8Array() : frame.bytes
        },
        judged: undefined,
        how: `status ${status}; ${frame.how}`
      }))
    )
  })

describe("fuzz: our client over Streamable HTTP", () => {
  const tally = new Tally("http client")
  const kinds = new Map<string, { sent: number; ok: number; typed: number }>()
  const defects: Array<string> = []
  const hangs: Array<string> = []
  const followUps: Array<string> = []
  const notJsonRpc: Array<string> = []
  const absorbed: Array<string> = []
  let heapGrowth = 0
  let unused = 0

  it.live(
    "survives mutated Streamable HTTP answers: typed errors only, follow-up pings answered, heap bounded",
    () =>
      Effect.gen(function*() {
        const server = yield* fakeServer
        const client = yield* connectOver(NodeMcpHttpClient.layer({ url: server.url, fallbackToSse: false }), {
          era: "legacy",
          requestTimeout: "200 millis"
        })
        const heapBefore = process.memoryUsage().heapUsed
        let counter = 0
        const used = new Set<Json>()
        const step = (c: Case) =>
          Effect.gen(function*() {
            counter++
            server.trim()
            server.arm(c.plan)
            const figures = kinds.get(c.kind) ?? { sent: 0, ok: 0, typed: 0 }
            kinds.set(c.kind, figures)
            figures.sent++
            const exit = yield* client.ping().pipe(Effect.timeout(CALL_BOUND), Effect.exit)
            server.disarm()
            // judged with the placeholder replaced by the id of the ping it went to
            const judged = c.judged === undefined
              ? undefined
              : { ...c.judged, bytes: withPending(c.judged.bytes, server.lastId) }
            const expected = judged === undefined ? undefined : expectedAnswer(judged.bytes, "client", used)
            if (Exit.isSuccess(exit)) figures.ok++
            else if (Cause.hasDies(exit.cause)) {
              defects.push(`${c.kind}: ${c.how}: ${Cause.pretty(exit.cause).slice(0, 300)}`)
            } else {
              const error = Cause.findErrorOption(exit.cause)
              if (error._tag === "Some" && McpError.isMcpError(error.value)) figures.typed++
              else if (error._tag === "Some" && Cause.isTimeoutError(error.value)) hangs.push(`${c.kind}: ${c.how}`)
              else defects.push(`${c.kind}: ${c.how}: ${Cause.pretty(exit.cause).slice(0, 300)}`)
            }
            if (expected !== undefined && judged !== undefined) {
              if (Exit.isFailure(exit)) absorbed.push(`${c.how}: ${Cause.pretty(exit.cause).slice(0, 160)}`)
              // the answer is awaited, bounded generously: a loaded machine took over a second to post it
              if (awaitsAnswer(expected)) yield* server.awaitAnswer.pipe(Effect.timeout("15 seconds"), Effect.ignore)
              const answers: Array<Answer> = []
              for (const message of server.answers()) {
                if (isJsonRpc(message)) answers.push(message)
                else notJsonRpc.push(`${c.how}: ${JSON.stringify(message).slice(0, 200)}`)
              }
              tally.record(judged, judge(expected, answers), expected)
            }
            // the client still works
            const followUp = yield* client.ping().pipe(Effect.timeout("5 seconds"), Effect.exit)
            if (Exit.isFailure(followUp)) {
              followUps.push(`${c.kind}: ${c.how}: ${Cause.pretty(followUp.cause).slice(0, 300)}`)
            }
          }).pipe(Effect.provideService(References.MinimumLogLevel, "Error"))
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(cases(() => counter), (c) => Effect.runPromise(step(c))),
            { seed, numRuns: RUNS }
          )
        )
        unused = counter - server.planned
        heapGrowth = process.memoryUsage().heapUsed - heapBefore
        console.error(tally.report())
        console.error(
          `[fuzz http client] calls ${counter} (plan unused ${unused}); per kind (sent/succeeded/typed error): ${
            [...kinds].map(([kind, f]) => `${kind} ${f.sent}/${f.ok}/${f.typed}`).join(", ")
          }; defects ${defects.length}, hangs ${hangs.length}, follow-ups failed ${followUps.length}, ` +
            `SSE frames whose answer was the call's ${absorbed.length}, heap growth ${heapGrowth} bytes`
        )
        for (const list of [defects, hangs, followUps]) console.error(list.slice(0, 3).join("\n"))
      }).pipe(
        // the client warns about every dropped frame: keep the test output to the figures
        Effect.provideService(References.MinimumLogLevel, "Error")
      ),
    Math.max(120_000, RUNS * 400)
  )

  it("every fuzzed call succeeds or fails with a typed McpError, within the bound", () => {
    assert.isAbove(tally.sent, 0)
    assert.deepStrictEqual(defects, [])
    assert.deepStrictEqual(hangs, [])
  })

  it("the well-formed call after each one succeeds; heap bounded", () => {
    assert.deepStrictEqual(followUps, [])
    assert.strictEqual(unused, 0)
    assert.isBelow(heapGrowth, HEAP_GROWTH_BOUND)
  })

  const isBatch = (how: string) => how.startsWith("batch of")

  it("answers every SSE frame per JSON-RPC 2.0 / MCP (batches aside, see below)", () => {
    assert.deepStrictEqual(notJsonRpc, [])
    assert.deepStrictEqual(
      tally.disagreements.filter((d) => !isBatch(d.how)).map((d) => `${d.how}: ${d.problem}`),
      []
    )
  })

  // found by this suite: an array in an SSE event was split into its members;
  // now it reaches the session whole, which refuses it outside 2025-03-26
  // (one -32600 with id null)
  it("answers a batch in an SSE event with one -32600 (2025-11-25 has no batches)", () => {
    assert.isAbove(tally.disagreements.filter((d) => isBatch(d.how)).length + tally.sent, 0)
    assert.deepStrictEqual(
      tally.disagreements.filter((d) => isBatch(d.how)).map((d) => `${d.how}: ${d.problem}`),
      []
    )
  })
})
