/**
 * A transport is a connection: an inbound `Stream` of parsed JSON values and
 * a `send`; closing the scope that built it closes it. Correlation,
 * cancellation and timeouts live in `McpSession`, once, above every
 * transport: framing transports (stdio, WebSocket, in-memory) know nothing of
 * request ids. A transport that answers each request on a channel of its own
 * (the Streamable HTTP server: the POST that carried it) reads
 * {@link RequestOrigin} and declares the optional hints of {@link McpTransport}.
 * Framing is stream operators: {@link decodeNdjson}, {@link encodeNdjson}.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import { ndjsonDecoder } from "./internal/framing/ndjson.ts"
import * as Direct from "./internal/transport/direct.ts"
import * as JsonRpc from "./JsonRpc.ts"
import type * as McpAuth from "./McpAuth.ts"
import * as McpError from "./McpError.ts"

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * A connection to one peer.
 *
 * - `incoming` delivers each received frame as a parsed JSON value (not yet
 *   checked to be JSON-RPC), or a `JsonRpc.Malformed` for a frame that could
 *   not be parsed. It ends when the peer goes away.
 * - `send` writes one message or batch.
 * - `blockingSend` is `true` for transports whose `send` may wait for the
 *   peer (an HTTP POST awaiting its response): the session then races each
 *   request's send against its reply, so timeouts and closing still apply.
 * - `routesByOrigin` is `true` for transports that read {@link RequestOrigin}
 *   (Streamable HTTP's server side): only then does the session set it, since
 *   it costs a context change per request.
 * - `authOf` is given by transports that authenticate each request (a
 *   protected HTTP server): the verified token the request with this id came
 *   with. The session asks once per incoming request, when it arrives, and
 *   gives the handler `McpAuth.CurrentAuth`; without `authOf` it costs
 *   nothing.
 * - `sendsParamHeaders` is `true` for transports that mirror tool arguments
 *   into `Mcp-Param-*` headers ({@link RequestHeaders}; Streamable HTTP's
 *   client): only then does a client look a tool's declarations up first.
 * - `statefulOnly` is `true` for transports of the stateful era only (the
 *   2024-11-05 HTTP+SSE transport): a client does not probe for the
 *   stateless era over them.
 * - `peerIdOf` is given by transports that rename incoming request ids to
 *   keep them unique on a connection that many peers share (Streamable
 *   HTTP's 2026-07-28 requests): the id the peer sent, for the handler's
 *   context. The transport puts the peer's id back on the response.
 *
 * @category services
 * @since 0.1.0
 */
export class McpTransport extends Context.Service<McpTransport, {
  readonly incoming: Stream.Stream<unknown, McpError.McpError>
  readonly send: (frame: JsonRpc.Frame) => Effect.Effect<void, McpError.McpError>
  readonly blockingSend?: boolean | undefined
  readonly routesByOrigin?: boolean | undefined
  readonly authOf?: ((id: JsonRpc.RequestId) => McpAuth.AuthInfo | undefined) | undefined
  readonly peerIdOf?: ((id: JsonRpc.RequestId) => JsonRpc.RequestId) | undefined
  readonly statefulOnly?: boolean | undefined
  readonly sendsParamHeaders?: boolean | undefined
}>()("@effect-mcp/core/McpTransport") {}

/**
 * The id of the incoming request on whose behalf a frame is being sent: set by
 * the session while a request handler runs, so it covers the handler's
 * response and whatever the handler sends meanwhile (progress, logs, requests
 * to the peer). Transports that answer each request on its own channel
 * (Streamable HTTP's per-POST stream) route by it; the others ignore it.
 * `undefined` for frames not sent on behalf of a request.
 *
 * @category references
 * @since 0.1.0
 */
export const RequestOrigin = Context.Reference<JsonRpc.RequestId | undefined>(
  "@effect-mcp/core/McpTransport/RequestOrigin",
  { defaultValue: () => undefined }
)

/**
 * Headers a transport over HTTP adds to the frames the current fiber sends:
 * the client sets the `Mcp-Param-*` headers of a 2026-07-28 `tools/call`
 * here (from the tool's `x-mcp-header` parameters). Other transports ignore
 * it.
 *
 * @category references
 * @since 0.2.0
 */
export const RequestHeaders = Context.Reference<Readonly<Record<string, string>> | undefined>(
  "@effect-mcp/core/McpTransport/RequestHeaders",
  { defaultValue: () => undefined }
)

// -----------------------------------------------------------------------------
// Newline-delimited JSON framing
// -----------------------------------------------------------------------------

/**
 * Options of the newline-delimited JSON decoder.
 *
 * @category framing
 * @since 0.1.0
 */
export interface NdjsonOptions {
  /**
   * The longest accepted line in bytes; a longer line becomes one `Malformed`
   * (answered `-32700`) and the next line is read normally. Default 64 MiB
   * (a tool result with screenshots easily passes 4 MiB).
   */
  readonly maxLineBytes?: number | undefined
}

/**
 * The default longest accepted line of {@link decodeNdjson}: 64 MiB.
 *
 * @category framing
 * @since 0.2.0
 */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

