/**
 * The Skills extension serving a catalog: `skills/list` and
 * `resources/directory/read` paged by URI (a cursor names the last URI
 * sent, so a reload between pages skips nothing still served), `skills/get`,
 * and a `skill://` template that lists each skill's `SKILL.md` and reads
 * every file, refusing one whose size or digest no longer matches its entry.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpContent from "../../McpContent.ts"
import * as McpError from "../../McpError.ts"
import * as McpExtension from "../../McpExtension.ts"
import * as McpResource from "../../McpResource.ts"
import type * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpSkills from "../../McpSkills.ts"
import { EXTENSION_ID, GetSkill, ListSkills, ReadDirectory } from "../schema/skills.ts"
import * as CacheHints from "../server/cacheHints.ts"
import * as Build from "./build.ts"
import * as Catalog from "./catalog.ts"
import { sha256 } from "./digest.ts"
import * as Rules from "./rules.ts"

const CURSOR = "skills-after:"

const invalidParams = (message: string) => McpError.protocol(JsonRpc.ErrorCode.InvalidParams, message)

/** Up to `pageSize` items after the cursor's URI, and the cursor of the next page if more follow. */
const page = <A>(
  items: ReadonlyArray<A>,
  uriOf: (item: A) => string,
  cursor: string | undefined,
  pageSize: number
): Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly nextCursor?: string }, McpError.McpError> => {
  let start = 0
  if (cursor !== undefined) {
    const decoded = Base64Url.decodeString(cursor)
    if (Result.isFailure(decoded) || !decoded.success.startsWith(CURSOR)) {
      return Effect.fail(invalidParams(`Invalid cursor: ${cursor}`))
    }
    const after = decoded.success.slice(CURSOR.length)
    start = items.findIndex((item) => Rules.compare(uriOf(item), after) > 0)
    if (start === -1) start = items.length
  }
  const end = Math.min(items.length, start + pageSize)
  const slice = items.slice(start, end)
  return Effect.succeed(
    end < items.length && slice.length > 0
      ? { items: slice, nextCursor: Base64Url.encode(`${CURSOR}${uriOf(slice[slice.length - 1]!)}`) }
      : { items: slice }
  )
}

const withCursor = <A extends object>(result: A, nextCursor: string | undefined): A =>
  nextCursor === undefined ? result : { ...result, nextCursor }

/** The bytes of a served file, read again and checked against its entry. */
const readChecked = (
  internals: Catalog.Internals,
  file: Build.FileRecord
): Effect.Effect<Uint8Array, McpError.McpError> =>
  Effect.gen(function*() {
    const bytes = yield* internals.files.read(file.path).pipe(
      Effect.mapError((error) => McpError.skill("changed", file.uri, `${file.uri} could not be read: ${error.message}`))
    )
    if (bytes.byteLength !== file.size) {
      return yield* Effect.fail(McpError.skill(
        "changed",
        file.uri,
        `${file.uri} changed since the skills catalog was loaded (${bytes.byteLength} bytes, listed with ${file.size}); reload the catalog`
      ))
    }
    const digest = yield* sha256(bytes)
    if (digest !== file.digest) {
      return yield* Effect.fail(McpError.skill(
        "changed",
        file.uri,
        `${file.uri} changed since the skills catalog was loaded (its digest is not the listed one); reload the catalog`
      ))
    }
    return bytes
  })

const notFound = (uri: string, context: McpServer.RequestContext, why?: string) =>
  context.era === "modern"
    ? McpError.protocol(JsonRpc.ErrorCode.InvalidParams, why ?? `Resource not found: ${uri}`, { uri })
    : why === undefined
    ? McpResource.notFound(uri)
    : McpError.protocol(JsonRpc.ErrorCode.ResourceNotFound, why, { uri })

const templateOf = (internals: Catalog.Internals) => {
  const root = Rules.uriOf(internals.settings.prefix)
  const base = internals.settings.prefix.length === 0 ? root : `${root}/`
  return McpResource.template({
    uriTemplate: `${base}{+path}`,
    name: "skills",
    description: "The files of the skills this server serves (Skills extension, SEP-2640)",
    cache: internals.settings.cache,
    list: () => Effect.map(Ref.get(internals.state), (snapshot) => snapshot.listed),
    read: (_, uri, context): Effect.Effect<McpResource.Contents, McpError.McpError> =>
      Effect.flatMap(Ref.get(internals.state), (snapshot) => {
        const key = Rules.canonical(uri)
        const file = snapshot.files.get(key)
        if (file === undefined) {
          return Effect.fail(
            snapshot.dirs.has(key)
              ? notFound(uri, context, `${uri} is a directory; read it with resources/directory/read`)
              : notFound(uri, context)
          )
        }
        return Effect.map(
          readChecked(internals, file),
          (
            bytes
          ): McpResource.Contents => [McpContent.resourceContents(uri, Build.textOf(bytes) ?? bytes, file.mimeType)]
        )
      })
  })
}

/** @internal */
export const extension = (
  catalog: McpSkills.Catalog,
  options?: McpSkills.ExtensionOptions
): McpExtension.McpExtension => {
  const internals = Catalog.internalsOf(catalog)
  const { pageSize } = internals.settings
  const defaults = CacheHints.defaultsOf(internals.settings.cache)
  const hinted = <A extends object>(context: McpServer.RequestContext, result: A): A =>
    CacheHints.withHints(defaults, context, result, [])
  const directoryRead = options?.directoryRead ?? true
  const requests: Array<McpExtension.Request> = [
    McpExtension.request(
      ListSkills,
      (params, context) =>
        Effect.flatMap(Ref.get(internals.state), (snapshot) =>
          Effect.map(
            page(snapshot.entries, (skill) => skill.uri, params?.cursor, pageSize),
            (result) => hinted(context, withCursor({ skills: result.items }, result.nextCursor))
          ))
    ),
    McpExtension.request(GetSkill, (params, context) =>
      Effect.flatMap(Ref.get(internals.state), (snapshot) => {
        const skill = snapshot.skills.get(Rules.canonical(params.uri))
        return skill === undefined
          ? Effect.fail(invalidParams(`No skill is served at ${params.uri}`))
          : Effect.succeed(hinted(context, { skill }))
      }))
  ]
  if (directoryRead) {
    requests.push(
      McpExtension.request(ReadDirectory, (params, context) =>
        Effect.flatMap(Ref.get(internals.state), (snapshot) => {
          const children = snapshot.dirs.get(Rules.canonical(params.uri))
          if (children === undefined) {
            return Effect.fail(invalidParams(`${params.uri} is not a directory of a served skill`))
          }
          return Effect.map(
            page(children, (child: McpSchema.Resource) => child.uri, params.cursor, pageSize),
            (result) => hinted(context, withCursor({ resources: result.items }, result.nextCursor))
          )
        }))
    )
  }
  return McpExtension.make({
    id: EXTENSION_ID,
    settings: directoryRead ? { directoryRead: true } : {},
    requests,
    definitions: [templateOf(internals)],
    attach: (server) => {
      internals.servers.add(server)
      return () => void internals.servers.delete(server)
    }
  })
}
