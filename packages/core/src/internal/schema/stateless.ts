/**
 * The stateless revision (2026-07-28): the per-request `_meta` keys,
 * `server/discover`, `subscriptions/listen`, `resultType`, cache hints and
 * the input-required result of multi round-trip requests.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import { JsonObject, Meta, RequestParams } from "./base.ts"
import { ServerCapabilities } from "./lifecycle.ts"

// -----------------------------------------------------------------------------
// Versions and _meta keys
// -----------------------------------------------------------------------------

/**
 * The stateless revisions this SDK speaks, newest first.
 *
 * @category protocol versions
 * @since 0.2.0
 */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const

/**
 * `true` when `version` is one of {@link MODERN_PROTOCOL_VERSIONS}.
 *
 * @category protocol versions
 * @since 0.2.0
 */
export const isModernProtocolVersion = (version: unknown): boolean =>
  (MODERN_PROTOCOL_VERSIONS as ReadonlyArray<unknown>).includes(version)

/**
 * The reserved `_meta` keys of the stateless revision (and the trace context
 * keys, which both eras may carry).
 *
 * @category constants
 * @since 0.2.0
 */
export const MetaKey = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
  traceparent: "traceparent",
  tracestate: "tracestate",
  baggage: "baggage"
} as const

/**
 * The `_meta` key under which a server→client request of a legacy session
 * names the input it asks for (the `inputKey` of `McpServer.RequestOptions`),
 * so that a gateway turning it into a 2026-07-28 input-required round keeps
 * the name. Not part of the protocol: other clients ignore it.
 *
 * @category constants
 * @since 0.3.0
 */
export const INPUT_KEY_META_KEY = "effect-mcp/inputKey"

// -----------------------------------------------------------------------------
// Results and cache hints
// -----------------------------------------------------------------------------

/**
 * How long a result stays fresh (`ttlMs`, milliseconds, ≥ 0) and who may
 * cache it (`public`: anyone; `private`: the caller only).
 *
 * @category schemas
 * @since 0.2.0
 */
export const CacheHints = Schema.Struct({
  ttlMs: Schema.Number,
  cacheScope: Schema.Literals(["public", "private"])
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type CacheHints = typeof CacheHints.Type

/**
 * A map of server→client requests a result asks the client to answer before
 * it retries (`elicitation/create`, `sampling/createMessage`, `roots/list`).
 *
 * @category schemas
 * @since 0.2.0
 */
export const InputRequests = Schema.Record(
  Schema.String,
  Schema.Struct({ method: Schema.String, params: Schema.optionalKey(JsonObject) })
)

/**
 * @category schemas
 * @since 0.2.0
 */
export type InputRequests = typeof InputRequests.Type

/**
 * The answer of a request that needs more input: the client answers
 * `inputRequests` and retries with `inputResponses`, echoing `requestState`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const InputRequiredResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  resultType: Schema.Literal("input_required"),
  inputRequests: Schema.optionalKey(InputRequests),
  requestState: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type InputRequiredResult = typeof InputRequiredResult.Type

// -----------------------------------------------------------------------------
// server/discover
// -----------------------------------------------------------------------------

/**
 * What `server/discover` answers: the versions, capabilities and
 * instructions of the server, with cache hints.
 *
 * @category schemas
 * @since 0.2.0
 */
export const DiscoverResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ServerCapabilities,
  instructions: Schema.optionalKey(Schema.String),
  ttlMs: Schema.optionalKey(Schema.Number),
  cacheScope: Schema.optionalKey(Schema.Literals(["public", "private"]))
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type DiscoverResult = typeof DiscoverResult.Type

/**
 * `server/discover`: the client asks what the server speaks and offers.
 *
 * @category methods
 * @since 0.2.0
 */
export const Discover = McpMethod.request({
  name: "server/discover",
  params: RequestParams,
  result: DiscoverResult,
  from: "client"
})

// -----------------------------------------------------------------------------
// subscriptions/listen
// -----------------------------------------------------------------------------

/**
 * Which change notifications a `subscriptions/listen` stream carries;
 * `taskIds` asks for `notifications/tasks` of those tasks (tasks extension).
 *
 * @category schemas
 * @since 0.2.0
 */
export const SubscriptionFilter = Schema.Struct({
  toolsListChanged: Schema.optionalKey(Schema.Boolean),
  promptsListChanged: Schema.optionalKey(Schema.Boolean),
  resourcesListChanged: Schema.optionalKey(Schema.Boolean),
  resourceSubscriptions: Schema.optionalKey(Schema.Array(Schema.String)),
  taskIds: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type SubscriptionFilter = typeof SubscriptionFilter.Type

/**
 * `subscriptions/listen`: a long-lived request whose stream carries the
 * change notifications asked for; its result marks a graceful end.
 *
 * @category methods
 * @since 0.2.0
 */
export const SubscriptionsListen = McpMethod.request({
  name: "subscriptions/listen",
  params: Schema.Struct({ _meta: Schema.optionalKey(Meta), notifications: SubscriptionFilter }),
  result: Schema.Struct({ _meta: Schema.optionalKey(Meta) }),
  from: "client"
})

/**
 * `notifications/subscriptions/acknowledged`: the first message of a listen
 * stream, with the part of the filter the server honours.
 *
 * @category methods
 * @since 0.2.0
 */
export const SubscriptionsAcknowledged = McpMethod.notification({
  name: "notifications/subscriptions/acknowledged",
  params: Schema.Struct({ _meta: Schema.optionalKey(Meta), notifications: SubscriptionFilter }),
  from: "server"
})
