/**
 * Multi round-trip requests (2026-07-28): how a modern request's handler
 * asks the client for input without sending it a request. The handler runs
 * as a round; each `ask` whose answer came with the request (its
 * `inputResponses`, or the sealed `requestState` of earlier rounds) returns
 * that answer, validated as the asked method's result; each other `ask` is
 * collected, and once a round's asks are in, the round ends and the request
 * is answered with an `InputRequiredResult`. The client's retry runs the
 * handler again from the start, now with the answers: handlers are
 * replayed, so what they do before an `ask` may run once per round.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import * as McpMethod from "../../McpMethod.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as Capabilities from "./capabilities.ts"
import * as RequestState from "./requestState.ts"
import { missingCapability } from "./stateless.ts"

/** The requests that may answer with an `InputRequiredResult`. @internal */
export const SUPPORTED: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"])

/** How a handler asks its client for input. @internal */
export type Ask = (
  method: McpMethod.Request,
  params: unknown,
  key?: string
) => Effect.Effect<unknown, McpError.McpError>

/** What a round needs besides the request. @internal */
export interface Options {
  readonly key: RequestState.Key
  readonly ttlMillis: number
  readonly principal: string | undefined
  readonly capabilities: McpSchema.ClientCapabilities
}

// asks of one round arrive from the handler's fibers one scheduler turn
// apart at most; the round ends when a few turns pass with no new one
const QUIET_TURNS = 3
const MAX_TURNS = 64

/** The prefix of an input's key by the method asked, when the handler names none. @internal */
export const KEY_PREFIX: Readonly<Record<string, string>> = {
  "elicitation/create": "elicit",
  "sampling/createMessage": "sample",
  "roots/list": "roots"
}

