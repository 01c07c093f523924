/**
 * The rules a served skill keeps (SEP-2640 and the Agent Skills format):
 * the name, the first URI segment, the path segments, the frontmatter, the
 * reserved metadata keys and the size limits; and how a path becomes a
 * `skill://` URI.
 *
 * @internal
 */

/** Agent Skills names: 1–64 of `[a-z0-9-]`, no leading, trailing or double hyphen. @internal */
export const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/** A host name (RFC 1123 labels joined by dots): the first segment of a `skill://` URI is its authority. @internal */
const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/

/** The reserved prefix of `frontmatter.metadata` keys. @internal */
export const RESERVED_METADATA = "io.modelcontextprotocol/"

/** Why `name` is not a skill name, or `undefined`. @internal */
export const nameProblem = (name: string): string | undefined =>
  name.length === 0 || name.length > 64
    ? `the name "${name}" must be 1-64 characters`
    : NAME.test(name)
    ? undefined
    : `the name "${name}" must be lowercase letters, digits and single hyphens, not starting or ending with one`

/** Why `segment` cannot be the authority of a `skill://` URI, or `undefined`. @internal */
export const hostProblem = (segment: string): string | undefined =>
  segment.length > 0 && segment.length <= 253 && segment.split(".").every((label) => HOST_LABEL.test(label))
    ? undefined
    : `the first segment "${segment}" is not a valid host name (the authority of a skill:// URI)`

const ENCODED_SEPARATOR = /%(?:2f|5c)/i

/**
 * Why a file or folder name (one path segment) is refused, or `undefined`:
 * empty (an absolute path or `//`), `.`, `..`, a separator (`/`, `\`), an
 * encoded one (`%2F`, `%5C`) or NUL.
 *
 * @internal
 */
export const segmentProblem = (segment: string): string | undefined => {
  if (segment === "") return "an empty path segment (an absolute path, or a doubled /)"
  if (segment === "." || segment === "..") return `the path segment "${segment}" is not allowed`
  if (segment.includes("/") || segment.includes("\\")) return `the name "${segment}" holds a path separator`
  if (ENCODED_SEPARATOR.test(segment)) return `the name "${segment}" holds an encoded path separator`
  if (segment.includes("\0")) return `the name ${JSON.stringify(segment)} holds a NUL character`
  return undefined
}

/** Why a relative `/`-separated path is refused, or `undefined`. @internal */
export const pathProblem = (path: string): string | undefined => {
  if (path.includes("\\")) return `the path "${path}" holds a backslash`
  for (const segment of path.split("/")) {
    const problem = segmentProblem(segment)
    if (problem !== undefined) return `${problem} in "${path}"`
  }
  return undefined
}

/** The segments of a `prefix` option, or why it is refused. @internal */
export const prefixSegments = (prefix: string | undefined): { readonly segments: ReadonlyArray<string> } | string => {
  if (prefix === undefined || prefix === "") return { segments: [] }
  const trimmed = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix
  const problem = pathProblem(trimmed)
  return problem === undefined ? { segments: trimmed.split("/") } : `prefix: ${problem}`
}

const encodeSegment = (segment: string): string =>
  encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** `skill://` and the encoded segments. @internal */
export const uriOf = (segments: ReadonlyArray<string>): string => `skill://${segments.map(encodeSegment).join("/")}`

/** The form a URI is looked up by (WHATWG-serialised; as given when it does not parse). @internal */
export const canonical = (uri: string): string => URL.canParse(uri) ? new URL(uri).href : uri

/** Why a frontmatter is refused (name, description, values JSON cannot hold), one line each. @internal */
export const frontmatterProblems = (frontmatter: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const out: Array<string> = []
  const { name, description } = frontmatter
  if (typeof name !== "string" || name === "") out.push("the frontmatter has no name")
  if (typeof description !== "string" || description === "") out.push("the frontmatter has no description")
  else if ([...description].length > 1024) out.push("the frontmatter description is longer than 1024 characters")
  const odd = unrepresentable(frontmatter, "", 0)
  if (odd !== undefined) out.push(`the frontmatter value at ${odd} cannot be represented in JSON`)
  return out
}

const unrepresentable = (value: unknown, at: string, depth: number): string | undefined => {
  if (depth > 64) return at
  if (typeof value === "number") return Number.isFinite(value) ? undefined : at
  if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol") return at
  if (value instanceof Date) return at
  if (typeof value !== "object" || value === null) return undefined
  const entries = Array.isArray(value) ? value.map((item, i) => [String(i), item] as const) : Object.entries(value)
  for (const [key, item] of entries) {
    const found = unrepresentable(item, at === "" ? key : `${at}.${key}`, depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}

/** The `frontmatter.metadata` keys under the reserved prefix. @internal */
export const reservedKeys = (frontmatter: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const metadata = frontmatter.metadata
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return []
  return Object.keys(metadata).filter((key) => key.startsWith(RESERVED_METADATA))
}

const MIME: Readonly<Record<string, string>> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  py: "text/x-python",
  sh: "application/x-sh",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/typescript",
  html: "text/html",
  css: "text/css",
  csv: "text/csv",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf"
}

/** The MIME type of a file by its extension (`application/octet-stream` when unknown). @internal */
export const mimeTypeOf = (name: string): string => {
  const dot = name.lastIndexOf(".")
  const extension = dot <= 0 ? "" : name.slice(dot + 1).toLowerCase()
  return Object.hasOwn(MIME, extension) ? MIME[extension]! : "application/octet-stream"
}

/** Code-unit order: the one order of entries, directory children and cursors. @internal */
export const compare = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0
