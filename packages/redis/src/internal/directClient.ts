/**
 * The forwarder's end of the direct hop (`directProtocol.ts`): a request for
 * another replica goes straight to the address it advertises, over an undici
 * pool of keep-alive connections, or on pub/sub (`relay.ts`) when it cannot.
 *
 * - The owner's address is the value of its heartbeat key (`GET`), kept for
 *   `heartbeatTtl`, or until a connection to it fails. A replica without the
 *   hop (`"1"`) is reached on pub/sub.
 * - Pub/sub carries the request when the hop could not: no connection to the
 *   address (refused, unreachable: the request was not sent), or the hop
 *   refused it (`503`: no `serve` runs; `401`: another secret, logged;
 *   `421`: the address is another replica's now). A connection that fails
 *   once the request is sent fails the request, as on pub/sub when the owner
 *   dies: it may have run.
 * - Closing the scope aborts the request (its connection closes, and the
 *   owner's handler is interrupted). The body fails when the connection
 *   does (the owner's process died), or when the owner's heartbeat stops (a
 *   host that vanished).
 *
 * @internal
 */
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpSessionRegistry from "@effect-mcp/core/McpSessionRegistry"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type * as Undici from "@effect/platform-node/Undici"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Protocol from "./directProtocol.ts"
import type * as Relay from "./relay.ts"

/** @internal */
export interface ClientOptions {
  readonly prefix: string
  readonly replicaId: string
  readonly heartbeatIntervalMillis: number
  readonly heartbeatTtlMillis: number
  readonly forwardTimeoutMillis: number
  readonly secret: Effect.Effect<string, McpError.McpError>
  readonly isLive: (replicaId: string) => Effect.Effect<boolean, McpError.McpError>
  /** Pub/sub: what carries a request the hop cannot. */
  readonly relay: Relay.Relay["forward"]
}

type Forward = McpSessionRegistry.Service["forward"]

interface Known {
  /** `undefined`: the replica is reached on pub/sub. */
  readonly address: string | undefined
  readonly until: number
}

/** The response, or `undefined`: the hop could not carry the request (pub/sub does). */
type Attempt = McpSessionRegistry.ForwardedResponse | undefined

// failures to open a connection: nothing was sent
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

const codeOf = (cause: unknown): string | undefined => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return typeof code === "string" ? code : undefined
}

// one reason for every cancellation (a DOMException built per request costs)
const CANCELLED = new Error("the forwarded request was cancelled")

const describe = (
  cause: unknown
): string => (cause instanceof Error && cause.message !== "" ? cause.message : String(cause))

/**
 * The forwarder, with its connection pool for the life of the scope.
 *
 * @internal
 */
