/**
 * Held calls (2026-07-28): a request whose handler must not run twice (it
 * asks the client after a side effect; a gateway's call to a server that
 * asks with real requests) is not replayed round by round. Its handler runs
 * once, in a fiber of the server's; each round of asks answers the request
 * with an input-required result whose sealed `requestState` names the held
 * call, and the client's retry hands the answers to the waiting handler,
 * then waits for what comes next (another round, or the result).
 *
 * - A held call waits for its retry at most `ttl` (on `Clock`); then its
 *   handler is interrupted (what it was doing is cancelled) and a late retry
 *   is refused with `-32602`. A server holds at most `max` calls.
 * - Progress and logs of a held handler go to the request attached to it at
 *   the time (in that request's own stream and at its log level), and are
 *   dropped between rounds.
 * - Cancelling the attached request interrupts the handler.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as Capabilities from "./capabilities.ts"
import { type Ask, describe, type InputRequest, invalid, type Keys, nextKey, quiet } from "./inputRequired.ts"
import * as RequestState from "./requestState.ts"
import { missingCapability } from "./stateless.ts"

/** How many calls a server holds, and how long each waits for its client's retry. @internal */
export interface Settings {
  readonly max: number
  readonly ttlMillis: number
  /** This replica's id among a cluster's, named by the sealed states as the holder of their calls. */
  readonly replica?: string | undefined
}

/** The default {@link Settings}: 10,000 calls, 10 minutes. @internal */
export const DEFAULTS: Settings = { max: 10_000, ttlMillis: 10 * 60 * 1000 }

/** What a held handler sends its client while a request is attached. @internal */
export interface Outbox {
  readonly reportProgress: (progress: {
    readonly progress: number
    readonly total?: number
    readonly message?: string
  }) => Effect.Effect<void, McpError.McpError>
  readonly log: (params: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>
}

type Event =
  | { readonly _tag: "Send"; readonly send: (outbox: Outbox) => Effect.Effect<void, McpError.McpError> }
  | { readonly _tag: "Round" }
  | { readonly _tag: "Done"; readonly exit: Exit.Exit<unknown, McpError.McpError> }

interface Held {
  readonly id: string
  /** The request it belongs to (method and digest), and to whom. */
  readonly request: string
  readonly principal: string | undefined
  /** Every answer given so far, by input key. */
  readonly answers: Record<string, unknown>
  /** The asks waiting for an answer. */
  readonly pending: Map<string, InputRequest>
  readonly keys: Keys
  /** The events of the request attached now (none between rounds). */
  events: Queue.Queue<Event> | undefined
  /** Whether the attached request was told of the current round. */
  told: boolean
  /** Completed when a retry brings answers (replaced by each). */
  resumed: Deferred.Deferred<void>
  /** How the handler ended, when it ended between rounds. */
  done: Exit.Exit<unknown, McpError.McpError> | undefined
  fiber: Fiber.Fiber<void> | undefined
  /** Ends the call when no retry comes in time (between rounds). */
  expiry: Fiber.Fiber<void> | undefined
}

/** A server's held calls (what `McpServerSession.HeldCalls` is). @internal */
export interface HeldCalls {
  readonly settings: Settings
  readonly calls: Map<string, Held>
  readonly scope: Scope.Scope
  readonly size: Effect.Effect<number>
}

/** Whether a client can be asked anything: holding matters to no other (its asks fail at once). @internal */
export const canBeAsked = (capabilities: McpSchema.ClientCapabilities): boolean =>
  capabilities.sampling !== undefined || capabilities.elicitation !== undefined || capabilities.roots !== undefined

/**
 * The held calls of a server: their fibers in a scope of their own, closed
 * with the scope in context if there is one.
 *
 * @internal
 */
export const make = (settings: Partial<Settings> = {}): Effect.Effect<HeldCalls> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const outer = yield* Effect.serviceOption(Scope.Scope)
    if (Option.isSome(outer)) yield* Scope.addFinalizer(outer.value, Scope.close(scope, Exit.void))
    const calls = new Map<string, Held>()
    return { settings: { ...DEFAULTS, ...settings }, calls, scope, size: Effect.sync(() => calls.size) }
  })

/** Settings from the options of a server. @internal */
export const settingsOf = (
  options: {
    readonly max?: number | undefined
    readonly ttl?: Duration.Input | undefined
    readonly replica?: string | undefined
  } | undefined
): Partial<Settings> => ({
  ...(options?.max === undefined ? {} : { max: options.max }),
  ...(options?.replica === undefined ? {} : { replica: options.replica }),
  ...(options?.ttl === undefined ? {} : { ttlMillis: Duration.toMillis(Duration.fromInputUnsafe(options.ttl)) })
})

