/**
 * The SSE streams of the Streamable HTTP server. A stream (the answer to one
 * POST, or a session's GET stream) outlives the HTTP connections that carry
 * it: frames are buffered on the stream, and the one connection that owns it
 * at a time takes them, stores each in the event store (which gives it its
 * event id) and writes them. A dropped connection leaves the rest buffered; a
 * new connection (`GET` with `Last-Event-ID`) takes ownership, waits for a
 * write in progress to finish, replays what the store holds after the id and
 * goes on with the buffer. With one writer at a time every event is stored,
 * and so delivered, exactly once and in order.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import * as Sse from "effect/encoding/Sse"
import * as Result from "effect/Result"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpHttpServer from "../../../McpHttpServer.ts"

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
      : JsonRpc.failure(id, { code: JsonRpc.ErrorCode.InternalError, message: "Internal error: the result could not be serialized" })
  )
}

/** One message as SSE text. @internal */
export const encodeEvent = (id: string | undefined, message: JsonRpc.Message): string =>
  Sse.encoder.write({ _tag: "Event", event: "message", id, data: stringify(message) })

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

/** The body of the HTTP response for a connection made with {@link attach}. @internal */
export const body = (stream: SseStream, connection: Connection, options: BodyOptions): Stream.Stream<Uint8Array> => {
  let prefix = options.prefix
  let completed = false

  const chunk = (text: string): Chunk => [textEncoder.encode(text)]

  const primingEvent = (id: string | undefined) =>
    id === undefined ? COMMENT : (options.retry ?? "") + Sse.encoder.write({ _tag: "Event", event: "message", id, data: "" })

  const append = (store: McpHttpServer.EventStoreShape, message: JsonRpc.Message | undefined) =>
    Effect.catch(store.append(stream.id, message), () => Effect.undefined)

  // stores the batch one event after the other: each id is known before the next append
  const appendAll = (
    store: McpHttpServer.EventStoreShape,
    batch: ReadonlyArray<JsonRpc.Message>,
    index: number,
    text: string
  ): Effect.Effect<string> =>
    index === batch.length ? Effect.succeed(text) : Effect.flatMap(
      append(store, batch[index]),
      (id) => appendAll(store, batch, index + 1, text + encodeEvent(id, batch[index]!))
    )

  const idle = Effect.sync(() => {
    stream.busy = false
    const waiting = stream.idle
    if (waiting !== undefined) {
      stream.idle = undefined
      Deferred.doneUnsafe(waiting, Effect.void)
    }
  })

  // Takes the buffer (and a due priming event, which goes out alone only when
  // nothing else is ready) and stores it, uninterruptibly from the take on:
  // what left the buffer is in the store before a new owner replays from it.
  const drain: Effect.Effect<Chunk> = Effect.uninterruptible(Effect.suspend(() => {
    const batch = stream.buffer
    stream.buffer = []
    const priming = stream.priming
    stream.priming = false
    const store = stream.store
    if (store === undefined) {
      let text = ""
      for (const message of batch) text += encodeEvent(undefined, message)
      return Effect.succeed(chunk(text))
    }
    stream.busy = true
    const text = priming
      ? Effect.flatMap(append(store, undefined), (id) => appendAll(store, batch, 0, primingEvent(id)))
      : appendAll(store, batch, 0, "")
    return text.pipe(Effect.map(chunk), Effect.ensuring(idle))
  }))

  const pull: Pull.Pull<Chunk> = Effect.suspend((): Pull.Pull<Chunk> => {
    if (prefix !== undefined) {
      const text = prefix
      prefix = undefined
      return Effect.succeed(chunk(text))
    }
    if (stream.closed || stream.owner !== connection) return Cause.done()
    if (stream.kick) {
      stream.kick = false
      stream.owner = undefined
      return Effect.succeed(chunk(options.retry ?? DEFAULT_KICK_RETRY))
    }
    if (stream.priming && stream.store === undefined) stream.priming = false
    if (stream.buffer.length > 0 || stream.priming) return drain
    if (stream.ended) {
      completed = true
      return Cause.done()
    }
    const wake = Deferred.makeUnsafe<void>()
    stream.wake = wake
    return Effect.andThen(Deferred.await(wake), pull)
  })

  return Stream.fromPull(Effect.succeed(pull)).pipe(
    Stream.ensuring(Effect.suspend(() => {
      if (stream.owner === connection) {
        stream.owner = undefined
        // nobody can resume it: what comes later is lost anyway
        if (stream.store === undefined) close(stream)
      }
      return options.onEnd(completed)
    }))
  )
}
