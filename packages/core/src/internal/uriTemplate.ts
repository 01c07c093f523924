/**
 * RFC 6570 parsing, expansion and matching. See `UriTemplate` for the public
 * surface; everything here is pure and never throws.
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

// -----------------------------------------------------------------------------
// Matching
// -----------------------------------------------------------------------------
//
// A template compiles to one step per part. From a given position, the
// positions where a step may end always form one interval (plus, for an
// optional part, the position itself: the part is absent), and each step
// prefers either the shortest end (variables: lazy, leaving room for what
// follows) or the longest (a query string). Matching is then linear in the
// URI's length, with no backtracking: a backward pass marks, for each step,
// the positions from which the rest of the template can finish, and a forward
// pass takes each step's preferred end among those.

type Bindings = Map<string, string | Array<string>>

type Capture = (captured: string | undefined, out: Bindings) => void

const LAZY = 0
const ABSENT_FIRST = 1
const GREEDY = 2

interface Step {
  /** LAZY: shortest end first, then absent; ABSENT_FIRST: absent, then shortest; GREEDY: longest, then absent. */
  readonly order: typeof LAZY | typeof ABSENT_FIRST | typeof GREEDY
  /** Sets `scan.lo`, `scan.hi` (present ends; none when `lo > hi`) and `scan.absent` for a start at `pos`. */
  readonly span: (scan: Scan, pos: number) => void
  readonly bind: (uri: string, pos: number, end: number, out: Bindings) => void
}

/** @internal */
export interface Matcher {
  readonly steps: ReadonlyArray<Step>
  readonly prefix: string
  readonly suffix: string
}

const SLASH = 47
const QUESTION = 63
const HASH = 35
const COMMA = 44
const DOT = 46
const SEMICOLON = 59
const AMPERSAND = 38

/** Per-URI scratch: the span of the last step asked, and lookup tables built on first use. */
class Scan {
  lo = 0
  hi = -1
  absent = false
  readonly uri: string
  readonly n: number
  private readonly next = new Map<string, Int32Array>()
  private readonly seps = new Map<number, { readonly at: Int32Array; readonly before: Int32Array }>()
  constructor(uri: string) {
    this.uri = uri
    this.n = uri.length
  }

  /** The first index `>= from` holding one of `chars`, or the length. */
  nextOf(chars: string, from: number): number {
    let table = this.next.get(chars)
    if (table === undefined) {
      table = new Int32Array(this.n + 1)
      table[this.n] = this.n
      for (let i = this.n - 1; i >= 0; i--) table[i] = chars.includes(this.uri[i]!) ? i : table[i + 1]!
      this.next.set(chars, table)
    }
    return table[from]!
  }

  /** The index of the `(count + 1)`-th `sep` at or after `from`, or the length. */
  sepBound(sep: number, from: number, count: number): number {
    if (count === Infinity) return this.n
    let table = this.seps.get(sep)
    if (table === undefined) {
      const at: Array<number> = []
      const before = new Int32Array(this.n + 1)
      for (let i = 0; i < this.n; i++) {
        before[i] = at.length
        if (this.uri.charCodeAt(i) === sep) at.push(i)
      }
      before[this.n] = at.length
      table = { at: Int32Array.from(at), before }
      this.seps.set(sep, table)
    }
    const index = table.before[from]! + count
    return index < table.at.length ? table.at[index]! : this.n
  }

  set(lo: number, hi: number, absent: boolean): void {
    this.lo = lo
    this.hi = hi
    this.absent = absent
  }
}

/** Values in a fixed order, split on `sep`; an exploded variable takes the surplus. */
const positional = (variables: ReadonlyArray<VarSpec>, sep: string, whole: boolean): Capture => (captured, out) => {
  if (captured === undefined) return
  const items = whole ? [captured] : captured.split(sep)
  let i = 0
  for (let k = 0; k < variables.length && i < items.length; k++) {
    const v = variables[k]!
    const after = variables.length - k - 1
    if (v.explode) {
      const take = Math.max(1, items.length - i - after)
      out.set(v.name, items.slice(i, i + take).map(decode))
      i += take
    } else if (after === 0) {
      out.set(v.name, decode(items.slice(i).join(sep)))
      i = items.length
    } else {
      out.set(v.name, decode(items[i]!))
      i++
    }
  }
}

