/**
 * RFC 6570 parsing, encoding and expansion (matching is in
 * `uriTemplateMatch.ts`). See `UriTemplate` for the public surface;
 * everything here is pure and never throws.
 */
import * as Result from "effect/Result"
import type { Expression, Operator, Part, VarSpec } from "../UriTemplate.ts"

// -----------------------------------------------------------------------------
// Operators (RFC 6570 Appendix A)
// -----------------------------------------------------------------------------

interface OperatorSpec {
  readonly first: string
  readonly sep: string
  readonly named: boolean
  readonly ifEmpty: string
  readonly allowReserved: boolean
}

const operators: Record<Operator, OperatorSpec> = {
  "": { first: "", sep: ",", named: false, ifEmpty: "", allowReserved: false },
  "+": { first: "", sep: ",", named: false, ifEmpty: "", allowReserved: true },
  "#": { first: "#", sep: ",", named: false, ifEmpty: "", allowReserved: true },
  ".": { first: ".", sep: ".", named: false, ifEmpty: "", allowReserved: false },
  "/": { first: "/", sep: "/", named: false, ifEmpty: "", allowReserved: false },
  ";": { first: ";", sep: ";", named: true, ifEmpty: "", allowReserved: false },
  "?": { first: "?", sep: "&", named: true, ifEmpty: "=", allowReserved: false },
  "&": { first: "&", sep: "&", named: true, ifEmpty: "=", allowReserved: false }
}

const isOperator = (c: string): c is Exclude<Operator, ""> => c.length === 1 && "+#./;?&".includes(c)

const reservedOperators = "=,!@|"

// -----------------------------------------------------------------------------
// Parsing
// -----------------------------------------------------------------------------

const varName = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/
const prefixLength = /^[1-9][0-9]{0,3}$/

const parseVarSpec = (spec: string, expression: string, position: number): Result.Result<VarSpec, string> => {
  let name = spec
  let explode = false
  let prefix: number | undefined = undefined
  if (spec.endsWith("*")) {
    name = spec.slice(0, -1)
    explode = true
  } else {
    const colon = spec.indexOf(":")
    if (colon !== -1) {
      name = spec.slice(0, colon)
      const digits = spec.slice(colon + 1)
      if (!prefixLength.test(digits)) {
        return Result.fail(
          `invalid prefix length ":${digits}" in expression "{${expression}}" at position ${position} (expected 1 to 9999)`
        )
      }
      prefix = Number(digits)
    }
  }
  if (!varName.test(name)) {
    return Result.fail(
      name === ""
        ? `missing variable name in expression "{${expression}}" at position ${position}`
        : `invalid variable name "${name}" in expression "{${expression}}" at position ${position}`
    )
  }
  return Result.succeed({ name, explode, prefix })
}

const parseExpression = (body: string, position: number): Result.Result<Expression, string> => {
  if (body === "") return Result.fail(`empty expression "{}" at position ${position}`)
  const head = body[0]!
  if (reservedOperators.includes(head)) {
    return Result.fail(`operator "${head}" in expression "{${body}}" at position ${position} is reserved`)
  }
  const operator: Operator = isOperator(head) ? head : ""
  const list = operator === "" ? body : body.slice(1)
  if (list === "") return Result.fail(`expression "{${body}}" at position ${position} has no variable`)
  const variables: Array<VarSpec> = []
  for (const spec of list.split(",")) {
    const parsed = parseVarSpec(spec, body, position)
    if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
    variables.push(parsed.success)
  }
  return Result.succeed({ _tag: "Expression", operator, variables })
}

/** @internal */
export const parseParts = (source: string): Result.Result<ReadonlyArray<Part>, string> => {
  const parts: Array<Part> = []
  let literal = ""
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (c === "}") return Result.fail(`unmatched "}" at position ${i}`)
    if (c !== "{") {
      literal += c
      i++
      continue
    }
    const end = source.indexOf("}", i + 1)
    const nested = source.indexOf("{", i + 1)
    if (end === -1 || (nested !== -1 && nested < end)) return Result.fail(`unclosed expression at position ${i}`)
    const expression = parseExpression(source.slice(i + 1, end), i)
    if (Result.isFailure(expression)) return Result.fail(expression.failure)
    if (literal !== "") parts.push({ _tag: "Literal", value: literal })
    literal = ""
    parts.push(expression.success)
    i = end + 1
  }
  if (literal !== "") parts.push({ _tag: "Literal", value: literal })
  return Result.succeed(parts)
}

/** @internal */
export const variableNames = (parts: ReadonlyArray<Part>): ReadonlyArray<string> => {
  const names: Array<string> = []
  for (const part of parts) {
    if (part._tag === "Literal") continue
    for (const v of part.variables) if (!names.includes(v.name)) names.push(v.name)
  }
  return names
}

// -----------------------------------------------------------------------------
// Percent-encoding
// -----------------------------------------------------------------------------

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)

