/**
 * The HTTP responses of the Streamable HTTP server: a JSON-RPC error with its
 * status, an SSE stream, the JSON answer of a POST, the fixed ones
 * (`202 Accepted`, an empty stream), and the check of `MCP-Protocol-Version`.
 *
 * @internal
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.ts"
import * as McpSchema from "../../../McpSchema.ts"
import type * as Bearer from "../../auth/bearer.ts"
import { PROTOCOL_VERSION } from "../guard.ts"
import * as SseStream from "./sseStream.ts"

/** A JSON-RPC error object as the body of an HTTP error. @internal */
export const error = (
  status: number,
  code: number,
  message: string,
  options?: {
    readonly id?: JsonRpc.RequestId | null
    readonly headers?: Record<string, string>
    readonly data?: unknown
  }
) =>
  HttpServerResponse.text(
    JSON.stringify({
      jsonrpc: "2.0",
      id: options?.id ?? null,
      error: options?.data === undefined ? { code, message } : { code, message, data: options.data }
    }),
    { status, contentType: "application/json", ...(options?.headers === undefined ? {} : { headers: options.headers }) }
  )

const SSE_HEADERS = { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" }

/** An SSE response with `body`. @internal */
export const sse = (body: Stream.Stream<Uint8Array>, headers?: Record<string, string>) =>
  HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: headers === undefined ? SSE_HEADERS : { ...SSE_HEADERS, ...headers }
  })

/** An SSE response whose events are all known: one body with a length. @internal */
export const sseText = (text: string) =>
  HttpServerResponse.text(text, { contentType: "text/event-stream", headers: SSE_HEADERS })

/**
 * The `500` of a request whose handling failed unexpectedly (a defect): a
 * JSON-RPC internal error without detail (the cause goes to the log).
 *
 * @internal
 */
export const internalError = () => error(500, JsonRpc.ErrorCode.InternalError, "Internal Server Error")

/** The answer to a POST without requests. @internal */
export const accepted = HttpServerResponse.empty({ status: 202 })

/** An SSE stream with nothing in it. @internal */
export const emptyStream = () => sse(Stream.empty)

/** The answer to a request the bearer check refused. @internal */
export const refused = (refusal: Bearer.Refusal) =>
  error(
    refusal.status,
    refusal.status === 500 ? JsonRpc.ErrorCode.InternalError : JsonRpc.ErrorCode.ServerError,
    refusal.message,
    {
      headers: {
        ...refusal.headers,
        ...(refusal.challenge === undefined ? {} : { "www-authenticate": refusal.challenge })
      }
    }
  )

/** The JSON answer to a POST: its one response, or the array of a batch. @internal */
export const json = (batch: boolean, responses: ReadonlyArray<JsonRpc.Message> | undefined, status = 200) => {
  const all = responses ?? []
  const text = batch ? `[${all.map(SseStream.stringify).join(",")}]` : SseStream.stringify(all[0]!)
  return HttpServerResponse.text(text, { status, contentType: "application/json" })
}

const isSupported = (version: string) =>
  (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)

/** The `400` answer to an `MCP-Protocol-Version` header the server does not speak, or `undefined`. @internal */
export const checkVersion = (
  headers: Readonly<Record<string, string | undefined>>
): HttpServerResponse.HttpServerResponse | undefined => {
  const version = headers[PROTOCOL_VERSION]
  return version === undefined || isSupported(version) ? undefined : error(
    400,
    JsonRpc.ErrorCode.ServerError,
    `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${
      McpSchema.SUPPORTED_PROTOCOL_VERSIONS.join(", ")
    })`
  )
}
