/**
 * Whole HTTP requests carried between replicas on Redis pub/sub (see
 * `relayProtocol.ts` for the messages).
 *
 * The replies channel of this replica is subscribed once, for the life of
 * the relay, and dispatched by request id to the `forward` calls waiting on
 * it. The requests channel is subscribed once while any `serve` runs (the
 * latest one handles); each request runs in a fiber of its own, with a
 * scope of its own, interrupted by a cancel or when the last `serve` ends.
 *
 * @internal
 */
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import type * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import * as RcRef from "effect/RcRef"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Errors from "./errors.ts"
import * as Protocol from "./relayProtocol.ts"
import * as Subscribe from "./subscription.ts"

/** @internal */
export interface RelayOptions {
  readonly prefix: string
  readonly replicaId: string
  readonly heartbeatIntervalMillis: number
  readonly forwardTimeoutMillis: number
  /** Whether a replica keeps its heartbeat. */
  readonly isLive: (replicaId: string) => Effect.Effect<boolean, McpError.McpError>
  /** The `serve` calls running, shared with the direct hop. */
  readonly handlers: Handlers
}

/** @internal */
export type Relay = Pick<McpSessionRegistry.Service, "forward" | "serve">

/** What `serve` was given: serves one forwarded request. @internal */
export type Handle = Parameters<McpSessionRegistry.Service["serve"]>[0]

/**
 * The handlers of the `serve` calls running, in the order they began: the
 * latest one handles.
 *
 * @internal
 */
export interface Handlers {
  readonly current: () => Handle | undefined
  /** Adds `handle` for the life of the scope. */
  readonly add: (handle: Handle) => Effect.Effect<void, never, Scope.Scope>
}

/** @internal */
export const makeHandlers = (): Handlers => {
  const handles: Array<Handle> = []
  return {
    current: () => handles.at(-1),
    add: (handle) =>
      Effect.acquireRelease(
        Effect.sync(() => handles.push(handle)),
        () => Effect.sync(() => handles.splice(handles.lastIndexOf(handle), 1))
      )
  }
}

interface Head {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The whole body, when it came with the head. */
  readonly whole?: Uint8Array | undefined
}

/** A forwarded request waiting for its response. */
interface Pending {
  readonly head: Deferred.Deferred<Head, McpError.McpError>
  readonly body: Queue.Queue<Uint8Array, McpError.McpError | Cause.Done>
  /** The number of the next chunk. */
  next: number
  /** Bytes received and not yet read by the client. */
  buffered: number
  /** Ended, failed or cancelled: nothing more is expected. */
  done: boolean
}

const failPending = (pending: Pending, error: McpError.McpError): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (pending.done) return Effect.void
    pending.done = true
    return Effect.andThen(Deferred.fail(pending.head, error), Queue.fail(pending.body, error))
  })

/**
 * The relay of one replica: subscribes to its replies channel in the scope.
 *
 * @internal
 */
