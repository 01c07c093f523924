/**
 * The MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`): a tool
 * linked to an HTML app, a `ui://` resource of MIME type
 * `text/html;profile=mcp-app` that the host renders in a sandboxed iframe
 * with the tool's result. A client declares the extension
 * ({@link clientExtension}); a handler checks it ({@link clientSupports}:
 * per request in 2026-07-28, per session in the legacy era) and keeps
 * meaningful text for clients without it. What the host and the iframe say
 * to each other (`ui/initialize`, …) is the host's business.
 *
 * ```ts
 * const view = McpApps.resource({ uri: "ui://clock/view.html", name: "clock", html })
 * const clock = McpApps.linkTool(McpTool.make("clock", {
 *   handler: (_, context) => Effect.succeed(McpApps.clientSupports(context) ? appResult : "12:00")
 * }), { resourceUri: view })
 * ```
 *
 * @since 0.3.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as McpApp from "./internal/apps/app.ts"
import type * as McpClient from "./McpClient.ts"
import type * as McpError from "./McpError.ts"
import * as McpExtension from "./McpExtension.ts"
import * as McpResource from "./McpResource.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"
import type * as McpTool from "./McpTool.ts"

// -----------------------------------------------------------------------------
// Constants
// -----------------------------------------------------------------------------

/**
 * The extension's id, the key of `capabilities.extensions`.
 *
 * @category constants
 * @since 0.3.0
 */
export const EXTENSION_ID = "io.modelcontextprotocol/ui"

/**
 * The MIME type of an app resource (an HTML document).
 *
 * @category constants
 * @since 0.3.0
 */
export const MIME_TYPE = "text/html;profile=mcp-app"

/**
 * The older flat `_meta` key of a tool's app URI, kept in step with
 * `_meta.ui.resourceUri` for hosts that read only it.
 *
 * @category constants
 * @since 0.3.0
 */
export const RESOURCE_URI_META_KEY = "ui/resourceUri"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * The origins an app may reach (its Content Security Policy); none when
 * omitted.
 *
 * @category models
 * @since 0.3.0
 */
export interface Csp {
  /** `connect-src`: fetch, XHR, WebSocket. */
  readonly connectDomains?: ReadonlyArray<string> | undefined
  /** `img-src`, `script-src`, `style-src`, `font-src`, `media-src`. */
  readonly resourceDomains?: ReadonlyArray<string> | undefined
  /** `frame-src`: nested iframes. */
  readonly frameDomains?: ReadonlyArray<string> | undefined
  /** `base-uri`. */
  readonly baseUriDomains?: ReadonlyArray<string> | undefined
}

/**
 * The browser permissions an app asks for (the host may refuse them).
 *
 * @category models
 * @since 0.3.0
 */
export interface Permissions {
  readonly camera?: {} | undefined
  readonly microphone?: {} | undefined
  readonly geolocation?: {} | undefined
  readonly clipboardWrite?: {} | undefined
}

/**
 * An app resource's `_meta.ui`: how the host should sandbox and frame it.
 *
 * @category models
 * @since 0.3.0
 */
export interface ResourceUi {
  readonly csp?: Csp | undefined
  readonly permissions?: Permissions | undefined
  /** A dedicated origin for the app's sandbox, in the host's format. */
  readonly domain?: string | undefined
  /** Whether the host should draw a border and background around it. */
  readonly prefersBorder?: boolean | undefined
}

/**
 * Who may call a tool linked to an app: the model, the app (from its
 * iframe), or both (the default).
 *
 * @category models
 * @since 0.3.0
 */
export type Visibility = "model" | "app"

/**
 * A tool's `_meta.ui`: its app and who may call it.
 *
 * @category models
 * @since 0.3.0
 */
export interface ToolUi {
  readonly resourceUri: string
  readonly visibility?: ReadonlyArray<Visibility> | undefined
}

/**
 * What a client declared for the extension (`capabilities.extensions[EXTENSION_ID]`).
 *
 * @category models
 * @since 0.3.0
 */
export interface ClientCapability {
  readonly mimeTypes: ReadonlyArray<string>
}

/**
 * What a read of an app resource returns: the HTML (text or bytes), or the
 * HTML with the `_meta.ui` of this read, laid over the resource's own on the
 * content item.
 *
 * @category models
 * @since 0.3.0
 */
export type Contents = string | Uint8Array | {
  readonly html: string | Uint8Array
  readonly ui?: ResourceUi | undefined
}

/**
 * An app read by a client ({@link readToolApp}).
 *
 * @category models
 * @since 0.3.0
 */