/** What a held request needs besides its handler. @internal */
export interface Options {
  readonly key: RequestState.Key
  readonly principal: string | undefined
  readonly capabilities: McpSchema.ClientCapabilities
  /** Whether running the request again is safe (told to a retry that finds its holder gone). */
  readonly idempotent: boolean
  /** Sends progress and logs in the request being served. */
  readonly outbox: Outbox
}

/** What the held handler is given to reach its client. @internal */
export interface Channel {
  readonly ask: Ask
  /** Progress and logs, delivered to the request attached at the time. */
  readonly send: (send: (outbox: Outbox) => Effect.Effect<void, McpError.McpError>) => Effect.Effect<void>
}

const gone = (why: string) =>
  invalid(`requestState names a held call that ${why}; send the request again without requestState`)

/**
 * Serves a request of `method` whose handler is held: a first request starts
 * the handler, a retry (its `requestState` naming the held call) resumes it.
 *
 * @internal
 */
export const run = <A>(
  calls: HeldCalls,
  method: string,
  params: unknown,
  options: Options,
  handle: (channel: Channel) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A | McpSchema.InputRequiredResult, McpError.McpError> =>
  Effect.gen(function*() {
    const raw = (params ?? {}) as { readonly inputResponses?: unknown; readonly requestState?: unknown }
    const request = RequestState.requestDigest(method, params)
    let answers: Record<string, unknown> = {}
    if (raw.inputResponses !== undefined) {
      if (typeof raw.inputResponses !== "object" || raw.inputResponses === null || Array.isArray(raw.inputResponses)) {
        return yield* invalid("inputResponses must be an object")
      }
      answers = raw.inputResponses as Record<string, unknown>
    }
    if (raw.requestState === undefined) return yield* start(calls, request, options, handle)
    if (typeof raw.requestState !== "string") return yield* invalid("requestState must be a string")
    const now = yield* Clock.currentTimeMillis
    const opened = yield* Effect.exit(
      RequestState.open(options.key, raw.requestState, { request, principal: options.principal, now })
    )
    if (Exit.isFailure(opened)) {
      const refusal = opened.cause.reasons[0]
      const why = refusal !== undefined && refusal._tag === "Fail" ? refusal.error : "malformed"
      return yield* invalid(
        why === "expired"
          ? "requestState has expired: the held call it named was cancelled; send the request again without it"
          : `requestState was refused (${why}); send the request again without it`
      )
    }
    const id = opened.value.held
    if (id === undefined) return yield* gone("does not exist (the state is not a held call's)")
    const holder = opened.value.holder
    if (holder !== undefined && holder !== calls.settings.replica) {
      // a cluster's HTTP route sends such a retry to its holder; this one came another way
      return yield* gone(
        `is held by replica ${holder}, not this one (${calls.settings.replica ?? "outside any cluster"})`
      )
    }
    const held = calls.calls.get(id)
    if (held === undefined) return yield* gone("is no longer held (it finished, was cancelled or expired)")
    if (held.events !== undefined) return yield* gone("another request is resuming")
    return yield* attach(calls, held, options, answers) as Effect.Effect<
      A | McpSchema.InputRequiredResult,
      McpError.McpError
    >
  })

const start = <A>(
  calls: HeldCalls,
  request: string,
  options: Options,
  handle: (channel: Channel) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A | McpSchema.InputRequiredResult, McpError.McpError> =>
  Effect.suspend(() => {
    if (calls.calls.size >= calls.settings.max) {
      return Effect.fail(McpError.protocol(
        JsonRpc.ErrorCode.ServerError,
        `this server holds ${calls.settings.max} calls already (its limit): try again later`
      ))
    }
    const held: Held = {
      id: globalThis.crypto.randomUUID(),
      request,
      principal: options.principal,
      answers: {},
      pending: new Map(),
      keys: { occurrences: new Map() },
      events: undefined,
      told: false,
      resumed: Deferred.makeUnsafe(),
      done: undefined,
      fiber: undefined,
      expiry: undefined
    }
    calls.calls.set(held.id, held)
    const channel: Channel = {
      ask: askOf(held, options.capabilities),
      send: (send) => emit(held, { _tag: "Send", send })
    }
    const body = Effect.exit(Effect.suspend(() => handle(channel))).pipe(
      Effect.flatMap((exit) => emit(held, { _tag: "Done", exit }, exit))
    )
    // attached before the handler starts: what it sends at once is relayed
    return Effect.gen(function*() {
      const events = yield* Queue.unbounded<Event>()
      held.events = events
      held.fiber = yield* Effect.forkIn(body, calls.scope, { startImmediately: true })
      return yield* relay(calls, held, options, events)
    }).pipe(Effect.onInterrupt(() => release(calls, held))) as Effect.Effect<
      A | McpSchema.InputRequiredResult,
      McpError.McpError
    >
  })

// an event to the attached request; the end is kept for the next one when none is
const emit = (held: Held, event: Event, done?: Exit.Exit<unknown, McpError.McpError>): Effect.Effect<void> =>
  Effect.sync(() => {
    if (held.events !== undefined) Queue.offerUnsafe(held.events, event)
    else if (done !== undefined) held.done = done
  })

const askOf = (held: Held, capabilities: McpSchema.ClientCapabilities): Ask => (inputMethod, inputParams, chosen) =>
  Effect.suspend(() => {
    const key = nextKey(held.keys, inputMethod.name, inputParams, chosen)
    const answered = (): Effect.Effect<unknown, McpError.McpError> => {
      held.pending.delete(key)
      const result = inputMethod.validateResult(held.answers[key])
      return Exit.isSuccess(result)
        ? Effect.succeed(result.value)
        : Effect.fail(invalid(`inputResponses["${key}"] is not a ${inputMethod.name} result: ${describe(result)}`))
    }
    if (key in held.answers) return answered()
    const capability = inputMethod.capability(inputParams)
    if (capability !== undefined && !Capabilities.declares(capabilities, capability)) {
      return Effect.fail(missingCapability(capability, inputMethod.name))
    }
    held.pending.set(key, {
      method: inputMethod.name,
      ...(inputParams === undefined ? {} : { params: inputParams as Record<string, unknown> })
    })
    // the asks of sibling fibers come in during the quiet turns; the round is
    // told once; a retry that does not answer this ask tells the next round
    const wait: Effect.Effect<unknown, McpError.McpError> = Effect.gen(function*() {
      yield* quiet(() => held.pending.size)
      const resumed = held.resumed
      if (held.events !== undefined && !held.told) {
        held.told = true
        Queue.offerUnsafe(held.events, { _tag: "Round" })
      }
      yield* Deferred.await(resumed)
      return yield* (key in held.answers ? answered() : wait)
    })
    return wait
  })

/** A retry: hands the answers over to the held handler, then relays its events. */
const attach = (
  calls: HeldCalls,
  held: Held,
  options: Options,
  answers: Record<string, unknown>
): Effect.Effect<unknown, McpError.McpError> =>
  Effect.gen(function*() {
    if (held.expiry !== undefined) {
      const expiry = held.expiry
      held.expiry = undefined
      yield* Fiber.interrupt(expiry)
    }
    if (held.done !== undefined) {
      calls.calls.delete(held.id)
      return yield* held.done
    }
    const events = yield* Queue.unbounded<Event>()
    held.events = events
    held.told = false
    Object.assign(held.answers, answers)
    const resumed = held.resumed
    held.resumed = Deferred.makeUnsafe()
    Deferred.doneUnsafe(resumed, Exit.void)
    return yield* relay(calls, held, options, events)
  }).pipe(
    // a cancelled request cancels its held call
    Effect.onInterrupt(() => release(calls, held))
  )

/** Relays the held handler's events to the attached request until a round or the end. */
const relay = (
  calls: HeldCalls,
  held: Held,
  options: Options,
  events: Queue.Queue<Event>
): Effect.Effect<unknown, McpError.McpError> =>
  Effect.gen(function*() {
    while (true) {
      const event = yield* Queue.take(events)
      switch (event._tag) {
        case "Send":
          yield* Effect.ignore(event.send(options.outbox))
          continue
        case "Done":
          calls.calls.delete(held.id)
          held.events = undefined
          return yield* event.exit
        case "Round": {
          held.events = undefined
          const now = yield* Clock.currentTimeMillis
          const requestState = yield* RequestState.seal(options.key, {
            request: held.request,
            principal: held.principal,
            expires: now + calls.settings.ttlMillis,
            answers: {},
            held: held.id,
            ...(calls.settings.replica === undefined ? {} : { holder: calls.settings.replica }),
            ...(options.idempotent ? { idempotent: true } : {})
          }).pipe(Effect.orDie)
          held.expiry = yield* Effect.forkIn(expire(calls, held), calls.scope, { startImmediately: true })
          const inputRequests: Record<string, InputRequest> = {}
          for (const [key, value] of held.pending) inputRequests[key] = value
          return { resultType: "input_required" as const, inputRequests, requestState }
        }
      }
    }
  })

const expire = (calls: HeldCalls, held: Held): Effect.Effect<void> =>
  Effect.andThen(Effect.sleep(calls.settings.ttlMillis), release(calls, held))

const release = (calls: HeldCalls, held: Held): Effect.Effect<void> =>
  Effect.suspend(() => {
    calls.calls.delete(held.id)
    held.events = undefined
    return held.fiber === undefined ? Effect.void : Fiber.interrupt(held.fiber)
  })
