/**
 * An MCP transport over an `effect/socket` WebSocket: each text message is one
 * JSON-RPC message (or batch), each frame sent is one `JSON.stringify`d frame.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Socket from "effect/socket/Socket"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import { McpTransport } from "../../McpTransport.ts"

/**
 * Close codes that end the connection normally: 1000 (normal closure), 1001
 * (going away: a server shutting down, a page navigating) and 1005 (a close
 * frame without a code). Any other code is a transport failure.
 *
 * @internal
 */
export const isNormalClose = (code: number): boolean => code === 1000 || code === 1001 || code === 1005

const describeClose = (reason: Socket.SocketCloseError): string =>
  `the WebSocket closed with code ${reason.code}${reason.closeReason ? ` (${reason.closeReason})` : ""}`

/**
 * What a socket's error event (or error) says, if anything: `ws` tells what
 * went wrong (`connect ECONNREFUSED ...`, `Unexpected server response: 403`),
 * a browser's event nothing.
 */
const detailOf = (cause: unknown): string =>
  Predicate.hasProperty(cause, "message") && typeof cause.message === "string" ? cause.message : ""

/** A socket that could not be opened; the status of a refused handshake is kept. */
const openError = (cause: unknown): McpError.McpError => {
  const detail = detailOf(cause)
  const status = /^Unexpected server response: (\d{3})$/.exec(detail)?.[1]
  return McpError.transport(
    detail === "" ? "could not open the WebSocket" : `could not open the WebSocket: ${detail}`,
    status === undefined ? { cause } : { status: Number(status), cause }
  )
}

/** @internal */
export const fromSocketError = (error: Socket.SocketError, context: string): McpError.McpError => {
  const reason = error.reason
  switch (reason._tag) {
    case "SocketCloseError":
      return McpError.transport(describeClose(reason), { cause: error })
    case "SocketOpenError":
      return reason.kind === "Timeout"
        ? McpError.transport("timed out opening the WebSocket", { cause: reason.cause })
        : openError(reason.cause)
    default: {
      const detail = "cause" in reason ? detailOf(reason.cause) : ""
      return McpError.transport(`${context}: ${reason.message}${detail === "" ? "" : `: ${detail}`}`, { cause: error })
    }
  }
}

const parse = (data: string | Uint8Array): unknown => {
  const text = typeof data === "string"
    ? Result.succeed(data)
    : Result.try({ try: () => new TextDecoder("utf-8", { fatal: true }).decode(data), catch: () => "not valid UTF-8" })
  if (Result.isFailure(text)) return new JsonRpc.Malformed(text.failure)
  const value = Result.try({ try: () => JSON.parse(text.success) as unknown, catch: (e) => `not valid JSON: ${e}` })
  return Result.isFailure(value) ? new JsonRpc.Malformed(value.failure) : value.success
}

/**
 * Opens the socket (for a client socket this connects and waits for the
 * handshake) and returns a transport over it. Closing the scope sends a close
 * frame with code 1000 and detaches from the socket. Once the socket has
 * closed (either side), a send fails with `ClosedError`.
 *
 * @internal
 */
export const make = Effect.fnUntraced(function*(
  socket: Socket.Socket
): Effect.fn.Return<McpTransport["Service"], McpError.McpError, Scope.Scope> {
  const reader = yield* Effect.mapError(socket.reader, (error) => fromSocketError(error, "could not read"))
  const writer = yield* socket.writer
  let open = true
  // runs before the reader's own finalizer, while the socket is still attached
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      open = false
      return Effect.ignore(writer.write(new Socket.CloseEvent(1000)))
    })
  )

  const pull: Effect.Effect<Arr.NonEmptyReadonlyArray<unknown>, McpError.McpError | Cause.Done> = reader.pull.pipe(
    Effect.map((frames): Arr.NonEmptyReadonlyArray<unknown> =>
      frames.map(parse) as unknown as Arr.NonEmptyReadonlyArray<unknown>
    ),
    Effect.catch((error): Effect.Effect<never, McpError.McpError | Cause.Done> => {
      // the peer is gone: what is sent from now on fails rather than vanishing
      open = false
      return error.reason._tag === "SocketCloseError" && isNormalClose(error.reason.code)
        ? Cause.done()
        : Effect.fail(fromSocketError(error, "could not read"))
    })
  )

  return McpTransport.of({
    incoming: Stream.fromPull(Effect.succeed(pull)),
    send: (frame) =>
      Effect.suspend(() =>
        open
          ? Effect.mapError(writer.write(JSON.stringify(frame)), (error) => fromSocketError(error, "could not write"))
          : Effect.fail(McpError.closed("the WebSocket is closed"))
      )
  })
})
