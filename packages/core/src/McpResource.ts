/**
 * Resources: static ones with a fixed URI, and templates (RFC 6570) whose
 * variables are matched out of the requested URI and decoded with Schemas.
 * Contents are text (a string) or binary (bytes), or any list of resource
 * contents. A read's typed failure is answered with its `McpError`, or
 * `-32603` whose message is the failure's text (`McpError.messageOf`: its
 * `message`, or `Tag: {fields}`); a defect with `-32603 Internal error`.
 * Both are logged on the server, not sent to the client's log.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Failure from "./internal/server/failure.ts"
import * as JsonRpc from "./JsonRpc.ts"
import * as McpContent from "./McpContent.ts"
import * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"
import * as UriTemplate from "./UriTemplate.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * What a read returns: text, bytes, or resource contents.
 *
 * @category models
 * @since 0.1.0
 */
export type Contents =
  | string
  | Uint8Array
  | ReadonlyArray<McpSchema.TextResourceContents | McpSchema.BlobResourceContents>

/**
 * A completion callback: candidate values for a variable or argument, given
 * what the user typed and the other arguments already resolved.
 *
 * @category models
 * @since 0.1.0
 */
export type Complete<R> = (
  value: string,
  context: { readonly arguments: Readonly<Record<string, string>> }
) => Effect.Effect<ReadonlyArray<string>, McpError.McpError, R>

/**
 * A resource with a fixed URI.
 *
 * @category models
 * @since 0.1.0
 */