/**
 * Splits a byte stream into lines and parses each as JSON. Handles lines split
 * across chunks, several lines per chunk, `\r\n`, and blank lines (skipped).
 * A line that is too long, not UTF-8 or not JSON is emitted as a
 * `JsonRpc.Malformed` value and the stream goes on.
 *
 * @category framing
 * @since 0.1.0
 */
export const decodeNdjson =
  (options?: NdjsonOptions) => <E, R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<unknown, E, R> => {
    const maxLineBytes = options?.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
    return self.pipe(
      Stream.mapAccum(
        () => ndjsonDecoder(maxLineBytes),
        (decoder, chunk) => [decoder, decoder.push(chunk)] as const,
        { onHalt: (decoder) => decoder.end() }
      )
    )
  }

/**
 * The receiving end of a byte pipe the process reads itself (a child's
 * stdout, this process's stdin): `push` decodes chunks as {@link decodeNdjson}
 * does, and `incoming` yields the values. A session reading `incoming` takes
 * a value as it is decoded (a reply to a pending request, a request to run)
 * when nothing is queued ahead of it, without waking its reader fiber.
 *
 * @category framing
 * @since 0.2.0
 */
export interface NdjsonInbox {
  readonly incoming: Stream.Stream<unknown, McpError.McpError>
  /** Decodes a chunk read from the pipe. Call outside of any fiber. */
  readonly push: (chunk: Uint8Array) => void
  /** The pipe ended: a last line without a newline, then the end of `incoming`. */
  readonly end: () => void
  /** `incoming` fails with `error` after what is queued. */
  readonly fail: (error: McpError.McpError) => void
}

/**
 * Makes an {@link NdjsonInbox}.
 *
 * @category framing
 * @since 0.2.0
 */
export const makeNdjsonInbox = (options?: NdjsonOptions): Effect.Effect<NdjsonInbox> =>
  Effect.map(Queue.unbounded<unknown, McpError.McpError | Cause.Done>(), (inbox) => {
    const decoder = ndjsonDecoder(options?.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES)
    let receiver: Direct.Receiver | undefined
    const direct: Direct.Direct = {
      inbox,
      install: (installed) => {
        receiver = installed
      }
    }
    const offer = (values: ReadonlyArray<unknown>) => {
      for (let i = 0; i < values.length; i++) {
        const value = values[i]
        if (receiver !== undefined && Queue.sizeUnsafe(inbox) === 0 && receiver(value)) continue
        Queue.offerUnsafe(inbox, value)
      }
    }
    return {
      incoming: Object.assign(Stream.fromQueue(inbox), { [Direct.DirectTypeId]: direct }),
      push: (chunk) => offer(decoder.push(chunk)),
      end: () => {
        offer(decoder.end())
        Queue.endUnsafe(inbox)
      },
      fail: (error) => {
        Queue.failCauseUnsafe(inbox, Cause.fail(error))
      }
    }
  })

const encoder = new TextEncoder()

/**
 * One frame as a newline-terminated JSON line.
 *
 * @category framing
 * @since 0.1.0
 */
export const encodeLine = (frame: JsonRpc.Frame): string => JSON.stringify(frame) + "\n"

/**
 * Encodes a stream of frames as newline-delimited JSON bytes, one chunk per
 * batch of frames that arrived together.
 *
 * @category framing
 * @since 0.1.0
 */
export const encodeNdjson = <E, R>(self: Stream.Stream<JsonRpc.Frame, E, R>): Stream.Stream<Uint8Array, E, R> =>
  self.pipe(Stream.mapArray((frames) => [encoder.encode(frames.map(encodeLine).join(""))] as const))

/**
 * A transport over a byte stream and a byte sink, framed as newline-delimited
 * JSON (the stdio framing). Writes are queued and flushed by one fiber, the
 * frames that piled up meanwhile in one chunk.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeNdjson = Effect.fn("McpTransport.makeNdjson")(function*(options: {
  readonly input: Stream.Stream<Uint8Array, McpError.McpError>
  readonly output: Sink.Sink<unknown, Uint8Array, unknown, McpError.McpError>
  readonly maxLineBytes?: number | undefined
}): Effect.fn.Return<McpTransport["Service"], never, Scope.Scope> {
  const outbox = yield* Effect.acquireRelease(
    Queue.unbounded<JsonRpc.Frame, McpError.McpError | Cause.Done>(),
    (queue) => Queue.end(queue)
  )
  const writer = yield* Stream.fromQueue(outbox).pipe(
    encodeNdjson,
    Stream.run(options.output),
    Effect.catchCause((cause) => Queue.failCause(outbox, cause)),
    Effect.forkScoped
  )
  // on close, what was sent before is written out before the writer stops
  yield* Effect.addFinalizer(() => Effect.andThen(Queue.end(outbox), Fiber.await(writer)))
  return McpTransport.of({
    incoming: options.input.pipe(decodeNdjson({ maxLineBytes: options.maxLineBytes })),
    // the outbox is unbounded: an offer never waits
    send: (frame) =>
      Effect.suspend(() =>
        Queue.offerUnsafe(outbox, frame) ? Effect.void : Effect.fail(McpError.closed("transport closed"))
      )
  })
})

// -----------------------------------------------------------------------------
// In-memory
// -----------------------------------------------------------------------------

/**
 * Two linked in-memory transports, as layers: what one side sends the other
 * receives, as the same object (no serialisation). Each layer's scope owns its
 * end: when it closes, both directions end, as when a pipe is closed, and the
 * other side's `incoming` ends.
 *
 * @category models
 * @since 0.1.0
 */