export interface App {
  /** The tool's name. */
  readonly tool: string
  readonly resourceUri: string
  readonly visibility: ReadonlyArray<Visibility> | undefined
  /** The HTML document (a `blob` decoded as UTF-8). */
  readonly html: string
  readonly mimeType: string | undefined
  /** The content item's `_meta.ui`, else the resource listing's (the whole object, not field by field). */
  readonly ui: ResourceUi | undefined
  /** The content item's `_meta`. */
  readonly meta: Readonly<Record<string, unknown>> | undefined
}

// -----------------------------------------------------------------------------
// Server side
// -----------------------------------------------------------------------------

/**
 * An app resource: the `ui://` URI, the MIME type {@link MIME_TYPE}, and
 * `_meta.ui` (from `csp`, `permissions`, `domain`, `prefersBorder`) both on
 * the `resources/list` entry and on the content item of each read, beside
 * the other `_meta` given. The HTML is fixed (`html`) or read per request
 * (`read`, which may return this read's own `_meta.ui`).
 *
 * **Gotchas**
 * - A URI of another scheme is a bug of the definition: the constructor
 *   throws an `IllegalArgumentError` (a defect where the layer is built).
 *
 * @example
 * ```ts
 * import { McpApps } from "@effect-mcp/core"
 *
 * const view = McpApps.resource({
 *   uri: "ui://weather/view.html",
 *   name: "weather view",
 *   html: "<!doctype html><p>…</p>",
 *   csp: { connectDomains: ["https://api.example.com"] },
 *   prefersBorder: true
 * })
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const resource = <E = never, R = never>(options: ResourceOptions<E, R>): McpResource.McpResource<R> => {
  const { annotations, cache, csp, description, domain, icons, permissions, prefersBorder, size, title } = options
  requireUiScheme("McpApps.resource", options.uri)
  const ui = McpApp.resourceUi({ csp, permissions, domain, prefersBorder })
  const html = options.html
  const read: ((context: McpServer.RequestContext) => Effect.Effect<Contents, E, R>) | undefined = html === undefined
    ? options.read
    : () => Effect.succeed(html)
  if (read === undefined) throw new Cause.IllegalArgumentError(`McpApps.resource ${options.uri}: give html or read`)
  return McpResource.make({
    uri: options.uri,
    name: options.name,
    title,
    description,
    icons,
    annotations,
    size,
    cache,
    mimeType: MIME_TYPE,
    _meta: McpApp.withUi(options._meta, ui),
    read: (context) =>
      Effect.map(read(context), (contents) => [McpApp.contentItem(options.uri, MIME_TYPE, ui, contents)])
  })
}

/**
 * The options of {@link resource}: the listing fields of `McpResource.make`
 * (but the MIME type), the app's `_meta.ui` fields, and its HTML.
 *
 * @category models
 * @since 0.3.0
 */
export type ResourceOptions<E, R> =
  & Omit<McpResource.Info, "mimeType">
  & ResourceUi
  & {
    /** A `ui://` URI. */
    readonly uri: string
    readonly name: string
    readonly size?: number | undefined
  }
  & (
    | { readonly html: string; readonly read?: undefined }
    | { readonly html?: undefined; readonly read: (context: McpServer.RequestContext) => Effect.Effect<Contents, E, R> }
  )

/**
 * A tool's `_meta` linking it to an app: `ui.resourceUri` (with
 * `ui.visibility`) and the flat `ui/resourceUri`, laid over `meta` (other
 * keys kept, its `ui` fields kept unless replaced). For `McpTool.make`'s
 * `_meta`; {@link linkTool} does it to a tool already made.
 *
 * @category constructors
 * @since 0.3.0
 */
export const toolMeta = (
  link: LinkOptions,
  meta?: Readonly<Record<string, unknown>> | undefined
): Readonly<Record<string, unknown>> => {
  const resourceUri = typeof link.resourceUri === "string" ? link.resourceUri : link.resourceUri.uri
  requireUiScheme("McpApps.linkTool (toolMeta)", resourceUri)
  const previous = McpApp.record(meta?.ui)
  const ui: Record<string, unknown> = { ...previous, resourceUri }
  if (link.visibility !== undefined) ui.visibility = [...link.visibility]
  return { ...meta, ui, [RESOURCE_URI_META_KEY]: resourceUri }
}

/**
 * What links a tool to an app: the app resource (or its `ui://` URI) and who
 * may call the tool (default: the model and the app).
 *
 * @category models
 * @since 0.3.0
 */
export interface LinkOptions {
  readonly resourceUri: string | McpResource.McpResource<any>
  readonly visibility?: ReadonlyArray<Visibility> | undefined
}

