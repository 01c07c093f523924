/**
 * Content blocks carried by tool results and prompt messages.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Annotations, Meta } from "./base.ts"
import { Resource, ResourceContents } from "./resources.ts"

/**
 * Text provided to or from an LLM.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TextContent = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  annotations: Schema.optionalKey(Annotations),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type TextContent = typeof TextContent.Type

/**
 * A base64-encoded image.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ImageContent = Schema.Struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optionalKey(Annotations),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ImageContent = typeof ImageContent.Type

/**
 * Base64-encoded audio (new in 2025-03-26).
 *
 * @category schemas
 * @since 0.1.0
 */
export const AudioContent = Schema.Struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optionalKey(Annotations),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type AudioContent = typeof AudioContent.Type

/**
 * A link to a resource (new in 2025-06-18). It need not appear in
 * `resources/list`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  ...Resource.fields
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ResourceLink = typeof ResourceLink.Type

/**
 * A resource's contents embedded in a prompt or tool result.
 *
 * @category schemas
 * @since 0.1.0
 */
export const EmbeddedResource = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  annotations: Schema.optionalKey(Annotations),
  _meta: Schema.optionalKey(Meta)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type EmbeddedResource = typeof EmbeddedResource.Type

/**
 * Any content block of a tool result or prompt message: text, image, audio,
 * resource link or embedded resource.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ContentBlock = Schema.Union([TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource])
  .annotate({ expected: "a content block of type text, image, audio, resource_link or resource" })

/**
 * @category schemas
 * @since 0.1.0
 */
export type ContentBlock = typeof ContentBlock.Type
