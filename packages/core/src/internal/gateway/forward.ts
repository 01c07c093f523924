/**
 * How a gateway forwards one request to the server behind: on the group's
 * connection, or on a session of its own (`pool.ts`) when what the server
 * sends about the call could not be told apart otherwise; on behalf of the
 * client in front (a 2026-07-28 request declares that client's capabilities
 * and log level, and its input-required rounds are answered by that
 * client); with progress, logs and questions relayed in the order they came,
 * in the front request's own fiber (so a Streamable HTTP front sends them on
 * that request's stream); and failures named after the server.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type * as McpGroup from "../../McpGroup.ts"
import type * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpSession from "../../McpSession.ts"
import { principal } from "../auth/principal.ts"
import { CurrentOnBehalf, type OnBehalf } from "../era/statelessClient.ts"
import * as Capabilities from "./capabilities.ts"
import type * as Pool from "./pool.ts"

/** What forwarding needs. @internal */
export interface Deps {
  readonly group: McpGroup.Group
  readonly pool: Pool.Pool
  readonly callTimeout: Duration.Input
}

const INPUT_METHODS: Readonly<Record<string, McpMethod.Request>> = {
  [McpSchema.Elicit.name]: McpSchema.Elicit,
  [McpSchema.CreateMessage.name]: McpSchema.CreateMessage,
  [McpSchema.ListRoots.name]: McpSchema.ListRoots
}

// the keys of a front request's `_meta` that are about the front exchange, not the call
const isFrontMeta = (key: string) =>
  key === "progressToken" || key === "traceparent" || key === "tracestate" || key.startsWith("io.modelcontextprotocol/")

/** The front request's own `_meta` entries, passed on. @internal */
export const metaOf = (context: McpServer.RequestContext): Record<string, unknown> | undefined => {
  if (context.meta === undefined) return undefined
  let out: Record<string, unknown> | undefined
  for (const [key, value] of Object.entries(context.meta)) {
    if (!isFrontMeta(key)) (out ??= {})[key] = value
  }
  return out
}

/**
 * The error a front client gets for a failure behind: a server's own
 * JSON-RPC error as it was, anything else (unavailable, closed, timed out,
 * an invalid answer) `-32000` naming the server.
 *
 * @internal
 */
export const toFront = (server: string, error: McpError.McpError): McpError.McpError => {
  switch (error.reason._tag) {
    case "ProtocolError":
    case "InvalidParamsError":
    case "UnsupportedError":
      return error
    default:
      return McpError.protocol(
        JsonRpc.ErrorCode.ServerError,
        `MCP server "${server}" behind this gateway: ${error.message}`,
        { server, reason: error.reason._tag }
      )
  }
}

/**
 * Forwards a request of the front `context` to `server`: `send` makes it on
 * the client given, with the options given (progress, timeout, `_meta`).
 *
 * @internal
 */
export const forward = <A>(
  deps: Deps,
  server: string,
  context: McpServer.RequestContext,
  send: (client: McpClient.Client, options: McpClient.RequestOptions) => Effect.Effect<A, McpError.McpError>,
  tasks = false
): Effect.Effect<A, McpError.McpError> =>
  Effect.flatMap(deps.group.client(server), (shared) => {
    const bridged = Capabilities.bridged(context)
    const declared = sessionFor(shared.era, context, bridged)
    const meta = metaOf(context)
    // a 2026-07-28 server is told of the front client; its rounds are answered by it
    const onBehalf = (answer: OnBehalf["answer"]): OnBehalf => ({
      capabilities: Capabilities.onBehalf(context, bridged, tasks),
      logLevel: declared === undefined ? undefined : context.logLevel,
      answer
    })
    return declared === undefined
      ? onShared(shared, context, meta, onBehalf, deps, send)
      : onOwn(deps, server, declared, context, meta, onBehalf, send)
  }).pipe(Effect.mapError((error) => toFront(server, error)))

