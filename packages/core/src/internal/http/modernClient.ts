/**
 * The Streamable HTTP client transport's 2026-07-28 requests: each POST
 * without a session, with `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`
 * and the `Mcp-Param-*` headers the caller set (`McpTransport.RequestHeaders`);
 * a modern refusal's JSON-RPC error (400, 404) is the request's answer; an
 * answer stream that ends without the answer fails the request at once; and
 * a request is cancelled by closing its stream, never by a notification
 * (the one place this transport keeps request ids).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpError from "../../McpError.ts"
import type * as McpHttpClient from "../../McpHttpClient.ts"
import { RequestHeaders } from "../../McpTransport.ts"
import * as ClientCommon from "./clientCommon.ts"
import * as StandardHeaders from "./standardHeaders.ts"

/** What the transport lends: its POST, its ways of delivering answers, its fibers. @internal */
export interface Deps {
  readonly url: string
  readonly headers: McpHttpClient.Options["headers"]
  readonly execute: ClientCommon.Execute
  readonly deliver: (
    response: HttpClientResponse.HttpClientResponse,
    frame: JsonRpc.Frame
  ) => Effect.Effect<void, McpError.McpError>
  /** Reads an SSE answer until the one response it owes. */
  readonly readStream: (
    response: HttpClientResponse.HttpClientResponse
  ) => Effect.Effect<{ readonly answered: boolean }>
  readonly offer: (value: unknown) => Effect.Effect<void>
  readonly background: (effect: Effect.Effect<void>) => Effect.Effect<Fiber.Fiber<void>>
  readonly isClosed: () => boolean
}

/** @internal */
export interface ModernClient {
  readonly send: (
    frame: JsonRpc.Request | JsonRpc.Notification,
    version: string
  ) => Effect.Effect<void, McpError.McpError>
  readonly cancel: (frame: JsonRpc.Notification) => Effect.Effect<void>
}

/** @internal */
export const make = (deps: Deps): ModernClient => {
  // the answer streams of modern requests, by request id
  const streams = new Map<JsonRpc.RequestId, Fiber.Fiber<void>>()

  const read = (response: HttpClientResponse.HttpClientResponse, id: JsonRpc.RequestId) =>
    Effect.flatMap(
      deps.readStream(response),
      (outcome) =>
        outcome.answered || deps.isClosed() ? Effect.void : deps.offer(JsonRpc.failure(id, {
          code: JsonRpc.ErrorCode.InternalError,
          message: `the response stream of ${deps.url} ended before the answer`
        }))
    ).pipe(Effect.ensuring(Effect.sync(() => streams.delete(id))))

  const send: ModernClient["send"] = (frame, version) =>
    Effect.withFiber((fiber) => {
      const extra = fiber.getRef(RequestHeaders)
      const name = StandardHeaders.nameOf(frame.method, frame.params)
      return Effect.gen(function*() {
        const custom = yield* ClientCommon.resolveHeaders(deps.headers)
        const response = yield* deps.execute(ClientCommon.postFrame(deps.url, frame, { ...custom, ...extra }, {
          accept: ClientCommon.ACCEPT_POST,
          "mcp-protocol-version": version,
          [StandardHeaders.MCP_METHOD]: frame.method,
          [StandardHeaders.MCP_NAME]: name === undefined ? undefined : StandardHeaders.encodeValue(name)
        }))
        if (response.status >= 200 && response.status < 300) {
          if (!("id" in frame) || ClientCommon.mediaType(response) !== "text/event-stream") {
            return yield* deps.deliver(response, frame)
          }
          streams.set(frame.id, yield* deps.background(read(response, frame.id)))
          return
        }
        const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
        // a modern server refuses with the request's JSON-RPC error: that is its answer
        const answer = "id" in frame
          ? ClientCommon.parseJson(body).find((value) => ClientCommon.isResponse(value) && value.id === frame.id)
          : undefined
        return yield* answer === undefined ? ClientCommon.statusErrorWithBody(response, body) : deps.offer(answer)
      })
    })

  // closing the answer stream (or the POST, which the caller's interruption does) is the cancellation
  const cancel: ModernClient["cancel"] = (frame) =>
    Effect.sync(() => {
      const requestId = (frame.params as { readonly requestId?: JsonRpc.RequestId } | undefined)?.requestId
      const stream = requestId === undefined ? undefined : streams.get(requestId)
      if (stream === undefined) return
      streams.delete(requestId!)
      stream.interruptUnsafe()
    })

  return { send, cancel }
}
