/**
 * The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): Agent
 * Skills, folders with a `SKILL.md`, served as `skill://` resources with
 * `skills/list`, `skills/get` and `resources/directory/read`, each file
 * listed with its `sha256:` digest and size for the host to verify. The
 * wire schemas and methods, then the server side: a {@link Catalog} loaded
 * from a {@link Files} adapter and served by {@link extension}.
 *
 * @example
 * ```ts
 * import { McpServer, McpSkills } from "@effect-mcp/core"
 * import { Effect, Layer } from "effect"
 *
 * const Server = Layer.unwrap(Effect.gen(function*() {
 *   const catalog = yield* McpSkills.load(McpSkills.memoryFiles({ "hello/SKILL.md": "---\nname: hello\ndescription: Says hello\n---\n" }))
 *   return McpServer.layer({ name: "skills", version: "1.0.0" }, McpSkills.extension(catalog))
 * }))
 * ```
 *
 * @since 0.3.0
 */
export * from "./internal/schema/skills.ts"
import type * as Effect from "effect/Effect"
import type { Skill } from "./internal/schema/skills.ts"
import * as Catalogs from "./internal/skills/catalog.ts"
import * as Files_ from "./internal/skills/files.ts"
import * as Serve from "./internal/skills/serve.ts"
import type * as McpError from "./McpError.ts"
import type * as McpExtension from "./McpExtension.ts"
import type * as McpSchema from "./McpSchema.ts"

// -----------------------------------------------------------------------------
// Storage
// -----------------------------------------------------------------------------

/**
 * One child of a folder, as a {@link Files} adapter lists it: a regular
 * file, a folder, or anything else (a symlink, a device, a socket), which a
 * catalog never follows: a skill holding one is refused.
 *
 * @category models
 * @since 0.3.0
 */
export interface FileEntry {
  readonly name: string
  readonly kind: "file" | "directory" | "unsupported"
}

/**
 * Where a catalog's skills are stored. Paths are relative and
 * `/`-separated (`""` is the root, `acme/pdf-processing/SKILL.md` a file);
 * an adapter refuses any path that would leave its root.
 *
 * @category models
 * @since 0.3.0
 */
export interface Files {
  /** The children of folder `dir`. */
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<FileEntry>, McpError.McpError>
  /** The bytes of file `path`, read again on every call. */
  readonly read: (path: string) => Effect.Effect<Uint8Array, McpError.McpError>
}

/**
 * An in-memory {@link Files}: a record of path → content (text is UTF-8).
 * The record is indexed again at each catalog walk, so a catalog's
 * `reload` sees entries added or removed since; contents are read live.
 *
 * @example
 * ```ts
 * import { McpSkills } from "@effect-mcp/core"
 *
 * const files = McpSkills.memoryFiles({
 *   "pdf-processing/SKILL.md": "---\nname: pdf-processing\ndescription: Work with PDFs\n---\n# PDFs\n",
 *   "pdf-processing/references/FORMS.md": "# Forms\n"
 * })
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const memoryFiles: (files: Readonly<Record<string, string | Uint8Array>>) => Files = Files_.memory

// -----------------------------------------------------------------------------
// Catalog
// -----------------------------------------------------------------------------

/**
 * Something found while loading a catalog: a skill left out (a broken rule,
 * `skipped: true`; with `strict` the load fails instead) or a notice about
 * a skill served anyway (a reserved metadata key, a name served twice, …).
 *
 * @category models
 * @since 0.3.0
 */
export interface Warning {
  /** The storage path concerned (a skill folder or a file). */
  readonly path: string
  readonly check: "name" | "path" | "limit" | "entry"
  readonly message: string
  /** `true` when the skill was left out of the catalog. */
  readonly skipped: boolean
}

/**
 * How a catalog is loaded and served.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  /** Path segments put before every skill path in its URI (`acme` → `skill://acme/<skill-path>/…`). */
  readonly prefix?: string | undefined
  /** Entries per page of `skills/list` and `resources/directory/read`. Default 100. */
  readonly pageSize?: number | undefined
  /** Files and bytes a skill may hold. Default {@link LIMITS} (512 files, 16 MiB). */
  readonly limits?: { readonly files?: number | undefined; readonly bytes?: number | undefined } | undefined
  /** Cache hints of 2026-07-28 answers (skills, directories, reads). Default `{ ttlMs: 0, cacheScope: "private" }`. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  /** The skills (by skill path, e.g. `acme/pdf-processing`) whose entries say `resources: "dynamic"`. */
  readonly dynamic?: ReadonlyArray<string> | ((skillPath: string) => boolean) | undefined
  /** Fail the load (or reload) on a skill breaking a rule, instead of leaving it out with a warning. Default `false`. */
  readonly strict?: boolean | undefined
}

