/**
 * What the model gets of a remote tool's result. A module of its own, apart
 * from the toolkit (`remote.ts`): `McpAi.toModelOutput` is synchronous, so
 * `McpAi` loads this (and `effect/ai/Prompt`) with itself, and the rest of
 * effect/ai only when a toolkit is made or served.
 *
 * @internal
 */
import * as Prompt from "effect/ai/Prompt"
import type * as McpSchema from "../../McpSchema.ts"

/**
 * What the model gets of a result: its text blocks joined (or, when there is
 * `structuredContent`, its JSON instead of them, which they mirror), images,
 * audio and binary resources as files, embedded text resources as text,
 * resource links as `title: uri` lines; in the order of the blocks.
 *
 * @internal
 */
export const toModelOutput = (result: McpSchema.CallToolResult): Array<Prompt.ToolModelOutputPart> => {
  const parts: Array<Prompt.ToolModelOutputPart> = []
  let texts: Array<string> = []
  const text = (value: string) => texts.push(value)
  const file = (mediaType: string, data: string, fileName?: string) => {
    flush()
    parts.push(Prompt.filePart(fileName === undefined ? { mediaType, data } : { mediaType, data, fileName }))
  }
  const flush = () => {
    if (texts.length > 0) parts.push(Prompt.textPart({ text: texts.join("\n") }))
    texts = []
  }
  const structured = result.structuredContent !== undefined
  if (structured) text(JSON.stringify(result.structuredContent))
  for (const block of result.content) {
    switch (block.type) {
      case "text":
        if (!structured) text(block.text)
        break
      case "image":
      case "audio":
        file(block.mimeType, block.data)
        break
      case "resource":
        if ("text" in block.resource) text(block.resource.text)
        else file(block.resource.mimeType ?? "application/octet-stream", block.resource.blob, block.resource.uri)
        break
      case "resource_link":
        text(`${block.title ?? block.name}: ${block.uri}`)
        break
    }
  }
  flush()
  return parts.length === 0 ? [Prompt.textPart({ text: "" })] : parts
}
