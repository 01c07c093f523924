/**
 * Direct delivery: an optional, internal side door of a transport whose
 * `incoming` stream is fed by the process itself (the in-memory link). Such a
 * stream carries a {@link DirectTypeId} property: the session may install a
 * receiver, which the transport offers each message to before it queues it
 * for the stream. The receiver takes what it can handle at once (a reply to a
 * pending request, a request to fork a handler for) and declines the rest, so
 * that the common messages need no reader fiber to wake. The transport offers
 * a message only when nothing is queued ahead of it; the receiver declines
 * while the reader is busy: the order of messages holds.
 *
 * The property is on the stream, not the transport: a wrapper that replaces
 * `incoming` drops it, and its messages go through the stream as before.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import type * as Queue from "effect/Queue"
import type * as McpError from "../../McpError.ts"

/** @internal */
export const DirectTypeId: unique symbol = Symbol.for("@effect-mcp/core/internal/DirectDelivery")

/** `true`: the message is handled. Called outside of any fiber. @internal */
export type Receiver = (value: unknown) => boolean

/** @internal */
export interface Direct {
  /** The queue `incoming` streams from, for a reader that takes from it directly. */
  readonly inbox: Queue.Dequeue<unknown, McpError.McpError | Cause.Done>
  readonly install: (receiver: Receiver | undefined) => void
}

/** @internal */
export const get = (incoming: unknown): Direct | undefined =>
  typeof incoming === "object" && incoming !== null && DirectTypeId in incoming
    ? (incoming as { readonly [DirectTypeId]: Direct })[DirectTypeId]
    : undefined
