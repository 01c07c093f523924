/**
 * The request and notification handlers a server's sessions share: each
 * reads the session it serves (its `Live`: options, state, sealing key,
 * held calls) and runs the server's handler in the session's era for the
 * message (a legacy session's request, or a 2026-07-28 request with its
 * input rounds and held calls), with trace context; `initialize` and
 * `notifications/initialized` of the stateful era.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Tracer from "effect/Tracer"
import * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type { Handler, Options, RequestContext, SealingKey, ServerSession, State } from "../../McpServerSession.ts"
import * as McpSession from "../../McpSession.ts"
import { principal } from "../auth/principal.ts"
import * as Held from "../era/held.ts"
import * as InputRequired from "../era/inputRequired.ts"
import * as Stateful from "../era/stateful.ts"
import * as Stateless from "../era/stateless.ts"
import * as TraceContext from "../era/traceContext.ts"
import type * as Versions from "../era/versions.ts"
import * as Logging from "./logging.ts"

// What the handlers, shared by the sessions given the same handler list, read
// of the session whose request they serve.
export interface Live {
  readonly options: Options
  readonly versions: Versions.Versions
  readonly sealingKey: SealingKey
  readonly stateTtl: number
  readonly state: Ref.Ref<State>
  readonly server: ServerSession
  readonly held: Effect.Effect<Held.HeldCalls>
  // built once per state, not per request
  capabilityCheckOf: State | undefined
  capabilityCheck: RequestContext["checkClientCapability"]
}

/** A session whose client is not known yet declares nothing. @internal */
export const declaresNothing = () => false

// by the engine's session, which every handler is given
const lives = new WeakMap<McpSession.Session, Live>()

const liveOf = (session: McpSession.Session): Live => lives.get(session)!

/** What the handlers read of `session`, set when the engine makes it. @internal */
export const attach = (session: McpSession.Session, live: Live): void => {
  lives.set(session, live)
}

const initialize = McpSession.handler(McpSchema.Initialize, (params, context) => {
  const live = liveOf(context.session)
  const options = live.options
  const protocolVersion = Stateful.negotiate(params.protocolVersion, live.versions.supported)
  return Effect.as(Ref.set(live.state, { _tag: "Initializing", client: params, protocolVersion }), {
    protocolVersion,
    capabilities: typeof options.capabilities === "function" ? options.capabilities() : options.capabilities,
    serverInfo: options.serverInfo,
    ...(options.instructions === undefined ? {} : { instructions: options.instructions })
  })
})

const initialized = McpSession.notificationHandler(
  McpSchema.Initialized,
  (_, session) =>
    Ref.update(liveOf(session).state, (current): State =>
      current._tag === "Initializing"
        ? { _tag: "Initialized", client: current.client, protocolVersion: current.protocolVersion }
        : current),
  { inline: true }
)

const legacy = (live: Live, handler: Handler, params: unknown, context: McpSession.RequestContext) => {
  // admission guarantees the handshake is done before any of these runs
  const current = Ref.getUnsafe(live.state) as Exclude<State, { readonly _tag: "NotInitialized" }>
  if (live.capabilityCheckOf !== current) {
    live.capabilityCheckOf = current
    live.capabilityCheck = (...path) =>
      McpMethod.hasCapability(current.client.capabilities, McpMethod.clientCapability(...path))
  }
  return handler.handle(params, {
    ...context,
    session: live.server,
    era: "legacy",
    clientParams: current.client,
    protocolVersion: current.protocolVersion,
    checkClientCapability: live.capabilityCheck,
    logLevel: undefined,
    input: live.server.request
  })
}

