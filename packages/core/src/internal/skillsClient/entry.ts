/**
 * A skill entry as a host checks it (SEP-2640): the `SKILL.md` URI and its
 * skill root, the name and description rules, and each listed file (inside
 * the skill, listed once, a `sha256:` digest, a size) before any of its files
 * is read; and the file a reference names, found in the entry by a key that
 * every spelling of its URI shares.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Skills from "../schema/skills.ts"
import { DIGEST } from "../skills/digest.ts"

const MANIFEST_SUFFIX = `/${Skills.SKILL_FILE}`
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

const parse = (uri: string): URL | undefined => URL.canParse(uri) ? new URL(uri) : undefined

const decode = (segment: string): string =>
  Result.getOrElse(Result.try(() => decodeURIComponent(segment)), () => segment)

/** The root of a skill (its `SKILL.md` URI without `/SKILL.md`), or `undefined` when the URI is not one. @internal */
export const rootOf = (skillUri: string): string | undefined => {
  const url = parse(skillUri)
  if (url === undefined || url.search !== "" || url.hash !== "") return undefined
  const href = url.href
  if (!href.endsWith(MANIFEST_SUFFIX)) return undefined
  const root = href.slice(0, -MANIFEST_SUFFIX.length)
  return root.endsWith("/") || root.endsWith(":") ? undefined : root
}

/** The decoded last segment of a root (its host when its path is empty). @internal */
export const lastSegment = (root: string): string => {
  const url = new URL(root)
  const path = url.pathname
  return decode(path === "" || path === "/" ? url.host : path.slice(path.lastIndexOf("/") + 1))
}

/**
 * The spelling every way of writing a URI below `root` shares (`Q&A.md`,
 * `Q%26A.md`, a fragment dropped); a URI outside the root keeps its own.
 *
 * @internal
 */
export const keyOf = (root: string, uri: string): string | undefined => {
  const url = parse(uri)
  if (url === undefined) return undefined
  url.hash = ""
  const href = url.href
  if (url.search !== "" || !href.startsWith(`${root}/`)) return href
  const segments = href.slice(root.length + 1).split("/")
  return `${root}/${segments.map((segment) => encodeURIComponent(decode(segment))).join("/")}`
}

/** `true` when `uri` is strictly inside `root`, no segment below it empty, `.`, `..` or holding `/` or NUL. @internal */
export const isWithin = (root: string, uri: string): boolean => {
  const url = parse(uri)
  if (url === undefined || url.search !== "" || url.hash !== "") return false
  // a dot segment in the URI as written is refused even where parsing removed it
  const written = uri.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").split("/").map(decode)
  if (written.some((segment) => segment === "." || segment === "..")) return false
  const href = url.href
  if (!href.startsWith(`${root}/`)) return false
  return href.slice(root.length + 1).split("/").every((segment) => {
    const decoded = decode(segment)
    return decoded !== "" && decoded !== "." && decoded !== ".." && !decoded.includes("/") && !decoded.includes("\0")
  })
}

const characters = (text: string): number => Array.from(text).length

/** Every rule of the extension `skill` breaks; empty when it is a valid entry. @internal */
export const problems = (skill: Skills.Skill): ReadonlyArray<string> => {
  const root = rootOf(skill.uri)
  if (root === undefined) {
    return [`uri ${JSON.stringify(skill.uri)} is not a skill://…/SKILL.md URI inside a named directory`]
  }
  const out: Array<string> = []
  const { description, name } = skill.frontmatter
  if (characters(name) > 64 || !NAME.test(name)) {
    out.push(`frontmatter name ${JSON.stringify(name)} is not 1-64 lowercase letters, digits and single hyphens`)
  } else if (lastSegment(root) !== name) {
    out.push(
      `frontmatter name ${JSON.stringify(name)} is not the last path segment ${JSON.stringify(lastSegment(root))}`
    )
  }
  if (description === "" || characters(description) > 1024) out.push("frontmatter description is not 1-1024 characters")
  if (skill.resources === Skills.DYNAMIC) return out
  if (skill.resources.length > Skills.LIMITS.files) {
    out.push(`${skill.resources.length} files listed, more than ${Skills.LIMITS.files}`)
  }
  const self = keyOf(root, skill.uri)
  const seen = new Set<string>()
  let total = 0
  for (const resource of skill.resources.slice(0, Skills.LIMITS.files + 1)) {
    const key = keyOf(root, resource.uri)
    if (key === undefined) {
      out.push(`resource ${JSON.stringify(resource.uri)} is not a URI`)
      continue
    }
    if (seen.has(key)) out.push(`resource ${resource.uri} is listed more than once`)
    seen.add(key)
    if (key !== self && !isWithin(root, resource.uri)) out.push(`resource ${resource.uri} is outside the skill ${root}`)
    if (!DIGEST.test(resource.digest)) {
      out.push(`resource ${resource.uri} has digest ${JSON.stringify(resource.digest)}, not sha256:<64 lowercase hex>`)
    }
    if (!Number.isSafeInteger(resource.size) || resource.size < 0) {
      out.push(`resource ${resource.uri} has size ${resource.size}, not a byte count`)
    } else total += resource.size
  }
  if (self === undefined || !seen.has(self)) out.push(`resources do not include ${skill.uri}`)
  if (total > Skills.LIMITS.bytes) out.push(`the files add up to ${total} bytes, more than ${Skills.LIMITS.bytes}`)
  return out
}

/** The file a read names: the URI to request, its key, its entry (none for a dynamic skill), and whether it is the `SKILL.md`. @internal */
export interface Target {
  readonly uri: string
  readonly root: string
  readonly key: string
  readonly listed: Skills.ResourceEntry | undefined
  readonly manifest: boolean
}

/**
 * Resolves `ref` (default `SKILL.md`; relative to the skill's root, or an
 * absolute URI; a fragment dropped) to a file of the skill, or why it is not
 * one (`unlisted`). Call on a valid entry.
 *
 * @internal
 */
export const target = (skill: Skills.Skill, ref: string | undefined): Result.Result<Target, string> => {
  const root = rootOf(skill.uri)
  if (root === undefined) return Result.fail(`${skill.uri} is not a SKILL.md URI`)
  const given = ref ?? Skills.SKILL_FILE
  if (!URL.canParse(given, `${root}/`)) return Result.fail(`${given} is not a URI reference`)
  const resolved = new URL(given, `${root}/`)
  resolved.hash = ""
  const uri = resolved.href
  const key = keyOf(root, uri) ?? uri
  const manifest = key === keyOf(root, skill.uri)
  if (skill.resources === Skills.DYNAMIC) {
    return manifest || isWithin(root, uri)
      ? Result.succeed({ uri, root, key, listed: undefined, manifest })
      : Result.fail(`${uri} is not a file of the skill ${skill.uri}`)
  }
  const listed = skill.resources.find((resource) => keyOf(root, resource.uri) === key)
  return listed === undefined
    ? Result.fail(`${uri} is not a file listed in the skill ${skill.uri}`)
    : Result.succeed({ uri: listed.uri, root, key, listed, manifest })
}
