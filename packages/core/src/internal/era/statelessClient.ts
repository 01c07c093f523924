/**
 * The client's side of the stateless era (2026-07-28): the probe that tells
 * a modern server from a legacy one, the `_meta` envelope every modern
 * request carries, and the loop that answers input-required results with the
 * client's own handlers (sampling, elicitation, roots) and retries, until
 * the server answers for good or the round limit is reached.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpSession from "../../McpSession.ts"
import * as TraceContext from "./traceContext.ts"

const { MetaKey } = McpSchema

/** What every modern request says of its client. @internal */
export interface Envelope {
  version: string
  readonly clientInfo: McpSchema.Implementation
  readonly capabilities: McpSchema.ClientCapabilities
  logLevel: McpSchema.LoggingLevel | undefined
}

/**
 * A request made on behalf of another client (a gateway's, for the client
 * in front of it): the capabilities and log level its `_meta` declares in
 * place of this client's own, and who answers its input requests (the
 * rounds of an input-required result, a task's questions) in place of this
 * client's handlers.
 *
 * @internal
 */
export interface OnBehalf {
  readonly capabilities: McpSchema.ClientCapabilities
  readonly logLevel: McpSchema.LoggingLevel | undefined
  readonly answer: (method: string, params: unknown, key: string) => Effect.Effect<unknown, McpError.McpError>
}

/** The client a modern request is made for, if not this one (see {@link OnBehalf}). @internal */
export const CurrentOnBehalf = Context.Reference<OnBehalf | undefined>(
  "@effect-mcp/core/McpClientSession/CurrentOnBehalf",
  { defaultValue: () => undefined }
)

/** `params` with the envelope (and the current trace context) in `_meta`. @internal */
export const withEnvelope = (params: unknown, envelope: Envelope | undefined): Effect.Effect<unknown> =>
  Effect.withFiber((fiber) =>
    Effect.map(
      TraceContext.current,
      (trace) => addEnvelope(params, onBehalfOf(envelope, fiber.getRef(CurrentOnBehalf)), trace)
    )
  )

// the envelope with another client's capabilities and log level
const onBehalfOf = (envelope: Envelope | undefined, onBehalf: OnBehalf | undefined): Envelope | undefined =>
  envelope === undefined || onBehalf === undefined
    ? envelope
    : {
      version: envelope.version,
      clientInfo: envelope.clientInfo,
      capabilities: onBehalf.capabilities,
      logLevel: onBehalf.logLevel
    }

/**
 * `f` of `params` with the envelope (and the current trace context) in
 * `_meta`; without a tracer, one step less than {@link withEnvelope}.
 *
 * @internal
 */
export const withEnvelopeThen = <A, E>(
  params: unknown,
  envelope: Envelope | undefined,
  f: (wire: unknown) => Effect.Effect<A, E>
): Effect.Effect<A, E> =>
  Effect.withFiber((fiber) => {
    const sent = onBehalfOf(envelope, fiber.getRef(CurrentOnBehalf))
    return fiber.getRef(Tracer.Tracer) === TraceContext.untraced
      ? f(addEnvelope(params, sent, undefined))
      : Effect.flatMap(TraceContext.current, (trace) => f(addEnvelope(params, sent, trace)))
  })

// the envelope's `_meta` keys, built again only when its version or log level changes
const envelopeMeta = new WeakMap<Envelope, { version: string; logLevel: unknown; meta: Record<string, unknown> }>()
const metaOfEnvelope = (envelope: Envelope): Record<string, unknown> => {
  const cached = envelopeMeta.get(envelope)
  if (cached !== undefined && cached.version === envelope.version && cached.logLevel === envelope.logLevel) {
    return cached.meta
  }
  const meta = {
    [MetaKey.protocolVersion]: envelope.version,
    [MetaKey.clientInfo]: envelope.clientInfo,
    [MetaKey.clientCapabilities]: envelope.capabilities,
    ...(envelope.logLevel === undefined ? {} : { [MetaKey.logLevel]: envelope.logLevel })
  }
  envelopeMeta.set(envelope, { version: envelope.version, logLevel: envelope.logLevel, meta })
  return meta
}

const addEnvelope = (
  params: unknown,
  envelope: Envelope | undefined,
  trace: Readonly<Record<string, string>> | undefined
): unknown => {
  if (envelope === undefined && trace === undefined) return params
  const object = (params ?? {}) as { readonly _meta?: Record<string, unknown> }
  return {
    ...object,
    _meta: {
      ...object._meta,
      ...trace,
      ...(envelope === undefined ? undefined : metaOfEnvelope(envelope))
    }
  }
}

