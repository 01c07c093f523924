/**
 * The stateful ("legacy") era of MCP, revisions 2024-11-05 to 2025-11-25: the
 * initialize handshake, version negotiation, and the server's admission rule
 * while the handshake is under way. An era is a property of a session: the
 * stateless 2026-07-28 era gets `stateless.ts` beside this file, with its own
 * admission rule (version and capabilities read from each request's `_meta`).
 *
 * @internal
 */
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpSchema from "../../McpSchema.ts"

/** The server's side of the handshake. @internal */
export type ServerState =
  | { readonly _tag: "NotInitialized" }
  | {
    readonly _tag: "Initializing" | "Initialized"
    readonly client: McpSchema.InitializeRequestParams
    readonly protocolVersion: string
  }

/**
 * The version a server answers: the client's when supported, else the
 * server's preferred (first) one.
 *
 * @internal
 */
export const negotiate = (requested: string, supported: ReadonlyArray<string>): string =>
  supported.includes(requested) ? requested : supported[0] ?? McpSchema.LATEST_PROTOCOL_VERSION

const notInitialized = (method: string): JsonRpc.ErrorObject => ({
  code: JsonRpc.ErrorCode.InvalidRequest,
  message:
    `Invalid Request: ${method} before the session is initialized (send initialize, then notifications/initialized)`
})

/**
 * The server's admission rule: before `notifications/initialized`, only
 * `initialize` (once) and `ping` are answered; other requests get an error and
 * other notifications are dropped.
 *
 * @internal
 */
export const admitOnServer = (
  state: ServerState,
  message: JsonRpc.Request | JsonRpc.Notification,
  kind: "request" | "notification"
): JsonRpc.ErrorObject | undefined => {
  const method = message.method
  if (kind === "request") {
    if (method === McpSchema.Initialize.name) {
      return state._tag === "NotInitialized"
        ? undefined
        : { code: JsonRpc.ErrorCode.InvalidRequest, message: "Invalid Request: the session is already initialized" }
    }
    if (method === McpSchema.Ping.name || state._tag === "Initialized") return undefined
    return notInitialized(method)
  }
  if (method === McpSchema.Initialized.name) {
    return state._tag === "Initializing" ? undefined : notInitialized(method)
  }
  return state._tag === "Initialized" ? undefined : notInitialized(method)
}

/** Batches exist in 2025-03-26 only. @internal */
export const acceptsBatches = (protocolVersion: string | undefined): boolean => protocolVersion === "2025-03-26"
