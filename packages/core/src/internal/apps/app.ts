/**
 * MCP Apps: the `_meta.ui` objects of app resources and tools as they go on
 * the wire, and a client's read of a tool's app.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Result from "effect/Result"
import type * as McpApps from "../../McpApps.ts"
import type * as McpClient from "../../McpClient.ts"
import * as McpContent from "../../McpContent.ts"
import * as McpError from "../../McpError.ts"
import type * as McpSchema from "../../McpSchema.ts"

const MIME_TYPE = "text/html;profile=mcp-app"

/** A plain object, or `undefined`. @internal */
export const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined

/** Whether `uri` is of the `ui:` scheme. @internal */
export const isUiUri = (uri: string): boolean => uri.startsWith("ui://")

/** The same MIME type, ignoring case and blanks around parameters. @internal */
export const sameMimeType = (a: string, b: string): boolean => normalize(a) === normalize(b)

const normalize = (type: string): string => type.split(";").map((part) => part.trim().toLowerCase()).join(";")

/** A resource's `_meta.ui` as sent (fields given only), `undefined` when empty. @internal */
export const resourceUi = (ui: McpApps.ResourceUi): Record<string, unknown> | undefined => {
  const out: Record<string, unknown> = {}
  if (ui.csp !== undefined) {
    const csp: Record<string, unknown> = {}
    for (const key of ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const) {
      const domains = ui.csp[key]
      if (domains !== undefined) csp[key] = [...domains]
    }
    out.csp = csp
  }
  if (ui.permissions !== undefined) {
    const permissions: Record<string, unknown> = {}
    for (const key of ["camera", "microphone", "geolocation", "clipboardWrite"] as const) {
      const permission = ui.permissions[key]
      if (permission !== undefined) permissions[key] = { ...permission }
    }
    out.permissions = permissions
  }
  if (ui.domain !== undefined) out.domain = ui.domain
  if (ui.prefersBorder !== undefined) out.prefersBorder = ui.prefersBorder
  return Object.keys(out).length === 0 ? undefined : out
}

/** `meta` with `ui` laid over its `ui` key (unchanged without one). @internal */
export const withUi = (
  meta: Readonly<Record<string, unknown>> | undefined,
  ui: Record<string, unknown> | undefined
): Readonly<Record<string, unknown>> | undefined => ui === undefined ? meta : { ...meta, ui }

/** The content item of a read of an app resource. @internal */
export const contentItem = (
  uri: string,
  mimeType: string,
  ui: Record<string, unknown> | undefined,
  contents: McpApps.Contents
): McpSchema.TextResourceContents | McpSchema.BlobResourceContents => {
  const isWhole = typeof contents === "string" || contents instanceof Uint8Array
  const html = isWhole ? contents : contents.html
  const own = isWhole || contents.ui === undefined ? undefined : resourceUi(contents.ui)
  const merged = own === undefined ? ui : { ...ui, ...own }
  const item = McpContent.resourceContents(uri, html, mimeType)
  return merged === undefined ? item : { ...item, _meta: { ui: merged } }
}

/** A tool's app link from its `_meta` (nested first, then the flat key). @internal */
export const toolUi = (
  meta: Readonly<Record<string, unknown>> | undefined,
  flatKey: string
): McpApps.ToolUi | undefined => {
  const ui = record(meta?.ui)
  const nested = ui?.resourceUri
  const flat = meta?.[flatKey]
  const resourceUri = typeof nested === "string" ? nested : typeof flat === "string" ? flat : undefined
  if (resourceUri === undefined) return undefined
  const visibility = Array.isArray(ui?.visibility)
    ? ui.visibility.filter((who): who is McpApps.Visibility => who === "model" || who === "app")
    : undefined
  return visibility === undefined ? { resourceUri } : { resourceUri, visibility }
}

/** Reads a tool's app through a client (see `McpApps.readToolApp`). @internal */
export const read = Effect.fnUntraced(function*(
  client: Pick<McpClient.Client, "tools" | "resources" | "readResource">,
  tool: string | McpSchema.Tool,
  flatKey: string
): Effect.fn.Return<McpApps.App, McpError.McpError> {
  const listed = typeof tool === "string" ? (yield* client.tools.get).find((entry) => entry.name === tool) : tool
  if (listed === undefined) return yield* McpError.notFound("tool", tool as string)
  const link = toolUi(listed._meta, flatKey)
  if (link === undefined) return yield* McpError.notFound("app of tool", listed.name)
  const uri = link.resourceUri
  if (!isUiUri(uri)) {
    return yield* McpError.invalidResult(
      "tools/list",
      `the app of tool ${listed.name} is not a ui:// URI: ${JSON.stringify(uri)}`
    )
  }
  const result = yield* client.readResource(uri)
  const mine = result.contents.filter((item) => item.uri === uri)
  const item = mine.find((entry) => entry.mimeType !== undefined && sameMimeType(entry.mimeType, MIME_TYPE)) ?? mine[0]
  if (item === undefined) return yield* McpError.invalidResult("resources/read", `no content for ${uri}`)
  const html = "text" in item ? Result.succeed(item.text) : Base64.decodeString(item.blob)
  if (Result.isFailure(html)) return yield* McpError.invalidResult("resources/read", `the blob of ${uri} is not base64`)
  const own = record(item._meta?.ui)
  const ui = own ?? record((yield* client.resources.get).find((entry) => entry.uri === uri)?._meta?.ui)
  return {
    tool: listed.name,
    resourceUri: uri,
    visibility: link.visibility,
    html: html.success,
    mimeType: item.mimeType,
    ui: ui as McpApps.ResourceUi | undefined,
    meta: item._meta
  }
})
