/**
 * Lifecycle: capabilities, `initialize`, `notifications/initialized` and
 * `ping`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpMethod from "../../McpMethod.ts"
import {
  EmptyResult,
  Implementation,
  JsonObject,
  Meta,
  NotificationParams,
  RequestMeta,
  RequestParams
} from "./base.ts"

// -----------------------------------------------------------------------------
// Capabilities
// -----------------------------------------------------------------------------

const Flag = Schema.optionalKey(JsonObject)

// extensions by id (2026-07-28), each with its (often empty) settings
const Extensions = Schema.optionalKey(Schema.Record(Schema.String, JsonObject))

/**
 * What a client supports. Present keys mean support; values declared as
 * `object` in the spec are (usually empty) JSON objects. `elicitation` is new
 * in 2025-06-18 (its `form` / `url` keys in 2025-11-25; `elicitation: {}`
 * means form only); `sampling.context`, `sampling.tools` and `tasks` are new
 * in 2025-11-25; `extensions` (by extension id, e.g. the tasks extension) in
 * 2026-07-28.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ClientCapabilities = Schema.Struct({
  experimental: Schema.optionalKey(Schema.Record(Schema.String, JsonObject)),
  extensions: Extensions,
  roots: Schema.optionalKey(Schema.Struct({
    listChanged: Schema.optionalKey(Schema.Boolean)
  })),
  sampling: Schema.optionalKey(Schema.Struct({
    context: Flag,
    tools: Flag
  })),
  elicitation: Schema.optionalKey(Schema.Struct({
    form: Flag,
    url: Flag
  })),
  tasks: Schema.optionalKey(Schema.Struct({
    list: Flag,
    cancel: Flag,
    requests: Schema.optionalKey(Schema.Struct({
      sampling: Schema.optionalKey(Schema.Struct({ createMessage: Flag })),
      elicitation: Schema.optionalKey(Schema.Struct({ create: Flag }))
    }))
  }))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ClientCapabilities = typeof ClientCapabilities.Type

/**
 * What a server supports. `completions` is new in 2025-03-26, `tasks` in
 * 2025-11-25, `extensions` (by extension id) in 2026-07-28.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ServerCapabilities = Schema.Struct({
  experimental: Schema.optionalKey(Schema.Record(Schema.String, JsonObject)),
  extensions: Extensions,
  logging: Flag,
  completions: Flag,
  prompts: Schema.optionalKey(Schema.Struct({
    listChanged: Schema.optionalKey(Schema.Boolean)
  })),
  resources: Schema.optionalKey(Schema.Struct({
    subscribe: Schema.optionalKey(Schema.Boolean),
    listChanged: Schema.optionalKey(Schema.Boolean)
  })),
  tools: Schema.optionalKey(Schema.Struct({
    listChanged: Schema.optionalKey(Schema.Boolean)
  })),
  tasks: Schema.optionalKey(Schema.Struct({
    list: Flag,
    cancel: Flag,
    requests: Schema.optionalKey(Schema.Struct({
      tools: Schema.optionalKey(Schema.Struct({ call: Flag }))
    }))
  }))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ServerCapabilities = typeof ServerCapabilities.Type

// -----------------------------------------------------------------------------
// Initialization
// -----------------------------------------------------------------------------

/**
 * Params of `initialize`. `protocolVersion` is the latest version the client
 * supports; it is a plain string because a peer may propose a version this
 * SDK does not know.
 *
 * @category schemas
 * @since 0.1.0
 */
export const InitializeRequestParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  protocolVersion: Schema.String,
  capabilities: ClientCapabilities,
  clientInfo: Implementation
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type InitializeRequestParams = typeof InitializeRequestParams.Type

/**
 * The result of `initialize`: the version the server chose (the client must
 * disconnect if it cannot speak it), its capabilities and info, and optional
 * instructions for the model.
 *
 * @category schemas
 * @since 0.1.0
 */
export const InitializeResult = Schema.Struct({
  _meta: Schema.optionalKey(Meta),
  protocolVersion: Schema.String,
  capabilities: ServerCapabilities,
  serverInfo: Implementation,
  instructions: Schema.optionalKey(Schema.String)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type InitializeResult = typeof InitializeResult.Type

// -----------------------------------------------------------------------------
// Methods
// -----------------------------------------------------------------------------

/**
 * `initialize`: the first request of a session.
 *
 * @category methods
 * @since 0.1.0
 */
export const Initialize = McpMethod.request({
  name: "initialize",
  params: InitializeRequestParams,
  result: InitializeResult,
  from: "client"
})

/**
 * `notifications/initialized`: the client has finished initialization.
 *
 * @category methods
 * @since 0.1.0
 */
export const Initialized = McpMethod.notification({
  name: "notifications/initialized",
  params: NotificationParams,
  from: "client"
})

/**
 * `ping`: either side checks that the other is alive; the answer is an empty
 * result.
 *
 * @category methods
 * @since 0.1.0
 */
export const Ping = McpMethod.request({
  name: "ping",
  params: RequestParams,
  result: EmptyResult,
  from: "both"
})