export interface InMemoryLink {
  readonly client: Layer.Layer<McpTransport>
  readonly server: Layer.Layer<McpTransport>
}

// A message offered to a waiting reader wakes it through the queue's
// dispatcher, by default on the next turn of the event loop: two turns per
// request and answer. The link's dispatcher wakes it in a microtask instead,
// as a promise would, and lets the event loop turn after every
// HANDOFF_BURST of them, so that a busy link does not starve timers and I/O.
const HANDOFF_BURST = 64
const handoff = (): Scheduler.Scheduler => {
  const microtask = new Scheduler.MixedScheduler("sync").setImmediate
  const nextTurn = new Scheduler.MixedScheduler().setImmediate
  let burst = 0
  return new Scheduler.MixedScheduler("async", (task) => {
    if (burst < HANDOFF_BURST) {
      burst++
      return microtask(task)
    }
    return nextTurn(() => {
      burst = 0
      task()
    })
  })
}

/**
 * Makes a linked pair of in-memory transports.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeInMemoryLink: Effect.Effect<InMemoryLink> = Effect.gen(function*() {
  // the queues hand messages over through the link's own scheduler (see `handoff`)
  const scheduler = handoff()
  const [toServer, toClient] = yield* Effect.provideService(
    Effect.all([Queue.unbounded<unknown, Cause.Done>(), Queue.unbounded<unknown, Cause.Done>()]),
    Scheduler.Scheduler,
    scheduler
  )
  const serverBound = direction(toServer, scheduler)
  const clientBound = direction(toClient, scheduler)
  const end = (incoming: Direction, outgoing: Direction) => {
    const inbox = incoming.direct.inbox
    const outbox = outgoing.direct.inbox
    return Layer.effect(
      McpTransport,
      Effect.acquireRelease(
        Effect.succeed(McpTransport.of({
          incoming: Object.assign(Stream.fromQueue(inbox), { [Direct.DirectTypeId]: incoming.direct }),
          send: outgoing.send
        })),
        () =>
          Effect.suspend(() => {
            outgoing.close()
            incoming.close()
            return Effect.andThen(Queue.end(outbox), Queue.end(inbox))
          })
      )
    )
  }
  return { client: end(clientBound, serverBound), server: end(serverBound, clientBound) }
})

type Direction = ReturnType<typeof direction>

// One direction of the link. What is sent is delivered in a task of the link's
// scheduler, all that was sent meanwhile at once: each message is offered to
// the receiver the session installed (see `internal/transport/direct.ts`) while
// nothing waits in the queue ahead of it, and queued otherwise.
const direction = (inbox: Queue.Queue<unknown, Cause.Done>, scheduler: Scheduler.Scheduler) => {
  const dispatcher = scheduler.makeDispatcher()
  let sent: Array<unknown> = []
  let scheduled = false
  let open = true
  let receiver: Direct.Receiver | undefined
  const deliver = () => {
    scheduled = false
    const frames = sent
    sent = []
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]
      if (receiver !== undefined && Queue.sizeUnsafe(inbox) === 0 && receiver(frame)) continue
      Queue.offerUnsafe(inbox, frame)
    }
  }
  return {
    direct: {
      inbox,
      install: (installed: Direct.Receiver | undefined) => {
        receiver = installed
      }
    } satisfies Direct.Direct,
    send: (frame: JsonRpc.Frame): Effect.Effect<void, McpError.McpError> => {
      if (!open) return Effect.fail(McpError.closed("transport closed"))
      sent.push(frame)
      if (!scheduled) {
        scheduled = true
        dispatcher.scheduleTask(deliver, 0)
      }
      return Effect.void
    },
    // what was sent before is still delivered, through the queue
    close: () => {
      open = false
      receiver = undefined
      const frames = sent
      sent = []
      for (let i = 0; i < frames.length; i++) Queue.offerUnsafe(inbox, frames[i])
    }
  }
}

/**
 * A linked pair of in-memory transports in the current scope, for code that
 * wants both ends as values (tests that play the peer by hand).
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeInMemoryPair: Effect.Effect<
  readonly [client: McpTransport["Service"], server: McpTransport["Service"]],
  never,
  Scope.Scope
> = Effect.gen(function*() {
  const link = yield* makeInMemoryLink
  const client = yield* Layer.build(link.client)
  const server = yield* Layer.build(link.server)
  return [Context.get(client, McpTransport), Context.get(server, McpTransport)] as const
})