/**
 * What a reload changed: skill URIs added, removed and changed (any field of
 * the entry), and whether `resources/list` changed (then every server the
 * catalog's extension is registered with announced it).
 *
 * @category models
 * @since 0.3.0
 */
export interface Changes {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
  readonly listChanged: boolean
}

/**
 * A catalog of skills loaded from a {@link Files} adapter. It holds what it
 * serves (entries, digests, sizes), not contents: every read goes through
 * the adapter again and is refused if the file no longer matches its entry.
 *
 * @category models
 * @since 0.3.0
 */
export interface Catalog {
  readonly _tag: "SkillCatalog"
  /** The skills served, sorted by URI. */
  readonly entries: Effect.Effect<ReadonlyArray<Skill>>
  /** What the last load or reload found. */
  readonly warnings: Effect.Effect<ReadonlyArray<Warning>>
  /**
   * Walks the storage again and serves the result at once; all or nothing
   * (a failure keeps the catalog as it was). Reloads run one at a time.
   */
  readonly reload: Effect.Effect<Changes, McpError.McpError>
}

/**
 * Loads a catalog: every folder holding a `SKILL.md` is a skill, its path
 * the folder's (`acme/pdf-processing`), and everything below it its files.
 *
 * Rules (a skill breaking one is left out with a warning, or fails the load
 * with `strict`; the error is an `McpError` with a `SkillError` reason):
 * the name (last segment) equals `frontmatter.name` and is 1–64 of
 * `[a-z0-9-]` without leading, trailing or double hyphens (`name`); the first
 * URI segment is a host name, no segment is empty, `.`, `..`, or holds `\`
 * or an encoded separator, and no symlink or special file is inside (`path`);
 * at most `limits.files` files and `limits.bytes` bytes (`limit`); a
 * `SKILL.md` starting with a YAML frontmatter holding `name` and
 * `description` (`entry`). `frontmatter.metadata` keys under
 * `io.modelcontextprotocol/` are reserved: a warning, the skill is served.
 *
 * @category constructors
 * @since 0.3.0
 */
export const load: (files: Files, options?: Options) => Effect.Effect<Catalog, McpError.McpError> = Catalogs.load

// -----------------------------------------------------------------------------
// Serving
// -----------------------------------------------------------------------------

/**
 * How the extension is declared.
 *
 * @category models
 * @since 0.3.0
 */
export interface ExtensionOptions {
  /** Serve `resources/directory/read` and declare `{ directoryRead: true }`. Default `true`. */
  readonly directoryRead?: boolean | undefined
}

/**
 * The Skills extension serving `catalog`, to register with a server like a
 * tool (`McpServer.layer(options, McpSkills.extension(catalog))`): declares
 * `capabilities.extensions["io.modelcontextprotocol/skills"]`, answers
 * `skills/list`, `skills/get` and `resources/directory/read`, lists each
 * skill's `SKILL.md` in `resources/list` and reads every file of every skill
 * (`resources/read` under `skill://`), after checking its size and digest
 * against the entry. While registered, a `reload` that changes the listing
 * sends `notifications/resources/list_changed` to the server's clients.
 *
 * @example
 * ```ts
 * import { McpServer, McpSkills } from "@effect-mcp/core"
 * import { Effect, Layer } from "effect"
 *
 * const files = McpSkills.memoryFiles({ "hello/SKILL.md": "---\nname: hello\ndescription: Says hello\n---\n" })
 * const Server = Layer.unwrap(Effect.gen(function*() {
 *   const catalog = yield* McpSkills.load(files)
 *   return McpServer.layer({ name: "skills", version: "1.0.0" }, McpSkills.extension(catalog))
 * }))
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const extension: (catalog: Catalog, options?: ExtensionOptions) => McpExtension.McpExtension = Serve.extension
