/**
 * A lock shared by the processes that use one file (the auth store's):
 * `<file>.lock`, a directory holding one owner file `<nonce>.json` (the
 * owner's pid, host, time and nonce).
 *
 * - Taking it: the owner file is written in a private directory next to it,
 *   which is then renamed to `<file>.lock`. The rename fails while another
 *   owner's (non-empty) directory is there, and replaces an empty one: so a
 *   lock is never seen half written, and one rename wins.
 * - Releasing it, or breaking an abandoned one (its process gone, on this
 *   host, or older than `staleMillis`): the owner file of that one lock
 *   (its nonce) is unlinked, then the directory is removed if empty. Both
 *   steps only ever remove the lock that was seen: another owner's file has
 *   another name, and `rmdir` fails on its non-empty directory. So two
 *   processes breaking the same abandoned lock at once cannot remove the
 *   lock one of them took meanwhile: exactly one rename takes over.
 * - A lock *file* `<file>.lock` (left by an earlier version) is broken the
 *   same way when abandoned: `unlink` cannot remove a lock directory.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Crypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** Who holds the lock: its owner file. */
const LockOwner = Schema.Struct({ pid: Schema.Number, host: Schema.String, time: Schema.Number, nonce: Schema.String })
const decodeOwner = Schema.decodeUnknownOption(Schema.fromJsonString(LockOwner))

/** The options of a lock. */
export interface Options {
  /** A lock older than this is abandoned. */
  readonly staleMillis: number
  /** How long taking the lock waits (trying again 2 to 20 ms apart). */
  readonly waitMillis: number
  /** The most attempts, whatever the clock says. */
  readonly attempts: number
}

/** Why the lock could not be taken: it stays held (`cause` undefined), or a file operation failed. */
export interface Failure {
  readonly held: boolean
  readonly cause?: unknown
}

/** `true` when process `pid` of this host is gone (`kill(pid, 0)` says ESRCH). */
const processGone = (pid: number): boolean => {
  const probed = Result.try(() => process.kill(pid, 0))
  return Result.isFailure(probed) && (probed.failure as { readonly code?: unknown }).code === "ESRCH"
}

/** A node:fs call: its error's code (`undefined` once it succeeded). */
const call = (run: (callback: (error: NodeJS.ErrnoException | null) => void) => void) =>
  Effect.callback<string | undefined>((resume) => {
    run((error) => resume(Effect.succeed(error === null ? undefined : error.code ?? "EUNKNOWN")))
  })

/** A node:fs call with a result: `undefined` when it failed. */
const value = <A>(run: (callback: (error: NodeJS.ErrnoException | null, value: A) => void) => void) =>
  Effect.callback<A | undefined>((resume) => {
    run((error, result) => resume(Effect.succeed(error === null ? result : undefined)))
  })

/** What `<file>.lock` is now. */
type Seen =
  | { readonly _tag: "Free" }
  | { readonly _tag: "Held"; readonly abandoned: boolean; readonly remove: Effect.Effect<void> }