export const make = (
  redis: Redis.Redis["Service"],
  options: ClientOptions
): Effect.Effect<Forward, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dispatcher = yield* NodeHttpClient.makeDispatcherOptions({ keepAliveMaxTimeout: 60_000 })
    const known = new Map<string, Known>()

    const remember = (owner: string, address: string | undefined, now: number) => {
      if (known.size >= 1024) { for (const [id, entry] of known) if (entry.until <= now) known.delete(id) }
      known.set(owner, { address, until: now + options.heartbeatTtlMillis })
    }

    const addressOf = (owner: string): Effect.Effect<string | undefined> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const entry = known.get(owner)
        if (entry !== undefined && entry.until > now) return Effect.succeed(entry.address)
        return redis.send<string | null>("GET", `${options.prefix}replicas:${owner}`).pipe(
          Effect.map((value) => {
            // no heartbeat: pub/sub tells that nobody listens
            if (value === null) return undefined
            const address = Protocol.isAddress(value) ? value : undefined
            remember(owner, address, now)
            return address
          }),
          // when Redis cannot tell, pub/sub cannot carry it either: it fails there
          Effect.orElseSucceed(() => undefined)
        )
      })

    const forget = (owner: string) => Effect.sync(() => known.delete(owner))

    const send = (owner: string, address: string, request: McpSessionRegistry.ForwardedRequest, secret: string) =>
      Effect.gen(function*() {
        const abort = new AbortController()
        let received: Undici.Dispatcher.ResponseData | undefined
        // a response read to its end is left alone: its connection goes back to the pool
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            if (received === undefined || !received.body.readableEnded) abort.abort(CANCELLED)
          })
        )
        const sent = Effect.tryPromise({
          try: () =>
            dispatcher.request({
              origin: address,
              path: Protocol.PATH,
              method: "POST",
              headers: Protocol.requestHeaders(request, { secret, from: options.replicaId, to: owner }),
              body: request.body,
              signal: abort.signal,
              // none: a JSON answer comes when the handler is done (forwardTimeout bounds it)
              headersTimeout: 0,
              bodyTimeout: 0
            }),
          catch: (cause) => cause
        }).pipe(
          Effect.tap((response) => Effect.sync(() => (received = response))),
          Effect.onInterrupt(() => Effect.sync(() => abort.abort(CANCELLED)))
        )
        return yield* Number.isFinite(options.forwardTimeoutMillis)
          ? Effect.timeoutOrElse(sent, {
            duration: options.forwardTimeoutMillis,
            orElse: () =>
              Effect.fail(
                McpError.transport(`replica ${owner} did not answer within ${options.forwardTimeoutMillis} ms`)
              )
          })
          : sent
      })

    const hop = (
      owner: string,
      address: string,
      request: McpSessionRegistry.ForwardedRequest
    ): Effect.Effect<Attempt, McpError.McpError, Scope.Scope> =>
      Effect.gen(function*() {
        const secret = yield* Effect.option(options.secret)
        if (secret._tag === "None") return undefined
        const response = yield* send(owner, address, request, secret.value).pipe(
          Effect.catch((cause) => {
            if (McpError.isMcpError(cause)) return Effect.fail(cause)
            return Effect.andThen(
              forget(owner),
              NOT_CONNECTED.has(codeOf(cause) ?? "")
                ? Effect.succeed(undefined)
                : Effect.fail(
                  McpError.transport(`the connection to replica ${owner} failed: ${describe(cause)}`, { cause })
                )
            )
          })
        )
        if (response === undefined) return undefined
        const mark = response.headers[Protocol.BODY]
        if (mark !== "whole" && mark !== "stream") return yield* refused(owner, response)
        const headers = Protocol.forwardedHeaders(response.headers)
        if (mark === "whole") {
          const whole = new Uint8Array(
            yield* Effect.tryPromise({
              try: () => response.body.arrayBuffer(),
              catch: (cause) =>
                McpError.transport(`the answer of replica ${owner} was cut: ${describe(cause)}`, { cause })
            })
          )
          return identity<McpSessionRegistry.ForwardedResponse>({
            status: response.statusCode,
            headers,
            body: Stream.make(whole),
            whole
          })
        }
        yield* ownerGone(owner, response.body)
        return identity<McpSessionRegistry.ForwardedResponse>({
          status: response.statusCode,
          headers,
          body: NodeStream.fromReadable({
            evaluate: () => response.body,
            // a body no longer read is not cancelled: closing the scope is
            closeOnDone: false,
            onError: (cause) =>
              McpError.transport(`the answer of replica ${owner} was cut: ${describe(cause)}`, { cause })
          })
        })
      })

    // the hop's own answer: the request was not served
    const refused = (owner: string, response: Undici.Dispatcher.ResponseData): Effect.Effect<undefined> =>
      Effect.gen(function*() {
        response.body.resume()
        if (response.statusCode === 503) return undefined
        const now = yield* Clock.currentTimeMillis
        // until the address is read again: another replica's now (421), or another secret (401)
        remember(owner, undefined, now)
        if (response.statusCode === 401) {
          yield* Effect.logWarning(
            `replica ${owner} refused the relay secret: its requests go on pub/sub; give every replica the same secret`
          )
        }
        return undefined
      })

    // a body that is merely quiet goes on; one whose owner's heartbeat stops fails
    const ownerGone = (owner: string, body: Undici.Dispatcher.ResponseData["body"]) =>
      Effect.sleep(options.heartbeatIntervalMillis).pipe(
        Effect.andThen(options.isLive(owner)),
        Effect.map((live) => {
          if (!live) body.destroy(new Error(`replica ${owner} is gone`))
        }),
        // when Redis cannot tell, the owner is taken to be alive
        Effect.ignore,
        Effect.repeat({ while: () => !body.readableEnded && !body.destroyed }),
        Effect.forkScoped
      )

    return (owner, request) =>
      Effect.gen(function*() {
        const address = yield* addressOf(owner)
        const response = address === undefined ? undefined : yield* hop(owner, address, request)
        return response ?? (yield* options.relay(owner, request))
      })
  })

const identity = <A>(a: A): A => a