// the same method, its result taken as it comes (an input-required result is not the method's)
const rawMethods = new WeakMap<McpMethod.Request, McpMethod.Request>()
const raw = (method: McpMethod.Request): McpMethod.Request => {
  let found = rawMethods.get(method)
  if (found === undefined) {
    found = McpMethod.withResult(method, Schema.Unknown)
    rawMethods.set(method, found)
  }
  return found
}

const codeOf = (error: McpError.McpError): number | undefined =>
  error.reason._tag === "ProtocolError" ? error.reason.code : undefined

/** The versions a `-32022` says the server serves. @internal */
export const supportedOf = (error: McpError.McpError): ReadonlyArray<string> => {
  if (error.reason._tag !== "ProtocolError" || error.reason.code !== JsonRpc.ErrorCode.UnsupportedProtocolVersion) {
    return []
  }
  const supported = (error.reason.data as { readonly supported?: unknown } | undefined)?.supported
  return Array.isArray(supported) ? supported.filter((version): version is string => typeof version === "string") : []
}

/**
 * The version to retry a `-32022` with: one the server says it serves and
 * this client speaks, the one just sent first (a server may refuse a version
 * it serves once, to see the client retry).
 *
 * @internal
 */
export const retryVersionOf = (
  error: McpError.McpError,
  sent: string,
  versions: ReadonlyArray<string>
): string | undefined => {
  const supported = supportedOf(error)
  return supported.includes(sent) && versions.includes(sent)
    ? sent
    : versions.find((version) => supported.includes(version))
}

/** The verdict of a probe: the server is modern (with its discover answer), or not. @internal */
export type Verdict =
  | { readonly _tag: "Modern"; readonly version: string; readonly discovered: McpSchema.DiscoverResult }
  | { readonly _tag: "Legacy"; readonly reason: string }

// what a legacy server may answer a probe with: a JSON-RPC error, an HTTP
// refusal, silence; a connection that fails or closes, or an authorization
// that fails, says nothing about the era
const isEraAnswer = (error: McpError.McpError): boolean => {
  switch (error.reason._tag) {
    case "ProtocolError":
    case "InvalidResultError":
    case "TimeoutError":
    case "UnsupportedError":
      return true
    case "TransportError":
      return error.reason.status !== undefined
    default:
      return false
  }
}

/**
 * Probes with `server/discover`. A success (or a `-32022` naming a modern
 * version this client speaks, retried once with it, even the one just sent)
 * says modern; a JSON-RPC error, an HTTP refusal or a timeout says legacy. A
 * connection that fails or an authorization that fails fails the probe.
 *
 * @internal
 */
export const probe = (
  session: McpSession.Session,
  envelope: Envelope,
  versions: ReadonlyArray<string>,
  requestOptions: McpSession.RequestOptions | undefined
): Effect.Effect<Verdict, McpError.McpError> => {
  const attempt = (retried: boolean): Effect.Effect<Verdict, McpError.McpError> =>
    Effect.flatMap(
      withEnvelope({}, envelope),
      (params) =>
        Effect.matchEffect(session.request(McpSchema.Discover, params as McpSchema.RequestParams, requestOptions), {
          onSuccess: (discovered) => Effect.succeed<Verdict>({ _tag: "Modern", version: envelope.version, discovered }),
          onFailure: (error) => {
            if (!isEraAnswer(error)) return Effect.fail(error)
            const version = retried ? undefined : retryVersionOf(error, envelope.version, versions)
            if (version !== undefined) {
              envelope.version = version
              return attempt(true)
            }
            return Effect.succeed<Verdict>({ _tag: "Legacy", reason: error.message })
          }
        })
    )
  return attempt(false)
}

/** What the loop of input-required rounds needs. @internal */
export interface Rounds {
  readonly session: McpSession.Session
  readonly envelope: Envelope
  readonly versions: ReadonlyArray<string>
  /** The client's handlers of sampling, elicitation and roots, by method name. */
  readonly handlers: ReadonlyMap<string, McpSession.Handler>
  readonly maxRounds: number
}

const isInputRequired = (value: unknown): value is McpSchema.InputRequiredResult =>
  typeof value === "object" && value !== null &&
  (value as { readonly resultType?: unknown }).resultType === "input_required"

const invalidResult = (method: string, exit: Exit.Exit<unknown, string>) =>
  McpError.invalidResult(
    method,
    Exit.isFailure(exit) ? Option.getOrElse(Cause.findErrorOption(exit.cause), () => "invalid") : "invalid"
  )