// On the group's connection: nothing comes of the call but progress and (2026-07-28)
// its rounds; the call runs in the request's own fiber, progress is sent from the
// connection's with the request's services (its stream, on Streamable HTTP)
const onShared = <A>(
  client: McpClient.Client,
  context: McpServer.RequestContext,
  meta: Record<string, unknown> | undefined,
  onBehalf: (answer: OnBehalf["answer"]) => OnBehalf,
  deps: Deps,
  send: (client: McpClient.Client, options: McpClient.RequestOptions) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  Effect.contextWith((services: Context.Context<never>) => {
    const options: McpClient.RequestOptions = {
      timeout: deps.callTimeout,
      onProgress: (progress) => Effect.updateContext(context.reportProgress(progressOf(progress)), () => services),
      ...(meta === undefined ? {} : { meta })
    }
    return send(client, options).pipe(
      Effect.provideService(
        CurrentOnBehalf,
        onBehalf((method, params, key) =>
          inputOf(method, (declared) => context.input(declared, params as never, { inputKey: key }))
        )
      )
    )
  })

// On a session of the gateway's own: what the server sends for the call is passed
// on in order, by the request's own fiber
const onOwn = <A>(
  deps: Deps,
  server: string,
  declared: Capabilities.Bridged,
  context: McpServer.RequestContext,
  meta: Record<string, unknown> | undefined,
  onBehalf: (answer: OnBehalf["answer"]) => OnBehalf,
  send: (client: McpClient.Client, options: McpClient.RequestOptions) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<Pool.Event>()
    const owner: Pool.Owner = { offer: (event) => Queue.offerUnsafe(events, event) }
    // a legacy front session (or a principal) keeps coming back to the same session behind
    const whom = clientOf(context)
    const lease = yield* deps.pool.acquire(server, declared, whom)
    // the front session ended while the call waited (the gateway shutting down): nothing is started behind
    if (!(yield* context.session.isOpen)) {
      return yield* McpError.closed("the session ended before the call could be made")
    }
    const client = lease.client!
    lease.owner = owner
    // a server given another client's roots is told they changed, and given a moment
    // to ask this one's before the call
    lease.affinity = whom
    let rootsAsked: Effect.Effect<void> = Effect.void
    if (lease.rootsOf !== undefined && lease.rootsOf !== whom) {
      lease.rootsOf = undefined
      const asked = lease.rootsAsked = Deferred.makeUnsafe<void>()
      yield* Effect.ignore(client.session.notify(McpSchema.RootsListChanged, {}))
      rootsAsked = Effect.raceFirst(Deferred.await(asked), Effect.sleep(ROOTS_GRACE))
    }
    // a server that does not log is not told how much to (it would refuse)
    if (
      client.era === "legacy" && client.serverCapabilities.logging !== undefined &&
      lease.logLevel !== (context.logLevel ?? "emergency")
    ) {
      // nothing asked for: only what cannot wait
      const level = context.logLevel ?? "emergency"
      yield* client.setLoggingLevel(level)
      lease.logLevel = level
    }
    const options: McpClient.RequestOptions = {
      timeout: deps.callTimeout,
      onProgress: (progress) => Effect.sync(() => owner.offer({ _tag: "Progress", progress })),
      ...(meta === undefined ? {} : { meta })
    }
    const call = yield* Effect.andThen(rootsAsked, send(client, options)).pipe(
      Effect.provideService(CurrentOnBehalf, onBehalf((method, params, key) => ask(owner, method, params, key))),
      Effect.exit,
      Effect.flatMap((exit) => Effect.sync(() => owner.offer({ _tag: "Done", exit }))),
      Effect.forkChild({ startImmediately: true })
    )
    return yield* relay(events, context, call) as Effect.Effect<A, McpError.McpError>
  }).pipe(Effect.scoped)

// how long a server told the roots changed may take to ask for them before a call is sent
const ROOTS_GRACE = Duration.millis(200)

// who the client is, as far as the gateway knows: its legacy session, else its
// principal; an unknown one is nobody seen before
const clientOf = (context: McpServer.RequestContext): unknown =>
  context.era === "legacy" ? context.session : principal(context.auth) ?? Symbol()

const progressOf = ({ message, progress, total }: McpSession.Progress) => ({
  progress,
  ...(total === undefined ? {} : { total }),
  ...(message === undefined ? {} : { message })
})

/**
 * Where a call goes: `undefined`, the group's connection (which declares
 * every question and refuses each with `-32021`: see
 * `McpGateway.clientOptions`); else a session of the gateway's own declaring
 * these capabilities, for this call alone:
 *
 * - behind a legacy server, whose questions and logs say nothing of the call
 *   they belong to, and which learns a client's extensions only from its
 *   session: a call whose client can be asked something, asked for logs or
 *   takes an extension (MCP Apps); for a 2026-07-28 client, on a session that declares every question
 *   (the server asks, the client answers, or for a question it cannot take
 *   gets `-32021` as a modern server must answer); for a legacy client, on
 *   a session declaring just what it can be asked (the server sees its
 *   client as it is);
 * - behind a modern server, whose questions are part of its answer: only a
 *   call that asked for logs.
 *
 * @internal
 */
export const sessionFor = (
  era: "modern" | "legacy",
  context: McpServer.RequestContext,
  bridged: Capabilities.Bridged
): Capabilities.Bridged | undefined => {
  const wantsLogs = context.logLevel !== undefined
  if (era === "modern") return wantsLogs ? {} : undefined
  if (!wantsLogs && !Capabilities.asks(bridged) && bridged.extensions === undefined) return undefined
  return context.era === "modern" ? { ...Capabilities.ALL, extensions: bridged.extensions } : bridged
}

// what a server may ask a client, by method
const inputOf = <A>(
  method: string,
  f: (declared: McpMethod.Request) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> => {
  const declared = INPUT_METHODS[method]
  return declared === undefined
    ? Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `${method} cannot be asked of a client`))
    : f(declared)
}

const ask = (
  owner: Pool.Owner,
  method: string,
  params: unknown,
  key: string | undefined
): Effect.Effect<unknown, McpError.McpError> =>
  inputOf(method, (declared) =>
    Effect.suspend(() => {
      const reply = Deferred.makeUnsafe<unknown, McpError.McpError>()
      owner.offer({ _tag: "Input", method: declared, params, key, reply })
      return Deferred.await(reply)
    }))

// What the server sent, passed on in order; each question in a fiber of its
// own (a child of the front request's, with its context), so that questions
// asked together reach the client together.
const relay = (
  events: Queue.Queue<Pool.Event>,
  context: McpServer.RequestContext,
  call: Fiber.Fiber<void>
): Effect.Effect<unknown, McpError.McpError> =>
  Effect.gen(function*() {
    while (true) {
      const event = yield* Queue.take(events)
      switch (event._tag) {
        case "Progress":
          yield* context.reportProgress(progressOf(event.progress))
          continue
        case "Log":
          yield* context.log(event.params.level, event.params.data, event.params.logger)
          continue
        case "Input": {
          const { key, method, params, reply } = event
          yield* context.input(method, params as never, key === undefined ? undefined : { inputKey: key }).pipe(
            Effect.exit,
            Effect.flatMap((exit) => Deferred.done(reply, exit)),
            Effect.forkChild({ startImmediately: true })
          )
          continue
        }
        case "Done":
          return yield* (event.exit as Exit.Exit<unknown, McpError.McpError>)
      }
    }
  }).pipe(Effect.onInterrupt(() => Fiber.interrupt(call)))
