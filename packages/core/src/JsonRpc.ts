/**
 * JSON-RPC 2.0 as MCP uses it: ids, envelopes, the standard error codes, and a
 * cheap classifier that sorts an incoming JSON value into a message kind.
 *
 * The envelope check is written by hand rather than with `Schema`: it runs for
 * every message in both directions, and all it has to establish is the shape
 * of four fields. Params and results are validated later, by the method that
 * owns them (see `McpMethod`).
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * A request id: a string or an integer (JSON-RPC allows numbers; MCP forbids
 * `null` ids on requests).
 *
 * @category models
 * @since 0.1.0
 */
export const RequestId = Schema.Union([Schema.String, Schema.Int])

/**
 * @category models
 * @since 0.1.0
 */
export type RequestId = string | number

/**
 * An error object carried by an error response.
 *
 * @category models
 * @since 0.1.0
 */
export const ErrorObject = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
})

/**
 * @category models
 * @since 0.1.0
 */
export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/**
 * A request: it expects exactly one response with the same id.
 *
 * @category models
 * @since 0.1.0
 */
export interface Request {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly method: string
  readonly params?: unknown
}

/**
 * A notification: a one-way message without an id.
 *
 * @category models
 * @since 0.1.0
 */
export interface Notification {
  readonly jsonrpc: "2.0"
  readonly method: string
  readonly params?: unknown
}

/**
 * A successful response.
 *
 * @category models
 * @since 0.1.0
 */
export interface SuccessResponse {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly result: unknown
}

/**
 * An error response. Its id is `null` only when the request's id could not be
 * read (a parse error or an invalid envelope).
 *
 * @category models
 * @since 0.1.0
 */
export interface ErrorResponse {
  readonly jsonrpc: "2.0"
  readonly id: RequestId | null
  readonly error: ErrorObject
}

/**
 * Any single JSON-RPC message.
 *
 * @category models
 * @since 0.1.0
 */
export type Message = Request | Notification | SuccessResponse | ErrorResponse

/**
 * What a transport may deliver or be asked to send: one message, or a batch
 * (JSON-RPC batches exist in MCP 2025-03-26 only).
 *
 * @category models
 * @since 0.1.0
 */
export type Frame = Message | ReadonlyArray<Message>

/**
 * Schemas of the envelopes, for users who want to validate or document them.
 * The session engine itself uses {@link classify}.
 *
 * @category schemas
 * @since 0.1.0
 */
export const RequestSchema = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: RequestId,
  method: Schema.String,
  params: Schema.optionalKey(Schema.Unknown)
})

/**
 * The Schema of a JSON-RPC notification: a `method` and optional `params`,
 * without an `id`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const NotificationSchema = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  method: Schema.String,
  params: Schema.optionalKey(Schema.Unknown)
})

/**
 * The Schema of a successful JSON-RPC response: the `id` of the request it
 * answers and its `result`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SuccessResponseSchema = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: RequestId,
  result: Schema.Unknown
})

/**
 * The Schema of a JSON-RPC error response: the `id` of the request it
 * answers (`null` when it could not be read) and an `error` object.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ErrorResponseSchema = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(RequestId),
  error: ErrorObject
})

/**
 * The Schema of any JSON-RPC message: a request, a notification, a success
 * or an error response.
 *
 * @category schemas
 * @since 0.1.0
 */
export const MessageSchema = Schema.Union([
  RequestSchema,
  NotificationSchema,
  SuccessResponseSchema,
  ErrorResponseSchema
])

// -----------------------------------------------------------------------------
// Error codes
// -----------------------------------------------------------------------------

/**
 * The JSON-RPC and MCP error codes.
 *
 * @category error codes
 * @since 0.1.0
 */
export const ErrorCode = {
  /** Invalid JSON was received. */
  ParseError: -32700,
  /** The JSON is not a valid request object. */
  InvalidRequest: -32600,
  /** The method does not exist or is not available. */
  MethodNotFound: -32601,
  /** Invalid method parameters. */
  InvalidParams: -32602,
  /** Internal error of the receiver. */
  InternalError: -32603,
  /** MCP 2026-07-28: an HTTP header does not match the body, or a required one is missing or malformed (HTTP 400). */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability its `_meta` did not declare (`data.requiredCapabilities`). */
  MissingRequiredClientCapability: -32021,
  /** MCP 2026-07-28: the request's protocol version is not served (`data.supported`, `data.requested`). */
  UnsupportedProtocolVersion: -32022,
  /** Implementation-defined: an HTTP server transport's refusal (bad headers, no session id, too many sessions, ...). */
  ServerError: -32000,
  /** Streamable HTTP: the `Mcp-Session-Id` names no live session (HTTP 404), or the session closed meanwhile. */
  SessionNotFound: -32001,
  /** MCP: the requested resource does not exist (2024-11-05 … 2025-11-25). */
  ResourceNotFound: -32002,
  /** MCP 2025-11-25: the request needs a URL-mode elicitation first. */
  UrlElicitationRequired: -32042
} as const

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * A JSON-RPC request with `id`, `method` and, when given, `params`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const request = (id: RequestId, method: string, params?: unknown): Request =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

