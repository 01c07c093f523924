/**
 * One walk of a skills catalog's storage, and what it serves: every folder
 * holding a `SKILL.md` is a skill; each is checked against the rules
 * (`rules.ts`), its files hashed, and the result assembled into a snapshot
 * (entries, files by URI, directory children by URI, the `SKILL.md`
 * listings). A skill breaking a rule is left out with a warning; with
 * `strict` the walk fails instead.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as McpError from "../../McpError.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpSkills from "../../McpSkills.ts"
import { DIRECTORY_MIME_TYPE, DYNAMIC, type ResourceEntry, type Skill, SKILL_FILE } from "../schema/skills.ts"
import { sha256 } from "./digest.ts"
import * as Rules from "./rules.ts"

/** What a catalog is loaded with, resolved. @internal */
export interface Settings {
  readonly prefix: ReadonlyArray<string>
  readonly pageSize: number
  readonly limits: { readonly files: number; readonly bytes: number }
  readonly cache: Partial<McpSchema.CacheHints> | undefined
  readonly dynamic: (skillPath: string) => boolean
  readonly strict: boolean
}

/** One file served: where it is stored, and what its entry says. @internal */
export interface FileRecord {
  readonly path: string
  readonly uri: string
  readonly digest: string
  readonly size: number
  readonly mimeType: string
}

/** What a catalog serves at one time. @internal */
export interface Snapshot {
  readonly entries: ReadonlyArray<Skill>
  /** By canonical URI. */
  readonly skills: ReadonlyMap<string, Skill>
  readonly files: ReadonlyMap<string, FileRecord>
  readonly dirs: ReadonlyMap<string, ReadonlyArray<McpSchema.Resource>>
  /** The `SKILL.md` of every skill, as `resources/list` lists it. */
  readonly listed: ReadonlyArray<McpSchema.Resource>
  readonly warnings: ReadonlyArray<McpSkills.Warning>
}

/** @internal */
export const empty: Snapshot = {
  entries: [],
  skills: new Map(),
  files: new Map(),
  dirs: new Map(),
  listed: [],
  warnings: []
}

interface Node {
  readonly path: string
  readonly name: string
  readonly kind: McpSkills.FileEntry["kind"]
  readonly problem: string | undefined
}

const MAX_DEPTH = 32
const MAX_NODES = 100_000

const dirname = (path: string): string => {
  const slash = path.lastIndexOf("/")
  return slash === -1 ? "" : path.slice(0, slash)
}

const tooMany = () => McpError.skill("limit", "skill://", `the skills storage holds more than ${MAX_NODES} entries`)

/** Every entry below the root, depth first, by name; hidden ones (`.name`) left out, bad names kept with their problem. */
const walk = (files: McpSkills.Files): Effect.Effect<ReadonlyArray<Node>, McpError.McpError> => {
  const out: Array<Node> = []
  const visit = (dir: string, depth: number): Effect.Effect<void, McpError.McpError> =>
    Effect.flatMap(files.list(dir), (children) =>
      Effect.forEach(
        [...children].sort((a, b) => Rules.compare(a.name, b.name)),
        (child) => {
          const problem = Rules.segmentProblem(child.name)
          if (problem === undefined && child.name.startsWith(".")) return Effect.void
          const path = dir === "" ? child.name : `${dir}/${child.name}`
          const deep = child.kind === "directory" && problem === undefined && depth >= MAX_DEPTH
          out.push({
            path,
            name: child.name,
            kind: child.kind,
            problem: deep ? `deeper than ${MAX_DEPTH} folders` : problem
          })
          if (out.length > MAX_NODES) return Effect.fail(tooMany())
          return child.kind === "directory" && problem === undefined && !deep ? visit(path, depth + 1) : Effect.void
        },
        { discard: true }
      ))
  return Effect.as(visit("", 0), out)
}

interface Built {
  readonly dir: string
  readonly skill: Skill
  readonly files: ReadonlyArray<FileRecord>
  readonly inside: ReadonlyArray<Node>
}

type Refusal = { readonly _tag: "Refusal"; readonly check: McpSkills.Warning["check"]; readonly message: string }
const refuse = (check: Refusal["check"], message: string): Refusal => ({ _tag: "Refusal", check, message })

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The text of `bytes` when they are UTF-8 (lossless), else `undefined`. @internal */
export const textOf = (bytes: Uint8Array): string | undefined =>
  Result.getOrUndefined(Result.try(() => strictUtf8.decode(bytes)))

