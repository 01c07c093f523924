/**
 * RFC 6570 matching: a template compiled to steps, matched against a URI in
 * one backward and one forward pass. See `UriTemplate` for the public
 * surface; everything here is pure and never throws.
 */
import type { Operator, Part, VarSpec } from "../UriTemplate.ts"
import { decode, encode } from "./uriTemplate.ts"

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
