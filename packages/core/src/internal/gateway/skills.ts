/**
 * The Skills extension (SEP-2640) through a gateway: declared in front while
 * a server behind declares it (`directoryRead` when one does), its requests
 * answered from the servers behind, and the files of their skills read from
 * the server that serves each skill.
 *
 * - `skills/list` merges one page of every server per page in front (the
 *   cursor in front holds each server's own); skill URIs are the servers'.
 * - A skill belongs to the first server, in the group's order, whose listing
 *   has it (as a resource listed by two servers is the first's); its folder
 *   routes `skills/get`, `resources/directory/read` and `resources/read` of
 *   anything in it. A skill no listing has is asked of each server in turn.
 * - A server's resource filters and the gateway's policy apply to skill
 *   URIs: a hidden `SKILL.md` hides the skill, a hidden file is left out of
 *   its skill's entry and cannot be read.
 * - The servers' own `skill://` templates are left out in front (two would
 *   collide): the gateway's one template ({@link TEMPLATE}) routes by owner.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpClient from "../../McpClient.ts"
import type * as McpClientSession from "../../McpClientSession.ts"
import * as McpError from "../../McpError.ts"
import * as McpExtension from "../../McpExtension.ts"
import type * as McpGateway from "../../McpGateway.ts"
import type * as McpGroup from "../../McpGroup.ts"
import type * as McpMethod from "../../McpMethod.ts"
import * as McpResource from "../../McpResource.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import * as McpSkills from "../schema/skills.ts"
import { allows } from "./filter.ts"
import { type Deps, forward, metaOf, toFront } from "./forward.ts"

const SCHEME = "skill://"

/** The template under which the gateway serves the files of every skill behind. @internal */
export const TEMPLATE = "skill://{+path}"

// the most pages of one server's skills read to learn what it serves
const MAX_PAGES = 100

const CURSOR_PREFIX = "mcp-gateway-skills:"

/** A server behind that declares the extension. */
interface Upstream {
  readonly name: string
  readonly directoryRead: boolean
}

type Hints = { readonly ttlMs?: number | undefined; readonly cacheScope?: "public" | "private" | undefined }

/** The skills of a gateway. @internal */
export interface Skills {
  /**
   * Looks again at which servers up declare the extension, and learns in the
   * background the skills of those new or whose resources changed in the
   * views: what the gateway registers and unregisters of its own for it (the
   * extension, its settings changed).
   */
  readonly sync: (views: McpGroup.Views) => Effect.Effect<{
    readonly register: ReadonlyArray<McpServer.Definition<never>>
    readonly unregister: ReadonlyArray<McpServer.Definition<never>>
  }>
  /** Whether a server's resource template is served by the gateway's own (left out in front). */
  readonly covers: (server: string, uriTemplate: string) => boolean
  /** The server that serves the skill whose folder holds `uri`, as far as known. */
  readonly ownerOf: (uri: string) => string | undefined
}

/** The folder of a skill, from the URI of its `SKILL.md`. @internal */
export const folderOf = (skillUri: string): string =>
  skillUri.endsWith(`/${McpSkills.SKILL_FILE}`)
    ? skillUri.slice(0, -McpSkills.SKILL_FILE.length - 1)
    : skillUri.slice(0, Math.max(skillUri.lastIndexOf("/"), 0))

const inside = (folder: string, uri: string) => uri === folder || uri.startsWith(`${folder}/`)

const settingsOf = (capabilities: McpSchema.ServerCapabilities): Readonly<Record<string, unknown>> | undefined => {
  const extensions = (capabilities as { readonly extensions?: Readonly<Record<string, unknown>> }).extensions
  const settings = extensions?.[McpSkills.EXTENSION_ID]
  return typeof settings === "object" && settings !== null ? settings as Readonly<Record<string, unknown>> : undefined
}

const encodeCursor = (next: ReadonlyArray<readonly [string, string]>): string =>
  Base64Url.encode(`${CURSOR_PREFIX}${JSON.stringify(next)}`)

const decodeCursor = (cursor: string): ReadonlyArray<readonly [string, string]> | undefined => {
  const decoded = Base64Url.decodeString(cursor)
  if (Result.isFailure(decoded) || !decoded.success.startsWith(CURSOR_PREFIX)) return undefined
  const parsed = Result.try(() => JSON.parse(decoded.success.slice(CURSOR_PREFIX.length)) as unknown)
  if (Result.isFailure(parsed) || !Array.isArray(parsed.success)) return undefined
  const pairs = parsed.success as ReadonlyArray<unknown>
  return pairs.every((pair) =>
      Array.isArray(pair) && pair.length === 2 && pair.every((part) => typeof part === "string")
    )
    ? pairs as ReadonlyArray<readonly [string, string]>
    : undefined
}