// ALPHA / DIGIT / "-" / "." / "_" / "~"
const isUnreserved = (c: number) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 ||
  c === 126

// gen-delims / sub-delims
const reservedChars = ":/?#[]@!$&'()*+,;="
const isReserved = (c: number) => c < 128 && reservedChars.includes(String.fromCharCode(c))

const hexByte = (b: number) => "%" + (b < 16 ? "0" : "") + b.toString(16).toUpperCase()

const utf8Percent = (codePoint: number): string => {
  // A lone surrogate cannot be encoded as UTF-8: it becomes U+FFFD.
  const cp = codePoint >= 0xd800 && codePoint <= 0xdfff ? 0xfffd : codePoint
  if (cp < 0x80) return hexByte(cp)
  if (cp < 0x800) return hexByte(0xc0 | (cp >> 6)) + hexByte(0x80 | (cp & 63))
  if (cp < 0x10000) {
    return hexByte(0xe0 | (cp >> 12)) + hexByte(0x80 | ((cp >> 6) & 63)) + hexByte(0x80 | (cp & 63))
  }
  return hexByte(0xf0 | (cp >> 18)) + hexByte(0x80 | ((cp >> 12) & 63)) + hexByte(0x80 | ((cp >> 6) & 63)) +
    hexByte(0x80 | (cp & 63))
}

const safeUnreserved = /^[A-Za-z0-9\-._~]*$/
const safeReserved = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]*$/

/**
 * Percent-encodes every character outside the unreserved set (and, when
 * `allowReserved`, outside the reserved set; existing `%XX` triplets are then
 * kept as they are).
 *
 * @internal
 */
export const encode = (value: string, allowReserved: boolean): string => {
  if ((allowReserved ? safeReserved : safeUnreserved).test(value)) return value
  let out = ""
  let i = 0
  while (i < value.length) {
    const c = value.charCodeAt(i)
    if (allowReserved && c === 37 && isHex(value.charCodeAt(i + 1)) && isHex(value.charCodeAt(i + 2))) {
      out += value.slice(i, i + 3)
      i += 3
    } else if (isUnreserved(c) || (allowReserved && isReserved(c))) {
      out += value[i]
      i++
    } else {
      const cp = value.codePointAt(i)!
      out += utf8Percent(cp)
      i += cp > 0xffff ? 2 : 1
    }
  }
  return out
}

const utf8Decoder = new TextDecoder("utf-8")
const triplets = /(?:%[0-9A-Fa-f]{2})+/g

/**
 * Decodes `%XX` triplets as UTF-8. Invalid UTF-8 becomes U+FFFD and a `%` that
 * does not start a triplet is kept, so decoding never fails.
 *
 * @internal
 */
export const decode = (value: string): string =>
  value.includes("%")
    ? value.replace(triplets, (run) => {
      const bytes = new Uint8Array(run.length / 3)
      for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16)
      return utf8Decoder.decode(bytes)
    })
    : value

// -----------------------------------------------------------------------------
// Expansion (RFC 6570 §3.2.1)
// -----------------------------------------------------------------------------

/** @internal */
export type Value = string | number | boolean | ReadonlyArray<string> | undefined

const isList = (value: Value): value is ReadonlyArray<string> => Array.isArray(value)

const truncate = (value: string, max: number): string =>
  value.length <= max ? value : Array.from(value).slice(0, max).join("")

const expandExpression = (expression: Expression, values: Readonly<Record<string, Value>>): string => {
  const op = operators[expression.operator]
  let out = ""
  let first = true
  for (const v of expression.variables) {
    const value = Object.hasOwn(values, v.name) ? values[v.name] : undefined
    if (value === undefined || value === null || (isList(value) && value.length === 0)) continue
    out += first ? op.first : op.sep
    first = false
    if (isList(value)) {
      // A prefix modifier does not apply to a list (RFC 6570 §2.4.1): it is ignored.
      if (!v.explode) {
        if (op.named) out += v.name + "="
        out += value.map((item) => encode(String(item), op.allowReserved)).join(",")
      } else {
        out += value.map((item) => {
          const encoded = encode(String(item), op.allowReserved)
          return op.named ? v.name + (encoded === "" ? op.ifEmpty : "=" + encoded) : encoded
        }).join(op.sep)
      }
    } else {
      const text = String(value)
      const encoded = encode(v.prefix === undefined ? text : truncate(text, v.prefix), op.allowReserved)
      out += op.named ? v.name + (encoded === "" ? op.ifEmpty : "=" + encoded) : encoded
    }
  }
  return out
}

/** @internal */
export const expand = (parts: ReadonlyArray<Part>, values: Readonly<Record<string, Value>>): string => {
  let out = ""
  for (const part of parts) {
    out += part._tag === "Literal" ? encode(part.value, true) : expandExpression(part, values)
  }
  return out
}
