/**
 * The wire of the Skills extension (SEP-2640, `io.modelcontextprotocol/skills`):
 * skill entries, `skills/list`, `skills/get` and `resources/directory/read`.
 * A server declaring the extension also declares `resources`; each skill's
 * files are resources under `skill://<skill-path>/`.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { Cursor, Meta, PaginatedRequestParams, RequestMeta } from "./base.ts"
import { Resource } from "./resources.ts"

/**
 * The extension's id, declared under `capabilities.extensions`.
 *
 * @category constants
 * @since 0.3.0
 */
export const EXTENSION_ID = "io.modelcontextprotocol/skills" as const

/**
 * The MIME type of a directory resource (`resources/directory/read`).
 *
 * @category constants
 * @since 0.3.0
 */
export const DIRECTORY_MIME_TYPE = "inode/directory" as const

/**
 * The name of a skill's manifest file, at its root.
 *
 * @category constants
 * @since 0.3.0
 */
export const SKILL_FILE = "SKILL.md" as const

/**
 * The `resources` of a skill whose files are not enumerated.
 *
 * @category constants
 * @since 0.3.0
 */
export const DYNAMIC = "dynamic" as const

/**
 * The publication limits of one skill: at most 512 files and 16 MiB in all.
 *
 * @category constants
 * @since 0.3.0
 */
export const LIMITS = { files: 512, bytes: 16 * 1024 * 1024 } as const

/**
 * The settings a server declares: `directoryRead` when it serves
 * `resources/directory/read`.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Settings = Schema.Struct({ directoryRead: Schema.optionalKey(Schema.Boolean) })

/**
 * @category schemas
 * @since 0.3.0
 */
export type Settings = typeof Settings.Type

/**
 * One file of a skill: its URI, `sha256:<64 lowercase hex>` digest of its
 * bytes, and size in bytes.
 *
 * @category schemas
 * @since 0.3.0
 */
export const ResourceEntry = Schema.Struct({
  uri: Schema.String,
  digest: Schema.String,
  size: Schema.Int
})

/**
 * @category schemas
 * @since 0.3.0
 */
export type ResourceEntry = typeof ResourceEntry.Type

/**
 * A skill's frontmatter as written in its `SKILL.md` (at least `name` and
 * `description`).
 *
 * @category schemas
 * @since 0.3.0
 */
export const Frontmatter = Schema.StructWithRest(
  Schema.Struct({ name: Schema.String, description: Schema.String }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/**
 * @category schemas
 * @since 0.3.0
 */
export type Frontmatter = typeof Frontmatter.Type

/**
 * A skill entry: the URI of its `SKILL.md` (`skill://<skill-path>/SKILL.md`),
 * its frontmatter, and every file with digest and size (or `"dynamic"`).
 *
 * @category schemas
 * @since 0.3.0
 */
export const Skill = Schema.Struct({
  uri: Schema.String,
  frontmatter: Frontmatter,
  resources: Schema.Union([Schema.Array(ResourceEntry), Schema.Literal(DYNAMIC)]),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.3.0
 */
export type Skill = typeof Skill.Type

const CacheFields = {
  ttlMs: Schema.optionalKey(Schema.Number),
  cacheScope: Schema.optionalKey(Schema.Literals(["public", "private"]))
}

/**
 * A page of skills (an entry is never split across pages).
 *
 * @category schemas
 * @since 0.3.0
 */
export const ListSkillsResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  skills: Schema.Array(Skill),
  nextCursor: Schema.optionalKey(Cursor),
  ...CacheFields
})

/**
 * @category schemas
 * @since 0.3.0
 */
export type ListSkillsResult = typeof ListSkillsResult.Type

/**
 * The params of `skills/get`: the `uri` of the skill's `SKILL.md`.
 *
 * @category schemas
 * @since 0.3.0
 */
export const GetSkillParams = Schema.Struct({ _meta: Schema.optionalKey(RequestMeta), uri: Schema.String })

/**
 * @category schemas
 * @since 0.3.0
 */
export type GetSkillParams = typeof GetSkillParams.Type

/**
 * One skill, listed or not.
 *
 * @category schemas
 * @since 0.3.0
 */
export const GetSkillResult = Schema.Struct({ _meta: Schema.optionalKey(Meta), skill: Skill, ...CacheFields })

/**
 * @category schemas
 * @since 0.3.0
 */
export type GetSkillResult = typeof GetSkillResult.Type

/**
 * The params of `resources/directory/read`: the `uri` of the directory, and
 * a `cursor` for the next page.
 *
 * @category schemas
 * @since 0.3.0
 */
export const ReadDirectoryParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  uri: Schema.String,
  cursor: Schema.optionalKey(Cursor)
})

/**
 * @category schemas
 * @since 0.3.0
 */
export type ReadDirectoryParams = typeof ReadDirectoryParams.Type

/**
 * The direct children of a directory; subdirectories have
 * `mimeType: "inode/directory"` and no trailing slash.
 *
 * @category schemas
 * @since 0.3.0
 */
export const ReadDirectoryResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  resources: Schema.Array(Resource),
  nextCursor: Schema.optionalKey(Cursor),
  ...CacheFields
})

/**
 * @category schemas
 * @since 0.3.0
 */
export type ReadDirectoryResult = typeof ReadDirectoryResult.Type

const declared = McpMethod.serverCapability("extensions", EXTENSION_ID)

/**
 * `skills/list`: one page of the server's skills.
 *
 * @category methods
 * @since 0.3.0
 */
export const ListSkills = McpMethod.request({
  name: "skills/list",
  params: PaginatedRequestParams,
  result: ListSkillsResult,
  from: "client",
  capability: declared
})

/**
 * `skills/get`: the entry of the skill whose `SKILL.md` is `uri`; an unknown
 * URI is `-32602`.
 *
 * @category methods
 * @since 0.3.0
 */
export const GetSkill = McpMethod.request({
  name: "skills/get",
  params: GetSkillParams,
  result: GetSkillResult,
  from: "client",
  capability: declared
})

/**
 * `resources/directory/read` (declared with `directoryRead`): the direct
 * children of a directory resource; a URI that is not one is `-32602`.
 *
 * @category methods
 * @since 0.3.0
 */
export const ReadDirectory = McpMethod.request({
  name: "resources/directory/read",
  params: ReadDirectoryParams,
  result: ReadDirectoryResult,
  from: "client",
  capability: McpMethod.serverCapability("extensions", EXTENSION_ID, "directoryRead")
})
