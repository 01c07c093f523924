/**
 * The declaration of an MCP method: its name, the schema of its params (and of
 * its result, for requests), who may send it, and the capability it needs.
 * Each method of the protocol is declared once, in `McpSchema`; the session
 * engine derives validation and capability checks from that declaration, on
 * both sides.
 *
 * Wire schemas are plain JSON shapes (their decoded and encoded forms are the
 * same), so validating a value and keeping the original is all that decoding
 * needs: fields this version does not know pass through untouched.
 *
 * @since 0.1.0
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"

// -----------------------------------------------------------------------------
// Capabilities
// -----------------------------------------------------------------------------

/**
 * A capability: the side that must declare it and its path in that side's
 * capabilities object, e.g. `{ side: "server", path: ["resources", "subscribe"] }`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Capability {
  readonly side: "client" | "server"
  readonly path: ReadonlyArray<string>
}

/**
 * A capability the server declares.
 *
 * @category constructors
 * @since 0.1.0
 */
export const serverCapability = (...path: ReadonlyArray<string>): Capability => ({ side: "server", path })

/**
 * A capability the client declares.
 *
 * @category constructors
 * @since 0.1.0
 */
export const clientCapability = (...path: ReadonlyArray<string>): Capability => ({ side: "client", path })

/**
 * `true` when `capabilities` declares `capability` (every segment of the path
 * is present and not `false`).
 *
 * @category capabilities
 * @since 0.1.0
 */
export const hasCapability = (capabilities: unknown, capability: Capability): boolean => {
  let current: unknown = capabilities
  for (const segment of capability.path) {
    if (typeof current !== "object" || current === null) return false
    current = (current as Record<string, unknown>)[segment]
    if (current === undefined || current === null || current === false) return false
  }
  return true
}

/**
 * A readable name for a capability, e.g. `server resources.subscribe`.
 *
 * @category capabilities
 * @since 0.1.0
 */
export const capabilityName = (capability: Capability): string => `${capability.side} ${capability.path.join(".")}`

// -----------------------------------------------------------------------------
// Validation
// -----------------------------------------------------------------------------

/**
 * Checks a value against a wire schema and returns the original value (unknown
 * fields kept) or a readable description of every problem.
 *
 * @category models
 * @since 0.1.0
 */
export type Validate<A> = (input: unknown) => Exit.Exit<A, string>

const formatter = SchemaIssue.makeFormatterDefault()

/**
 * Builds a {@link Validate} once per schema: a type guard compiled by Effect's
 * schema JIT compiler on the fast path (interpreted where `new Function` is
 * not allowed), and a full decode with every issue only when the guard says no.
 *
 * @category constructors
 * @since 0.1.0
 */
export const validator = <S extends Schema.Top>(schema: S): Validate<S["Type"]> => {
  // built at first use: the protocol declares dozens of methods, and most
  // programs use a few of them
  let run: Validate<S["Type"]> | undefined
  return (input) => (run ??= compile(schema))(input)
}

const compile = <S extends Schema.Top>(schema: S): Validate<S["Type"]> => {
  SchemaJITCompiler.enable(SchemaAST.toType(schema.ast))
  const is = Schema.is(schema)
  const explain = Schema.decodeUnknownExit(schema as unknown as Schema.Codec<S["Type"]>, { errors: "all" })
  return (input) => {
    if (is(input)) return Exit.succeed(input)
    const exit = explain(input)
    if (Exit.isSuccess(exit)) return Exit.succeed(input as S["Type"])
    const error = exit.cause.reasons[0]
    return Exit.fail(
      error !== undefined && error._tag === "Fail" ? formatter(error.error.issue) : "does not match the schema"
    )
  }
}

// -----------------------------------------------------------------------------
// Declarations
// -----------------------------------------------------------------------------

/**
 * Who may send a method.
 *
 * @category models
 * @since 0.1.0
 */
export type Sender = "client" | "server" | "both"

/**
 * A request method.
 *
 * @category models
 * @since 0.1.0
 */
export interface Request<Name extends string = string, P = any, R = any> {
  readonly _tag: "Request"
  readonly name: Name
  readonly params: Schema.Codec<P, any>
  readonly result: Schema.Codec<R, any>
  readonly from: Sender
  /** The capability the request needs, given its params (`undefined`: none). */
  readonly capability: (params: P) => Capability | undefined
  readonly validateParams: Validate<P>
  readonly validateResult: Validate<R>
}

/**
 * A notification method.
 *
 * @category models
 * @since 0.1.0
 */
export interface Notification<Name extends string = string, P = any> {
  readonly _tag: "Notification"
  readonly name: Name
  readonly params: Schema.Codec<P, any>
  readonly from: Sender
  /** The capability the sender must have declared to send it (`undefined`: none). */
  readonly capability: (params: P) => Capability | undefined
  readonly validateParams: Validate<P>
}

/**
 * Any method.
 *
 * @category models
 * @since 0.1.0
 */
export type Any = Request | Notification

/**
 * The params type of a method.
 *
 * @category type-level
 * @since 0.1.0
 */
export type Params<M> = M extends Request<any, infer P, any> ? P : M extends Notification<any, infer P> ? P : never

/**
 * The result type of a request method.
 *
 * @category type-level
 * @since 0.1.0
 */
export type Result<M> = M extends Request<any, any, infer R> ? R : never

const none = () => undefined

const toCapability = <P>(
  capability: Capability | ((params: P) => Capability | undefined) | undefined
): (params: P) => Capability | undefined =>
  capability === undefined ? none : typeof capability === "function" ? capability : () => capability

/**
 * Declares a request method.
 *
 * @category constructors
 * @since 0.1.0
 */
export const request = <const Name extends string, P extends Schema.Top, R extends Schema.Top>(options: {
  readonly name: Name
  readonly params: P
  readonly result: R
  readonly from: Sender
  readonly capability?: Capability | ((params: P["Type"]) => Capability | undefined) | undefined
}): Request<Name, P["Type"], R["Type"]> => ({
  _tag: "Request",
  name: options.name,
  params: options.params as any,
  result: options.result as any,
  from: options.from,
  capability: toCapability(options.capability),
  validateParams: validator(options.params),
  validateResult: validator(options.result)
})

/**
 * The same request method with another result schema: for wire methods whose
 * answer takes another shape under some params (task-augmented requests).
 *
 * @category constructors
 * @since 0.1.0
 */
export const withResult = <Name extends string, P, R extends Schema.Top>(
  method: Request<Name, P, any>,
  result: R
): Request<Name, P, R["Type"]> => ({
  ...method,
  result: result as any,
  validateResult: validator(result)
})

/**
 * Declares a notification method.
 *
 * @category constructors
 * @since 0.1.0
 */
export const notification = <const Name extends string, P extends Schema.Top>(options: {
  readonly name: Name
  readonly params: P
  readonly from: Sender
  readonly capability?: Capability | ((params: P["Type"]) => Capability | undefined) | undefined
}): Notification<Name, P["Type"]> => ({
  _tag: "Notification",
  name: options.name,
  params: options.params as any,
  from: options.from,
  capability: toCapability(options.capability),
  validateParams: validator(options.params)
})

/**
 * `true` when `role` may send `method`.
 *
 * @category guards
 * @since 0.1.0
 */
export const canSend = (method: Any, role: "client" | "server"): boolean =>
  method.from === "both" || method.from === role
