/**
 * A skills catalog: its options resolved, the snapshot it serves (swapped
 * whole by a reload, one reload at a time), and the servers its extension
 * is registered with, told when a reload changes `resources/list`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Semaphore from "effect/Semaphore"
import * as McpError from "../../McpError.ts"
import type * as McpExtension from "../../McpExtension.ts"
import type * as McpSkills from "../../McpSkills.ts"
import { LIMITS } from "../schema/skills.ts"
import * as Build from "./build.ts"
import * as Rules from "./rules.ts"

/** What the extension serving a catalog reads of it. @internal */
export interface Internals {
  readonly state: Ref.Ref<Build.Snapshot>
  readonly files: McpSkills.Files
  readonly settings: Build.Settings
  /** The servers the catalog's extensions are registered with. */
  readonly servers: Set<McpExtension.Attached>
}

const internals = new WeakMap<McpSkills.Catalog, Internals>()

/** The internals of a catalog made by {@link load} (one made otherwise serves nothing). @internal */
export const internalsOf = (catalog: McpSkills.Catalog): Internals =>
  internals.get(catalog) ?? {
    state: Ref.makeUnsafe(Build.empty),
    files: {
      list: () => Effect.succeed([]),
      read: (path) => Effect.fail(McpError.skill("path", path, "no such file"))
    },
    settings: resolve({}, []),
    servers: new Set()
  }

const positive = (value: number | undefined, fallback: number): number =>
  value !== undefined && (value === Infinity || (Number.isSafeInteger(value) && value > 0)) ? value : fallback

const resolve = (options: McpSkills.Options, prefix: ReadonlyArray<string>): Build.Settings => {
  const dynamic = options.dynamic
  return {
    prefix,
    pageSize: positive(options.pageSize, 100) === Infinity ? Number.MAX_SAFE_INTEGER : positive(options.pageSize, 100),
    limits: {
      files: positive(options.limits?.files, LIMITS.files),
      bytes: positive(options.limits?.bytes, LIMITS.bytes)
    },
    cache: options.cache,
    dynamic: dynamic === undefined
      ? () => false
      : typeof dynamic === "function"
      ? dynamic
      : (path) => dynamic.includes(path),
    strict: options.strict ?? false
  }
}

const listingKey = (snapshot: Build.Snapshot): string =>
  JSON.stringify(snapshot.listed.map((resource) => [resource.uri, resource.name, resource.description, resource.size]))

const diff = (before: Build.Snapshot, after: Build.Snapshot): McpSkills.Changes => {
  const same = (uri: string) => JSON.stringify(before.skills.get(uri)) === JSON.stringify(after.skills.get(uri))
  return {
    added: [...after.skills.values()].filter((skill) => !before.skills.has(Rules.canonical(skill.uri))).map((s) =>
      s.uri
    ),
    removed: [...before.skills.values()].filter((skill) => !after.skills.has(Rules.canonical(skill.uri))).map((s) =>
      s.uri
    ),
    changed: [...after.skills.entries()].filter(([key]) => before.skills.has(key) && !same(key)).map(([, s]) => s.uri),
    listChanged: listingKey(before) !== listingKey(after)
  }
}

/** @internal */
export const load = (
  files: McpSkills.Files,
  options?: McpSkills.Options
): Effect.Effect<McpSkills.Catalog, McpError.McpError> =>
  Effect.gen(function*() {
    const prefix = Rules.prefixSegments(options?.prefix)
    if (typeof prefix === "string") return yield* Effect.fail(McpError.skill("path", String(options?.prefix), prefix))
    const settings = resolve(options ?? {}, prefix.segments)
    const state = yield* Ref.make(yield* Build.build(files, settings))
    const lock = yield* Semaphore.make(1)
    const servers = new Set<McpExtension.Attached>()
    const reload = Effect.gen(function*() {
      const before = yield* Ref.get(state)
      const after = yield* Build.build(files, settings)
      yield* Ref.set(state, after)
      const changes = diff(before, after)
      if (changes.listChanged) {
        yield* Effect.forEach([...servers], (server) => server.listChanged("resources"), { discard: true })
      }
      return changes
    })
    const catalog: McpSkills.Catalog = {
      _tag: "SkillCatalog",
      entries: Effect.map(Ref.get(state), (snapshot) => snapshot.entries),
      warnings: Effect.map(Ref.get(state), (snapshot) => snapshot.warnings),
      reload: Semaphore.withPermits(lock, 1)(reload)
    }
    internals.set(catalog, { state, files, settings, servers })
    return catalog
  })
