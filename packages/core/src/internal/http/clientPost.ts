/**
 * The Streamable HTTP client's POSTs: the request without its body is built
 * once and built again only when its headers change (the session id, the
 * protocol version, or custom headers computed per request); each frame only
 * adds its JSON body.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as JsonRpc from "../../JsonRpc.ts"
import type * as McpError from "../../McpError.ts"
import * as ClientCommon from "./clientCommon.ts"

interface Base {
  readonly custom: Readonly<Record<string, string>>
  readonly session: string | undefined
  readonly version: string | undefined
  readonly request: HttpClientRequest.HttpClientRequest
}

const noHeaders: Readonly<Record<string, string>> = {}

/** POSTs one frame to `url` with `execute`, with the session id and protocol version given. @internal */
export const make = (
  url: string,
  headers: ClientCommon.HeadersOption | undefined,
  execute: (
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, McpError.McpError>
) => {
  let base: Base | undefined
  const postWith = (
    frame: JsonRpc.Frame,
    session: string | undefined,
    version: string | undefined,
    custom: Readonly<Record<string, string>>
  ) => {
    if (base === undefined || base.custom !== custom || base.session !== session || base.version !== version) {
      base = {
        custom,
        session,
        version,
        request: ClientCommon.postRequest(url, custom, {
          accept: ClientCommon.ACCEPT_POST,
          "mcp-session-id": session,
          "mcp-protocol-version": version
        })
      }
    }
    return execute(ClientCommon.withFrame(base.request, frame))
  }
  // fixed headers need no effect step per POST
  const fixed = headers === undefined ? noHeaders : Effect.isEffect(headers) ? undefined : headers
  return (frame: JsonRpc.Frame, session: string | undefined, version: string | undefined) =>
    fixed !== undefined
      ? postWith(frame, session, version, fixed)
      : Effect.flatMap(ClientCommon.resolveHeaders(headers), (custom) => postWith(frame, session, version, custom))
}