const buildOne = (
  files: McpSkills.Files,
  settings: Settings,
  dir: string,
  inside: ReadonlyArray<Node>,
  notice: (warning: McpSkills.Warning) => void
): Effect.Effect<Built | Refusal, McpError.McpError> =>
  Effect.gen(function*() {
    const bad = inside.find((node) => node.problem !== undefined)
    if (bad !== undefined) return refuse("path", `${bad.path}: ${bad.problem}`)
    const special = inside.find((node) => node.kind === "unsupported")
    if (special !== undefined) {
      return refuse(
        "path",
        `${special.path} is a symlink or special file, which is never followed; copy the file instead`
      )
    }
    const own = dir.split("/")
    const segments = [...settings.prefix, ...own]
    const name = own[own.length - 1]!
    const named = Rules.nameProblem(name)
    if (named !== undefined) return refuse("name", named)
    const host = Rules.hostProblem(segments[0]!)
    if (host !== undefined) return refuse("path", host)
    const fileNodes = inside.filter((node) => node.kind === "file")
    if (fileNodes.length > settings.limits.files) {
      return refuse("limit", `${fileNodes.length} files exceed the limit of ${settings.limits.files} files per skill`)
    }
    const uriOf = (path: string) => Rules.uriOf([...settings.prefix, ...path.split("/")])
    const manifestPath = `${dir}/${SKILL_FILE}`
    const records: Array<FileRecord> = []
    let total = 0
    let manifest: Uint8Array | undefined
    for (const node of fileNodes) {
      const bytes = yield* files.read(node.path)
      total += bytes.byteLength
      if (total > settings.limits.bytes) {
        return refuse(
          "limit",
          `more than ${settings.limits.bytes} bytes (the limit per skill, ${
            settings.limits.bytes / 1048576
          } MiB) in its files`
        )
      }
      if (node.path === manifestPath) manifest = bytes
      records.push({
        path: node.path,
        uri: uriOf(node.path),
        digest: yield* sha256(bytes),
        size: bytes.byteLength,
        mimeType: Rules.mimeTypeOf(node.name)
      })
    }
    const text = manifest === undefined ? undefined : textOf(manifest)
    if (text === undefined) return refuse("entry", `${manifestPath} is not UTF-8 text`)
    // the YAML parser is loaded with the first catalog, not with this module (nor the package's root)
    const Frontmatter = yield* Effect.promise(() => import("./frontmatter.ts"))
    const parsed = Frontmatter.parse(text)
    if (Result.isFailure(parsed)) return refuse("entry", parsed.failure)
    const frontmatter = parsed.success.frontmatter
    const problems = Rules.frontmatterProblems(frontmatter)
    if (problems.length > 0) return refuse("entry", problems.join("; "))
    if (frontmatter.name !== name) {
      return refuse("name", `the frontmatter name "${String(frontmatter.name)}" differs from the folder name "${name}"`)
    }
    for (const key of Rules.reservedKeys(frontmatter)) {
      notice({
        path: manifestPath,
        check: "entry",
        message:
          `frontmatter.metadata["${key}"]: keys under ${Rules.RESERVED_METADATA} are reserved for MCP extensions`,
        skipped: false
      })
    }
    records.sort((a, b) => Rules.compare(a.uri, b.uri))
    const resources: ReadonlyArray<ResourceEntry> | typeof DYNAMIC = settings.dynamic(dir)
      ? DYNAMIC
      : records.map(({ digest, size, uri }) => ({ uri, digest, size }))
    const skill: Skill = { uri: uriOf(manifestPath), frontmatter: frontmatter as Skill["frontmatter"], resources }
    return { dir, skill, files: records, inside }
  })

const isRefusal = (value: Built | Refusal): value is Refusal => "_tag" in value && value._tag === "Refusal"

