/**
 * Skills (SEP-2640) from a folder on disk: {@link files} is an
 * `McpSkills.Files` adapter over `node:fs`, {@link load} loads a catalog
 * from a folder of skill folders (each with a `SKILL.md`).
 *
 * ```ts
 * const catalog = yield* NodeMcpSkills.load("./skills")
 * NodeMcpStdio.runServer(McpServer.layer(info, McpSkills.extension(catalog)))
 * ```
 *
 * @since 0.3.0
 */
/// <reference types="node" preserve="true" />
import * as McpError from "@effect-mcp/core/McpError"
import * as McpSkills from "@effect-mcp/core/McpSkills"
import * as Effect from "effect/Effect"
import type * as NodeFs from "node:fs"
import type * as NodeFsPromises from "node:fs/promises"
import type * as NodePath from "node:path"

// The built-ins are got when first used (`files` is synchronous, so not with `import()`): the
// barrel of @effect-mcp/platform-node loads this module in every program, most of which serve
// no skills folder.
const nodeFs = (): typeof NodeFs => process.getBuiltinModule("node:fs")
const nodeFsPromises = (): typeof NodeFsPromises => process.getBuiltinModule("node:fs/promises")
const nodePath = (): typeof NodePath => process.getBuiltinModule("node:path")

const ENCODED_SEPARATOR = /%(?:2f|5c)/i

const refuse = (path: string, description: string) => McpError.skill("path", path, description)

const failed = (path: string, what: string) => (cause: unknown) =>
  refuse(path, `${JSON.stringify(path)} ${what}: ${cause instanceof Error ? cause.message : String(cause)}`)

/** The absolute path of a relative `/`-separated one inside `base`, or why it is refused. */
const within = (base: string, relative: string): Effect.Effect<string, McpError.McpError> => {
  if (relative === "") return Effect.succeed(base)
  const segments = relative.split("/")
  const bad = segments.find((segment) =>
    segment === "" || segment === "." || segment === ".." || segment.includes("\\") || segment.includes("\0") ||
    ENCODED_SEPARATOR.test(segment)
  )
  if (bad !== undefined) {
    return Effect.fail(
      refuse(relative, `the path ${JSON.stringify(relative)} is not a relative path inside the skills folder`)
    )
  }
  const path = nodePath()
  const full = path.join(base, ...segments)
  const inside = path.relative(base, full)
  return inside === "" || inside === ".." || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)
    ? Effect.fail(refuse(relative, `the path ${JSON.stringify(relative)} leaves the skills folder`))
    : Effect.succeed(full)
}

/** `full`, once its real path (symlinked folders resolved) is known to stay inside the real `base`. */
const stillWithin = (base: string, full: string, relative: string): Effect.Effect<string, McpError.McpError> =>
  Effect.tryPromise({
    try: () => Promise.all([nodeFsPromises().realpath(base), nodeFsPromises().realpath(full)]),
    catch: failed(relative, "cannot be resolved")
  }).pipe(Effect.flatMap(([realBase, real]) => {
    const path = nodePath()
    const inside = path.relative(realBase, real)
    return inside === ".." || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)
      ? Effect.fail(refuse(relative, `the path ${JSON.stringify(relative)} resolves outside the skills folder`))
      : Effect.succeed(full)
  }))

const kindOf = (entry: NodeFs.Dirent): McpSkills.FileEntry["kind"] =>
  entry.isFile() ? "file" : entry.isDirectory() ? "directory" : "unsupported"

/**
 * An `McpSkills.Files` adapter over the folder `root`. `list` reports
 * symlinks and special files as `unsupported` (a catalog refuses a skill
 * holding one); `read` opens regular files only, without following a
 * symlink, and refuses a path with `..`, an empty segment, a backslash or an
 * encoded separator, or one that leaves `root` (also through a symlinked
 * folder).
 *
 * @category constructors
 * @since 0.3.0
 */
export const files = (root: string): McpSkills.Files => {
  const base = nodePath().resolve(root)
  return {
    list: (dir) =>
      within(base, dir).pipe(
        Effect.flatMap((full) => stillWithin(base, full, dir)),
        Effect.flatMap((full) =>
          Effect.tryPromise({
            try: () => nodeFsPromises().readdir(full, { withFileTypes: true }),
            catch: failed(dir, "cannot be listed")
          })
        ),
        Effect.map((entries) => entries.map((entry) => ({ name: entry.name, kind: kindOf(entry) })))
      ),
    read: (path) =>
      within(base, path).pipe(
        Effect.flatMap((full) => stillWithin(base, full, path)),
        Effect.flatMap((full) =>
          Effect.acquireUseRelease(
            Effect.tryPromise({
              try: () => {
                const { constants } = nodeFs()
                return nodeFsPromises().open(full, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
              },
              catch: failed(path, "cannot be opened (a symlink is never followed)")
            }),
            (handle) =>
              Effect.tryPromise({
                try: () =>
                  handle.stat().then((stat) =>
                    stat.isFile() ? handle.readFile() : Promise.reject(new Error("is not a regular file"))
                  ),
                catch: failed(path, "cannot be read")
              }),
            (handle) => Effect.promise(() => handle.close().catch(() => undefined))
          )
        ),
        Effect.map((buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength))
      )
  }
}

/**
 * Loads a catalog of the skills under the folder `root`: the same as
 * `McpSkills.load(NodeMcpSkills.files(root), options)`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const load = (root: string, options?: McpSkills.Options): Effect.Effect<McpSkills.Catalog, McpError.McpError> =>
  McpSkills.load(files(root), options)
