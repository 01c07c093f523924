/**
 * The session engine, one for both roles, owning the conversation over one
 * transport: outgoing requests get an id and a `Deferred` registered in a
 * `Ref` map before they are sent (interrupting the caller removes it and
 * sends `notifications/cancelled`; closing the scope fails every pending
 * call and leaves the map empty); incoming requests run as handler fibers
 * keyed by request id, which `notifications/cancelled` interrupts; bad input
 * is answered with `-32700`, `-32600`, `-32601` or `-32602`. Users rarely build
 * one directly: `McpClientSession` and `McpServerSession` add each role's
 * lifecycle on top.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { make as makeEngine } from "./internal/session/engine.ts"
import type * as Pending from "./internal/session/pending.ts"
import type * as JsonRpc from "./JsonRpc.ts"
import type * as McpAuth from "./McpAuth.ts"
import type * as McpError from "./McpError.ts"
import type * as McpMethod from "./McpMethod.ts"
import type * as McpSchema from "./McpSchema.ts"
import { McpTransport } from "./McpTransport.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A progress notification received for one of our requests.
 *
 * @category models
 * @since 0.1.0
 */
export type Progress = Pending.Progress

/**
 * Per-call options of an outgoing request.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestOptions {
  /** The idle limit: no reply and no progress for this long fails the call. Default 60 s; `"Infinity"` disables it. */
  readonly timeout?: Duration.Input | undefined
  /** A limit on the whole call that progress does not push back. Default none. */
  readonly maxTotalTimeout?: Duration.Input | undefined
  /** Whether a progress notification restarts the idle limit. Default `true`. */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** Receives the peer's progress notifications; giving it sends a progress token. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

/**
 * The running session: what both roles can do with the peer.
 *
 * @category models
 * @since 0.1.0
 */
export interface Session {
  readonly role: "client" | "server"
  /** Sends a request and waits for its result, validated against the method's result schema. */
  readonly request: <M extends McpMethod.Request>(
    method: M,
    params: McpMethod.Params<M>,
    options?: RequestOptions
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>
  /** Sends a notification. */
  readonly notify: <M extends McpMethod.Notification>(
    method: M,
    params: McpMethod.Params<M>
  ) => Effect.Effect<void, McpError.McpError>
  /** Sends `ping` and waits for the answer. */
  readonly ping: (options?: RequestOptions) => Effect.Effect<void, McpError.McpError>
  /** How many outgoing requests await a reply. */
  readonly pendingCount: Effect.Effect<number>
  /** Completes when the session has ended: the peer went away, keep-alive failed, or the scope closed. */
  readonly awaitClose: Effect.Effect<void>
  /** Completes when the session starts to end: long-lived handlers (`subscriptions/listen`) finish then. */
  readonly awaitClosing: Effect.Effect<void>
  /** `false` once the session has ended. */
  readonly isOpen: Effect.Effect<boolean>
}

/**
 * What a request handler learns of the request it answers.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestContext {
  readonly requestId: JsonRpc.RequestId
  readonly method: string
  /** The request's `params._meta`. */
  readonly meta: Readonly<Record<string, unknown>> | undefined
  readonly progressToken: McpSchema.ProgressToken | undefined
  /** Sends `notifications/progress` for this request; does nothing when the peer sent no progress token. */
  readonly reportProgress: (progress: {
    readonly progress: number
    readonly total?: number
    readonly message?: string
  }) => Effect.Effect<void, McpError.McpError>
  /** The session, to call the peer back. */
  readonly session: Session
  /** The verified token the request came with (a protected HTTP server); else `undefined`. */
  readonly auth?: McpAuth.AuthInfo | undefined
}

/**
 * A request handler: the method it answers and what it does. Its params are
 * validated against the method's schema before it runs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Handler {
  readonly method: McpMethod.Request
  readonly handle: (params: any, context: RequestContext) => Effect.Effect<unknown, McpError.McpError>
}

/**
 * A notification handler. Notification handlers run one at a time, in order of
 * arrival, on a fiber of their own (a slow one delays the next notification,
 * never a reply). An `inline` handler runs on the reading fiber instead, before
 * the next message is read: for quick state changes that later messages
 * depend on, such as `notifications/initialized`.
 *
 * @category models
 * @since 0.1.0
 */
export interface NotificationHandler {
  readonly method: McpMethod.Notification
  readonly handle: (params: any, session: Session) => Effect.Effect<void, McpError.McpError>
  readonly inline?: boolean | undefined
}

/**
 * Declares a request handler.
 *
 * @category constructors
 * @since 0.1.0
 */
