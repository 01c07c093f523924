/**
 * The host side of the Skills extension (SEP-2640,
 * `io.modelcontextprotocol/skills`): list a server's skills, get one, and
 * read a skill's files with every check a host owes before it uses them.
 *
 * - An entry is checked before anything of it is used (`SkillError` with
 *   check `entry`): a `skill://…/SKILL.md` URI whose last segment is the
 *   frontmatter's `name`, every file inside the skill and listed once, the
 *   `SKILL.md` itself listed, `sha256:<64 hex>` digests, sizes, the limits.
 * - A file that is not in the entry is refused before any request
 *   (`unlisted`); what the server returns must have the entry's size
 *   (`size`) and digest (`digest`), and a skill's own `SKILL.md` the entry's
 *   frontmatter, field by field (`frontmatter`, one line per field in
 *   `differences`). Content that fails is never returned.
 * - A `"dynamic"` skill's files are not listed: they are read unverified
 *   (`verified: false`), but its `SKILL.md` frontmatter is still compared.
 * - Nothing is fetched before it is asked for.
 *
 * ```ts
 * const skills = McpSkillsClient.make(client)
 * const [first] = yield* skills.list()
 * const manifest = yield* skills.read(first)                       // SKILL.md, verified
 * const forms = yield* skills.read(first, "references/FORMS.md")
 * ```
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Skills from "./internal/schema/skills.ts"
import * as Client from "./internal/skillsClient/client.ts"
import * as Group from "./internal/skillsClient/group.ts"
import * as McpClient from "./McpClient.ts"
import type * as McpError from "./McpError.ts"
import type * as McpGroup from "./McpGroup.ts"
import type * as McpSchema from "./McpSchema.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Options of the paged calls (`list`, `readDirectory`): the per-call options
 * of each page request, the page limit (default 100; a longer listing, or a
 * cursor returned twice, fails with an `InvalidResultError`) and, for
 * `list`, `skipInvalid` to leave out invalid entries instead of failing.
 *
 * @category models
 * @since 0.3.0
 */
export interface ListOptions extends McpClient.RequestOptions {
  readonly maxPages?: number | undefined
  readonly skipInvalid?: boolean | undefined
}

/**
 * A file of a skill, read and verified: its bytes (a text content as UTF-8,
 * a blob decoded), its text when it came as text (and for `SKILL.md`), and,
 * for the skill's own `SKILL.md`, the parsed frontmatter and the body after
 * it. `verified` is `false` only for the files of a `"dynamic"` skill, which
 * have no size or digest to check.
 *
 * @category models
 * @since 0.3.0
 */
export interface SkillFile {
  readonly uri: string
  readonly mimeType: string | undefined
  readonly bytes: Uint8Array
  readonly text: string | undefined
  readonly verified: boolean
  readonly frontmatter?: Readonly<Record<string, unknown>> | undefined
  readonly body?: string | undefined
}

/**
 * The skills of one server.
 *
 * @category models
 * @since 0.3.0
 */
export interface SkillsClient {
  /** The client underneath. */
  readonly client: McpClient.Client
  /** The server declared `extensions["io.modelcontextprotocol/skills"]`. */
  readonly supported: boolean
  /** The server serves `resources/directory/read` (`directoryRead: true`). */
  readonly directoryRead: boolean
  /**
   * Every skill (all pages), each entry checked (`SkillError` `entry`,
   * a URI listed twice included). An entry that does not even have the
   * wire's shape fails its page with an `InvalidResultError`. A server
   * without the extension has none.
   */
  readonly list: (options?: ListOptions) => Effect.Effect<ReadonlyArray<Skills.Skill>, McpError.McpError>
  /** One skill by its `SKILL.md` URI, listed or not, checked; `UnsupportedError` without the extension. */
  readonly get: (uri: string, options?: McpClient.RequestOptions) => Effect.Effect<Skills.Skill, McpError.McpError>
  /**
   * Reads one file of `skill` and verifies it: `ref` is a path relative to
   * the skill's root (`references/FORMS.md`) or an absolute URI (default:
   * its `SKILL.md`). Fails with a `SkillError` (`entry`, `unlisted`, `size`,
   * `digest`, `frontmatter`) and never returns content that failed.
   */
  readonly read: (
    skill: Skills.Skill,
    ref?: string,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<SkillFile, McpError.McpError>
  /** The direct children of a directory of a skill (all pages); needs `directoryRead`. */
  readonly readDirectory: (
    uri: string,
    options?: ListOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpError.McpError>
}

/**
 * The skills of one server of a group: `supported` as for
 * {@link SkillsClient}, and the `error` that kept them from being listed.
 *
 * @category models
 * @since 0.3.0
 */
export interface ServerSkills {
  readonly server: string
  readonly supported: boolean
  readonly skills: ReadonlyArray<Skills.Skill>
  readonly error?: McpError.McpError | undefined
}

/**
 * The skills of every server of an `McpGroup`, by server name.
 *
 * @category models
 * @since 0.3.0
 */
export interface GroupSkills {
  /** The skills client of one server (`NotFoundError` for an unknown one, `ServerUnavailableError` when it is down). */
  readonly forServer: (server: string) => Effect.Effect<SkillsClient, McpError.McpError>
  /** The skills of each server that is up, in the group's order; a server that fails has its `error`. */
  readonly list: (options?: ListOptions) => Effect.Effect<ReadonlyArray<ServerSkills>, McpError.McpError>
  readonly get: (
    server: string,
    uri: string,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<Skills.Skill, McpError.McpError>
  readonly read: (
    server: string,
    skill: Skills.Skill,
    ref?: string,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<SkillFile, McpError.McpError>
  readonly readDirectory: (
    server: string,
    uri: string,
    options?: ListOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpError.McpError>
}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/**
 * The skills of the `McpClient` in context.
 *
 * @category services
 * @since 0.3.0
 */
export class McpSkillsClient extends Context.Service<McpSkillsClient, SkillsClient>()(
  "@effect-mcp/core/McpSkillsClient"
) {}

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * The skills of a connected client. Sends nothing: each call asks the
 * server when it runs.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make: (client: McpClient.Client) => SkillsClient = Client.make

/**
 * The skills of every server of a group, by server name.
 *
 * @category constructors
 * @since 0.3.0
 */
export const group: (group: McpGroup.Group) => GroupSkills = Group.make

/**
 * {@link McpSkillsClient} over the `McpClient` in context.
 *
 * @category layers
 * @since 0.3.0
 */
export const layer: Layer.Layer<McpSkillsClient, never, McpClient.McpClient> = Layer.effect(
  McpSkillsClient,
  Effect.gen(function*() {
    return make(yield* McpClient.McpClient)
  })
)
