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
      if (
        typeof header === "string" && TOKEN.test(header) && !seen.has(header.toLowerCase()) &&
        (type === "string" || type === "integer" || type === "boolean")
      ) {
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

/**
 * Why a tool's `x-mcp-header` declarations are invalid (a client on HTTP
 * leaves such a tool out of its list), or `undefined` when they are valid:
 * each value a non-empty HTTP token, unique regardless of case, on a string,
 * integer or boolean property reached through `properties` keys only.
 *
 * @internal
 */
export const invalidReason = (schema: unknown): string | undefined => {
  const seen = new Set<string>()
  let problem: string | undefined
  const walk = (node: unknown, path: string, staticPath: boolean, depth: number): void => {
    if (problem !== undefined || depth > MAX_DEPTH * 4 || typeof node !== "object" || node === null) return
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, `${path}/${index}`, false, depth + 1))
      return
    }
    const object = node as Record<string, unknown>
    const header = object[ANNOTATION]
    if (header !== undefined) {
      if (typeof header !== "string" || !TOKEN.test(header)) {
        problem = `${path}: "${String(header)}" is not a header name`
      } else if (!staticPath) {
        problem = `${path}: ${ANNOTATION} is only allowed on properties reached through "properties"`
      } else if (object.type !== "string" && object.type !== "integer" && object.type !== "boolean") {
        problem = `${path}: ${ANNOTATION} needs a string, integer or boolean property`
      } else if (seen.has(header.toLowerCase())) problem = `${path}: the header name "${header}" is used twice`
      else seen.add(header.toLowerCase())
      if (problem !== undefined) return
    }
    for (const [key, value] of Object.entries(object)) {
      if (key === "properties" && typeof value === "object" && value !== null && !Array.isArray(value)) {
        for (const [name, property] of Object.entries(value)) {
          walk(property, `${path}/properties/${name}`, staticPath, depth + 1)
        }
      } else if (typeof value === "object" && value !== null) {
        walk(value, `${path}/${key}`, false, depth + 1)
      }
    }
  }
  walk(schema, "#", true, 0)
  return problem
}