/** `name=value` pairs split on `sep`, in any order; unknown names are ignored. */
const named = (variables: ReadonlyArray<VarSpec>, sep: string): Capture => {
  const wanted = new Map(variables.map((v) => [v.name, v] as const))
  return (captured, out) => {
    if (captured === undefined || captured === "") return
    for (const pair of captured.split(sep)) {
      if (pair === "") continue
      const eq = pair.indexOf("=")
      const name = eq === -1 ? pair : pair.slice(0, eq)
      const v = wanted.get(name)
      if (v === undefined) continue
      const value = eq === -1 ? "" : decode(pair.slice(eq + 1))
      const previous = out.get(name)
      if (v.explode) {
        if (Array.isArray(previous)) previous.push(value)
        else out.set(name, [value])
      } else if (previous === undefined) {
        out.set(name, value)
      }
    }
  }
}

/** The text a part covered, as one string. */
const whole = (capture: Capture) => (uri: string, pos: number, end: number, out: Bindings) =>
  capture(uri.slice(pos, end), out)

/** The text after a part's one-character prefix, or `undefined` when the part is absent. */
const afterPrefix = (capture: Capture) => (uri: string, pos: number, end: number, out: Bindings) =>
  capture(end === pos ? undefined : uri.slice(pos + 1, end), out)

/**
 * An optional part: `prefix`, then items separated by `prefix` (at most
 * `count` of them, when given) containing none of `stops`.
 */
const prefixed = (prefix: number, stops: string, count: number | undefined) => (scan: Scan, pos: number) =>
  scan.uri.charCodeAt(pos) === prefix
    ? scan.set(
      pos + 1,
      Math.min(
        scan.nextOf(stops, pos + 1),
        scan.sepBound(prefix, pos + 1, count === undefined ? Infinity : count - 1)
      ),
      true
    )
    : scan.set(1, 0, true)

const literalStep = (text: string): Step => ({
  order: LAZY,
  span: (scan, pos) =>
    scan.uri.startsWith(text, pos) ? scan.set(pos + text.length, pos + text.length, false) : scan.set(1, 0, false),
  bind: () => undefined
})

const expressionStep = (operator: Operator, vars: ReadonlyArray<VarSpec>): Step => {
  const explode = vars.some((v) => v.explode)
  const single = vars.length === 1 && !explode
  const count = explode ? undefined : vars.length
  switch (operator) {
    case "": {
      // One non-empty segment; several variables are separated by `,`.
      const maxSeps = single || count === undefined ? Infinity : count - 1
      return {
        order: LAZY,
        span: (scan, pos) =>
          scan.set(pos + 1, Math.min(scan.nextOf("/?#", pos), scan.sepBound(COMMA, pos, maxSeps)), false),
        bind: whole(positional(vars, ",", single))
      }
    }
    case "+": {
      // Anything non-empty, `/` included.
      return {
        order: LAZY,
        span: (scan, pos) => scan.set(pos + 1, scan.n, false),
        bind: whole(positional(vars, ",", single))
      }
    }
    case "#": {
      return { order: LAZY, span: prefixed(HASH, "", undefined), bind: afterPrefix(positional(vars, ",", single)) }
    }
    case ".": {
      return { order: LAZY, span: prefixed(DOT, "/?#", count), bind: afterPrefix(positional(vars, ".", false)) }
    }
    case "/": {
      return { order: LAZY, span: prefixed(SLASH, "?#", count), bind: afterPrefix(positional(vars, "/", false)) }
    }
    case ";": {
      // Zero or more `;name[=value]` within the segment.
      return {
        order: ABSENT_FIRST,
        span: (scan, pos) =>
          scan.uri.charCodeAt(pos) === SEMICOLON
            ? scan.set(pos + 1, scan.nextOf("/?#", pos + 1), true)
            : scan.set(1, 0, true),
        bind: whole(named(vars, ";"))
      }
    }
    case "?":
    case "&": {
      // `?`: the whole query string (up to a fragment), if any. `&`: pairs
      // continuing a query string written as a literal.
      const prefix = operator === "?" ? QUESTION : AMPERSAND
      return {
        order: GREEDY,
        span: (scan, pos) =>
          scan.uri.charCodeAt(pos) === prefix
            ? scan.set(pos + 1, scan.nextOf("#", pos + 1), true)
            : scan.set(1, 0, true),
        bind: operator === "?" ? afterPrefix(named(vars, "&")) : whole(named(vars, "&"))
      }
    }
  }
}

