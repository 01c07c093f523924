/**
 * The watchers of a Redis task store's `changes`: one pub/sub subscription
 * per store (not one connection per watcher) on `${prefix}tasks:changes`;
 * a message about a watched task makes it read once and handed to each of
 * its watchers that has not seen that version. A re-read of every watched
 * task after each (re)subscription and every `resyncMillis` covers the
 * messages a reconnection lost.
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpTaskStore from "@effect-mcp/core/McpTaskStore"
import type * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import type * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Subscription from "./subscription.ts"

/** A task as stored: the record, its creation number and version. @internal */
export interface Stored {
  readonly seq: number
  readonly version: number
  readonly record: McpTaskStore.TaskRecord
}

interface Watcher {
  readonly requestor: string
  /** The incarnation watched, once seen. */
  seq: number | undefined
  /** The newest version handed over. */
  version: number
  readonly queue: Queue.Queue<McpTaskStore.TaskRecord, McpError.McpError | Cause.Done>
}

/** @internal */
export interface Watch {
  /** Hands `queue` the task's current version, then each later one; ends it when the task goes. */
  readonly watch: (
    key: McpTaskStore.TaskKey,
    queue: Queue.Queue<McpTaskStore.TaskRecord, McpError.McpError | Cause.Done>
  ) => Effect.Effect<void, McpError.McpError, Scope.Scope>
}

/**
 * Subscribes in a fiber of the scope; answers once the first subscription is
 * in place. `look` reads a task (undefined: gone or expired).
 *
 * @internal
 */
export const make = (
  redis: Redis.Redis["Service"],
  channel: string,
  look: (taskId: string) => Effect.Effect<Stored | undefined, McpError.McpError>,
  resyncMillis: number
): Effect.Effect<Watch, never, Scope.Scope> =>
  Effect.gen(function*() {
    const watchers = new Map<string, Set<Watcher>>()

    const forget = (taskId: string, watcher: Watcher) => {
      const set = watchers.get(taskId)
      set?.delete(watcher)
      if (set?.size === 0) watchers.delete(taskId)
    }

    const deliver = (taskId: string, watcher: Watcher, stored: Stored | undefined) => {
      if (
        stored === undefined || stored.record.requestor !== watcher.requestor ||
        (watcher.seq !== undefined && watcher.seq !== stored.seq)
      ) {
        forget(taskId, watcher)
        Queue.endUnsafe(watcher.queue)
        return
      }
      watcher.seq = stored.seq
      if (stored.version <= watcher.version) return
      watcher.version = stored.version
      Queue.offerUnsafe(watcher.queue, stored.record)
    }

    // a failed read is retried by the next message or resync
    const refresh = (taskId: string): Effect.Effect<void> => {
      if (!watchers.has(taskId)) return Effect.void
      return look(taskId).pipe(
        Effect.map((stored) => {
          const set = watchers.get(taskId)
          if (set !== undefined) { for (const watcher of [...set]) deliver(taskId, watcher, stored) }
        }),
        Effect.catch((error) => Effect.logWarning(`Redis task store: reading task ${taskId} failed`, error))
      )
    }

    const resync = Effect.suspend(() =>
      Effect.forEach([...watchers.keys()], refresh, { concurrency: 16, discard: true })
    )

    const onMessage = (message: string): Effect.Effect<void> => {
      const space = message.indexOf(" ")
      if (space < 0) return Effect.void
      const taskId = message.slice(space + 1)
      const set = watchers.get(taskId)
      if (set === undefined) return Effect.void
      const head = message.slice(0, space)
      const version = Number(head)
      // a write every watcher has seen needs no read; a removal is checked (the id may be in use again)
      if (head !== "-" && [...set].every((watcher) => watcher.seq !== undefined && watcher.version >= version)) {
        return Effect.void
      }
      return refresh(taskId)
    }

    // after each (re)subscription: whatever was published while not subscribed
    yield* Subscription.subscribe(redis, channel, onMessage, resync)
    // runs while anything is watched (a test clock moved by days wakes it only then)
    const resyncing = yield* FiberHandle.make<never, never>()
    const resyncLoop = Effect.sleep(Duration.millis(resyncMillis)).pipe(Effect.andThen(resync), Effect.forever)

    const watch: Watch["watch"] = (key, queue) =>
      Effect.gen(function*() {
        const watcher: Watcher = { requestor: key.requestor, seq: undefined, version: 0, queue }
        let set = watchers.get(key.taskId)
        if (set === undefined) watchers.set(key.taskId, set = new Set())
        set.add(watcher)
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            forget(key.taskId, watcher)
            return watchers.size === 0 ? FiberHandle.clear(resyncing) : Effect.void
          })
        )
        yield* FiberHandle.run(resyncing, resyncLoop, { onlyIfMissing: true })
        // registered first: a write after this read is announced to it
        deliver(key.taskId, watcher, yield* look(key.taskId))
      })

    return { watch }
  })
