/**
 * The stateless ("modern") era of MCP, revision 2026-07-28: a request is
 * modern when its `_meta` names a protocol version (or its method exists only
 * in this era). Nothing is negotiated: each request carries its version,
 * client capabilities, client info and log level, and the server admits it
 * on those alone. Results carry `resultType` and the server's info. The
 * stateful era's rules are in `stateful.ts`; multi round-trip requests in
 * `inputRequired.ts`.
 *
 * @internal
 */
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpMethod from "../../McpMethod.ts"
import * as McpSchema from "../../McpSchema.ts"

const { MetaKey } = McpSchema

/** Methods of this era only. @internal */
export const MODERN_ONLY: ReadonlySet<string> = new Set([
  McpSchema.Discover.name,
  McpSchema.SubscriptionsListen.name,
  McpSchema.UpdateTask.name
])

/** Methods the stateless revision removed: a modern request for one is an unknown method. @internal */
export const LEGACY_ONLY: ReadonlySet<string> = new Set([
  McpSchema.Initialize.name,
  McpSchema.Ping.name,
  McpSchema.SetLevel.name,
  McpSchema.Subscribe.name,
  McpSchema.Unsubscribe.name,
  McpSchema.GetTaskPayload.name,
  McpSchema.ListTasks.name
])

type Meta = Readonly<Record<string, unknown>>

const metaOf = (params: unknown): Meta | undefined => {
  const meta = typeof params === "object" && params !== null
    ? (params as { readonly _meta?: unknown })._meta
    : undefined
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) ? meta as Meta : undefined
}

/** The protocol version a request's `_meta` names, if any. @internal */
export const versionOf = (params: unknown): unknown => metaOf(params)?.[MetaKey.protocolVersion]

/** `true` when a message of `method` with `params` is of the stateless era. @internal */
export const isModern = (method: string, params: unknown): boolean =>
  versionOf(params) !== undefined || MODERN_ONLY.has(method)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const invalidMeta = (problem: string): JsonRpc.ErrorObject => ({
  code: JsonRpc.ErrorCode.InvalidParams,
  message:
    `Invalid params: ${problem} (every 2026-07-28 request carries _meta["${MetaKey.protocolVersion}"] and _meta["${MetaKey.clientCapabilities}"])`
})

/** `-32022`, with the versions served and the one asked for. @internal */
export const unsupportedVersion = (requested: unknown, supported: ReadonlyArray<string>): JsonRpc.ErrorObject => ({
  code: JsonRpc.ErrorCode.UnsupportedProtocolVersion,
  message: `Unsupported protocol version: ${
    typeof requested === "string" ? JSON.stringify(requested) : "(not a string)"
  }; this server speaks ${supported.join(", ")}`,
  data: { supported, requested }
})

/**
 * The admission rule of a modern request: a removed method is unknown; the
 * `_meta` must carry a version this server serves and the client's
 * capabilities. `modern` are the stateless versions served, `all` every
 * version (for `data.supported`).
 *
 * @internal
 */
export const admit = (
  message: JsonRpc.Request | JsonRpc.Notification,
  kind: "request" | "notification",
  modern: ReadonlyArray<string>,
  all: ReadonlyArray<string>
): JsonRpc.ErrorObject | undefined => {
  if (kind === "notification") {
    return {
      code: JsonRpc.ErrorCode.InvalidRequest,
      message: `${message.method} is not a notification of the stateless era`
    }
  }
  if (LEGACY_ONLY.has(message.method)) return removedMethod(message.method)
  return checkMeta(metaOf(message.params), modern, all)
}

/** `-32601` for a method the stateless revision removed. @internal */
export const removedMethod = (method: string): JsonRpc.ErrorObject => ({
  code: JsonRpc.ErrorCode.MethodNotFound,
  message: `Method not found: ${method} (removed in 2026-07-28)`
})

/** The `_meta` checks of {@link admit}, shared with the HTTP transport (which answers them with a 400). @internal */
export const checkMeta = (
  meta: Meta | undefined,
  modern: ReadonlyArray<string>,
  all: ReadonlyArray<string>
): JsonRpc.ErrorObject | undefined => {
  if (meta === undefined) return invalidMeta("_meta is missing")
  const version = meta[MetaKey.protocolVersion]
  if (typeof version !== "string") return invalidMeta(`_meta["${MetaKey.protocolVersion}"] is missing`)
  if (!modern.includes(version)) return unsupportedVersion(version, all)
  if (!isObject(meta[MetaKey.clientCapabilities])) {
    return invalidMeta(`_meta["${MetaKey.clientCapabilities}"] is missing`)
  }
  return undefined
}

/** The `_meta` of a request, for the HTTP transport's checks. @internal */
export const requestMeta = metaOf

/** What a modern request says of its client. @internal */
export interface Client {
  readonly protocolVersion: string
  readonly capabilities: McpSchema.ClientCapabilities
  readonly clientInfo: McpSchema.Implementation
  readonly logLevel: McpSchema.LoggingLevel | undefined
}

const LEVELS: ReadonlySet<unknown> = new Set(McpSchema.LoggingLevel.literals)

const anonymous: McpSchema.Implementation = { name: "unknown", version: "0" }

/** Reads the client out of an admitted request's `_meta`. @internal */
export const clientOf = (meta: Meta | undefined): Client => {
  const info = meta?.[MetaKey.clientInfo]
  const level = meta?.[MetaKey.logLevel]
  return {
    protocolVersion: meta?.[MetaKey.protocolVersion] as string,
    capabilities: (meta?.[MetaKey.clientCapabilities] ?? {}) as McpSchema.ClientCapabilities,
    clientInfo: isObject(info) && typeof info.name === "string" ? info as McpSchema.Implementation : anonymous,
    logLevel: LEVELS.has(level) ? level as McpSchema.LoggingLevel : undefined
  }
}

/** A modern result: `resultType` (`complete` unless set) and the server's info in `_meta`. @internal */
export const completeResult = (result: unknown, serverInfo: McpSchema.Implementation): unknown => {
  const object = (isObject(result) ? result : {}) as { readonly _meta?: Meta; readonly resultType?: unknown }
  return {
    ...object,
    resultType: object.resultType ?? "complete",
    _meta: { ...object._meta, [MetaKey.serverInfo]: serverInfo }
  }
}

/**
 * `-32021`: the request needs a client capability it did not declare;
 * `data.requiredCapabilities` is a capabilities object with the missing one.
 *
 * @internal
 */
export const missingCapability = (capability: McpMethod.Capability, method: string): McpError.McpError => {
  let required: Record<string, unknown> = {}
  for (const segment of [...capability.path].reverse()) required = { [segment]: required }
  return McpError.protocol(
    JsonRpc.ErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${capability.path.join(".")} (for ${method})`,
    { requiredCapabilities: required }
  )
}