/**
 * Compiles the parts to the steps that match them.
 *
 * @internal
 */
export const compile = (parts: ReadonlyArray<Part>): Matcher => {
  const steps: Array<Step> = []
  const literals: Array<string | undefined> = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part._tag === "Literal") {
      const text = encode(part.value, true)
      steps.push(literalStep(text))
      literals.push(text)
    } else if (part.operator === "?") {
      // `{?a}{&b}` is one query string: its parameters may come in any order.
      const all = [...part.variables]
      while (i + 1 < parts.length) {
        const next = parts[i + 1]!
        if (next._tag !== "Expression" || next.operator !== "&") break
        all.push(...next.variables)
        i++
      }
      steps.push(expressionStep("?", all))
      literals.push(undefined)
    } else {
      steps.push(expressionStep(part.operator, part.variables))
      literals.push(undefined)
    }
  }
  return {
    steps,
    prefix: literals[0] ?? "",
    suffix: literals.length > 1 ? literals[literals.length - 1] ?? "" : ""
  }
}

/** The end of each step (preferred ends first), or `undefined` when the URI does not fit. */
const search = (matcher: Matcher, uri: string): Array<number> | undefined => {
  if (!uri.startsWith(matcher.prefix) || !uri.endsWith(matcher.suffix)) return undefined
  const steps = matcher.steps
  const n = uri.length
  const scan = new Scan(uri)
  // finish[i][p]: the first q >= p from which steps i.. can consume the rest of the URI (n + 1: none).
  const finish: Array<Int32Array> = new Array(steps.length + 1)
  const last = new Int32Array(n + 2).fill(n)
  last[n + 1] = n + 1
  finish[steps.length] = last
  for (let i = steps.length - 1; i >= 0; i--) {
    const after = finish[i + 1]!
    const table = new Int32Array(n + 2)
    table[n + 1] = n + 1
    for (let p = n; p >= 0; p--) {
      steps[i]!.span(scan, p)
      const ok = (scan.absent && after[p] === p) || (scan.lo <= scan.hi && after[scan.lo]! <= scan.hi)
      table[p] = ok ? p : table[p + 1]!
    }
    finish[i] = table
  }
  if (finish[0]![0] !== 0) return undefined
  const ends: Array<number> = new Array(steps.length)
  let pos = 0
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    const after = finish[i + 1]!
    step.span(scan, pos)
    const absent = scan.absent && after[pos] === pos
    const present = scan.lo <= scan.hi && after[scan.lo]! <= scan.hi
    let end: number
    if (step.order === ABSENT_FIRST && absent) end = pos
    else if (!present) end = pos
    else if (step.order === GREEDY) {
      end = scan.hi
      while (after[end] !== end) end--
    } else end = after[scan.lo]!
    ends[i] = end
    pos = end
  }
  return ends
}

/** @internal */
export const test = (matcher: Matcher, uri: string): boolean => search(matcher, uri) !== undefined

/** @internal */
export const runMatcher = (
  matcher: Matcher,
  uri: string
): Record<string, string | ReadonlyArray<string>> | undefined => {
  const ends = search(matcher, uri)
  if (ends === undefined) return undefined
  const out: Bindings = new Map()
  let pos = 0
  for (let i = 0; i < matcher.steps.length; i++) {
    matcher.steps[i]!.bind(uri, pos, ends[i]!, out)
    pos = ends[i]!
  }
  return Object.fromEntries(out)
}