/**
 * The tool linked to an app: its listing's `_meta.ui` (`resourceUri`,
 * `visibility`) and flat `_meta["ui/resourceUri"]` set together (see
 * {@link toolMeta}); the tool is otherwise the same.
 *
 * @example
 * ```ts
 * import { McpApps, McpTool } from "@effect-mcp/core"
 * import { Effect, Schema } from "effect"
 *
 * const view = McpApps.resource({ uri: "ui://weather/view.html", name: "weather view", html: "<!doctype html><p>…</p>" })
 * const weather = McpApps.linkTool(
 *   McpTool.make("weather", {
 *     input: Schema.Struct({ city: Schema.String }),
 *     handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
 *   }),
 *   { resourceUri: view }
 * )
 * // a tool only the app calls, from its iframe
 * const appOnly = McpApps.linkTool({ resourceUri: view, visibility: ["app"] })
 * const refresh = appOnly(McpTool.make("refresh", { handler: () => Effect.succeed("refreshed") }))
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const linkTool: {
  (link: LinkOptions): <R>(tool: McpTool.McpTool<R>) => McpTool.McpTool<R>
  <R>(tool: McpTool.McpTool<R>, link: LinkOptions): McpTool.McpTool<R>
} = dual(2, <R>(tool: McpTool.McpTool<R>, link: LinkOptions): McpTool.McpTool<R> => ({
  ...tool,
  tool: { ...tool.tool, _meta: toolMeta(link, tool.tool._meta) }
}))

/**
 * What the requesting client declared for the extension, when it declared
 * it with {@link MIME_TYPE} among its `mimeTypes`; else `undefined`. Per
 * request in 2026-07-28 (the request's own capabilities), per session in
 * the legacy era.
 *
 * @category capabilities
 * @since 0.3.0
 */
export const clientCapability = (
  context: Pick<McpServer.NotificationContext, "clientCapabilities">
): ClientCapability | undefined => {
  const settings = McpExtension.clientSettings(context, EXTENSION_ID)
  if (settings === undefined) return undefined
  const mimeTypes = Array.isArray(settings.mimeTypes)
    ? settings.mimeTypes.filter((type): type is string => typeof type === "string")
    : []
  return mimeTypes.some((type) => McpApp.sameMimeType(type, MIME_TYPE)) ? { mimeTypes } : undefined
}

/**
 * `true` when the requesting client renders apps (see
 * {@link clientCapability}): a handler answers it with what the app shows,
 * and others with meaningful text.
 *
 * @category capabilities
 * @since 0.3.0
 */
export const clientSupports = (context: Pick<McpServer.NotificationContext, "clientCapabilities">): boolean =>
  clientCapability(context) !== undefined

// -----------------------------------------------------------------------------
// Client side
// -----------------------------------------------------------------------------

/**
 * The `extensions` entry of a client that renders apps, for
 * `McpClient.Options.extensions`: `{ [EXTENSION_ID]: { mimeTypes } }`
 * (default `[MIME_TYPE]`).
 *
 * @category client
 * @since 0.3.0
 */
export const clientExtension = (
  mimeTypes: ReadonlyArray<string> = [MIME_TYPE]
): { readonly [EXTENSION_ID]: { readonly mimeTypes: ReadonlyArray<string> } } => ({
  [EXTENSION_ID]: { mimeTypes: [...mimeTypes] }
})

/**
 * A listed tool's `_meta.ui` (`resourceUri` from `_meta.ui.resourceUri`,
 * else the flat `_meta["ui/resourceUri"]`), or `undefined` when it has no
 * app. The URI is as the server gave it (not checked).
 *
 * @category client
 * @since 0.3.0
 */
export const toolUi = (tool: Pick<McpSchema.Tool, "_meta">): ToolUi | undefined =>
  McpApp.toolUi(tool._meta, RESOURCE_URI_META_KEY)

/**
 * Reads the app of a tool (by name, looked up in the client's tool list, or
 * a listed tool): its HTML, the content item's `_meta.ui` (else the resource
 * listing's) and the tool's visibility. Fails with `NotFoundError` when the
 * tool is not listed or has no app, with `InvalidResultError` when its URI
 * is not `ui://` or the read returns no content for it.
 *
 * @category client
 * @since 0.3.0
 */
export const readToolApp = (
  client: Pick<McpClient.Client, "tools" | "resources" | "readResource">,
  tool: string | McpSchema.Tool
): Effect.Effect<App, McpError.McpError> => McpApp.read(client, tool, RESOURCE_URI_META_KEY)

// -----------------------------------------------------------------------------
// Internal
// -----------------------------------------------------------------------------

const requireUiScheme = (where: string, uri: string): void => {
  if (!McpApp.isUiUri(uri)) {
    throw new Cause.IllegalArgumentError(`${where}: an app's URI must be ui://…, got ${JSON.stringify(uri)}`)
  }
}
