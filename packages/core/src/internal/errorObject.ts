/**
 * The JSON-RPC error object that answers a request whose handler failed with
 * an `McpError`: only protocol and invalid-params reasons carry their details
 * to the peer; every other reason is an internal error with a short message.
 *
 * @internal
 */
import * as JsonRpc from "../JsonRpc.ts"
import type { McpError } from "../McpError.ts"

/** The JSON-RPC error object of an `McpError` (see the module). @internal */
export const errorObjectOf = (error: McpError): JsonRpc.ErrorObject => {
  const reason = error.reason
  switch (reason._tag) {
    case "ProtocolError":
      return reason.data === undefined
        ? { code: reason.code, message: reason.description }
        : { code: reason.code, message: reason.description, data: reason.data }
    case "InvalidParamsError":
      return { code: JsonRpc.ErrorCode.InvalidParams, message: reason.message }
    case "UnsupportedError":
      return { code: JsonRpc.ErrorCode.MethodNotFound, message: reason.message }
    default:
      return { code: JsonRpc.ErrorCode.InternalError, message: reason.message }
  }
}
