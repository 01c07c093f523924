/**
 * What the CLI prints: pure functions from results to text.
 *
 * @internal
 */
import * as McpConfig from "@effect-mcp/core/McpConfig"
import type * as McpGroup from "@effect-mcp/core/McpGroup"
import type * as McpSchema from "@effect-mcp/core/McpSchema"
import type * as McpTask from "@effect-mcp/core/McpTask"

/** @internal */
export interface ServerRow {
  readonly server: string
  readonly transport: string
  readonly status: string
  readonly serverInfo: McpSchema.Implementation
  /** `"modern"` or `"legacy"`: the era its client settled on. */
  readonly era: string
  readonly protocolVersion: string
  readonly tools: number
  readonly resources: number
  readonly resourceTemplates: number
  readonly prompts: number
}

// -----------------------------------------------------------------------------
// Terminal safety
// -----------------------------------------------------------------------------

/** C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

const visible = (char: string): string => {
  const code = char.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
}

/**
 * Text from a server made safe for a terminal: control characters (ESC and
 * with it every CSI/OSC sequence, C1 controls, a lone CR, DEL) and the
 * bidirectional overrides are written out visibly (`\x1b`, `\u202e`).
 * Newlines and tabs are kept (`\r\n` becomes `\n`), unless `line`: then a
 * tab is a space and a newline `\n` written out.
 *
 * @internal
 */
export const terminal = (text: string, options?: { readonly line?: boolean }): string => {
  const kept = text.replace(/\r\n/g, "\n").replace(UNSAFE, visible)
  return options?.line === true ? kept.replace(/\t/g, " ").replace(/\n/g, "\\n") : kept
}

/**
 * `text` with every occurrence of a secret replaced by `***`, the longest
 * secrets first (`McpConfig.mask`, as the library masks its errors).
 *
 * @internal
 */
export const mask: (text: string, secrets: ReadonlyArray<string>) => string = McpConfig.mask

/**
 * Machine output: indented JSON. `JSON.stringify` escapes C0 controls; the
 * C1 controls and bidirectional overrides it leaves are escaped too.
 *
 * @internal
 */
export const json = (value: unknown): string =>
  (JSON.stringify(value, null, 2) ?? "null").replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

const firstLine = (text: string | undefined): string => (text ?? "").trim().split(/\r?\n/)[0] ?? ""

/**
 * Aligned columns, two spaces apart; the last column is not padded.
 *
 * @internal
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const all = [header, ...rows.map((row) => row.map((cell) => terminal(cell, { line: true })))]
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)))
  return all
    .map((row) => row.map((cell, column) => column === row.length - 1 ? cell : cell.padEnd(widths[column]!)).join("  "))
    .map((line) => line.trimEnd())
    .join("\n")
}

/** @internal */
export const servers = (rows: ReadonlyArray<ServerRow>): string =>
  rows.length === 0
    ? "(no servers)"
    : table(
      [
        "SERVER",
        "TRANSPORT",
        "STATUS",
        "IMPLEMENTATION",
        "ERA",
        "PROTOCOL",
        "TOOLS",
        "RESOURCES",
        "TEMPLATES",
        "PROMPTS"
      ],
      rows.map((row) => [
        row.server,
        row.transport,
        row.status,
        `${row.serverInfo.name} ${row.serverInfo.version}`,
        row.era,
        row.protocolVersion,
        String(row.tools),
        String(row.resources),
        String(row.resourceTemplates),
        String(row.prompts)
      ])
    )

/** @internal */
export const tools = (entries: ReadonlyArray<McpGroup.ToolEntry>): string =>
  entries.length === 0
    ? "(no tools)"
    : table(
      ["TOOL", "SERVER", "DESCRIPTION"],
      entries.map(({ name, server, tool }) => [name, server, firstLine(tool.description ?? tool.title)])
    )

/** @internal */
export const resources = (entries: ReadonlyArray<McpGroup.ResourceEntry>): string =>
  entries.length === 0
    ? "(no resources)"
    : table(
      ["URI", "NAME", "SERVER", "DESCRIPTION"],
      entries.map(({ name, resource, server }) => [
        name,
        resource.name,
        server,
        firstLine(resource.description ?? resource.title ?? resource.mimeType)
      ])
    )

/** @internal */
export const resourceTemplates = (entries: ReadonlyArray<McpGroup.ResourceTemplateEntry>): string =>
  entries.length === 0
    ? "(no resource templates)"
    : table(
      ["URI TEMPLATE", "NAME", "SERVER", "DESCRIPTION"],
      entries.map(({ name, server, template }) => [
        name,
        template.name,
        server,
        firstLine(template.description ?? template.title ?? template.mimeType)
      ])
    )