/**
 * Answers one input request with the client's handler for its method, or
 * by the client the request is made for (see {@link OnBehalf}).
 *
 * @internal
 */
export const answer = (
  rounds: Pick<Rounds, "session" | "handlers">,
  key: string,
  request: { readonly method: string; readonly params?: unknown }
): Effect.Effect<readonly [string, unknown], McpError.McpError> =>
  Effect.withFiber((fiber) => {
    const onBehalf = fiber.getRef(CurrentOnBehalf)
    return onBehalf === undefined
      ? answerHere(rounds, key, request)
      : Effect.map(onBehalf.answer(request.method, request.params ?? {}, key), (result) => [key, result] as const)
  })

const answerHere = (
  rounds: Pick<Rounds, "session" | "handlers">,
  key: string,
  request: { readonly method: string; readonly params?: unknown }
): Effect.Effect<readonly [string, unknown], McpError.McpError> => {
  const handler = rounds.handlers.get(request.method)
  if (handler === undefined) {
    return Effect.fail(
      McpError.unsupported(request.method, `a handler of ${request.method} (asked for by the server as input "${key}")`)
    )
  }
  const params = handler.method.validateParams(request.params ?? {})
  if (Exit.isFailure(params)) {
    return Effect.fail(
      McpError.invalidParams(request.method, Option.getOrElse(Cause.findErrorOption(params.cause), () => "invalid"))
    )
  }
  const context: McpSession.RequestContext = {
    requestId: key,
    method: request.method,
    meta: (request.params as { readonly _meta?: Record<string, unknown> } | undefined)?._meta,
    progressToken: undefined,
    reportProgress: () => Effect.void,
    session: rounds.session
  }
  return Effect.map(handler.handle(params.value, context), (result) => [key, result] as const)
}

/**
 * Sends a modern request and answers its input-required results: each round
 * runs the client's handlers for the input requests (concurrently) and
 * retries with a new request id, the original params, `inputResponses` and
 * the echoed `requestState`. A `-32022` naming a version this client speaks
 * (even the one just sent) is retried once with it.
 *
 * @internal
 */
export const request = <M extends McpMethod.Request>(
  rounds: Rounds,
  method: M,
  params: McpMethod.Params<M>,
  requestOptions: McpSession.RequestOptions | undefined
): Effect.Effect<McpMethod.Result<M>, McpError.McpError> => {
  const send = (
    extra: Record<string, unknown>,
    round: number,
    versionRetried: boolean
  ): Effect.Effect<McpMethod.Result<M>, McpError.McpError> =>
    withEnvelopeThen(
      round === 0 ? params : { ...(params as object), ...extra },
      rounds.envelope,
      (wire) =>
        Effect.flatMap(
          Effect.catchIf(
            rounds.session.request(raw(method), wire, requestOptions),
            (error) => !versionRetried && codeOf(error) === JsonRpc.ErrorCode.UnsupportedProtocolVersion,
            (error) => {
              const version = retryVersionOf(error, rounds.envelope.version, rounds.versions)
              if (version === undefined) return Effect.fail(error)
              rounds.envelope.version = version
              return rounds.session.request(raw(method), {
                ...(wire as object),
                _meta: { ...(wire as { _meta: object })._meta, [MetaKey.protocolVersion]: version }
              }, requestOptions)
            }
          ),
          (result): Effect.Effect<McpMethod.Result<M>, McpError.McpError> => {
            if (!isInputRequired(result)) {
              const valid = method.validateResult(result)
              return Exit.isSuccess(valid)
                ? Effect.succeed(valid.value as McpMethod.Result<M>)
                : Effect.fail(invalidResult(method.name, valid))
            }
            if (round >= rounds.maxRounds) {
              return Effect.fail(McpError.protocol(
                JsonRpc.ErrorCode.InternalError,
                `${method.name}: the server still wanted input after ${rounds.maxRounds} rounds (maxInputRounds)`
              ))
            }
            return Effect.flatMap(
              Effect.forEach(Object.entries(result.inputRequests ?? {}), ([key, input]) => answer(rounds, key, input), {
                concurrency: "unbounded"
              }),
              (answers) =>
                send(
                  {
                    inputResponses: Object.fromEntries(answers),
                    ...(result.requestState === undefined ? {} : { requestState: result.requestState })
                  },
                  round + 1,
                  true
                )
            )
          }
        )
    )
  return send({}, 0, false)
}
