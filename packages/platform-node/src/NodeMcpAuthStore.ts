/**
 * `McpAuth.McpAuthStore` in one JSON file (mode `0600`): tokens per MCP
 * server and client registrations per authorization server, kept across
 * runs and shared by the processes that use the same file.
 *
 * ```json
 * { "version": 1,
 *   "tokens": { "https://example.com/mcp": { "accessToken": "…", "tokenType": "bearer", "refreshToken": "…", "expiresAt": 1767225600 } },
 *   "clients": { "https://auth.example.com": { "clientId": "…" } } }
 * ```
 *
 * @since 0.1.0
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as Crypto from "node:crypto"
import * as Os from "node:os"
import * as Path from "node:path"

/**
 * Options of the file store.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The JSON file. Default {@link defaultPath}. */
  readonly path?: string | undefined
}

/**
 * `$XDG_CONFIG_HOME/effect-mcp/auth.json` when `XDG_CONFIG_HOME` is set (and
 * absolute), else `~/.config/effect-mcp/auth.json`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const defaultPath = (): string => {
  const xdg = process.env.XDG_CONFIG_HOME
  const base = xdg !== undefined && Path.isAbsolute(xdg) ? xdg : Path.join(Os.homedir(), ".config")
  return Path.join(base, "effect-mcp", "auth.json")
}

const TokensSchema = Schema.Struct({
  accessToken: Schema.String,
  tokenType: Schema.String,
  refreshToken: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.Number),
  scope: Schema.optional(Schema.String),
  issuer: Schema.optional(Schema.String)
})

const ClientSchema = Schema.Struct({
  clientId: Schema.String,
  clientSecret: Schema.optional(Schema.String),
  clientSecretExpiresAt: Schema.optional(Schema.Number),
  redirectUris: Schema.optional(Schema.Array(Schema.String)),
  tokenEndpointAuthMethod: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})

const StoreFile = Schema.Struct({
  version: Schema.optional(Schema.Number),
  tokens: Schema.optional(Schema.Record(Schema.String, TokensSchema)),
  clients: Schema.optional(Schema.Record(Schema.String, ClientSchema))
})

const decodeFile = Schema.decodeUnknownEffect(Schema.fromJsonString(StoreFile))

interface Contents {
  readonly tokens: Record<string, McpAuth.Tokens>
  readonly clients: Record<string, McpAuth.ClientInformation>
}

// -----------------------------------------------------------------------------
// The lock file
// -----------------------------------------------------------------------------

/** A lock file older than this is abandoned (a writer holds it for one read and one write). */
const LOCK_STALE_MILLIS = 10_000
/** How long an update waits for the lock (past {@link LOCK_STALE_MILLIS}), trying again 2 to 20 ms apart. */
const LOCK_WAIT_MILLIS = 15_000
/** The most attempts to take the lock, whatever the clock says. */
const LOCK_ATTEMPTS = 5_000

/** Who holds the lock: written into the lock file. */
const LockOwner = Schema.Struct({ pid: Schema.Number, host: Schema.String, time: Schema.Number, nonce: Schema.String })
const decodeOwner = Schema.decodeUnknownOption(Schema.fromJsonString(LockOwner))

/** `true` when process `pid` of this host is gone (`kill(pid, 0)` says ESRCH). */
const processGone = (pid: number): boolean => {
  const probed = Result.try(() => process.kill(pid, 0))
  return Result.isFailure(probed) && (probed.failure as { readonly code?: unknown }).code === "ESRCH"
}

/** Drops `undefined` fields, so that the file only holds what is set. */
const defined = <A extends object>(value: A): A =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as A

