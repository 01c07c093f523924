/**
 * A `SKILL.md`'s frontmatter: the YAML 1.2 block between its leading `---`
 * lines (a BOM and CRLF line ends allowed), parsed with the `yaml` library's
 * core schema; and the field-by-field comparison of two frontmatters.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Yaml from "yaml"

const BLOCK = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/** A parsed `SKILL.md`. @internal */
export interface Parsed {
  readonly frontmatter: Readonly<Record<string, unknown>>
  readonly body: string
}

/** The frontmatter and body of a `SKILL.md`, or why it has none. @internal */
export const parse = (text: string): Result.Result<Parsed, string> => {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const match = BLOCK.exec(source)
  if (match === null) return Result.fail("SKILL.md does not begin with a --- delimited YAML frontmatter block")
  const document = Yaml.parseDocument(match[1]!, { version: "1.2", schema: "core", uniqueKeys: true })
  if (document.errors.length > 0) {
    return Result.fail(`SKILL.md frontmatter is not valid YAML: ${document.errors[0]!.message}`)
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 })
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Result.fail("SKILL.md frontmatter is not a mapping")
  }
  return Result.succeed({ frontmatter: value as Record<string, unknown>, body: source.slice(match[0].length) })
}

const equal = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const other = b as ReadonlyArray<unknown>
    return a.length === other.length && a.every((item, i) => equal(item, other[i]))
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  for (const key of keys) if (!equal(left[key] ?? null, right[key] ?? null)) return false
  return true
}

const show = (value: unknown): string => value === undefined ? "(absent)" : JSON.stringify(value) ?? String(value)

/** One line per field whose values differ (an absent field equals `null`); empty when they agree. @internal */
export const differences = (
  file: Readonly<Record<string, unknown>>,
  entry: Readonly<Record<string, unknown>>
): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const key of new Set([...Object.keys(file), ...Object.keys(entry)])) {
    if (!equal(file[key] ?? null, entry[key] ?? null)) {
      out.push(`${key}: file ${show(file[key])}, entry ${show(entry[key])}`)
    }
  }
  return out
}
