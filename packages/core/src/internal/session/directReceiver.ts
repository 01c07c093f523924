/**
 * The session engine's side of direct delivery (see `direct.ts`): the receiver
 * it installs on a transport with the side door, the take loop that reads what
 * the receiver declines, and the end of the requests it started.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpError from "../../McpError.ts"
import type * as Direct from "../transport/direct.ts"
import * as Pending from "./pending.ts"

/** What runs a request once checked (see the engine's `prepare`). @internal */
export interface Prepared {
  readonly fork: boolean
  readonly effect: Effect.Effect<void>
}

/** @internal */
export interface Options {
  readonly direct: Direct.Direct
  readonly pending: Pending.Pending
  /** The services the session was made with. */
  readonly services: Context.Context<never>
  /** Whether `id` belongs to a batch being answered. */
  readonly isBatched: (id: JsonRpc.RequestId) => boolean
  readonly prepare: (message: JsonRpc.Request) => Prepared
  /** Records a request's handler fiber before it runs. */
  readonly track: (id: JsonRpc.RequestId, fiber: Fiber.Fiber<void>) => void
  /** The handler fibers still running. */
  readonly running: () => ReadonlyMap<JsonRpc.RequestId, Fiber.Fiber<void>> | undefined
  /** Handles what the reader takes from the queue. */
  readonly onMessage: (value: unknown) => Effect.Effect<void>
}

/** @internal */
export interface DirectReceiver {
  /** The reader: a take loop on the queue, until it ends. */
  readonly read: Effect.Effect<void, McpError.McpError>
  /** Uninstalls the receiver and interrupts the requests still running. */
  readonly end: Effect.Effect<void>
}

/**
 * Installs the receiver; it is uninstalled, and the requests it started are
 * interrupted, when the scope closes or `end` runs.
 *
 * @internal
 */
export const make = (options: Options): Effect.Effect<DirectReceiver, never, Scope.Scope> => {
  const { direct, pending, prepare, running, track, onMessage } = options
  // whether the reader holds a message it has not finished with: then what
  // arrives must wait its turn in the queue
  let busy = false
  // the fibers of directly delivered requests run with the reader's services
  const runDirect = Effect.runForkWith(Context.add(options.services, Logger.LogToStderr, true))

  // takes a reply to a pending request, or a request to run (as a fiber of its
  // own, interrupted when the reader ends); declines the rest
  const receive: Direct.Receiver = (value) => {
    if (busy || typeof value !== "object" || value === null || Array.isArray(value)) return false
    const classified = JsonRpc.classify(value)
    if (classified._tag === "Response") {
      const id = classified.message.id
      const entry = id === null ? undefined : Pending.takeUnsafe(pending, id)
      if (entry === undefined) return false
      Deferred.doneUnsafe(entry.reply, Exit.succeed(classified.message))
      return true
    }
    if (classified._tag !== "Request" || options.isBatched(classified.message.id)) return false
    const message = classified.message
    // prepared in the fiber: what goes wrong there stays there; a handler's
    // fiber is known before it runs (what it completes may resume a fiber that
    // closes the session)
    runDirect(Effect.withFiber((fiber) => {
      const prepared = prepare(message)
      if (prepared.fork) track(message.id, fiber as Fiber.Fiber<void>)
      return prepared.effect
    }))
    return true
  }

  // the reader of a transport with direct delivery: a take loop on its queue
  const take = (value: unknown): Effect.Effect<void, McpError.McpError | Cause.Done> => {
    busy = true
    return Effect.andThen(onMessage(value), next)
  }
  const next: Effect.Effect<void, McpError.McpError | Cause.Done> = Effect.suspend(() => {
    const taken = Queue.takeUnsafe(direct.inbox)
    if (taken === undefined) {
      busy = false
      return Effect.flatMap(Queue.take(direct.inbox), take)
    }
    return Exit.isSuccess(taken) ? take(taken.value) : taken
  })

  // the fibers of directly delivered requests have no parent to end them
  const end = Effect.suspend(() => {
    direct.install(undefined)
    const fibers = running()
    return fibers === undefined || fibers.size === 0 ? Effect.void : Fiber.interruptAll(Array.from(fibers.values()))
  })

  return Effect.suspend(() => {
    direct.install(receive)
    // also when the reader is interrupted before it ever ran (it has not
    // started when the first requests are delivered directly)
    return Effect.as(Effect.addFinalizer(() => end), {
      read: Effect.catchIf(next, Cause.isDone, () => Effect.void),
      end
    })
  })
}