/** Walks the storage and assembles what it serves. @internal */
export const build = (files: McpSkills.Files, settings: Settings): Effect.Effect<Snapshot, McpError.McpError> =>
  Effect.gen(function*() {
    const tree = yield* walk(files)
    const warnings: Array<McpSkills.Warning> = []
    const notice = (warning: McpSkills.Warning) => void warnings.push(warning)
    const refused: Array<{ readonly dir: string; readonly refusal: Refusal }> = []
    const dirs = new Set<string>()
    for (const node of tree) {
      if (node.kind !== "file" || node.problem !== undefined) continue
      if (node.name === SKILL_FILE) {
        const dir = dirname(node.path)
        if (dir === "") {
          notice({
            path: node.path,
            check: "path",
            message: "a SKILL.md at the root has no skill path (left out)",
            skipped: false
          })
        } else dirs.add(dir)
      } else if (node.name.toLowerCase() === SKILL_FILE.toLowerCase()) {
        notice({
          path: node.path,
          check: "entry",
          message: "did you mean SKILL.md? File names are case-sensitive",
          skipped: false
        })
      }
    }
    const within = (path: string) => {
      for (let dir = dirname(path); dir !== ""; dir = dirname(dir)) if (dirs.has(dir)) return true
      return false
    }
    for (const node of tree) {
      if (within(node.path)) continue
      if (node.problem !== undefined) {
        notice({ path: node.path, check: "path", message: `${node.problem} (left out)`, skipped: false })
      } else if (node.kind === "unsupported") {
        notice({
          path: node.path,
          check: "path",
          message: "a symlink or special file, never followed (left out)",
          skipped: false
        })
      }
    }
    const built: Array<Built> = []
    for (const dir of [...dirs].sort(Rules.compare)) {
      const inside = tree.filter((node) => node.path.startsWith(`${dir}/`))
      const result = yield* buildOne(files, settings, dir, inside, notice)
      if (isRefusal(result)) {
        refused.push({ dir, refusal: result })
        notice({ path: dir, check: result.check, message: `${result.message} (skill left out)`, skipped: true })
      } else built.push(result)
    }
    if (settings.strict && refused.length > 0) {
      const first = refused[0]!
      const lines = refused.map(({ dir, refusal }) => `${dir}: ${refusal.message}`)
      return yield* Effect.fail(McpError.skill(
        first.refusal.check,
        Rules.uriOf([...settings.prefix, ...first.dir.split("/"), SKILL_FILE]),
        `${refused.length} skill${refused.length === 1 ? "" : "s"} refused: ${lines.join("; ")}`
      ))
    }
    const byName = new Map<string, Array<string>>()
    for (const item of built) {
      const name = item.skill.frontmatter.name
      byName.set(name, [...(byName.get(name) ?? []), item.dir])
    }
    for (const [name, paths] of byName) {
      if (paths.length > 1) {
        notice({
          path: paths.join(", "),
          check: "name",
          message: `the name "${name}" is served more than once`,
          skipped: false
        })
      }
    }
    return assemble(built, tree, settings, warnings)
  })

const assemble = (
  built: ReadonlyArray<Built>,
  tree: ReadonlyArray<Node>,
  settings: Settings,
  warnings: ReadonlyArray<McpSkills.Warning>
): Snapshot => {
  const uriOf = (path: string) => Rules.uriOf([...settings.prefix, ...path.split("/")])
  const entries = built.map((item) => item.skill).sort((a, b) => Rules.compare(a.uri, b.uri))
  const files = new Map<string, FileRecord>()
  const dirPaths = new Set<string>()
  for (const item of built) {
    for (const file of item.files) files.set(Rules.canonical(file.uri), file)
    dirPaths.add(item.dir)
    for (const node of item.inside) if (node.kind === "directory") dirPaths.add(node.path)
  }
  const childrenOf = new Map<string, Array<Node>>()
  for (const node of tree) {
    const siblings = childrenOf.get(dirname(node.path))
    if (siblings === undefined) childrenOf.set(dirname(node.path), [node])
    else siblings.push(node)
  }
  const dirs = new Map<string, ReadonlyArray<McpSchema.Resource>>()
  for (const path of dirPaths) {
    const children: Array<McpSchema.Resource> = []
    for (const node of childrenOf.get(path) ?? []) {
      if (node.kind === "directory") {
        children.push({ uri: uriOf(node.path), name: node.name, mimeType: DIRECTORY_MIME_TYPE })
        continue
      }
      const file = node.kind === "file" ? files.get(Rules.canonical(uriOf(node.path))) : undefined
      if (file !== undefined) {
        children.push({ uri: file.uri, name: node.name, mimeType: file.mimeType, size: file.size })
      }
    }
    dirs.set(Rules.canonical(uriOf(path)), children.sort((a, b) => Rules.compare(a.uri, b.uri)))
  }
  const listed = built
    .map((item): McpSchema.Resource => ({
      uri: item.skill.uri,
      name: item.skill.frontmatter.name,
      description: item.skill.frontmatter.description,
      mimeType: "text/markdown",
      size: item.files.find((file) => file.uri === item.skill.uri)?.size ?? 0
    }))
    .sort((a, b) => Rules.compare(a.uri, b.uri))
  return {
    entries,
    skills: new Map(entries.map((skill) => [Rules.canonical(skill.uri), skill])),
    files,
    dirs,
    listed,
    warnings
  }
}
