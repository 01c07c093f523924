/**
 * The messages of the request relay between replicas, on Redis pub/sub.
 *
 * A replica listens on two channels: `requests` (forwarded requests, and
 * cancellations of them) and `replies` (the responses to the requests it
 * forwarded). A response is a `head`, then `chunk`s numbered from 0, then an
 * `end` that says how many chunks there were (so a lost one is noticed), or
 * a `fail` at any point; or, when its body is known at once (a JSON answer),
 * one `whole` message. Bodies travel as base64. Everything on a channel is
 * decoded with a schema: anything else is dropped.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const Headers = Schema.Record(Schema.String, Schema.String)

/** A forwarded request; the reply goes to `from`'s replies channel. @internal */
export const Request = Schema.Struct({
  t: Schema.Literal("request"),
  id: Schema.String,
  from: Schema.String,
  method: Schema.String,
  url: Schema.String,
  headers: Headers,
  body: Schema.Uint8ArrayFromBase64
})

/** The forwarder went away before the end: stop serving `id`. @internal */
export const Cancel = Schema.Struct({ t: Schema.Literal("cancel"), id: Schema.String, from: Schema.String })

/** @internal */
export const Head = Schema.Struct({
  t: Schema.Literal("head"),
  id: Schema.String,
  status: Schema.Int,
  headers: Headers
})

/** @internal */
export const Chunk = Schema.Struct({
  t: Schema.Literal("chunk"),
  id: Schema.String,
  seq: Schema.Int,
  data: Schema.Uint8ArrayFromBase64
})

/** @internal */
export const End = Schema.Struct({ t: Schema.Literal("end"), id: Schema.String, chunks: Schema.Int })

/** A response in one message: head and body. @internal */
export const Whole = Schema.Struct({
  t: Schema.Literal("whole"),
  id: Schema.String,
  status: Schema.Int,
  headers: Headers,
  data: Schema.Uint8ArrayFromBase64
})

/** @internal */
export const Fail = Schema.Struct({ t: Schema.Literal("fail"), id: Schema.String, message: Schema.String })

/** What arrives on a replica's requests channel. @internal */
export const Inbound = Schema.fromJsonString(Schema.Union([Request, Cancel]))
/** @internal */
export type Inbound = typeof Inbound.Type

/** What arrives on a replica's replies channel. @internal */
export const Outbound = Schema.fromJsonString(Schema.Union([Head, Chunk, End, Whole, Fail]))
/** @internal */
export type Outbound = typeof Outbound.Type

/** @internal */
export const encodeInbound: (message: Inbound) => string = Schema.encodeSync(Inbound)
/** @internal */
export const encodeOutbound: (message: Outbound) => string = Schema.encodeSync(Outbound)

const decodeInboundOption = Schema.decodeUnknownOption(Inbound)
const decodeOutboundOption = Schema.decodeUnknownOption(Outbound)

/** @internal */
export const decodeInbound = (text: string): Inbound | undefined => Option.getOrUndefined(decodeInboundOption(text))
/** @internal */
export const decodeOutbound = (text: string): Outbound | undefined => Option.getOrUndefined(decodeOutboundOption(text))

/** The channel names of one deployment (`prefix`). @internal */
export interface Channels {
  readonly requests: (replicaId: string) => string
  readonly replies: (replicaId: string) => string
}

/** @internal */
export const channels = (prefix: string): Channels => ({
  requests: (replicaId) => `${prefix}relay:${replicaId}`,
  replies: (replicaId) => `${prefix}relay-replies:${replicaId}`
})
