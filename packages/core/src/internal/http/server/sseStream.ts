/**
 * The SSE streams of the Streamable HTTP server. A stream (the answer to one
 * POST, or a session's GET stream) outlives the HTTP connections that carry
 * it: frames are buffered on the stream, and the one connection that owns it
 * at a time takes them, stores each in the event store (which gives it its
 * event id) and writes them. A dropped connection leaves the rest buffered; a
 * new connection (`GET` with `Last-Event-ID`) takes ownership, waits for a
 * write in progress to finish, replays what the store holds after the id and
 * goes on with the buffer. With one writer at a time every event is stored,
 * and so delivered, exactly once and in order. A stream that ends within a
 * few turns of the scheduler (a quick answer) goes out whole, as one body
 * with a length (`whole`); the others stream (`body`).
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Sse from "effect/encoding/Sse"
import type * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpHttpServer from "../../../McpHttpServer.ts"
import * as Metrics from "../../metrics.ts"

/** One stream of SSE events. @internal */
export interface SseStream {
  readonly id: string
  readonly kind: "post" | "get"
  /** Where events are stored for resumption; `undefined` when the stream is not resumable. */
  readonly store: McpHttpServer.EventStoreShape | undefined
  /** A priming event is due before anything else on the next connection. */
  priming: boolean
  buffer: Array<JsonRpc.Message>
  /** The connection that may write, if any. */
  owner: Connection | undefined
  /** How many connections have owned the stream. */
  attached: number
  /** Completed when a frame arrives or the owner changes; set by a waiting writer. */
  wake: Deferred.Deferred<void> | undefined
  /** A write is storing events. */
  busy: boolean
  /** Completed when that write is done; made only when someone waits for it. */
  idle: Deferred.Deferred<void> | undefined
  /** No more frames will come: the connection ends once the buffer is written. */
  ended: boolean
  /** The session is gone: connections end now, frames are dropped. */
  closed: boolean
  /** The server asked to end the current connection (SEP-1699 polling). */
  kick: boolean
}

/** A token for one HTTP connection carrying a stream. @internal */
export interface Connection {
  readonly _connection: true
}

const GET_BUFFER_LIMIT = 1000

// how many scheduler turns a priming event waits for a first message (see `body`)
const PRIMING_YIELDS = 4

/** @internal */
export const make = (
  id: string,
  kind: "post" | "get",
  store: McpHttpServer.EventStoreShape | undefined,
  priming: boolean
): SseStream => ({
  id,
  kind,
  store,
  priming,
  buffer: [],
  owner: undefined,
  attached: 0,
  wake: undefined,
  busy: false,
  idle: undefined,
  ended: false,
  closed: false,
  kick: false
})

const signal = (stream: SseStream): void => {
  const wake = stream.wake
  if (wake !== undefined) {
    stream.wake = undefined
    Deferred.doneUnsafe(wake, Effect.void)
  }
}

/** Queues a frame. Dropped when nobody can ever read it. @internal */
export const write = (stream: SseStream, message: JsonRpc.Message): void => {
  if (stream.closed || stream.ended) return
  if (stream.owner === undefined && stream.store === undefined) return
  stream.buffer.push(message)
  // a GET stream nobody reads keeps only its newest frames
  if (stream.kind === "get" && stream.owner === undefined && stream.buffer.length > GET_BUFFER_LIMIT) {
    stream.buffer.shift()
  }
  signal(stream)
}

/** No more frames: the connection ends after writing the buffer. @internal */
export const end = (stream: SseStream): void => {
  stream.ended = true
  signal(stream)
}

/** The session is gone. @internal */
export const close = (stream: SseStream): void => {
  stream.closed = true
  stream.buffer = []
  signal(stream)
}

/** Ends the current connection (after a `retry`), keeping the stream. @internal */
export const kick = (stream: SseStream): void => {
  if (stream.owner === undefined || stream.store === undefined) return
  stream.kick = true
  signal(stream)
}

/** Makes a new connection the owner; the previous one ends at its next step. @internal */
export const attach = (stream: SseStream): Connection => {
  const connection: Connection = { _connection: true }
  const previous = stream.owner
  stream.owner = connection
  stream.attached++
  stream.kick = false
  if (previous !== undefined) signal(stream)
  return connection
}