/**
 * A store backed by one JSON file, by default {@link defaultPath}.
 *
 * - The file is created with mode `0600` and its directory with `0700`;
 *   every write replaces it atomically (a temporary file in the same
 *   directory, then a rename), so a reader never sees half a file.
 * - Every read reads the file again: a token stored by another process is
 *   seen at once. Every update (set or clear) reads the file and writes it
 *   back holding a lock, across processes: the file `<path>.lock`, created
 *   exclusively, holding the owner's pid, host and time; so two processes
 *   that update the file at once both see their update land (a rotated
 *   refresh token is not lost). A lock whose process is gone (same host) or
 *   older than 10 s is abandoned and taken over; one held longer than about
 *   15 s fails the update with a `Storage` error.
 * - A file that cannot be read or decoded fails the operation with an
 *   `AuthError` of kind `"Storage"` naming the file; it is not overwritten.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (options?: Options) => Effect.Effect<McpAuth.McpAuthStore["Service"]> = Effect.fn(
  "NodeMcpAuthStore.make"
)(
  function*(options?: Options) {
    const fs = yield* FileSystem.FileSystem
    const path = Path.resolve(options?.path ?? defaultPath())
    const directory = Path.dirname(path)
    const lock = yield* Semaphore.make(1)

    const storageError = (what: string, cause: unknown) =>
      McpError.auth("Storage", `the auth store ${path} ${what}: ${McpError.messageOf(cause)}`, { cause })

    const read: Effect.Effect<Contents, McpError.McpError> = Effect.gen(function*() {
      const text = yield* fs.readFileString(path).pipe(
        Effect.map((text): string | undefined => text),
        Effect.catch((error) =>
          error.reason._tag === "NotFound"
            ? Effect.succeed(undefined)
            : Effect.fail(storageError("cannot be read", error))
        )
      )
      if (text === undefined || text.trim() === "") return { tokens: {}, clients: {} }
      const decoded = yield* decodeFile(text).pipe(
        Effect.mapError((error) => storageError("is corrupt (fix or delete it)", error))
      )
      return { tokens: { ...decoded.tokens }, clients: { ...decoded.clients } }
    })

    const write = (contents: Contents): Effect.Effect<void, McpError.McpError> =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(directory, { recursive: true, mode: 0o700 })
        const temp = Path.join(directory, `.${Path.basename(path)}.${process.pid}.${Crypto.randomBytes(6).toString("hex")}.tmp`)
        const text = `${JSON.stringify({ version: 1, ...contents }, null, 2)}\n`
        yield* fs.writeFileString(temp, text, { flag: "wx", mode: 0o600 }).pipe(
          Effect.andThen(fs.chmod(temp, 0o600)),
          Effect.andThen(fs.rename(temp, path)),
          Effect.onError(() => Effect.ignore(fs.remove(temp)))
        )
      }).pipe(Effect.mapError((error) => storageError("cannot be written", error)))

    const lockPath = `${path}.lock`
    const host = Os.hostname()

    /** Creates the lock file holding `owner`: `false` when it exists already. */
    const tryLock = (owner: string) =>
      fs.writeFileString(lockPath, owner, { flag: "wx", mode: 0o600 }).pipe(
        Effect.as(true),
        Effect.catch((error) =>
          error.reason._tag === "AlreadyExists" ? Effect.succeed(false) : Effect.fail(storageError("cannot be locked", error))
        )
      )

    /**
     * The lock file there now, when it is abandoned (its process gone, on
     * this host, or older than {@link LOCK_STALE_MILLIS}): its text, to
     * remove it if it is still that one; `undefined` while it is held (or
     * gone already).
     */
    const abandoned = Effect.gen(function*() {
      const text = yield* Effect.option(fs.readFileString(lockPath))
      if (Option.isNone(text)) return undefined
      const now = yield* Clock.currentTimeMillis
      const owner = decodeOwner(text.value)
      if (Option.isSome(owner)) {
        const gone = owner.value.host === host && owner.value.pid !== process.pid && processGone(owner.value.pid)
        return gone || now - owner.value.time > LOCK_STALE_MILLIS ? text.value : undefined
      }
      // being written, or left half written: its age tells
      const info = yield* Effect.option(fs.stat(lockPath))
      const mtime = Option.isSome(info) ? Option.getOrUndefined(info.value.mtime) : undefined
      return mtime !== undefined && now - mtime.getTime() > LOCK_STALE_MILLIS ? text.value : undefined
    })

    /** Removes the lock file if it still holds `text` (ours, or the abandoned one seen). */
    const removeLock = (text: string) =>
      Effect.ignore(Effect.gen(function*() {
        const now = yield* fs.readFileString(lockPath)
        if (now === text) yield* fs.remove(lockPath)
      }))

    /** Takes the lock (within {@link LOCK_WAIT_MILLIS}): the text written into the lock file. */
    const acquireLock = Effect.gen(function*() {
      const nonce = Crypto.randomBytes(8).toString("hex")
      const start = yield* Clock.currentTimeMillis
      // bounded by the attempts too
      for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
        // the time it is taken at: its age is what makes it abandoned
        const owner = JSON.stringify({ pid: process.pid, host, time: yield* Clock.currentTimeMillis, nonce })
        if (yield* tryLock(owner)) return owner
        const stale = yield* abandoned
        if (stale !== undefined) {
          yield* removeLock(stale)
          continue
        }
        if ((yield* Clock.currentTimeMillis) - start > LOCK_WAIT_MILLIS) break
        yield* Effect.sleep(Duration.millis(yield* Random.nextIntBetween(2, 20)))
      }
      return yield* McpError.auth(
        "Storage",
        `the auth store ${path} stays locked by another process (${lockPath}); remove that file if no process uses the store`
      )
    })

    /**
     * `f` applied to the file as it is now, written back: one update at a
     * time in this store, and across stores and processes by the lock file.
     */
    const update = (f: (contents: Contents) => Contents) =>
      lock.withPermit(
        Effect.andThen(
          fs.makeDirectory(directory, { recursive: true, mode: 0o700 }).pipe(
            Effect.mapError((error) => storageError("cannot be written", error))
          ),
          Effect.acquireUseRelease(
            acquireLock,
            () => Effect.flatMap(read, (contents) => write(f(contents))),
            removeLock
          )
        )
      )

    const without = <A>(record: Record<string, A>, key: string): Record<string, A> => {
      const { [key]: _, ...rest } = record
      return rest
    }

    return McpAuth.McpAuthStore.of({
      getTokens: (resource) => Effect.map(read, (contents) => contents.tokens[resource]),
      setTokens: (resource, tokens) =>
        update((contents) => ({ ...contents, tokens: { ...contents.tokens, [resource]: defined(tokens) } })),
      getClient: (issuer) => Effect.map(read, (contents) => contents.clients[issuer]),
      setClient: (issuer, client) =>
        update((contents) => ({ ...contents, clients: { ...contents.clients, [issuer]: defined(client) } })),
      clearTokens: (resource) => update((contents) => ({ ...contents, tokens: without(contents.tokens, resource) })),
      clearClient: (issuer) => update((contents) => ({ ...contents, clients: without(contents.clients, issuer) }))
    })
  },
  // the file system is loaded when a store is made, not with this module
  (effect) =>
    Effect.flatMap(
      Effect.promise(() => import("@effect/platform-node/NodeFileSystem")),
      (NodeFileSystem) => Effect.provide(effect, NodeFileSystem.layer)
    )
)

/**
 * The file store as a layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<McpAuth.McpAuthStore> =>
  Layer.effect(McpAuth.McpAuthStore, make(options))