/** `-32602` with `message`. @internal */
export const invalid = (message: string) =>
  McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Invalid params: ${message}`)

/** How many times each base key was asked: the second ask of one gets `-1`, and so on. @internal */
export interface Keys {
  readonly occurrences: Map<string, number>
}

/** The key of the next ask of `method` with `params`: the one `chosen`, or one derived from them. @internal */
export const nextKey = (keys: Keys, method: string, params: unknown, chosen: string | undefined): string => {
  const base = chosen ?? `${KEY_PREFIX[method] ?? "input"}-${RequestState.fnv1a(RequestState.canonical(params))}`
  const seen = keys.occurrences.get(base) ?? 0
  keys.occurrences.set(base, seen + 1)
  return seen === 0 ? base : `${base}-${seen}`
}

/** `ask` for a request that cannot answer with an `InputRequiredResult`. @internal */
export const unsupportedAsk = (request: string): Ask => (method) =>
  Effect.fail(McpError.protocol(
    JsonRpc.ErrorCode.InternalError,
    `${method.name} cannot be asked of the client during ${request} (only tools/call, prompts/get and resources/read take input)`
  ))

/**
 * Runs one round of `handle` for a modern request of `method` with `params`.
 *
 * @internal
 */
export const run = <A>(
  method: string,
  params: unknown,
  options: Options,
  handle: (ask: Ask) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A | McpSchema.InputRequiredResult, McpError.McpError> => {
  const raw = (params ?? {}) as { readonly inputResponses?: unknown; readonly requestState?: unknown }
  // the common first round (nothing answered yet): no state to open
  if (raw.requestState === undefined && raw.inputResponses === undefined) {
    return round(method, params, options, undefined, handle)
  }
  return Effect.gen(function*() {
    let answers: Record<string, unknown> = {}
    let digest: string | undefined
    if (raw.requestState !== undefined) {
      if (typeof raw.requestState !== "string") return yield* invalid("requestState must be a string")
      const now = yield* Clock.currentTimeMillis
      digest = RequestState.requestDigest(method, params)
      const opened = yield* Effect.exit(
        RequestState.open(options.key, raw.requestState, { request: digest, principal: options.principal, now })
      )
      if (Exit.isFailure(opened)) {
        const refusal = opened.cause.reasons[0]
        const why = refusal !== undefined && refusal._tag === "Fail" ? refusal.error : "malformed"
        return yield* invalid(`requestState was refused (${why}); send the request again without it`)
      }
      if (opened.value.held !== undefined) {
        return yield* invalid(
          "requestState names a held call, and this request is not held; send the request again without it"
        )
      }
      answers = { ...opened.value.answers }
    }
    if (raw.inputResponses !== undefined) {
      if (typeof raw.inputResponses !== "object" || raw.inputResponses === null || Array.isArray(raw.inputResponses)) {
        return yield* invalid("inputResponses must be an object")
      }
      // an answer is looked up by the key of the ask it answers: others are ignored
      answers = { ...answers, ...(raw.inputResponses as Record<string, unknown>) }
    }
    return yield* round(method, params, options, { answers, digest }, handle)
  })
}

/** An input request of an input-required result. @internal */
export interface InputRequest {
  readonly method: string
  readonly params?: Record<string, unknown>
}

// What one round gathers, made at its first ask: most rounds ask nothing.
interface Gathered extends Keys {
  readonly pending: Map<string, InputRequest>
  /** The answers this round used: what the next round's state carries. */
  readonly used: Record<string, unknown>
}

const round = <A>(
  method: string,
  params: unknown,
  options: Options,
  given: { readonly answers: Record<string, unknown>; digest: string | undefined } | undefined,
  handle: (ask: Ask) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A | McpSchema.InputRequiredResult, McpError.McpError> => {
  const answers: Record<string, unknown> = given?.answers ?? {}
  let gathered: Gathered | undefined

  // An ask without its answer is collected; after a few scheduler turns (for
  // the asks of sibling fibers to come in too) it ends the round by failing
  // with an interruption, which the handler's own error handling lets pass
  // and the `catchCause` below sees: no fiber is forked for a round.
  const ask: Ask = (inputMethod, inputParams, chosen) =>
    Effect.suspend(() => {
      const state: Gathered = gathered ??= {
        pending: new Map(),
        occurrences: new Map(),
        used: {} as Record<string, unknown>
      }
      const key = nextKey(state, inputMethod.name, inputParams, chosen)
      if (key in answers) {
        state.used[key] = answers[key]
        const result = inputMethod.validateResult(answers[key])
        return Exit.isSuccess(result)
          ? Effect.succeed(result.value)
          : Effect.fail(invalid(`inputResponses["${key}"] is not a ${inputMethod.name} result: ${describe(result)}`))
      }
      const capability = inputMethod.capability(inputParams)
      if (capability !== undefined && !Capabilities.declares(options.capabilities, capability)) {
        return Effect.fail(missingCapability(capability, inputMethod.name))
      }
      state.pending.set(key, {
        method: inputMethod.name,
        ...(inputParams === undefined ? {} : { params: inputParams as Record<string, unknown> })
      })
      return Effect.andThen(quiet(() => state.pending.size), Effect.interrupt)
    })

  return Effect.catchCause(handle(ask), (cause) => {
    const state = gathered
    if (state === undefined || state.pending.size === 0 || !Cause.hasInterruptsOnly(cause)) {
      return Effect.failCause(cause)
    }
    const inputRequests: Record<string, InputRequest> = {}
    for (const [key, value] of state.pending) inputRequests[key] = value
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      RequestState.seal(options.key, {
        // the digest only when a state is opened or sealed
        request: given?.digest ?? RequestState.requestDigest(method, params),
        principal: options.principal,
        expires: now + options.ttlMillis,
        answers: state.used
      }).pipe(
        Effect.mapError(() =>
          McpError.protocol(
            JsonRpc.ErrorCode.InternalError,
            `the request's state would exceed ${options.key.maxBytes} bytes: too much input was gathered`
          )
        ),
        Effect.map((requestState) => ({ resultType: "input_required" as const, inputRequests, requestState }))
      ))
  })
}

/** Waits until `size()` has not grown for a few scheduler turns. @internal */
export const quiet = (size: () => number): Effect.Effect<void> =>
  Effect.suspend(() => {
    let last = size()
    let still = 0
    let turns = 0
    const loop: Effect.Effect<void> = Effect.suspend(() => {
      turns++
      const now = size()
      if (now === last) still++
      else {
        last = now
        still = 0
      }
      return still >= QUIET_TURNS || turns >= MAX_TURNS ? Effect.void : Effect.andThen(Effect.yieldNow, loop)
    })
    return Effect.andThen(Effect.yieldNow, loop)
  })

/** What an invalid result's check said. @internal */
export const describe = (exit: Exit.Exit<unknown, string>): string =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail"
    ? (exit.cause.reasons[0] as { error: string }).error
    : "invalid"
