import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Fiber, Queue, Sink, Stream } from "effect"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpSession from "../src/McpSession.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { Echo } from "./utils/peer.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

const decode = (chunks: ReadonlyArray<Uint8Array | string>, maxLineBytes?: number) =>
  Stream.fromIterable(chunks.map((c) => typeof c === "string" ? bytes(c) : c)).pipe(
    McpTransport.decodeNdjson({ maxLineBytes }),
    Stream.runCollect
  )

const malformed = (value: unknown) => value instanceof JsonRpc.Malformed

describe("McpTransport: newline-delimited JSON framing", () => {
  it.effect("joins a message split across chunks", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* decode(["{\"a\":", "1", "}\n"]), [{ a: 1 }])
    }))

  it.effect("splits several messages in one chunk, and a chunk ending mid-message", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* decode(["{\"a\":1}\n{\"b\":2}\n{\"c\"", ":3}\n"]), [{ a: 1 }, { b: 2 }, { c: 3 }])
    }))

  it.effect("skips blank lines and accepts \\r\\n", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* decode(["\n\n  \n{\"a\":1}\r\n\r\n", "\t\n{\"b\":2}\n"]), [{ a: 1 }, { b: 2 }])
    }))

  it.effect("decodes a multi-byte character split between chunks", () =>
    Effect.gen(function*() {
      const all = bytes("{\"s\":\"é€😀\"}\n")
      assert.deepStrictEqual(yield* decode([all.subarray(0, 8), all.subarray(8, 11), all.subarray(11)]), [{
        s: "é€😀"
      }])
    }))

  it.effect("emits a last line that has no newline when the stream ends", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* decode(["{\"a\":1}\n{\"b\"", ":2}"]), [{ a: 1 }, { b: 2 }])
    }))

  it.effect("turns invalid JSON and invalid UTF-8 into Malformed values and goes on", () =>
    Effect.gen(function*() {
      const out = yield* decode(["not json\n", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), "{\"ok\":true}\n"])
      assert.strictEqual(out.length, 3)
      assert.isTrue(malformed(out[0]))
      assert.match((out[0] as JsonRpc.Malformed).reason, /not valid JSON/)
      assert.isTrue(malformed(out[1]))
      assert.strictEqual((out[1] as JsonRpc.Malformed).reason, "not valid UTF-8")
      assert.deepStrictEqual(out[2], { ok: true })
    }))

  it.effect("rejects a line over the size limit, even one spread over many chunks, and reads the next", () =>
    Effect.gen(function*() {
      const long = `{"x":"${"a".repeat(100)}"}`
      const inOneChunk = yield* decode([`${long}\n{"a":1}\n`], 64)
      assert.isTrue(malformed(inOneChunk[0]))
      assert.deepStrictEqual(inOneChunk.slice(1), [{ a: 1 }])
      const spread = yield* decode([long.slice(0, 40), long.slice(40, 80), long.slice(80), "\n{\"a\":2}\n"], 64)
      assert.strictEqual(spread.length, 2)
      assert.match((spread[0] as JsonRpc.Malformed).reason, /longer than 64 bytes/)
      assert.deepStrictEqual(spread[1], { a: 2 })
      // exactly at the limit is fine
      const exact = `{"x":"${"b".repeat(56)}"}`
      assert.strictEqual(exact.length, 64)
      assert.deepStrictEqual(yield* decode([`${exact}\n`], 64), [{ x: "b".repeat(56) }])
    }))

  it.effect("encodes frames as one JSON line each", () =>
    Effect.gen(function*() {
      const out = yield* Stream.make(JsonRpc.request(1, "ping"), JsonRpc.notification("n")).pipe(
        McpTransport.encodeNdjson,
        Stream.decodeText(),
        Stream.mkString
      )
      assert.strictEqual(
        out,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"
      )
    }))
})

describe("McpTransport: a session over framed bytes", () => {
  it.effect("answers garbage with -32700 (id null) and keeps serving", () =>
    Effect.gen(function*() {
      const input = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      const output = yield* Queue.unbounded<string>()
      const transport = yield* McpTransport.makeNdjson({
        input: Stream.fromQueue(input),
        output: Sink.forEach((chunk: Uint8Array) => Queue.offer(output, new TextDecoder().decode(chunk)))
      })
      yield* McpSession.make({
        role: "server",
        handlers: [McpSession.handler(Echo, (params) => Effect.succeed({ n: params.n }))]
      }).pipe(Effect.provideService(McpTransport.McpTransport, transport))
      const lines = Stream.fromQueue(output).pipe(Stream.splitLines, Stream.map((line) => JSON.parse(line)))
      const answers = yield* lines.pipe(Stream.take(3), Stream.runCollect, Effect.forkChild({ startImmediately: true }))
      yield* Queue.offer(input, bytes("{\"jsonrpc\":\"2.0\",\"id\":1,\"met"))
      yield* Queue.offer(input, bytes("hod\":\"ping\"}\n{oops}\n"))
      yield* Queue.offer(input, bytes("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/echo\",\"params\":{\"n\":5}}\n"))
      const [pong, parseError, echo] = yield* Fiber.join(answers)
      assert.deepStrictEqual(pong, JsonRpc.success(1, {}))
      assert.strictEqual(parseError.id, null)
      assert.strictEqual(parseError.error.code, -32700)
      assert.deepStrictEqual(echo, JsonRpc.success(2, { n: 5 }))
    }))
})
