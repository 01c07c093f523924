/**
 * The host side of the Skills extension over one connected client: listing
 * (every page, bounded), getting and reading skills, each file verified
 * against its entry before its content is handed out.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Result from "effect/Result"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpSkillsClient from "../../McpSkillsClient.ts"
import { withMeta } from "../client/meta.ts"
import * as Skills from "../schema/skills.ts"
import { sha256 } from "../skills/digest.ts"
import * as Entry from "./entry.ts"

const DEFAULT_MAX_PAGES = 100
const encoder = new TextEncoder()

const settingsOf = (capabilities: McpSchema.ServerCapabilities): Readonly<Record<string, unknown>> | undefined => {
  const extensions = (capabilities as { readonly extensions?: unknown }).extensions
  if (typeof extensions !== "object" || extensions === null) return undefined
  const settings = (extensions as Record<string, unknown>)[Skills.EXTENSION_ID]
  return typeof settings === "object" && settings !== null ? settings as Record<string, unknown> : undefined
}

const unsupported = (method: string, setting = "") =>
  McpError.unsupported(method, `server extensions.${Skills.EXTENSION_ID}${setting}`)

/** The entry, or a `SkillError` (`entry`) naming every rule it breaks. @internal */
export const checkEntry = (skill: Skills.Skill): Effect.Effect<Skills.Skill, McpError.McpError> => {
  const found = Entry.problems(skill)
  return found.length === 0
    ? Effect.succeed(skill)
    : Effect.fail(McpError.skill("entry", skill.uri, `invalid skill entry ${skill.uri}: ${found.join("; ")}`, found))
}

/** Every item of a paged request, at most `maxPages` pages; a cursor seen before fails. */
const allPages = <A, P extends { readonly nextCursor?: string | undefined }>(
  method: string,
  page: (cursor: string | undefined) => Effect.Effect<P, McpError.McpError>,
  items: (page: P) => ReadonlyArray<A>,
  maxPages: number
): Effect.Effect<ReadonlyArray<A>, McpError.McpError> =>
  Effect.gen(function*() {
    const out: Array<A> = []
    const seen = new Set<string>()
    let cursor: string | undefined = undefined
    for (let pages = 0; pages < maxPages; pages++) {
      const result: P = yield* page(cursor)
      out.push(...items(result))
      if (result.nextCursor === undefined) return out
      if (seen.has(result.nextCursor)) {
        return yield* McpError.invalidResult(method, `the server returned the cursor ${result.nextCursor} twice`)
      }
      seen.add(result.nextCursor)
      cursor = result.nextCursor
    }
    return yield* McpError.invalidResult(method, `more than ${maxPages} pages (maxPages)`)
  })

const bytesOf = (
  target: Entry.Target,
  content: McpSchema.ReadResourceResult["contents"][number]
): Result.Result<Uint8Array, McpError.McpError> =>
  "text" in content
    ? Result.succeed(encoder.encode(content.text))
    : Result.mapError(
      Base64.decode(content.blob),
      () => McpError.invalidResult("resources/read", `an invalid base64 blob for ${target.uri}`)
    )

const decodeUtf8 = (bytes: Uint8Array): Result.Result<string, unknown> =>
  Result.try(() => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes))

/** Checks what `resources/read` returned for `target` against `skill`; the file only when every check passes. */
const verify = (
  skill: Skills.Skill,
  target: Entry.Target,
  result: McpSchema.ReadResourceResult
): Effect.Effect<McpSkillsClient.SkillFile, McpError.McpError> =>
  Effect.gen(function*() {
    const { listed, uri } = target
    const content = result.contents.find((item) => (Entry.keyOf(target.root, item.uri) ?? item.uri) === target.key)
    if (content === undefined) return yield* McpError.invalidResult("resources/read", `no contents for ${uri}`)
    const bytes = yield* Effect.fromResult(bytesOf(target, content))
    if (listed !== undefined) {
      if (bytes.byteLength !== listed.size) {
        return yield* McpError.skill(
          "size",
          uri,
          `${uri} is ${bytes.byteLength} bytes; the skill entry lists ${listed.size}`
        )
      }
      const digest = yield* sha256(bytes)
      if (digest !== listed.digest) {
        return yield* McpError.skill(
          "digest",
          uri,
          `${uri} has digest ${digest}; the skill entry lists ${listed.digest}`
        )
      }
    }
    const file: McpSkillsClient.SkillFile = {
      uri,
      mimeType: content.mimeType,
      bytes,
      text: "text" in content ? content.text : undefined,
      verified: listed !== undefined
    }
    if (!target.manifest) return file
    const text = "text" in content ? content.text : Result.getOrUndefined(decodeUtf8(bytes))
    if (text === undefined) return yield* McpError.skill("frontmatter", uri, `${uri} is not valid UTF-8`)
    // the YAML parser is loaded with the first SKILL.md read, not with this module
    const Frontmatter = yield* Effect.promise(() => import("../skills/frontmatter.ts"))
    const parsed = Frontmatter.parse(text)
    if (Result.isFailure(parsed)) {
      return yield* McpError.skill("frontmatter", uri, `the frontmatter of ${uri} cannot be read: ${parsed.failure}`)
    }
    const differences = Frontmatter.differences(parsed.success.frontmatter, skill.frontmatter)
    if (differences.length > 0) {
      return yield* McpError.skill(
        "frontmatter",
        uri,
        `the frontmatter of ${uri} differs from the skill entry: ${differences.join("; ")}`,
        differences
      )
    }
    return { ...file, text, frontmatter: parsed.success.frontmatter, body: parsed.success.body }
  })

