/**
 * URI templates (RFC 6570) as MCP resource templates use them: parse a
 * template once, {@link expand} it with values, and {@link match} concrete
 * URIs back to the values of its variables, in linear time. A template made
 * from a string literal keeps it in its type, so {@link Variables} names its
 * variables at compile time.
 *
 * ```ts
 * const template = UriTemplate.make("file:///{+path}{?rev}")
 * UriTemplate.expand(template, { path: "src/index.ts", rev: "main" }) // "file:///src/index.ts?rev=main"
 * UriTemplate.match(template, "file:///src/index.ts") // Option.some({ path: "src/index.ts" })
 * ```
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Internal from "./internal/uriTemplate.ts"
import * as Matching from "./internal/uriTemplateMatch.ts"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

const TypeId = "~@effect-mcp/core/UriTemplate"

/**
 * An expression operator: `""` (simple), `+` (reserved), `#` (fragment),
 * `.` (label), `/` (path segment), `;` (path-style parameter), `?` (query) or
 * `&` (query continuation).
 *
 * @category models
 * @since 0.1.0
 */
export type Operator = "" | "+" | "#" | "." | "/" | ";" | "?" | "&"

/**
 * One variable of an expression, with its modifier: `explode` for `{list*}`,
 * `prefix` for `{var:3}`.
 *
 * @category models
 * @since 0.1.0
 */
export interface VarSpec {
  readonly name: string
  readonly explode: boolean
  readonly prefix: number | undefined
}

/**
 * Text outside expressions, as written in the template.
 *
 * @category models
 * @since 0.1.0
 */
export interface Literal {
  readonly _tag: "Literal"
  readonly value: string
}

/**
 * An expression: `{` operator, variables `}`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Expression {
  readonly _tag: "Expression"
  readonly operator: Operator
  readonly variables: ReadonlyArray<VarSpec>
}

/**
 * A part of a parsed template: literal text or an expression.
 *
 * @category models
 * @since 0.1.0
 */
export type Part = Literal | Expression

/**
 * A parsed template. `T` is the template's source: a string literal type when
 * the template was written in the code, which {@link Variables} reads.
 *
 * @category models
 * @since 0.1.0
 */
export interface UriTemplate<T extends string = string> {
  readonly [TypeId]: typeof TypeId
  readonly source: T
  readonly parts: ReadonlyArray<Part>
  /**
   * The names of the variables, each once, in the order they first appear
   * (their union is `Variables<T>`).
   */
  readonly variables: ReadonlyArray<string>
}

/**
 * A value to expand: a string (numbers and booleans are written with
 * `String`), a list, or `undefined` (the variable is skipped, as is an empty
 * list).
 *
 * @category models
 * @since 0.1.0
 */
export type Value = string | number | boolean | ReadonlyArray<string> | undefined

/**
 * The values {@link expand} accepts for a template: any of its variables, and
 * only those.
 *
 * @category models
 * @since 0.1.0
 */
export type Values<T extends string> = { readonly [K in Variables<T>]?: Value }

/**
 * What {@link match} returns: the decoded value of each variable present in
 * the URI (a list for an exploded variable). A variable the URI leaves out (an
 * optional query parameter, say) has no key.
 *
 * @category models
 * @since 0.1.0
 */
export type Match = Readonly<Record<string, string | ReadonlyArray<string>>>

// -----------------------------------------------------------------------------
// Type-level
// -----------------------------------------------------------------------------

type PrefixedOperator = Exclude<Operator, "">

type VarName<V extends string> = V extends `${infer N}*` ? N : V extends `${infer N}:${string}` ? N : V

type VarList<L extends string> = L extends `${infer Head},${infer Rest}` ? VarName<Head> | VarList<Rest>
  : VarName<L>

type ExpressionVariables<E extends string> = E extends `${PrefixedOperator}${infer List}` ? VarList<List> : VarList<E>

type VariablesOf<T extends string> = T extends `${string}{${infer E}}${infer Rest}`
  ? ExpressionVariables<E> | VariablesOf<Rest>
  : never