export const handler = <M extends McpMethod.Request>(
  method: M,
  handle: (
    params: McpMethod.Params<M>,
    context: RequestContext
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError>
): Handler => ({ method, handle })

/**
 * Declares a notification handler.
 *
 * @category constructors
 * @since 0.1.0
 */
export const notificationHandler = <M extends McpMethod.Notification>(
  method: M,
  handle: (params: McpMethod.Params<M>, session: Session) => Effect.Effect<void, McpError.McpError>,
  options?: { readonly inline?: boolean | undefined }
): NotificationHandler => ({ method, handle, inline: options?.inline })

/**
 * How a session is run.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly role: "client" | "server"
  readonly handlers?: ReadonlyArray<Handler> | undefined
  /** Looked up for a request method `handlers` has none for (an extension's, registered later). */
  readonly handlerOf?: ((method: string) => Handler | undefined) | undefined
  readonly notificationHandlers?: ReadonlyArray<NotificationHandler> | undefined
  /** This side's capabilities and a reader of the peer's (known only after the handshake). */
  readonly capabilities?: {
    /** This side's capabilities, or a function that reads them when they may change. */
    readonly own: unknown
    readonly peer: () => unknown
  } | undefined
  /**
   * The lifecycle rule of the session's era: `undefined` admits an incoming
   * message, an error object refuses it (requests get it as their response,
   * notifications are dropped).
   */
  readonly admit?:
    | ((
      message: JsonRpc.Request | JsonRpc.Notification,
      kind: "request" | "notification"
    ) => JsonRpc.ErrorObject | undefined)
    | undefined
  /**
   * Sees every notification the peer sends, in order, before it is handled
   * (including `notifications/progress` and `notifications/cancelled`). It
   * runs on the reading fiber: keep it synchronous and quick.
   */
  readonly observeNotification?: ((message: JsonRpc.Notification) => void) | undefined
  /** Whether a JSON-RPC batch is accepted now (only the 2025-03-26 revision has them). */
  readonly acceptBatches?: (() => boolean) | undefined
  /** The default idle timeout of outgoing requests (60 s). */
  readonly defaultTimeout?: Duration.Input | undefined
  /** Ping the peer every `interval`; end the session after `maxFailures` (default 3) failures in a row. */
  readonly keepAlive?: {
    readonly interval: Duration.Input
    readonly timeout?: Duration.Input | undefined
    readonly maxFailures?: number | undefined
    /** Pings only while this says so (a server pings a legacy session once initialized, never a modern client). */
    readonly when?: (() => boolean) | undefined
  } | undefined
}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * A running session.
 *
 * @category services
 * @since 0.1.0
 */
export class McpSession extends Context.Service<McpSession, Session>()("@effect-mcp/core/McpSession") {}

/**
 * Runs a session over the transport in context, for as long as the scope
 * lasts.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<Session, never, McpTransport | Scope.Scope> =>
  Effect.flatMap(McpTransport, (transport) => makeEngine(transport, options))

/**
 * A session as a scoped layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<McpSession, never, McpTransport> =>
  Layer.effect(McpSession, make(options))

// -----------------------------------------------------------------------------
// Progress as a stream
// -----------------------------------------------------------------------------

/**
 * An event of {@link requestStream}.
 *
 * @category models
 * @since 0.1.0
 */
export type RequestEvent<A> =
  | { readonly _tag: "Progress"; readonly progress: Progress }
  | { readonly _tag: "Result"; readonly result: A }

/**
 * Sends a request and returns its progress notifications followed by its
 * result as a stream. Interrupting the stream cancels the request.
 *
 * @category combinators
 * @since 0.1.0
 */
export const requestStream = <M extends McpMethod.Request>(
  session: Session,
  method: M,
  params: McpMethod.Params<M>,
  options?: Omit<RequestOptions, "onProgress">
): Stream.Stream<RequestEvent<McpMethod.Result<M>>, McpError.McpError> =>
  Stream.callback<RequestEvent<McpMethod.Result<M>>, McpError.McpError>((queue) =>
    session.request(method, params, {
      ...options,
      onProgress: (progress) => Effect.asVoid(Queue.offer(queue, { _tag: "Progress", progress }))
    }).pipe(
      Effect.matchEffect({
        onFailure: (error) => Queue.fail(queue, error),
        onSuccess: (result) => Effect.andThen(Queue.offer(queue, { _tag: "Result", result }), Queue.end(queue))
      }),
      Effect.forkScoped
    )
  )