/** Waits until no write is storing events. @internal */
export const awaitIdle = (stream: SseStream): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (!stream.busy) return Effect.void
    stream.idle ??= Deferred.makeUnsafe<void>()
    return Deferred.await(stream.idle)
  })

const textEncoder = new TextEncoder()

/**
 * A message as JSON. A result that cannot be serialised (a cycle, a bigint)
 * becomes an internal error for its request rather than a broken stream.
 *
 * @internal
 */
export const stringify = (message: JsonRpc.Message): string => {
  const text = Result.try(() => JSON.stringify(message))
  if (Result.isSuccess(text)) return text.success
  const id = "id" in message && !("method" in message) ? message.id : undefined
  return JSON.stringify(
    id === undefined
      ? JsonRpc.notification("notifications/message", { level: "error", data: "a message could not be serialized" })
      : JsonRpc.failure(id, {
        code: JsonRpc.ErrorCode.InternalError,
        message: "Internal error: the result could not be serialized"
      })
  )
}

// one message's JSON text as SSE text
const encodeData = (id: string | undefined, data: string): string =>
  Sse.encoder.write({ _tag: "Event", event: "message", id, data })

/** One message as SSE text. @internal */
export const encodeEvent = (id: string | undefined, message: JsonRpc.Message): string =>
  encodeData(id, stringify(message))

/** A `retry` directive as SSE text. @internal */
export const encodeRetry = (duration: Duration.Duration): string =>
  Sse.encoder.write(new Sse.Retry({ duration, lastEventId: undefined }))

/** A comment: makes the server send the response head at once. @internal */
export const COMMENT = ":\n\n"

const DEFAULT_KICK_RETRY = encodeRetry(Duration.seconds(1))

/** @internal */
export interface BodyOptions {
  /** Text written first (a comment, replayed events). */
  readonly prefix?: string | undefined
  /** The `retry` directive sent with a priming event, and when the connection is ended early. */
  readonly retry?: string | undefined
  /** Runs when the connection ends; `completed` when the whole stream was written. */
  readonly onEnd: (completed: boolean) => Effect.Effect<void>
}

type Chunk = Arr.NonEmptyReadonlyArray<Uint8Array>

const primingEvent = (id: string | undefined, retry: string | undefined) =>
  id === undefined ? COMMENT : (retry ?? "") + Sse.encoder.write({ _tag: "Event", event: "message", id, data: "" })

const append = (stream: SseStream, store: McpHttpServer.EventStoreShape, message: JsonRpc.Message | undefined) =>
  Effect.catch(store.append(stream.id, message), () => Effect.undefined)

// the JSON text of each message while it is being stored: the memory store
// sizes an event by it rather than serialising the message again
const texts = new WeakMap<JsonRpc.Message, string>()

/** The JSON text of a message being stored, when this module is storing it. @internal */
export const textOf = (message: JsonRpc.Message): string | undefined => texts.get(message)

// stores the batch one event after the other: each id is known before the next append
const appendAll = (
  stream: SseStream,
  store: McpHttpServer.EventStoreShape,
  batch: ReadonlyArray<JsonRpc.Message>,
  index: number,
  text: string
): Effect.Effect<string> => {
  if (index === batch.length) return Effect.succeed(text)
  const message = batch[index]!
  const json = stringify(message)
  texts.set(message, json)
  return Effect.flatMap(append(stream, store, message), (id) => {
    texts.delete(message)
    return appendAll(stream, store, batch, index + 1, text + encodeData(id, json))
  })
}

const idle = (stream: SseStream) =>
  Effect.sync(() => {
    stream.busy = false
    const waiting = stream.idle
    if (waiting !== undefined) {
      stream.idle = undefined
      Deferred.doneUnsafe(waiting, Effect.void)
    }
  })

// Takes the buffer (unless `buffered` is false) and a due priming event, and
// stores them, uninterruptibly from the take on: what left the buffer is in
// the store before a new owner replays from it. The text of the events taken.
const take = (stream: SseStream, retry: string | undefined, buffered = true): Effect.Effect<string> =>
  Effect.uninterruptible(Effect.suspend(() => {
    const batch = buffered ? stream.buffer : []
    if (buffered) stream.buffer = []
    const priming = stream.priming
    stream.priming = false
    const store = stream.store
    if (store === undefined) {
      let text = ""
      for (const message of batch) text += encodeEvent(undefined, message)
      return Effect.succeed(text)
    }
    stream.busy = true
    const text = priming
      ? Effect.flatMap(
        append(stream, store, undefined),
        (id) => appendAll(stream, store, batch, 0, primingEvent(id, retry))
      )
      : appendAll(stream, store, batch, 0, "")
    return Effect.ensuring(text, idle(stream))
  }))

