/**
 * Constructors of MCP content blocks, for tool results and prompt messages:
 * text, image, audio, embedded resources and resource links.
 *
 * @since 0.1.0
 */
import * as Base64 from "effect/encoding/Base64"
import type * as McpSchema from "./McpSchema.ts"

type Extras = {
  readonly annotations?: McpSchema.Annotations | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

const withExtras = <A extends object>(block: A, extras: Extras | undefined): A => {
  if (extras === undefined) return block
  const out: Record<string, unknown> = { ...(block as Record<string, unknown>) }
  if (extras.annotations !== undefined) out.annotations = extras.annotations
  if (extras._meta !== undefined) out._meta = extras._meta
  return out as A
}

const base64 = (data: Uint8Array | string): string => typeof data === "string" ? data : Base64.encode(data)

/**
 * A text block.
 *
 * @category constructors
 * @since 0.1.0
 */
export const text = (text: string, extras?: Extras): McpSchema.TextContent => withExtras({ type: "text", text }, extras)

/**
 * An image block from bytes (or base64 text).
 *
 * @category constructors
 * @since 0.1.0
 */
export const image = (data: Uint8Array | string, mimeType: string, extras?: Extras): McpSchema.ImageContent =>
  withExtras({ type: "image", data: base64(data), mimeType }, extras)

/**
 * An audio block from bytes (or base64 text).
 *
 * @category constructors
 * @since 0.1.0
 */
export const audio = (data: Uint8Array | string, mimeType: string, extras?: Extras): McpSchema.AudioContent =>
  withExtras({ type: "audio", data: base64(data), mimeType }, extras)

/**
 * An embedded resource: text when given a string, a blob when given bytes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const resource = (
  uri: string,
  contents: string | Uint8Array,
  options?: Extras & { readonly mimeType?: string | undefined }
): McpSchema.EmbeddedResource =>
  withExtras({ type: "resource", resource: resourceContents(uri, contents, options?.mimeType) }, options)

/**
 * A link to a resource the client can read or subscribe to.
 *
 * @category constructors
 * @since 0.1.0
 */
export const resourceLink = (
  uri: string,
  name: string,
  options?: Extras & {
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly mimeType?: string | undefined
    readonly size?: number | undefined
  }
): McpSchema.ResourceLink => {
  const link: Record<string, unknown> = { type: "resource_link", uri, name }
  for (const key of ["title", "description", "mimeType", "size"] as const) {
    if (options?.[key] !== undefined) link[key] = options[key]
  }
  return withExtras(link as McpSchema.ResourceLink, options)
}

/**
 * The contents of a resource: text for a string, a base64 blob for bytes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const resourceContents = (
  uri: string,
  contents: string | Uint8Array,
  mimeType?: string | undefined
): McpSchema.TextResourceContents | McpSchema.BlobResourceContents => {
  const base = mimeType === undefined ? { uri } : { uri, mimeType }
  return typeof contents === "string" ? { ...base, text: contents } : { ...base, blob: base64(contents) }
}

/**
 * The text of a tool result, a prompt message list or a resource read: every
 * text block (or text resource contents) joined with newlines; other blocks
 * are left out.
 *
 * @example
 * ```ts
 * import { McpClient, McpContent } from "@effect-mcp/core"
 * import { Console, Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   const saved = yield* client.callTool("add_note", { title: "a", body: "b" })
 *   yield* Console.log(McpContent.textOf(saved))
 * })
 * ```
 *
 * @category accessors
 * @since 0.2.0
 */
export const textOf = (
  result:
    | { readonly content: ReadonlyArray<McpSchema.ContentBlock> }
    | { readonly contents: ReadonlyArray<McpSchema.TextResourceContents | McpSchema.BlobResourceContents> }
    | { readonly messages: ReadonlyArray<McpSchema.PromptMessage> }
): string => {
  const texts: Array<string> = []
  const blocks: ReadonlyArray<unknown> = "content" in result
    ? result.content
    : "contents" in result
    ? result.contents
    : result.messages.map((message) => message.content)
  for (const block of blocks) {
    const text = (block as { readonly text?: unknown }).text
    if (typeof text === "string") texts.push(text)
  }
  return texts.join("\n")
}