/**
 * A JSON-RPC notification with `method` and, when given, `params`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const notification = (method: string, params?: unknown): Notification =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }

/**
 * A successful JSON-RPC response to request `id`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const success = (id: RequestId, result: unknown): SuccessResponse => ({ jsonrpc: "2.0", id, result })

/**
 * A JSON-RPC error response to request `id` (`null` when the request could
 * not be read).
 *
 * @category constructors
 * @since 0.1.0
 */
export const failure = (id: RequestId | null, error: ErrorObject): ErrorResponse => ({ jsonrpc: "2.0", id, error })

// -----------------------------------------------------------------------------
// Classification
// -----------------------------------------------------------------------------

/**
 * A frame that could not be read as JSON (or was not valid UTF-8, or exceeded
 * the size limit). Transports deliver it in-band so that the session can answer
 * `-32700` and go on.
 *
 * @category models
 * @since 0.1.0
 */
export class Malformed {
  readonly _tag = "Malformed"
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}

/**
 * The result of {@link classify}.
 *
 * @category models
 * @since 0.1.0
 */
export type Classified =
  | { readonly _tag: "Request"; readonly message: Request }
  | { readonly _tag: "Notification"; readonly message: Notification }
  | { readonly _tag: "Response"; readonly message: SuccessResponse | ErrorResponse }
  | { readonly _tag: "Invalid"; readonly id: RequestId | null; readonly reason: string }

const isId = (u: unknown): u is RequestId => typeof u === "string" || (typeof u === "number" && Number.isInteger(u))

const isParams = (u: unknown) => u === undefined || typeof u === "object" && u !== null

/**
 * Sorts one parsed JSON value into a JSON-RPC message kind, or says why it is
 * not a valid message (with the id when one could be read, so that the error
 * response can carry it). A value with `method` and `result` or `error`, or
 * with both `result` and `error`, is invalid.
 *
 * @category classification
 * @since 0.1.0
 */
export const classify = (u: unknown): Classified => {
  if (!Predicate.isObject(u)) return { _tag: "Invalid", id: null, reason: "a JSON-RPC message must be an object" }
  const id = isId(u.id) ? u.id : null
  if (u.jsonrpc !== "2.0") return { _tag: "Invalid", id, reason: "jsonrpc must be \"2.0\"" }
  const answers = "result" in u || "error" in u
  if ("method" in u && answers) {
    return { _tag: "Invalid", id, reason: "a message cannot be both a request and a response" }
  }
  if ("result" in u && "error" in u) {
    return { _tag: "Invalid", id, reason: "a response cannot carry both result and error" }
  }
  if (typeof u.method === "string") {
    if (!isParams(u.params)) return { _tag: "Invalid", id, reason: "params must be an object or an array" }
    if ("id" in u) {
      return id === null
        ? { _tag: "Invalid", id: null, reason: "a request id must be a string or an integer" }
        : { _tag: "Request", message: u as unknown as Request }
    }
    return { _tag: "Notification", message: u as unknown as Notification }
  }
  if ("result" in u) {
    return id === null
      ? { _tag: "Invalid", id: null, reason: "a response id must be a string or an integer" }
      : { _tag: "Response", message: u as unknown as SuccessResponse }
  }
  if ("error" in u) {
    const error = u.error
    if (!Predicate.isObject(error) || typeof error.code !== "number" || typeof error.message !== "string") {
      return { _tag: "Invalid", id, reason: "error must have a numeric code and a message" }
    }
    if (u.id !== null && id === null) {
      return { _tag: "Invalid", id: null, reason: "a response id must be a string, an integer or null" }
    }
    return { _tag: "Response", message: u as unknown as ErrorResponse }
  }
  return { _tag: "Invalid", id, reason: "not a request, notification or response" }
}

/**
 * `true` for a successful response.
 *
 * @category guards
 * @since 0.1.0
 */
export const isSuccess = (response: SuccessResponse | ErrorResponse): response is SuccessResponse =>
  "result" in response
