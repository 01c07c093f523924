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
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type * as Crypto from "node:crypto"
import type * as Os from "node:os"
import type * as Path from "node:path"
import type * as FileLock from "./internal/fileLock.ts"

// `node:path` and `node:os` are got when a path is computed (`defaultPath` is
// synchronous), the lock and `node:crypto` when a store is made: nothing of
// them loads with this module
const nodePath = (): typeof Path => process.getBuiltinModule("node:path")
const nodeOs = (): typeof Os => process.getBuiltinModule("node:os")
const loadStoreModules = Effect.promise(() =>
  Promise.all([import("./internal/fileLock.ts"), import("node:crypto")]).then((
    [fileLock, crypto]
  ): readonly [typeof FileLock, typeof Crypto] => [fileLock, crypto])
)

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
  const Path = nodePath()
  const xdg = process.env.XDG_CONFIG_HOME
  const base = xdg !== undefined && Path.isAbsolute(xdg) ? xdg : Path.join(nodeOs().homedir(), ".config")
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
// The lock (see internal/fileLock.ts)
// -----------------------------------------------------------------------------

/** A lock file older than this is abandoned (a writer holds it for one read and one write). */
const LOCK_STALE_MILLIS = 10_000
/** How long an update waits for the lock (past {@link LOCK_STALE_MILLIS}), trying again 2 to 20 ms apart. */
const LOCK_WAIT_MILLIS = 15_000
/** The most attempts to take the lock, whatever the clock says. */
const LOCK_ATTEMPTS = 5_000

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
 *   back holding a lock, across processes: the directory `<path>.lock`,
 *   renamed into place, holding the owner's pid, host and time; so two
 *   processes that update the file at once both see their update land (a
 *   rotated refresh token is not lost). A lock whose process is gone (same
 *   host) or older than 10 s is abandoned and taken over by exactly one
 *   process; one held longer than about 15 s fails the update with a
 *   `Storage` error.
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
    const [FileLock, Crypto] = yield* loadStoreModules
    const Path = nodePath()
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
        const temp = Path.join(
          directory,
          `.${Path.basename(path)}.${process.pid}.${Crypto.randomBytes(6).toString("hex")}.tmp`
        )
        const text = `${JSON.stringify({ version: 1, ...contents }, null, 2)}\n`
        yield* fs.writeFileString(temp, text, { flag: "wx", mode: 0o600 }).pipe(
          Effect.andThen(fs.chmod(temp, 0o600)),
          Effect.andThen(fs.rename(temp, path)),
          Effect.onError(() => Effect.ignore(fs.remove(temp)))
        )
      }).pipe(Effect.mapError((error) => storageError("cannot be written", error)))

    const lockPath = `${path}.lock`
    const fileLock = FileLock.make(lockPath, {
      staleMillis: LOCK_STALE_MILLIS,
      waitMillis: LOCK_WAIT_MILLIS,
      attempts: LOCK_ATTEMPTS
    })

    /** Takes the lock (within {@link LOCK_WAIT_MILLIS}): the name to release it by. */
    const acquireLock = fileLock.acquire.pipe(
      Effect.mapError((failure) =>
        failure.held
          ? McpError.auth(
            "Storage",
            `the auth store ${path} stays locked by another process (${lockPath}); remove it if no process uses the store`
          )
          : storageError("cannot be locked", failure.cause)
      )
    )

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
            fileLock.release
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