/**
 * The names of the variables of a template literal type, without operators
 * and modifiers: `Variables<"file:///{+path}{?rev,mode}">` is
 * `"path" | "rev" | "mode"`. For a `string` it is `string`.
 *
 * @category type-level
 * @since 0.1.0
 */
export type Variables<T extends string> = string extends T ? string : VariablesOf<T>

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

const matchers = new WeakMap<UriTemplate<any>, Matching.Matcher>()

const matcherOf = (template: UriTemplate<any>): Matching.Matcher => {
  let matcher = matchers.get(template)
  if (matcher === undefined) {
    matcher = Matching.compile(template.parts)
    matchers.set(template, matcher)
  }
  return matcher
}

/**
 * Parses a template. A malformed one (`{unclosed`, `{}`, `{a b}`, a stray
 * `}`, a reserved operator such as `{=a}`, a prefix outside `1..9999`) fails
 * with a message naming the problem and its position. Text outside
 * expressions is accepted as written and percent-encoded where the URI syntax
 * requires it.
 *
 * @category constructors
 * @since 0.1.0
 */
export const parse = <T extends string>(template: T): Result.Result<UriTemplate<T>, string> => {
  const parts = Internal.parseParts(template)
  if (Result.isFailure(parts)) return Result.fail(`Invalid URI template "${template}": ${parts.failure}`)
  const self: UriTemplate<T> = {
    [TypeId]: TypeId,
    source: template,
    parts: parts.success,
    variables: Internal.variableNames(parts.success)
  }
  matchers.set(self, Matching.compile(parts.success))
  return Result.succeed(self)
}

/**
 * Parses a template known when the code is written, keeping its literal type.
 * A malformed template is a bug: this dies (throws) with the parse message.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <T extends string>(template: T): UriTemplate<T> =>
  Result.getOrThrowWith(parse(template), (message) => new Error(message))

// -----------------------------------------------------------------------------
// Guards
// -----------------------------------------------------------------------------

/**
 * Whether a value is a parsed `UriTemplate`.
 *
 * @category guards
 * @since 0.1.0
 */
export const isUriTemplate = (u: unknown): u is UriTemplate => Predicate.hasProperty(u, TypeId)

// -----------------------------------------------------------------------------
// Expansion and matching
// -----------------------------------------------------------------------------

/**
 * Expands a template (RFC 6570 §3.2). Each value is percent-encoded as its
 * operator requires: only unreserved characters are kept, except with `+` and
 * `#`, which also keep reserved characters and existing `%XX` triplets.
 * Undefined variables and empty lists are skipped. Covers levels 1 to 3 of
 * the RFC (every operator, several variables per expression) and the level
 * 4 modifiers: prefix `{var:3}` and explode `{/list*}`, `{?list*}` (lists
 * only; associative values are not supported).
 *
 * @category combinators
 * @since 0.1.0
 */
export const expand = <T extends string>(template: UriTemplate<T>, values: Values<T>): string =>
  Internal.expand(template.parts, values as Readonly<Record<string, Value>>)

/**
 * Matches a URI against a template and returns the percent-decoded value of
 * each variable found, or `None` when the URI does not fit the template
 * (literal text must match exactly). `{name}` matches one non-empty path
 * segment, `{+path}` anything (including `/`) while leaving room for what
 * follows; `{/seg}`, `{.ext}` and `{#frag}` are optional, and `{?a,b}{&c}`
 * match an optional query string whose parameters may come in any order
 * (missing ones absent, unknown ones ignored). The matcher is compiled when
 * the template is parsed and runs in time linear in the URI's length (no
 * backtracking, so no blow-up on adversarial URIs).
 *
 * @category combinators
 * @since 0.1.0
 */
export const match = (template: UriTemplate<any>, uri: string): Option.Option<Match> => {
  const bindings = Matching.runMatcher(matcherOf(template), uri)
  return bindings === undefined ? Option.none() : Option.some(bindings)
}

/**
 * `true` when the URI fits the template.
 *
 * @category combinators
 * @since 0.1.0
 */
export const test = (template: UriTemplate<any>, uri: string): boolean => Matching.test(matcherOf(template), uri)