/** The skills client of one connected client. @internal */
export const make = (client: McpClient.Client): McpSkillsClient.SkillsClient => {
  const settings = settingsOf(client.serverCapabilities)
  const supported = settings !== undefined
  const directoryRead = settings?.directoryRead === true

  const list = (options?: McpSkillsClient.ListOptions) =>
    Effect.gen(function*() {
      if (!supported) return []
      const skills = yield* allPages(
        Skills.ListSkills.name,
        (cursor) =>
          client.session.request(
            Skills.ListSkills,
            withMeta(cursor === undefined ? {} : { cursor }, options),
            options
          ),
        (page) => page.skills,
        options?.maxPages ?? DEFAULT_MAX_PAGES
      )
      const out: Array<Skills.Skill> = []
      const seen = new Set<string>()
      for (const skill of skills) {
        const root = Entry.rootOf(skill.uri)
        const key = root === undefined ? skill.uri : Entry.keyOf(root, skill.uri) ?? skill.uri
        const checked = seen.has(key)
          ? Effect.fail(McpError.skill("entry", skill.uri, `${skill.uri} is listed more than once`))
          : checkEntry(skill)
        seen.add(key)
        const outcome = yield* Effect.result(checked)
        if (Result.isSuccess(outcome)) out.push(outcome.success)
        else if (options?.skipInvalid !== true) return yield* outcome.failure
      }
      return out
    })

  const get = (uri: string, options?: McpClient.RequestOptions) =>
    Effect.gen(function*() {
      if (!supported) return yield* unsupported(Skills.GetSkill.name)
      const result = yield* client.session.request(Skills.GetSkill, withMeta({ uri }, options), options)
      const skill = yield* checkEntry(result.skill)
      const root = Entry.rootOf(uri)
      const asked = root === undefined ? uri : Entry.keyOf(root, uri)
      if (asked !== Entry.keyOf(Entry.rootOf(skill.uri)!, skill.uri)) {
        return yield* McpError.skill("entry", uri, `skills/get for ${uri} returned the skill ${skill.uri}`)
      }
      return skill
    })

  const read = (skill: Skills.Skill, ref?: string, options?: McpClient.RequestOptions) =>
    Effect.gen(function*() {
      if (!supported) return yield* unsupported("resources/read")
      yield* checkEntry(skill)
      const target = yield* Effect.fromResult(Result.mapError(
        Entry.target(skill, ref),
        (description) => McpError.skill("unlisted", ref ?? skill.uri, description)
      ))
      const result = yield* client.readResource(target.uri, options)
      return yield* verify(skill, target, result)
    })

  const readDirectory = (uri: string, options?: McpSkillsClient.ListOptions) =>
    Effect.gen(function*() {
      if (!directoryRead) return yield* unsupported(Skills.ReadDirectory.name, ".directoryRead")
      return yield* allPages(
        Skills.ReadDirectory.name,
        (cursor) =>
          client.session.request(
            Skills.ReadDirectory,
            withMeta(cursor === undefined ? { uri } : { uri, cursor }, options),
            options
          ),
        (page) => page.resources,
        options?.maxPages ?? DEFAULT_MAX_PAGES
      )
    })

  return { client, supported, directoryRead, list, get, read, readDirectory }
}