export const make = (
  redis: Redis.Redis["Service"],
  options: RelayOptions
): Effect.Effect<Relay, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { replicaId } = options
    const channels = Protocol.channels(options.prefix)
    const pendings = new Map<string, Pending>()
    const publish = (channel: string, message: string) =>
      redis.send<number>("PUBLISH", channel, message).pipe(Effect.map(Number), Errors.mapRedis("PUBLISH"))

    const onReply = (text: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const message = Protocol.decodeOutbound(text)
        const pending = message === undefined ? undefined : pendings.get(message.id)
        if (message === undefined || pending === undefined || pending.done) return Effect.void
        switch (message.t) {
          case "head":
            return Deferred.succeed(pending.head, { status: message.status, headers: message.headers })
          case "chunk":
            if (message.seq !== pending.next) return failPending(pending, lost(message.id))
            pending.next++
            // pub/sub has no back-pressure: a client that reads too slowly loses its connection (and may resume)
            pending.buffered += message.data.length
            if (pending.buffered > MAX_BUFFERED) return failPending(pending, tooSlow(message.id))
            return Queue.offer(pending.body, message.data)
          case "whole":
            pending.done = true
            return Effect.andThen(
              Deferred.succeed(pending.head, { status: message.status, headers: message.headers, whole: message.data }),
              Queue.end(pending.body)
            )
          case "end":
            if (message.chunks !== pending.next) return failPending(pending, lost(message.id))
            pending.done = true
            return Queue.end(pending.body)
          case "fail":
            return failPending(pending, McpError.transport(message.message))
        }
      })
    yield* Subscribe.subscribe(redis, channels.replies(replicaId), onReply)

    const forward = (owner: string, request: McpSessionRegistry.ForwardedRequest) =>
      Effect.gen(function*() {
        const id = globalThis.crypto.randomUUID()
        const pending: Pending = {
          head: yield* Deferred.make<Head, McpError.McpError>(),
          body: yield* Queue.unbounded<Uint8Array, McpError.McpError | Cause.Done>(),
          next: 0,
          buffered: 0,
          done: false
        }
        pendings.set(id, pending)
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            pendings.delete(id)
            if (pending.done) return Effect.void
            pending.done = true
            return publish(channels.requests(owner), Protocol.encodeInbound({ t: "cancel", id, from: replicaId })).pipe(
              Effect.ignore
            )
          })
        )
        const receivers = yield* publish(
          channels.requests(owner),
          Protocol.encodeInbound({ t: "request", id, from: replicaId, ...request })
        )
        if (receivers === 0) {
          pending.done = true
          // nobody took it: the request was not served, and the session may be taken over
          return yield* Effect.fail(McpError.serverUnavailable(owner, "it is not listening for forwarded requests"))
        }
        // until the body ends: when the owner's heartbeat stops, the response fails
        yield* Effect.sleep(options.heartbeatIntervalMillis).pipe(
          Effect.andThen(options.isLive(owner)),
          Effect.flatMap((live) =>
            live ? Effect.void : failPending(pending, McpError.transport(`replica ${owner} is gone`))
          ),
          // when Redis cannot tell, the owner is taken to be alive
          Effect.ignore,
          Effect.repeat({ while: () => !pending.done }),
          Effect.forkScoped
        )
        const head = yield* Deferred.await(pending.head).pipe(
          Effect.timeoutOrElse({
            duration: options.forwardTimeoutMillis,
            orElse: () =>
              Effect.fail(
                McpError.transport(`replica ${owner} did not answer within ${options.forwardTimeoutMillis} ms`)
              )
          })
        )
        return identity<McpSessionRegistry.ForwardedResponse>({
          status: head.status,
          headers: head.headers,
          body: head.whole === undefined
            ? Stream.fromQueue(pending.body).pipe(
              Stream.tap((chunk) => Effect.sync(() => (pending.buffered -= chunk.length)))
            )
            : Stream.make(head.whole),
          whole: head.whole
        })
      })

    // the requests channel is subscribed while at least one `serve` runs; the latest one handles
    const { handlers } = options
    const serving = yield* RcRef.make({
      acquire: Effect.gen(function*() {
        const scope = yield* Effect.scope
        const fibers = yield* FiberMap.make<string>()
        const onRequest = (text: string): Effect.Effect<void> => {
          const message = Protocol.decodeInbound(text)
          const handle = handlers.current()
          if (message === undefined || handle === undefined) return Effect.void
          const key = `${message.from} ${message.id}`
          if (message.t === "cancel") return Effect.asVoid(Effect.forkIn(FiberMap.remove(fibers, key), scope))
          return Effect.asVoid(FiberMap.run(fibers, key, serveOne(handle, message), { onlyIfMissing: true }))
        }
        yield* Subscribe.subscribe(redis, channels.requests(replicaId), onRequest)
      })
    })

    const serve = (handle: Handle) =>
      Effect.gen(function*() {
        yield* handlers.add(handle)
        yield* RcRef.get(serving)
      })

    /** Serves one request, publishing its response to the forwarder's replies channel. */
    const serveOne = (
      handle: Handle,
      request: typeof Protocol.Request.Type
    ): Effect.Effect<void> => {
      const { id } = request
      const channel = channels.replies(request.from)
      // a message nobody receives means the forwarder is gone: stop serving
      const send = (message: Protocol.Outbound) =>
        publish(channel, Protocol.encodeOutbound(message)).pipe(
          Effect.flatMap((receivers) =>
            receivers === 0 ? Effect.fail(McpError.closed(`replica ${request.from} stopped listening`)) : Effect.void
          )
        )
      // while it is served, the forwarder keeps its heartbeat; when Redis cannot tell, it is taken to be alive
      const forwarderGone = Effect.sleep(options.heartbeatIntervalMillis).pipe(
        Effect.andThen(options.isLive(request.from)),
        Effect.orElseSucceed(() => true),
        Effect.repeat({ until: (live) => !live }),
        Effect.andThen(Effect.failSync(() => McpError.closed(`replica ${request.from} is gone`)))
      )
      let chunks = 0
      const respond = Effect.gen(function*() {
        const response = yield* handle({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: request.body
        })
        if (response.whole !== undefined) {
          return yield* send({
            t: "whole",
            id,
            status: response.status,
            headers: response.headers,
            data: response.whole
          })
        }
        yield* send({ t: "head", id, status: response.status, headers: response.headers })
        yield* Stream.runForEach(response.body, (data) => send({ t: "chunk", id, seq: chunks++, data }))
        yield* send({ t: "end", id, chunks })
      })
      return Effect.raceFirst(respond, forwarderGone).pipe(
        Effect.scoped,
        Effect.onExit((exit) =>
          Exit.isSuccess(exit)
            ? Effect.void
            : publish(channel, Protocol.encodeOutbound({ t: "fail", id, message: failureMessage(exit, request) })).pipe(
              Effect.ignore
            )
        ),
        Effect.catchCause((cause) => Effect.logDebug("forwarded request ended", cause))
      )
    }

    return { forward, serve }
  })

const identity = <A>(a: A): A => a

/** The most bytes of a forwarded body buffered for a client that has not read them. */
const MAX_BUFFERED = 16 * 1024 * 1024

const tooSlow = (id: string) =>
  McpError.transport(`the client of forwarded request ${id} reads too slowly: over ${MAX_BUFFERED} bytes waiting`)

const lost = (id: string) => McpError.transport(`part of the response to forwarded request ${id} was lost`)

const failureMessage = (
  exit: Exit.Exit<unknown, McpError.McpError>,
  request: { readonly method: string; readonly url: string }
): string => {
  const what = `forwarded ${request.method} ${request.url}`
  if (Exit.isSuccess(exit)) return what
  if (Cause.hasInterruptsOnly(exit.cause)) return `the replica serving ${what} stopped`
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) ? `${what} failed: ${error.value.message}` : `${what} failed: ${Cause.pretty(exit.cause)}`
}
