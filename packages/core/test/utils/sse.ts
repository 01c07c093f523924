/**
 * Reading the Streamable HTTP server's responses in process: a body as text
 * or JSON, and an SSE body event by event.
 */
import { assert } from "@effect/vitest"
import { Cause, Effect, Scope, Stream } from "effect"
import * as Sse from "effect/encoding/Sse"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"

const decoder = new TextDecoder()

export const text = (response: HttpServerResponse.HttpServerResponse): Effect.Effect<string> => {
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      return Effect.succeed(decoder.decode(body.body))
    case "Stream":
      return body.stream.pipe(Stream.decodeText(), Stream.mkString, Effect.orDie)
    default:
      return Effect.succeed("")
  }
}

export const json = (response: HttpServerResponse.HttpServerResponse): Effect.Effect<any> =>
  Effect.map(text(response), (body) => JSON.parse(body))

export interface SseReader {
  /** The next event (`Retry` directives included); `undefined` when the stream ended. */
  readonly next: Effect.Effect<Sse.AnyEvent | undefined>
  /** The next message event's parsed data, skipping priming events and retries. */
  readonly message: Effect.Effect<any>
  /** Every remaining message until the stream ends. */
  readonly rest: Effect.Effect<Array<any>>
}

/** Reads an SSE response; closing `scope` drops the connection. */
export const readSse = (response: HttpServerResponse.HttpServerResponse, scope: Scope.Scope) =>
  Effect.gen(function*() {
    assert.strictEqual(response.headers["content-type"], "text/event-stream")
    // an answer ready at once comes whole, as one body with a length
    const body = response.body
    assert.oneOf(body._tag, ["Stream", "Uint8Array"])
    if (body._tag !== "Stream" && body._tag !== "Uint8Array") return yield* Effect.die("not a stream")
    const chunks = body._tag === "Stream" ? body.stream : Stream.make(body.body)
    const pull = yield* Stream.toPull(chunks).pipe(Scope.provide(scope))
    const events: Array<Sse.AnyEvent> = []
    const parser = Sse.makeParser((event) => events.push(event))
    const stream = new TextDecoder()
    const next: Effect.Effect<Sse.AnyEvent | undefined> = Effect.suspend(() => {
      const event = events.shift()
      if (event !== undefined) return Effect.succeed(event)
      return pull.pipe(
        Effect.flatMap((chunks) => {
          for (const chunk of chunks) parser.feed(stream.decode(chunk as Uint8Array, { stream: true }))
          return next
        }),
        Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.interrupt : Effect.succeed(undefined))
      )
    })
    const message: Effect.Effect<any> = Effect.flatMap(next, (event) => {
      if (event === undefined) return Effect.die("the stream ended")
      if (event._tag === "Retry" || event.data === "") return message
      return Effect.succeed(JSON.parse(event.data))
    })
    const rest = Effect.gen(function*() {
      const out: Array<any> = []
      for (let i = 0; i < 1000; i++) {
        const event = yield* next
        if (event === undefined) return out
        if (event._tag === "Event" && event.data !== "") out.push(JSON.parse(event.data))
      }
      return out
    })
    return { next, message, rest } satisfies SseReader
  })

export const sseOf = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.flatMap(Effect.scope, (scope) => readSse(response, scope))