const stateless = (live: Live, handler: Handler, params: unknown, context: McpSession.RequestContext) => {
  const client = Stateless.clientOf(context.meta)
  const clientParams = {
    protocolVersion: client.protocolVersion,
    capabilities: client.capabilities,
    clientInfo: client.clientInfo
  }
  const checkClientCapability = (...path: ReadonlyArray<string>) =>
    McpMethod.hasCapability(client.capabilities, McpMethod.clientCapability(...path))
  // no level asked for: no logs
  const log = (params: McpSchema.LoggingMessageNotificationParams) =>
    client.logLevel !== undefined && Logging.passes(params.level, client.logLevel)
      ? Effect.ignore(live.server.notify(McpSchema.LoggingMessage, params))
      : Effect.void
  const contextWith = (
    input: RequestContext["input"],
    outbox?: Pick<RequestContext, "reportProgress" | "log">
  ): RequestContext => ({
    ...context,
    ...outbox,
    session: live.server,
    era: "modern",
    clientParams,
    protocolVersion: client.protocolVersion,
    checkClientCapability,
    logLevel: client.logLevel,
    input,
    ...(outbox === undefined ? { log } : {})
  })
  const method = handler.method.name
  const options = {
    key: live.sealingKey,
    ttlMillis: live.stateTtl,
    principal: principal(context.auth),
    capabilities: client.capabilities
  }
  const handled = !InputRequired.SUPPORTED.has(method)
    ? handler.handle(params, contextWith(InputRequired.unsupportedAsk(method) as RequestContext["input"]))
    // holding matters only to a client that can be asked: for another, an ask fails at once
    : handler.hold?.(params) === true && Held.canBeAsked(client.capabilities)
    ? Effect.flatMap(live.held, (calls) =>
      Held.run(calls, method, params, {
        ...options,
        idempotent: handler.idempotent?.(params) === true,
        outbox: { reportProgress: context.reportProgress, log }
      }, (channel) =>
        handler.handle(
          params,
          contextWith(
            ((method, params, options) => channel.ask(method, params, options?.inputKey)) as RequestContext["input"],
            {
              // what the held handler sends goes to the request attached at the time
              reportProgress: (progress) => channel.send((outbox) => outbox.reportProgress(progress)),
              log: (params) => channel.send((outbox) => outbox.log(params))
            }
          )
        )))
    : InputRequired.run(method, params, options, (ask) =>
      handler.handle(
        params,
        contextWith(((method, params, options) => ask(method, params, options?.inputKey)) as RequestContext["input"])
      ))
  return Effect.map(handled, (result) => Stateless.completeResult(result, live.options.serverInfo))
}

const wrap = (handler: Handler): McpSession.Handler => ({
  method: handler.method,
  handle: (params, context) => {
    const live = liveOf(context.session)
    const name = handler.method.name
    const run = Stateless.isModern(name, params)
      ? stateless(live, handler, params, context)
      : legacy(live, handler, params, context)
    const parent = TraceContext.parentOf(context.meta)
    // a span costs about a fifth of a fast call: made when a tracer is
    // installed or the client sent trace context, not for nobody
    return Effect.withFiber((fiber) =>
      parent === undefined && fiber.getRef(Tracer.Tracer) === TraceContext.untraced
        ? run
        : Effect.withSpan(run, `McpServer ${name}`, {
          kind: "server",
          attributes: { "mcp.method.name": name, "jsonrpc.request.id": String(context.requestId) },
          ...(parent === undefined ? {} : { parent })
        })
    )
  }
})

// a notification handler is given the server session
const wrapNotification = (handler: McpSession.NotificationHandler): McpSession.NotificationHandler => ({
  method: handler.method,
  handle: (params, session) => handler.handle(params, liveOf(session).server),
  inline: handler.inline
})

// The engine's handler lists, one per list given: the sessions of a server
// share them (and the engine's tables built from them); each handler wrapped once.
const noHandlers: ReadonlyArray<never> = []
const handlerLists = new WeakMap<ReadonlyArray<Handler>, ReadonlyArray<McpSession.Handler>>()
const wrappedHandlers = new WeakMap<Handler, McpSession.Handler>()
const notificationLists = new WeakMap<
  ReadonlyArray<McpSession.NotificationHandler>,
  ReadonlyArray<McpSession.NotificationHandler>
>()

const wrapOnce = (handler: Handler): McpSession.Handler => {
  let wrapped = wrappedHandlers.get(handler)
  if (wrapped === undefined) wrappedHandlers.set(handler, wrapped = wrap(handler))
  return wrapped
}

/** The engine's handlers of a server's list (`initialize` first). @internal */
export const handlersOf = (list: ReadonlyArray<Handler> = noHandlers): ReadonlyArray<McpSession.Handler> => {
  let wrapped = handlerLists.get(list)
  if (wrapped === undefined) handlerLists.set(list, wrapped = [initialize, ...list.map(wrapOnce)])
  return wrapped
}

/** The engine's lookup of a method the list has none for (an extension's). @internal */
export const handlerOf = (
  lookup: ((method: string) => Handler | undefined) | undefined
): ((method: string) => McpSession.Handler | undefined) | undefined =>
  lookup === undefined ? undefined : (method) => {
    const handler = lookup(method)
    return handler === undefined ? undefined : wrapOnce(handler)
  }

/** The engine's notification handlers of a server's list (`notifications/initialized` first). @internal */
export const notificationHandlersOf = (
  list: ReadonlyArray<McpSession.NotificationHandler> = noHandlers
): ReadonlyArray<McpSession.NotificationHandler> => {
  let wrapped = notificationLists.get(list)
  if (wrapped === undefined) notificationLists.set(list, wrapped = [initialized, ...list.map(wrapNotification)])
  return wrapped
}