const promptArguments = (prompt: McpSchema.Prompt): string =>
  (prompt.arguments ?? []).map((argument) => argument.required === true ? argument.name : `${argument.name}?`).join(
    ", "
  )

/** @internal */
export const prompts = (entries: ReadonlyArray<McpGroup.PromptEntry>): string =>
  entries.length === 0
    ? "(no prompts)"
    : table(
      ["PROMPT", "SERVER", "ARGUMENTS", "DESCRIPTION"],
      entries.map(({ name, prompt, server }) => [
        name,
        server,
        promptArguments(prompt),
        firstLine(prompt.description ?? prompt.title)
      ])
    )

const base64Bytes = (data: string): number => {
  const clean = data.replace(/\s/g, "")
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding)
}

/** One resource's contents: the text itself, or a line describing the blob. @internal */
export const resourceContents = (contents: McpSchema.ResourceContents): string =>
  "text" in contents
    ? contents.text
    : `[blob ${contents.uri}${contents.mimeType === undefined ? "" : ` ${contents.mimeType}`}, ${
      base64Bytes(contents.blob)
    } bytes]`

/** One content block as text. @internal */
export const contentBlock = (block: McpSchema.ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes]`
    case "resource_link":
      return `[resource link ${block.uri}${block.name === "" ? "" : ` (${block.name})`}]`
    case "resource":
      return resourceContents(block.resource)
  }
}

/**
 * A tool result: its content blocks, one after the other, or its structured
 * content as JSON when it has no content.
 *
 * @internal
 */
export const callToolResult = (result: McpSchema.CallToolResult): string =>
  result.content.length === 0 && result.structuredContent !== undefined
    ? json(result.structuredContent)
    : terminal(result.content.map(contentBlock).join("\n"))

/** @internal */
export const readResourceResult = (result: McpSchema.ReadResourceResult): string =>
  terminal(result.contents.map(resourceContents).join("\n"))

/** @internal */
export const getPromptResult = (result: McpSchema.GetPromptResult): string =>
  terminal(result.messages.map((message) => `${message.role}: ${contentBlock(message.content)}`).join("\n"))

// -----------------------------------------------------------------------------
// Tasks
// -----------------------------------------------------------------------------

/** A task's state with its server: what `tasks get` and `tasks list --json` print. @internal */
export interface TaskRow extends McpTask.TaskState {
  readonly server: string
}

/** A duration in milliseconds, as a person reads it (`50 ms`, `1.5 s`, `1 h`). */
const duration = (ms: number): string => {
  if (ms < 1000) return `${ms} ms`
  const units: ReadonlyArray<readonly [string, number]> = [["d", 86_400_000], ["h", 3_600_000], ["min", 60_000], [
    "s",
    1000
  ]]
  for (const [unit, size] of units) {
    if (ms >= size) return `${formatAmount(ms / size)} ${unit}`
  }
  return `${ms} ms`
}

const formatAmount = (n: number): string => Number.isInteger(n) ? String(n) : n.toFixed(1)

/**
 * One task's state, one field a line: what `tasks get` prints.
 *
 * @internal
 */
export const taskState = (row: TaskRow): string =>
  table(["TASK", row.taskId], [
    ["server", row.server],
    ["status", row.status],
    ...(row.statusMessage === undefined ? [] : [["message", row.statusMessage]]),
    ["created", row.createdAt],
    ["updated", row.lastUpdatedAt],
    ["ttl", row.ttlMs === null ? "unlimited" : `${row.ttlMs} ms (${duration(row.ttlMs)})`],
    ...(row.pollIntervalMs === undefined ? [] : [["poll every", `${row.pollIntervalMs} ms`]])
  ]).split("\n").map((line, index) => index === 0 ? line.replace(/^TASK/, "task") : line).join("\n")

/** @internal */
export const tasks = (rows: ReadonlyArray<TaskRow>): string =>
  rows.length === 0
    ? "(no tasks)"
    : table(
      ["TASK", "SERVER", "STATUS", "UPDATED", "MESSAGE"],
      rows.map((row) => [row.taskId, row.server, row.status, row.lastUpdatedAt, firstLine(row.statusMessage)])
    )

/**
 * The line `call` and `tasks result` show on stderr for a task's state:
 * `task <id> <status>`, then `: <message>` (made safe for a terminal, on one
 * line, at most `width` characters).
 *
 * @internal
 */
export const taskLine = (state: McpTask.TaskState, width: number): string => {
  const head = `task ${terminal(state.taskId, { line: true })} ${state.status}`
  const line = state.statusMessage === undefined || state.statusMessage === ""
    ? head
    : `${head}: ${terminal(state.statusMessage, { line: true })}`
  const limit = Math.max(1, width)
  return line.length <= limit ? line : limit > 1 ? `${line.slice(0, limit - 1)}…` : line.slice(0, limit)
}