const invalid = (description: string, uri: string) =>
  McpError.protocol(JsonRpc.ErrorCode.InvalidParams, description, { uri })

// what a server answers for what it does not have: the gateway asks the next one
const isNotFound = (error: McpError.McpError) =>
  error.reason._tag === "ProtocolError" &&
  (error.reason.code === JsonRpc.ErrorCode.InvalidParams || error.reason.code === JsonRpc.ErrorCode.ResourceNotFound)

// a resource read that finds nothing, as the gateway's server answers one (2026-07-28: bad params)
const resourceNotFound = (uri: string, context: McpServer.RequestContext) =>
  context.era === "modern" ? invalid(`Resource not found: ${uri}`, uri) : McpResource.notFound(uri)

/** @internal */
export const make = (
  deps: Deps,
  options: Pick<McpGateway.Options, "upstreams" | "policy">
): Effect.Effect<Skills, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { policy, upstreams: filters } = options
    let upstreams: ReadonlyArray<Upstream> = []
    // the folders of each server's skills: from its listings, and found by asking
    const listed = new Map<string, Set<string>>()
    const found = new Map<string, Set<string>>()
    let extension: McpExtension.McpExtension | undefined
    // what each server's skills were last learned from: its resources and templates in the views
    const learnedFrom = new Map<string, string>()
    const relisting = yield* FiberMap.make<string>()

    const passes = (server: string, uri: string) => allows(filters?.[server]?.resources, uri)
    const shown = (server: string, uri: string, context: McpServer.RequestContext) =>
      passes(server, uri) &&
      (policy === undefined ||
        policy({ kind: "resource", name: uri, server, upstreamName: uri }, { auth: context.auth, context }))
    const claim = (map: Map<string, Set<string>>, server: string, skillUri: string) => {
      if (!passes(server, skillUri)) return
      let folders = map.get(server)
      if (folders === undefined) map.set(server, folders = new Set())
      folders.add(folderOf(skillUri))
    }
    const claims = (server: string, folder: string) =>
      listed.get(server)?.has(folder) === true || found.get(server)?.has(folder) === true

    // the deepest folder known that holds `uri`; of two servers with the same, the first's
    const ownerOf = (uri: string): string | undefined => {
      if (!uri.startsWith(SCHEME)) return undefined
      let owner: string | undefined
      let depth = -1
      for (const { name } of upstreams) {
        for (const folders of [listed.get(name), found.get(name)]) {
          if (folders === undefined) continue
          for (const folder of folders) {
            if (folder.length > depth && inside(folder, uri)) {
              owner = name
              depth = folder.length
            }
          }
        }
      }
      return owner
    }
    // the first server whose listing has this very skill
    const firstClaimant = (skillUri: string) => {
      const folder = folderOf(skillUri)
      return upstreams.find(({ name }) => claims(name, folder))?.name
    }

    // a request of the extension behind, on the group's connection: it asks the client nothing
    const send = <M extends typeof McpSkills.ListSkills | typeof McpSkills.GetSkill | typeof McpSkills.ReadDirectory>(
      server: string,
      context: McpServer.RequestContext | undefined,
      method: M,
      params: McpMethod.Params<M>
    ): Effect.Effect<McpMethod.Result<M>, McpError.McpError> =>
      Effect.flatMap(deps.group.client(server), (client: McpClient.Client) => {
        const meta = context === undefined ? undefined : metaOf(context)
        // a method of the extension's, never `initialize`
        const sent = meta === undefined ? params : { ...params, _meta: meta }
        return client.session.request(method as McpClientSession.AfterInitialize<M>, sent, {
          timeout: deps.callTimeout
        })
      }).pipe(Effect.mapError((error) => toFront(server, error)))

    // each server in turn until one has it (`None`: not here)
    const firstServing = <A>(
      candidates: ReadonlyArray<Upstream>,
      uri: string,
      ask: (server: string) => Effect.Effect<A, McpError.McpError>
    ): Effect.Effect<Option.Option<readonly [string, A]>, McpError.McpError> =>
      Effect.gen(function*() {
        for (const { name } of candidates) {
          if (!passes(name, uri)) continue
          const answer = yield* ask(name).pipe(
            Effect.map(Option.some),
            Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
          )
          if (Option.isSome(answer)) return Option.some([name, answer.value] as const)
        }
        return Option.none()
      })

    // the cache hints of an answer from these (2026-07-28 in front): the shortest-lived, private if any is
    const hinted = <A extends object>(context: McpServer.RequestContext, result: A, from: ReadonlyArray<Hints>): A => {
      const { cacheScope: _, ttlMs: __, ...rest } = result as A & Hints
      if (context.era !== "modern") return rest as A
      let ttlMs = from.length === 0 ? 0 : Infinity
      let cacheScope: "public" | "private" = policy === undefined && from.length > 0 ? "public" : "private"
      for (const hints of from) {
        ttlMs = Math.min(ttlMs, Math.max(0, hints.ttlMs ?? 0))
        if (hints.cacheScope !== "public") cacheScope = "private"
      }
      return { ...rest, ttlMs, cacheScope } as A
    }

    // a skill's entry as the client may see it: `undefined` when hidden, without the files it may not read
    const entryFor = (
      server: string,
      skill: McpSkills.Skill,
      context: McpServer.RequestContext
    ): McpSkills.Skill | undefined => {
      if (!shown(server, skill.uri, context)) return undefined
      if (skill.resources === McpSkills.DYNAMIC) return skill
      const resources = skill.resources.filter((file) => shown(server, file.uri, context))
      return resources.length === skill.resources.length ? skill : { ...skill, resources }
    }

    const listSkills = (params: McpMethod.Params<typeof McpSkills.ListSkills>, context: McpServer.RequestContext) =>
      Effect.gen(function*() {
        const round = params.cursor === undefined
          ? upstreams.map(({ name }) => [name, undefined] as const)
          : decodeCursor(params.cursor)
        if (round === undefined) {
          return yield* McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Invalid cursor: ${params.cursor}`)
        }
        const pages = yield* Effect.forEach(
          round.filter(([name]) => upstreams.some((upstream) => upstream.name === name)),
          ([name, cursor]) =>
            Effect.map(
              send(name, context, McpSkills.ListSkills, cursor === undefined ? {} : { cursor }),
              (page) => [name, page] as const
            ),
          { concurrency: "unbounded" }
        )
        for (const [name, page] of pages) for (const skill of page.skills) claim(listed, name, skill.uri)
        const skills: Array<McpSkills.Skill> = []
        const seen = new Set<string>()
        const next: Array<readonly [string, string]> = []
        for (const [name, page] of pages) {
          for (const skill of page.skills) {
            // a skill two servers serve is the first's
            if (seen.has(skill.uri) || firstClaimant(skill.uri) !== name) continue
            const entry = entryFor(name, skill, context)
            if (entry === undefined) continue
            seen.add(skill.uri)
            skills.push(entry)
          }
          if (page.nextCursor !== undefined) next.push([name, page.nextCursor])
        }
        const result = next.length === 0 ? { skills } : { skills, nextCursor: encodeCursor(next) }
        return hinted(context, result, pages.map(([, page]) => page))
      })

    const unknownSkill = (uri: string) => invalid(`Unknown skill: ${uri}`, uri)

    const getSkill = (params: McpSkills.GetSkillParams, context: McpServer.RequestContext) =>
      Effect.gen(function*() {
        const { uri } = params
        const owner = ownerOf(uri)
        const answered = owner !== undefined
          ? Option.some([owner, yield* send(owner, context, McpSkills.GetSkill, { uri })] as const)
          : yield* firstServing(upstreams, uri, (server) => send(server, context, McpSkills.GetSkill, { uri }))
        if (Option.isNone(answered)) return yield* unknownSkill(uri)
        const [server, result] = answered.value
        if (owner === undefined) claim(found, server, result.skill.uri)
        const skill = entryFor(server, result.skill, context)
        if (skill === undefined) return yield* unknownSkill(uri)
        return hinted(context, { ...result, skill }, [result])
      })

    const readDirectory = (params: McpSkills.ReadDirectoryParams, context: McpServer.RequestContext) =>
      Effect.gen(function*() {
        const { _meta: _, ...request } = params
        const { uri } = request
        const readers = upstreams.filter((upstream) => upstream.directoryRead)
        const owner = ownerOf(uri)
        const answered = owner !== undefined && readers.some((upstream) => upstream.name === owner)
          ? Option.some([owner, yield* send(owner, context, McpSkills.ReadDirectory, request)] as const)
          : owner !== undefined
          ? Option.none()
          : yield* firstServing(readers, uri, (server) => send(server, context, McpSkills.ReadDirectory, request))
        if (Option.isNone(answered) || !shown(answered.value[0], uri, context)) {
          return yield* invalid(`Not a directory: ${uri}`, uri)
        }
        const [server, result] = answered.value
        const resources = result.resources.filter((resource) => shown(server, resource.uri, context))
        return hinted(context, { ...result, resources }, [result])
      })

    // any file of a skill behind, read from the server that serves it
    const template: McpResource.McpResourceTemplate = {
      _tag: "McpResourceTemplate",
      uriTemplate: TEMPLATE,
      template: {
        uriTemplate: TEMPLATE,
        name: "skills",
        description: "The files of the skills served behind this gateway"
      },
      hold: true,
      match: (uri) => uri.startsWith(SCHEME) ? Option.some({ path: uri.slice(SCHEME.length) }) : Option.none(),
      read: (uri, _, context) =>
        Effect.gen(function*() {
          const read = (server: string) =>
            forward(deps, server, context, (client, options) => client.readResource(uri, options))
          const owner = ownerOf(uri)
          if (owner !== undefined) {
            if (!shown(owner, uri, context)) return yield* resourceNotFound(uri, context)
            return yield* read(owner)
          }
          const answered = yield* firstServing(upstreams, uri, read)
          if (Option.isNone(answered) || !shown(answered.value[0], uri, context)) {
            return yield* resourceNotFound(uri, context)
          }
          return answered.value[1]
        }),
      list: undefined,
      complete: {}
    }

    const extensionOf = (directoryRead: boolean): McpExtension.McpExtension =>
      McpExtension.make({
        id: McpSkills.EXTENSION_ID,
        settings: directoryRead ? { directoryRead: true } : {},
        requests: [
          McpExtension.request(McpSkills.ListSkills, listSkills),
          McpExtension.request(McpSkills.GetSkill, getSkill),
          ...(directoryRead ? [McpExtension.request(McpSkills.ReadDirectory, readDirectory)] : [])
        ],
        definitions: [template]
      })

    // what a server lists now: the folders of its skills, in place of those it listed before
    const relist = (server: string) =>
      Effect.gen(function*() {
        const folders = new Map<string, Set<string>>()
        let cursor: string | undefined
        for (let page = 0; page < MAX_PAGES; page++) {
          const answer = yield* send(server, undefined, McpSkills.ListSkills, cursor === undefined ? {} : { cursor })
          for (const skill of answer.skills) claim(folders, server, skill.uri)
          if (answer.nextCursor === undefined || answer.nextCursor === cursor) break
          cursor = answer.nextCursor
        }
        if (upstreams.some((upstream) => upstream.name === server)) listed.set(server, folders.get(server) ?? new Set())
      }).pipe(Effect.ignore)

    const resourcesOf = (views: McpGroup.Views, server: string) =>
      JSON.stringify([
        views.resources.filter((entry) => entry.server === server).map((entry) => entry.resource),
        views.resourceTemplates.filter((entry) => entry.server === server).map((entry) => entry.template)
      ])

    const sync = (views: McpGroup.Views) =>
      Effect.gen(function*() {
        const next: Array<Upstream> = []
        for (const status of yield* deps.group.servers) {
          if (status.status !== "up") continue
          const client = yield* Effect.option(deps.group.client(status.name))
          if (Option.isNone(client)) continue
          const settings = settingsOf(client.value.serverCapabilities)
          if (settings !== undefined) next.push({ name: status.name, directoryRead: settings.directoryRead === true })
        }
        upstreams = next
        for (const map of [listed, found, learnedFrom]) {
          for (const name of [...map.keys()]) if (!next.some((upstream) => upstream.name === name)) map.delete(name)
        }
        for (const { name } of next) {
          const source = resourcesOf(views, name)
          if (learnedFrom.get(name) === source) continue
          learnedFrom.set(name, source)
          yield* FiberMap.run(relisting, name, relist(name), { startImmediately: true })
        }
        // declared with `directoryRead` when a server behind reads directories
        const before = extension
        const wanted = next.length === 0 ? undefined : next.some((upstream) => upstream.directoryRead)
        const had = before === undefined ? undefined : before.settings.directoryRead === true
        if (wanted === had) return { register: [], unregister: [] }
        extension = wanted === undefined ? undefined : extensionOf(wanted)
        return {
          register: extension === undefined ? [] : [extension],
          unregister: before === undefined ? [] : [before]
        }
      })

    return {
      sync,
      covers: (server, uriTemplate) =>
        upstreams.length > 0 &&
        (uriTemplate === TEMPLATE ||
          (uriTemplate.startsWith(SCHEME) && upstreams.some((upstream) => upstream.name === server))),
      ownerOf
    }
  })
