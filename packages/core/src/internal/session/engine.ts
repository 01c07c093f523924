/**
 * The session engine: one implementation for both roles. It reads the
 * transport, matches replies to pending requests, runs inbound requests as
 * handler fibers keyed by request id, and answers bad input with the JSON-RPC
 * error codes. Client and server differ only in the handlers, capabilities and
 * admission rule they pass in (see `McpClientSession`, `McpServerSession`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import { type AuthInfo, CurrentAuth } from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpSession from "../../McpSession.ts"
import { type McpTransport, RequestOrigin } from "../../McpTransport.ts"
import * as Capabilities from "../era/capabilities.ts"
import * as Metrics from "../metrics.ts"
import * as Direct from "../transport/direct.ts"
import * as Batch from "./batch.ts"
import * as DirectReceiver from "./directReceiver.ts"
import { handlerTable, noHandlers, notificationTable } from "./handlers.ts"
import * as KeepAlive from "./keepAlive.ts"
import * as Notifications from "./notifications.ts"
import * as Pending from "./pending.ts"
import * as Timeouts from "./timeouts.ts"

/**
 * `onSession` is given the session before anything is read from the
 * transport (its handlers may look up what belongs to it).
 *
 * @internal
 */
export const make = Effect.fnUntraced(function*(
  transport: McpTransport["Service"],
  options: McpSession.Options,
  onSession?: (session: McpSession.Session) => void
): Effect.fn.Return<McpSession.Session, never, Scope.Scope> {
  const role = options.role
  const pending = yield* Pending.make
  const handlers = handlerTable(options.handlers ?? noHandlers)
  const notificationHandlers = notificationTable(options.notificationHandlers ?? noHandlers)
  const defaultTimeout = Timeouts.toMillis(options.defaultTimeout, Timeouts.DEFAULT_TIMEOUT)
  const admit = options.admit
  const own = options.capabilities?.own
  const ownCapabilities = typeof own === "function" ? own as () => unknown : undefined
  const peerCapabilities = options.capabilities?.peer

  let nextId = 0
  let open = true
  const closed = yield* Deferred.make<void>()
  const closing = yield* Deferred.make<void>()
  // the handler fibers of incoming requests, by request id
  // (made when the first one outlives its start: an idle session has none)
  let running: Map<JsonRpc.RequestId, Fiber.Fiber<void>> | undefined
  const clock = yield* Clock.clockWith(Effect.succeed)
  const scope = yield* Effect.scope
  // the services the session was made with: its background fibers, started
  // on first use from whichever fiber needs them, run with these
  const services = yield* Effect.context<never>()

  // ---------------------------------------------------------------------------
  // closing
  // ---------------------------------------------------------------------------

  // Ends the session: no more outgoing requests, every pending one fails.
  // With `drain`, the handlers already running finish (and answer) first.
  const shutdown = (error: McpError.McpError, options?: { readonly drain?: boolean }) =>
    Effect.suspend(() => {
      if (!open) return Effect.void
      open = false
      Deferred.doneUnsafe(closing, Effect.void)
      const draining = options?.drain === true && running !== undefined
        ? Effect.forEach(Array.from(running.values()), Fiber.await, { discard: true })
        : Effect.void
      return Pending.failAll(pending, error).pipe(
        Effect.andThen(notifications.end),
        Effect.andThen(draining),
        Effect.andThen(Deferred.succeed(closed, undefined))
      )
    })

  const send = (frame: JsonRpc.Frame) => transport.send(frame)
  const blockingSend = transport.blockingSend === true
  const routesByOrigin = transport.routesByOrigin === true
  const authOf = transport.authOf
  const peerIdOf = transport.peerIdOf

  // ---------------------------------------------------------------------------
  // outgoing
  // ---------------------------------------------------------------------------

  const checkCapability = (method: McpMethod.Any, params: unknown): McpError.McpError | undefined => {
    if (!McpMethod.canSend(method, role)) {
      return McpError.unsupported(method.name, `${role} → ${method.from === "client" ? "server" : "client"} direction`)
    }
    const capability = method.capability(params)
    if (capability === undefined) return undefined
    const declared = capability.side === role
      ? (ownCapabilities === undefined ? own : ownCapabilities())
      : peerCapabilities?.()
    return Capabilities.declares(declared, capability)
      ? undefined
      : McpError.unsupported(method.name, McpMethod.capabilityName(capability))
  }

  // sent in the background: the caller has given up and must not wait on a
  // transport that may block
  const cancel = (id: JsonRpc.RequestId, reason: string) =>
    open
      ? send(JsonRpc.notification(McpSchema.Cancelled.name, { requestId: id, reason })).pipe(
        Effect.ignore,
        Effect.forkIn(scope),
        Effect.asVoid
      )
      : Effect.void

  // fails the replies whose time is up (see `timeouts.ts`)
  // (a client answering its server's request does not fail the calls the server is working on)
  const timeouts = Timeouts.make({
    pending,
    clock,
    services,
    scope,
    answering: role === "client" ? () => running !== undefined && running.size > 0 : undefined
  })

  // after a failure, interruption or timeout: forget the request, and tell the
  // peer unless the session is gone
  const abandon = (id: JsonRpc.RequestId, cause: Cause.Cause<McpError.McpError>) =>
    Effect.andThen(Pending.remove(pending, id), () => {
      if (Cause.hasInterrupts(cause)) return cancel(id, "The caller was interrupted")
      const error = Cause.findErrorOption(cause)
      return Option.isSome(error) && error.value.reason._tag === "TimeoutError"
        ? cancel(id, error.value.message)
        : Effect.void
    })

  const request = <M extends McpMethod.Request>(
    method: M,
    params: McpMethod.Params<M>,
    requestOptions?: McpSession.RequestOptions
  ): Effect.Effect<McpMethod.Result<M>, McpError.McpError> =>
    Effect.suspend(() => {
      if (!open) return Effect.fail(McpError.closed())
      const refused = checkCapability(method, params)
      if (refused !== undefined) return Effect.fail(refused)
      const id = nextId++
      const onProgress = requestOptions?.onProgress
      const idle = requestOptions?.timeout === undefined
        ? defaultTimeout
        : Timeouts.toMillis(requestOptions.timeout, Timeouts.DEFAULT_TIMEOUT)
      const total = Timeouts.toMillis(requestOptions?.maxTotalTimeout, Duration.infinity)
      const resetOnProgress = requestOptions?.resetTimeoutOnProgress ?? true
      const now = clock.currentTimeMillisUnsafe()
      const entry: Pending.Entry = {
        method: method.name,
        reply: Deferred.makeUnsafe(),
        onProgress: onProgress === undefined ? undefined : (progress) => {
          if (resetOnProgress) entry.lastActivity = progress.receivedAt
          return onProgress(progress)
        },
        idle,
        total,
        totalDeadline: now + total,
        lastActivity: now
      }
      const wire = onProgress === undefined ? params : withProgressToken(params, id)
      const registered = Pending.register(pending, id, entry)
      // data-first calls: no closure per step, as `pipe` with data-last ones builds
      return Effect.onError(
        Effect.flatMap(
          Effect.andThen(timeouts.started(registered), () => {
            timeouts.arm(entry)
            const reply = Deferred.await(entry.reply)
            const sent = Effect.andThen(send(JsonRpc.request(id, method.name, wire)), reply)
            // a send that blocks (an HTTP POST awaiting its answer) must not hold
            // the call past its timeout or the session's end; the race costs a
            // few microseconds, so only such transports pay for it
            return blockingSend ? Effect.raceFirst(sent, reply) : sent
          }),
          (response) => decodeReply(method, response)
        ),
        (cause) => abandon(id, cause)
      )
    })

  const notify = <M extends McpMethod.Notification>(
    method: M,
    params: McpMethod.Params<M>
  ): Effect.Effect<void, McpError.McpError> =>
    Effect.suspend(() => {
      if (!open) return Effect.fail(McpError.closed())
      const refused = checkCapability(method, params)
      return refused === undefined ? send(JsonRpc.notification(method.name, params)) : Effect.fail(refused)
    })

  // ---------------------------------------------------------------------------
  // incoming
  // ---------------------------------------------------------------------------

  // batched requests are answered together (see `batch.ts`)
  const batches = Batch.make({
    send,
    acceptBatches: options.acceptBatches ?? refuseBatches,
    isRunning: (id) => running !== undefined && running.has(id),
    dispatch: (classified) => dispatch(classified)
  })
  const { answer, onBatch, unanswered } = batches

  const reply = (id: JsonRpc.RequestId | null, code: number, message: string) =>
    answer(JsonRpc.failure(id, { code, message }))

  // a server's requests are counted and timed (see `McpMetrics`)
  const measured = role === "server"

  const respond = (request: JsonRpc.Request, exit: Exit.Exit<unknown, McpError.McpError>) => {
    if (Exit.isSuccess(exit)) return answer(JsonRpc.success(request.id, exit.value))
    const failure = Cause.findErrorOption(exit.cause)
    if (Option.isSome(failure)) return answer(JsonRpc.failure(request.id, McpError.toErrorObject(failure.value)))
    if (Cause.hasDies(exit.cause)) {
      return Effect.logError(`handler of ${request.method} died`, exit.cause).pipe(
        Effect.andThen(reply(request.id, JsonRpc.ErrorCode.InternalError, "Internal error"))
      )
    }
    return reply(request.id, JsonRpc.ErrorCode.InternalError, "Request interrupted")
  }

  // The checks, then what runs the request: `fork` (the handler) is forked by
  // the reader, or is the whole fiber of a directly delivered request; an
  // `answer` (a refusal) is answered at once.
  const prepare = (message: JsonRpc.Request): DirectReceiver.Prepared => {
    // asked first, once: a transport may hand it over only once
    const auth = authOf === undefined ? undefined : authOf(message.id)
    const handler = handlers.get(message.method) ?? options.handlerOf?.(message.method)
    if (handler === undefined) {
      if (measured) Metrics.refuse(message.method, false, services)
      return {
        fork: false,
        effect: reply(message.id, JsonRpc.ErrorCode.MethodNotFound, `Method not found: ${message.method}`)
      }
    }
    const admission = admit?.(message, "request")
    if (admission !== undefined) {
      if (measured) Metrics.refuse(message.method, true, services)
      return { fork: false, effect: answer(JsonRpc.failure(message.id, admission)) }
    }
    const params = handler.method.validateParams(message.params ?? {})
    if (Exit.isFailure(params)) {
      if (measured) Metrics.refuse(message.method, true, services)
      const description = Cause.findErrorOption(params.cause)
      return {
        fork: false,
        effect: reply(
          message.id,
          JsonRpc.ErrorCode.InvalidParams,
          `Invalid params for ${message.method}: ${Option.getOrElse(description, () => "invalid")}`
        )
      }
    }
    if (running !== undefined && running.has(message.id)) {
      if (measured) Metrics.refuse(message.method, true, services)
      return {
        fork: false,
        effect: reply(message.id, JsonRpc.ErrorCode.InvalidRequest, `Duplicate request id ${message.id}`)
      }
    }
    const handled = measured
      ? Metrics.measure(handler.handle(params.value, requestContext(message, auth)), message.method, clock, services)
      : handler.handle(params.value, requestContext(message, auth))
    const answered = Effect.flatMap(
      Effect.exit(
        auth === undefined
          ? handled
          : Effect.updateContext(handled, (current) => Context.add(current, CurrentAuth, auth))
      ),
      (exit) => {
        running?.delete(message.id)
        if (role === "client") timeouts.answered()
        return respond(message, exit)
      }
    )
    const handle = routesByOrigin
      ? Effect.updateContext(answered, (current) => Context.add(current, RequestOrigin, message.id)) as typeof answered
      : answered
    return { fork: true, effect: handle }
  }

  const onRequest = (message: JsonRpc.Request): Effect.Effect<void> => {
    const prepared = prepare(message)
    if (!prepared.fork) return prepared.effect
    // a child of the reading fiber: interrupted with it when the session ends
    return Effect.map(Effect.forkChild(prepared.effect, startImmediately), (fiber) => {
      if (fiber.pollUnsafe() === undefined) (running ??= new Map()).set(message.id, fiber)
    })
  }

  const requestContext = (message: JsonRpc.Request, auth: AuthInfo | undefined): McpSession.RequestContext => {
    const meta = (message.params as { readonly _meta?: Record<string, unknown> } | undefined)?._meta
    const progressToken = meta?.progressToken as McpSchema.ProgressToken | undefined
    return {
      requestId: peerIdOf === undefined ? message.id : peerIdOf(message.id),
      method: message.method,
      meta,
      progressToken,
      session,
      auth,
      reportProgress: progressToken === undefined
        ? noProgress
        : (progress) => send(JsonRpc.notification(McpSchema.Progress.name, { ...progress, progressToken }))
    }
  }

  const onProgress = (params: McpSchema.ProgressNotificationParams) =>
    Effect.flatMap(Pending.get(pending, params.progressToken), (entry) => {
      if (Option.isNone(entry) || entry.value.onProgress === undefined) {
        return Effect.logDebug(`progress for unknown token ${params.progressToken} dropped`)
      }
      const onProgress = entry.value.onProgress
      return onProgress({
        progress: params.progress,
        total: params.total,
        message: params.message,
        receivedAt: clock.currentTimeMillisUnsafe()
      })
    })

  // The observer is called once the notification is queued for its handler
  // and before the handler runs (see `notifications.ts`).
  const onNotification = (message: JsonRpc.Notification): Effect.Effect<void> => {
    const handled = routeNotification(message)
    notifications.observe(message)
    return handled
  }

  const routeNotification = (message: JsonRpc.Notification): Effect.Effect<void> => {
    const method = message.method
    if (method === McpSchema.Cancelled.name) {
      const params = McpSchema.Cancelled.validateParams(message.params ?? {})
      if (Exit.isFailure(params) || params.value.requestId === undefined) {
        return Effect.logWarning("malformed notifications/cancelled dropped")
      }
      const fiber = running?.get(params.value.requestId)
      if (fiber === undefined) return Effect.logDebug(`cancel for unknown request ${params.value.requestId} ignored`)
      running!.delete(params.value.requestId)
      return Effect.andThen(Effect.sync(() => fiber.interruptUnsafe()), unanswered(params.value.requestId))
    }
    if (method === McpSchema.Progress.name) {
      const params = McpSchema.Progress.validateParams(message.params ?? {})
      return Exit.isSuccess(params)
        ? onProgress(params.value)
        : Effect.logWarning("malformed notifications/progress dropped")
    }
    const handler = notificationHandlers.get(method)
    const admission = admit?.(message, "notification")
    if (admission !== undefined) return Effect.logWarning(`notification ${method} dropped: ${admission.message}`)
    if (handler === undefined) return Effect.logDebug(`notification ${method} has no handler; dropped`)
    const params = handler.method.validateParams(message.params ?? {})
    if (Exit.isFailure(params)) return Effect.logWarning(`notification ${method} with invalid params dropped`)
    if (handler.inline === true) return notifications.run({ handler, params: params.value })
    return notifications.enqueue({ handler, params: params.value }, message)
  }

  const onResponse = (message: JsonRpc.SuccessResponse | JsonRpc.ErrorResponse): Effect.Effect<void> => {
    if (message.id === null) {
      const error = (message as JsonRpc.ErrorResponse).error
      return Effect.logWarning(`the peer reported an error without id: ${error.code} ${error.message}`)
    }
    return Effect.flatMap(Pending.take(pending, message.id), (entry) =>
      Option.isSome(entry)
        ? Deferred.succeed(entry.value.reply, message)
        : Effect.logWarning(`response for unknown request id ${message.id} dropped`))
  }

  const onMessage = (value: unknown): Effect.Effect<void> => {
    if (value instanceof JsonRpc.Malformed) {
      return reply(null, JsonRpc.ErrorCode.ParseError, `Parse error: ${value.reason}`)
    }
    if (Array.isArray(value)) return onBatch(value)
    const classified = JsonRpc.classify(value)
    // its answer would be taken for the batched request's
    if (classified._tag === "Request" && batches.has(classified.message.id)) {
      const id = classified.message.id
      return send(
        JsonRpc.failure(id, { code: JsonRpc.ErrorCode.InvalidRequest, message: `Duplicate request id ${id}` })
      ).pipe(
        Effect.ignore
      )
    }
    return dispatch(classified)
  }

  const dispatch = (classified: JsonRpc.Classified): Effect.Effect<void> => {
    switch (classified._tag) {
      case "Request":
        return onRequest(classified.message)
      case "Notification":
        return onNotification(classified.message)
      case "Response":
        return onResponse(classified.message)
      case "Invalid":
        return reply(classified.id, JsonRpc.ErrorCode.InvalidRequest, `Invalid Request: ${classified.reason}`)
    }
  }

  // ---------------------------------------------------------------------------
  // fibers and finalizers
  // ---------------------------------------------------------------------------

  const session: McpSession.Session = {
    role,
    request,
    notify,
    ping: (pingOptions) => Effect.asVoid(request(McpSchema.Ping, {}, pingOptions)),
    pendingCount: Pending.size(pending),
    awaitClose: Deferred.await(closed),
    awaitClosing: Deferred.await(closing),
    isOpen: Effect.sync(() => open)
  }
  // the queued notifications' runner (see `notifications.ts`): used only once
  // messages are read, or at `shutdown`, both below
  const notifications = Notifications.make({
    session,
    scope,
    isOpen: () => open,
    observe: options.observeNotification
  })
  onSession?.(session)

  // direct delivery (see `direct.ts`, `directReceiver.ts`)
  const direct = Direct.get(transport.incoming)
  const receiver = direct === undefined ? undefined : yield* DirectReceiver.make({
    direct,
    pending,
    services,
    isBatched: (id) => batches.has(id),
    prepare,
    track: (id, fiber) => {
      ;(running ??= new Map()).set(id, fiber)
    },
    running: () => running,
    onMessage
  })

  yield* (receiver === undefined ? Stream.runForEach(transport.incoming, onMessage) : receiver.read).pipe(
    Effect.matchCauseEffect({
      // nothing more will arrive, but what is being handled may still answer
      onSuccess: () => shutdown(McpError.closed("the peer closed the connection"), { drain: true }),
      onFailure: (cause) => {
        const error = Cause.findErrorOption(cause)
        return shutdown(
          Option.isSome(error)
            ? error.value
            : McpError.transport("the connection failed", { cause: Cause.squash(cause) })
        )
      }
    }),
    (reading) => receiver === undefined ? reading : Effect.ensuring(reading, receiver.end),
    Effect.provideService(Logger.LogToStderr, true),
    Effect.forkScoped
  )

  if (options.keepAlive !== undefined) {
    yield* KeepAlive.run(session, options.keepAlive, shutdown).pipe(Effect.forkScoped)
  }

  // runs before the fibers above are interrupted: callers wake with ClosedError
  yield* Effect.addFinalizer(() => shutdown(McpError.closed()))
  return session
})

// a request without a progress token reports nothing
const noProgress = () => Effect.void

const refuseBatches = () => false

const startImmediately = { startImmediately: true } as const

const withProgressToken = (params: unknown, token: JsonRpc.RequestId): unknown => {
  const object = (params ?? {}) as { readonly _meta?: Record<string, unknown> }
  return { ...object, _meta: { ...object._meta, progressToken: token } }
}

const decodeReply = <M extends McpMethod.Request>(
  method: M,
  response: JsonRpc.SuccessResponse | JsonRpc.ErrorResponse
): Effect.Effect<McpMethod.Result<M>, McpError.McpError> => {
  if (!JsonRpc.isSuccess(response)) return Effect.fail(McpError.fromErrorObject(response.error))
  const result = method.validateResult(response.result)
  return Exit.isSuccess(result)
    ? Effect.succeed(result.value)
    : Effect.fail(
      McpError.invalidResult(method.name, Option.getOrElse(Cause.findErrorOption(result.cause), () => "invalid"))
    )
}