export interface McpResource<out R = never> {
  readonly _tag: "McpResource"
  readonly uri: string
  /** The entry of `resources/list`. */
  readonly resource: McpSchema.Resource
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  readonly read: (
    context: McpServer.RequestContext
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError, R>
  /** 2026-07-28: hold a read instead of replaying it when it asks the client (see `McpTool.Info.hold`). */
  readonly hold?: boolean | undefined
}

/**
 * A resource template.
 *
 * @category models
 * @since 0.1.0
 */
export interface McpResourceTemplate<out R = never> {
  readonly _tag: "McpResourceTemplate"
  readonly uriTemplate: string
  /** The entry of `resources/templates/list`. */
  readonly template: McpSchema.ResourceTemplate
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
  /** The variables of a URI this template matches. */
  readonly match: (uri: string) => Option.Option<Readonly<Record<string, string | ReadonlyArray<string>>>>
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string | ReadonlyArray<string>>>,
    context: McpServer.RequestContext
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError, R>
  /** Concrete resources of this template, for `resources/list`. */
  readonly list:
    | ((context: McpServer.RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpError.McpError, R>)
    | undefined
  readonly complete: Readonly<Record<string, Complete<R>>>
  /** Answers `completion/complete` for this template whole, in place of `complete` (a gateway's, passing the request on). */
  readonly completion?:
    | ((
      params: McpSchema.CompleteRequestParams,
      context: McpServer.RequestContext
    ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError, R>)
    | undefined
  /** 2026-07-28: hold a read instead of replaying it when it asks the client (see `McpTool.Info.hold`). */
  readonly hold?: boolean | undefined
}

/**
 * The listing fields of a resource besides its URI and name.
 *
 * @category models
 * @since 0.1.0
 */
export interface Info {
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly annotations?: McpSchema.Annotations | undefined
  readonly icons?: ReadonlyArray<McpSchema.Icon> | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
  /** Cache hints of this definition's list entry (and, for resources, reads) in 2026-07-28 answers; default: the server's. */
  readonly cache?: Partial<McpSchema.CacheHints> | undefined
}

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * A static resource.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <E, R>(
  options: Info & {
    readonly uri: string
    readonly name: string
    readonly size?: number | undefined
    readonly read: (context: McpServer.RequestContext) => Effect.Effect<Contents, E, R>
  }
): McpResource<R> => ({
  _tag: "McpResource",
  uri: options.uri,
  resource: listing({ uri: options.uri, name: options.name }, { ...options, size: options.size }),
  cache: options.cache,
  read: (context) =>
    Failure.guard(Failure.siteOf(context, "resource", options.uri), Effect.suspend(() => options.read(context))).pipe(
      Effect.map((contents) => toReadResult(options.uri, contents, options.mimeType))
    )
})

/**
 * A resource template. `variables` gives a Schema (from string) per variable
 * to decode it with; variables without one stay strings. A URI whose
 * variables do not decode is answered with `-32602`.
 *
 * @example
 * ```ts
 * import { McpResource } from "@effect-mcp/core"
 * import { Effect } from "effect"
 *
 * const file = McpResource.template({
 *   uriTemplate: "file:///{+path}",
 *   name: "file",
 *   read: ({ path }) => Effect.succeed(`contents of ${path}`)
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const template = <
  const T extends string,
  const V extends { readonly [K in UriTemplate.Variables<T>]?: Schema.Codec<any, string, any, never> } = {},
  E = never,
  R = never,
  R2 = never
>(
  options: Info & {
    readonly uriTemplate: T
    readonly name: string
    readonly variables?: V | undefined
    readonly list?:
      | ((context: McpServer.RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, E, R2>)
      | undefined
    readonly complete?: { readonly [K in UriTemplate.Variables<T>]?: Complete<R2> } | undefined
    readonly read: (
      variables: {
        readonly [K in UriTemplate.Variables<T>]: K extends keyof V ? Schema.Schema.Type<NonNullable<V[K]>> : string
      },
      uri: string,
      context: McpServer.RequestContext
    ) => Effect.Effect<Contents, E, R>
  }
): McpResourceTemplate<R | R2 | VariableServices<V>> => {
  const parsed = UriTemplate.make(options.uriTemplate)
  const decoders: Record<string, (input: unknown) => Effect.Effect<unknown, Schema.SchemaError, any>> = {}
  for (const [name, schema] of Object.entries(options.variables ?? {})) {
    if (schema !== undefined) decoders[name] = Schema.decodeUnknownEffect(schema as Schema.Codec<unknown, string, any>)
  }
  const list = options.list
  return {
    _tag: "McpResourceTemplate",
    uriTemplate: options.uriTemplate,
    template: listing({ uriTemplate: options.uriTemplate, name: options.name }, options),
    cache: options.cache,
    match: (uri) =>
      UriTemplate.match(parsed, uri) as Option.Option<Readonly<Record<string, string | ReadonlyArray<string>>>>,
    read: (uri, variables, context) =>
      Effect.forEach(Object.entries(variables), ([name, value]) => {
        const decode = decoders[name]
        return decode === undefined
          ? Effect.succeed([name, value] as const)
          : Effect.map(decode(value), (decoded) => [name, decoded] as const)
      }).pipe(
        Effect.mapError((error) =>
          McpError.invalidParams("resources/read", `${uri}: ${SchemaIssue.makeFormatterDefault()(error.issue)}`)
        ),
        Effect.flatMap((entries) =>
          Failure.guard(
            Failure.siteOf(context, "resource", uri),
            Effect.suspend(() => options.read(Object.fromEntries(entries) as any, uri, context))
          )
        ),
        Effect.map((contents) => toReadResult(uri, contents, options.mimeType))
      ),
    list: list === undefined
      ? undefined
      : (context) =>
        Failure.guard(Failure.siteOf(context, "resource", options.uriTemplate), Effect.suspend(() => list(context))),
    complete: (options.complete ?? {}) as Record<string, Complete<R2>>
  }
}

type VariableServices<V> = {
  readonly [K in keyof V]-?: NonNullable<V[K]> extends Schema.Top ? NonNullable<V[K]>["DecodingServices"]
    : never
}[keyof V]

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

/**
 * The error of a read of an unknown resource: `-32002` with the URI as data.
 *
 * @category errors
 * @since 0.1.0
 */
export const notFound = (uri: string): McpError.McpError =>
  McpError.protocol(JsonRpc.ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri })

// -----------------------------------------------------------------------------
// Internal
// -----------------------------------------------------------------------------

const toReadResult = (uri: string, contents: Contents, mimeType: string | undefined): McpSchema.ReadResourceResult =>
  typeof contents === "string" || contents instanceof Uint8Array
    ? { contents: [McpContent.resourceContents(uri, contents, mimeType)] }
    : { contents: contents as Array<McpSchema.TextResourceContents | McpSchema.BlobResourceContents> }

const listing = <A extends object>(base: A, info: Info & { readonly size?: number | undefined }): A => {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  for (const key of ["title", "description", "mimeType", "size", "annotations", "icons", "_meta"] as const) {
    if (info[key] !== undefined) out[key] = info[key]
  }
  return out as A
}