// the connection ends: the stream has no owner until a new one attaches
const detach = (stream: SseStream, connection: Connection, options: BodyOptions, completed: boolean) =>
  Effect.suspend(() => {
    if (stream.owner === connection) {
      stream.owner = undefined
      // nobody can resume it: what comes later is lost anyway
      if (stream.store === undefined) close(stream)
    }
    return options.onEnd(completed)
  })

/**
 * The whole text of a connection made with {@link attach}, when its stream
 * ends within a few turns of the scheduler (a quick answer): it goes out as
 * one body with a length, priming event and all, and the connection is
 * done. `undefined` when the stream has not ended by then: the connection
 * goes on with {@link body}.
 *
 * @internal
 */
export const whole = (
  stream: SseStream,
  connection: Connection,
  options: BodyOptions
): Effect.Effect<string | undefined> => {
  const ready = () => stream.ended || stream.closed || stream.kick || stream.owner !== connection
  const settle = (turns: number): Effect.Effect<void> =>
    turns === 0 || ready() ? Effect.void : Effect.andThen(Effect.yieldNow, Effect.suspend(() => settle(turns - 1)))
  return settle(PRIMING_YIELDS).pipe(
    Effect.onInterrupt(() => detach(stream, connection, options, false)),
    Effect.flatMap(() => {
      if (!stream.ended || stream.closed || stream.kick || stream.owner !== connection) return Effect.undefined
      if (stream.priming && stream.store === undefined) stream.priming = false
      return Effect.tap(take(stream, options.retry), () => detach(stream, connection, options, true))
    })
  )
}

/** The body of the HTTP response for a connection made with {@link attach}. @internal */
export const body = (stream: SseStream, connection: Connection, options: BodyOptions): Stream.Stream<Uint8Array> => {
  let prefix = options.prefix
  let completed = false
  let primingYields = 0

  const chunk = (text: string): Chunk => [textEncoder.encode(text)]

  // a due priming event goes out alone only when nothing else is ready
  const drain: Effect.Effect<Chunk> = Effect.map(take(stream, options.retry), chunk)

  const pull: Pull.Pull<Chunk> = Effect.suspend((): Pull.Pull<Chunk> => {
    if (prefix !== undefined) {
      const text = prefix
      prefix = undefined
      return Effect.succeed(chunk(text))
    }
    if (stream.closed || stream.owner !== connection) return Cause.done()
    if (stream.kick) {
      stream.kick = false
      const retry = options.retry ?? DEFAULT_KICK_RETRY
      // a priming event still due goes first: its id is where the client resumes
      if (stream.priming && stream.store !== undefined) {
        return Effect.map(take(stream, options.retry, false), (text) => {
          if (stream.owner === connection) stream.owner = undefined
          return chunk(text + retry)
        })
      }
      stream.owner = undefined
      return Effect.succeed(chunk(retry))
    }
    if (stream.priming && stream.store === undefined) stream.priming = false
    // a priming event alone waits a few turns of the scheduler for a quick
    // answer, so that both (and the end of the stream) go out in one write
    if (stream.priming && stream.buffer.length === 0 && !stream.ended && primingYields < PRIMING_YIELDS) {
      primingYields++
      return Effect.andThen(Effect.yieldNow, pull)
    }
    if (stream.buffer.length > 0 || stream.priming) return drain
    if (stream.ended) {
      completed = true
      return Cause.done()
    }
    const wake = Deferred.makeUnsafe<void>()
    stream.wake = wake
    return Effect.andThen(Deferred.await(wake), pull)
  })

  // counted while open (see `McpMetrics`)
  return Stream.fromPull(Effect.as(Metrics.streamOpened, pull)).pipe(
    Stream.ensuring(
      Effect.andThen(Metrics.streamClosed, Effect.suspend(() => detach(stream, connection, options, completed)))
    )
  )
}
