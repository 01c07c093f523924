/**
 * `x-mcp-header` (2026-07-28): the tool parameters a client mirrors into
 * `Mcp-Param-{name}` HTTP headers, read from a tool's input schema. Only
 * properties reached through a chain of `properties` keys count, of type
 * string, integer or boolean, with a header name that is an HTTP token,
 * unique regardless of case.
 *
 * @internal
 */

/** A parameter mirrored into the `Mcp-Param-{header}` header. @internal */
export interface HeaderParam {
  readonly header: string
  readonly path: ReadonlyArray<string>
  readonly type: "string" | "integer" | "boolean"
}

/** The annotation key. @internal */
export const ANNOTATION = "x-mcp-header"

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

const MAX_DEPTH = 16

/** The mirrored parameters of an input schema, in property order. @internal */
export const headerParams = (schema: unknown): ReadonlyArray<HeaderParam> => {
  const out: Array<HeaderParam> = []
  const seen = new Set<string>()
  const walk = (node: unknown, path: ReadonlyArray<string>) => {
    if (path.length > MAX_DEPTH || typeof node !== "object" || node === null) return
    const properties = (node as { readonly properties?: unknown }).properties
    if (typeof properties !== "object" || properties === null) return
    for (const [key, property] of Object.entries(properties)) {
      if (typeof property !== "object" || property === null) continue
      const header = (property as Record<string, unknown>)[ANNOTATION]
      const type = (property as Record<string, unknown>).type
      if (typeof header === "string" && TOKEN.test(header) && !seen.has(header.toLowerCase()) &&
        (type === "string" || type === "integer" || type === "boolean")) {
        seen.add(header.toLowerCase())
        out.push({ header, path: [...path, key], type })
      }
      walk(property, [...path, key])
    }
  }
  walk(schema, [])
  return out
}

/**
 * Moves an `x-mcp-header` that Effect's generator put inside an `allOf`
 * (where an annotated schema with checks lands, e.g. `Schema.Int`) up to
 * its property, where clients look for it. Mutates `schema`, a fresh copy.
 *
 * @internal
 */
export const hoistAnnotations = (schema: unknown, depth = 0): void => {
  if (depth > MAX_DEPTH || typeof schema !== "object" || schema === null) return
  const properties = (schema as { readonly properties?: unknown }).properties
  if (typeof properties !== "object" || properties === null) return
  for (const property of Object.values(properties)) {
    if (typeof property !== "object" || property === null) continue
    const node = property as Record<string, unknown>
    if (node[ANNOTATION] === undefined && Array.isArray(node.allOf)) {
      for (const part of node.allOf as Array<Record<string, unknown>>) {
        if (typeof part === "object" && part !== null && part[ANNOTATION] !== undefined) {
          node[ANNOTATION] = part[ANNOTATION]
          delete part[ANNOTATION]
        }
      }
    }
    hoistAnnotations(node, depth + 1)
  }
}