/** @internal */
export const make = (lockPath: string, options: Options) => {
  const host = Os.hostname()
  const directory = Path.dirname(lockPath)

  const isAbandoned = (text: string, mtime: Date | undefined, now: number): boolean => {
    const owner = decodeOwner(text)
    if (Option.isSome(owner)) {
      const gone = owner.value.host === host && owner.value.pid !== process.pid && processGone(owner.value.pid)
      return gone || now - owner.value.time > options.staleMillis
    }
    // not an owner: its age tells
    return mtime !== undefined && now - mtime.getTime() > options.staleMillis
  }

  /** Removes the lock whose owner file is `name` (and its directory, if that leaves it empty). */
  const removeOwned = (name: string) =>
    Effect.andThen(
      call((cb) => NodeFs.unlink(Path.join(lockPath, name), cb)),
      call((cb) => NodeFs.rmdir(lockPath, cb))
    )

  /** The lock there now, and whether it is abandoned. */
  const inspect: Effect.Effect<Seen> = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const entries = yield* Effect.callback<{ readonly code: string | undefined; readonly names: Array<string> }>(
      (resume) => {
        NodeFs.readdir(
          lockPath,
          (error, names) =>
            resume(
              Effect.succeed({ code: error === null ? undefined : error.code, names: error === null ? names : [] })
            )
        )
      }
    )
    if (entries.code === "ENOENT") return { _tag: "Free" }
    if (entries.code === "ENOTDIR") {
      // a lock file of an earlier version
      const text = yield* value<string>((cb) => NodeFs.readFile(lockPath, "utf8", cb))
      if (text === undefined) return { _tag: "Free" }
      const stat = yield* value<NodeFs.Stats>((cb) => NodeFs.stat(lockPath, cb))
      return {
        _tag: "Held",
        abandoned: isAbandoned(text, stat?.mtime, now),
        remove: Effect.asVoid(call((cb) => NodeFs.unlink(lockPath, cb)))
      }
    }
    const name = entries.names.find((entry) => entry.endsWith(".json"))
    // empty (being released or broken): the next rename replaces it
    if (name === undefined) {
      return entries.code === undefined
        ? { _tag: "Free" }
        : { _tag: "Held", abandoned: false, remove: Effect.void }
    }
    const text = yield* value<string>((cb) => NodeFs.readFile(Path.join(lockPath, name), "utf8", cb))
    if (text === undefined) return { _tag: "Free" }
    const stat = yield* value<NodeFs.Stats>((cb) => NodeFs.stat(Path.join(lockPath, name), cb))
    return { _tag: "Held", abandoned: isAbandoned(text, stat?.mtime, now), remove: Effect.asVoid(removeOwned(name)) }
  })

  /** Takes the lock (within `waitMillis`): its owner file's name, to release it by. */
  const acquire: Effect.Effect<string, Failure> = Effect.gen(function*() {
    const nonce = Crypto.randomBytes(8).toString("hex")
    const name = `${nonce}.json`
    const own = Path.join(directory, `.${Path.basename(lockPath)}.${nonce}`)
    const removeOwn = Effect.andThen(
      call((cb) => NodeFs.unlink(Path.join(own, name), cb)),
      call((cb) => NodeFs.rmdir(own, cb))
    )
    return yield* Effect.gen(function*() {
      const made = yield* call((cb) => NodeFs.mkdir(own, { mode: 0o700 }, cb))
      if (made !== undefined) return yield* Effect.fail<Failure>({ held: false, cause: made })
      const start = yield* Clock.currentTimeMillis
      // bounded by the attempts too
      for (let attempt = 0; attempt < options.attempts; attempt++) {
        // the time it is taken at: its age is what makes it abandoned
        const owner = JSON.stringify({ pid: process.pid, host, time: yield* Clock.currentTimeMillis, nonce })
        const written = yield* call((cb) => NodeFs.writeFile(Path.join(own, name), owner, { mode: 0o600 }, cb))
        if (written !== undefined) return yield* Effect.fail<Failure>({ held: false, cause: written })
        const renamed = yield* call((cb) => NodeFs.rename(own, lockPath, cb))
        if (renamed === undefined) return name
        if (renamed !== "ENOTEMPTY" && renamed !== "EEXIST" && renamed !== "ENOTDIR" && renamed !== "EISDIR") {
          return yield* Effect.fail<Failure>({ held: false, cause: renamed })
        }
        const seen = yield* inspect
        if (seen._tag === "Free") continue
        if (seen.abandoned) {
          yield* seen.remove
          continue
        }
        if ((yield* Clock.currentTimeMillis) - start > options.waitMillis) break
        yield* Effect.sleep(Duration.millis(yield* Random.nextIntBetween(2, 20)))
      }
      return yield* Effect.fail<Failure>({ held: true })
    }).pipe(Effect.onError(() => Effect.ignore(removeOwn)))
  })

  /** Releases the lock taken as `name` (nothing if it was broken and taken by another meanwhile). */
  const release = (name: string): Effect.Effect<void> => Effect.asVoid(removeOwned(name))

  return { acquire, release }
}
