/**
 * The request context a server handler receives: the session's view of the
 * request plus the server's extras (logging filtered by the session's level,
 * sampling, elicitation, roots).
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import { toRequestedSchema } from "../jsonSchema/form.ts"
import * as Logging from "./logging.ts"

/** The context of the request being handled. @internal */
export const CurrentRequestContext = Context.Reference<McpServer.RequestContext | undefined>(
  "@effect-mcp/core/McpServer/CurrentRequestContext",
  { defaultValue: () => undefined }
)

/** What the server keeps per connection. @internal */
export interface LiveSession {
  session: McpServerSession.ServerSession | undefined
  /** The session part of every request context, built at the first request. */
  shared: SharedContext | undefined
  /** The threshold set by `logging/setLevel` (none: everything is sent). */
  logLevel: McpSchema.LoggingLevel | undefined
  /** Its resource subscriptions (made at the first). */
  subscriptions: Set<string> | undefined
  /** Done when the connection is closing: its `subscriptions/listen` streams end then (made at the first, or at the end). */
  closing: Deferred.Deferred<void> | undefined
  /** The fibers answering its `subscriptions/listen` requests (made at the first). */
  listens: Set<Fiber.Fiber<unknown, unknown>> | undefined
  /** Whom its tasks belong to when requests carry no principal (made at the first task). */
  requestor?: string | undefined
}

/**
 * How a context reaches its client: in a legacy session, through the session
 * (requests, its `logging/setLevel`); in a modern request, through the
 * request (input-required rounds, its `_meta` log level).
 *
 * @internal
 */
export interface Channel {
  readonly era: McpServerSession.Era
  readonly input: McpServerSession.RequestContext["input"]
  readonly log: (params: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>
  /** The level the client asked for, if any. */
  readonly level: () => McpSchema.LoggingLevel | undefined
}

const sessionChannel = (live: LiveSession, session: McpServerSession.ServerSession): Channel => ({
  era: "legacy",
  // the input's key, when named, goes along (a gateway in front of this server keeps it)
  input: (method, params, options) =>
    session.request(
      method,
      options?.inputKey === undefined
        ? params
        : {
          ...params,
          _meta: { ...(params as { readonly _meta?: object })._meta, [McpSchema.INPUT_KEY_META_KEY]: options.inputKey }
        },
      options
    ),
  log: (params) =>
    Logging.passes(params.level, live.logLevel)
      ? Effect.ignore(session.notify(McpSchema.LoggingMessage, params))
      : Effect.void,
  level: () => live.logLevel
})

/** The channel of a modern request: logs at its `_meta` level (none: no logs). @internal */
export const requestChannel = (context: McpServerSession.RequestContext): Channel => ({
  era: "modern",
  input: context.input,
  log: context.log ?? (() => Effect.void),
  level: () => context.logLevel
})

/**
 * The parts of a context shared by requests and notifications, but the log
 * level, which each context reads from its channel when it is made. Plain
 * data (no getter): a request's context copies it with a spread, which V8
 * does fast only from an object without accessors.
 *
 * @internal
 */
export type SharedContext = Omit<McpServer.NotificationContext, "kind" | "method" | "logLevel">

/** The parts of a context shared by requests and notifications. @internal */
export const sessionContext = (
  live: LiveSession,
  session: McpServerSession.ServerSession,
  client: McpSchema.InitializeRequestParams,
  protocolVersion: string,
  channel: Channel = sessionChannel(live, session)
): SharedContext => ({
  era: channel.era,
  clientInfo: client.clientInfo,
  clientCapabilities: client.capabilities,
  protocolVersion,
  session,
  checkClientCapability: (...path) => {
    let current: unknown = client.capabilities
    for (const segment of path) {
      if (typeof current !== "object" || current === null) return false
      current = (current as Record<string, unknown>)[segment]
      if (current === undefined || current === null || current === false) return false
    }
    return true
  },
  log: (level, data, logger) => channel.log(logger === undefined ? { level, data } : { level, data, logger }),
  input: channel.input,
  createMessage: (params, options) => channel.input(McpSchema.CreateMessage, params, options),
  elicit: <S extends Schema.Top>(options: McpServer.ElicitOptions<S>) => {
    const requested = toRequestedSchema(options.schema, { defaults: options.defaults })
    if (Result.isFailure(requested)) {
      return Effect.die(new Error(`elicit: the schema cannot be asked for in a form: ${requested.failure.message}`))
    }
    const decode = Schema.decodeUnknownExit(options.schema as unknown as Schema.Codec<S["Type"], unknown>, {
      errors: "all"
    })
    return channel.input(
      McpSchema.Elicit,
      { mode: "form", message: options.message, requestedSchema: requested.success },
      { timeout: options.timeout, inputKey: options.inputKey }
    ).pipe(
      Effect.flatMap((result): Effect.Effect<McpServer.Elicited<S["Type"]>, McpError.McpError> => {
        if (result.action !== "accept") return Effect.succeed({ action: result.action })
        const content = decode(result.content ?? {})
        return Exit.isSuccess(content)
          ? Effect.succeed({ action: "accept", content: content.value })
          : Effect.fail(McpError.invalidResult(
            "elicitation/create",
            Exit.isFailure(content) ? formatCause(content.cause) : "invalid content"
          ))
      })
    )
  },
  elicitUrl: (options) =>
    channel.input(McpSchema.Elicit, {
      mode: "url",
      message: options.message,
      url: options.url,
      elicitationId: options.elicitationId
    }),
  // the stateless revision has no such notification: the client learns the outcome by retrying
  completeUrlElicitation: (elicitationId) =>
    channel.era === "modern" ? Effect.void : session.notify(McpSchema.ElicitationComplete, { elicitationId }),
  listRoots: (options) => Effect.map(channel.input(McpSchema.ListRoots, {}, options), (result) => result.roots),
  notify: (method, params) => session.notify(method, params)
})

const formatter = SchemaIssue.makeFormatterDefault()

const formatCause = (cause: import("effect/Cause").Cause<Schema.SchemaError>): string => {
  const reason = cause.reasons[0]
  return reason !== undefined && reason._tag === "Fail" ? formatter(reason.error.issue) : "invalid content"
}

/** The full context of one request. @internal */
export const requestContext = (
  live: LiveSession,
  context: McpServerSession.RequestContext,
  session: McpServerSession.ServerSession
): McpServer.RequestContext => {
  const legacy = context.era === "legacy"
  // the shared part first: copying it is then a fast clone
  return {
    ...(legacy
      ? live.shared ??= sessionContext(live, session, context.clientParams, context.protocolVersion)
      : sessionContext(live, session, context.clientParams, context.protocolVersion, requestChannel(context))),
    kind: "request",
    method: context.method,
    requestId: context.requestId,
    meta: context.meta,
    progressToken: context.progressToken,
    auth: context.auth,
    // the level when the request starts: the session's, or the modern request's own
    logLevel: legacy ? live.logLevel : context.logLevel,
    // (a request without a progress token reports nothing; a held one reports to the request attached at the time)
    reportProgress: (progress) => Effect.ignore(context.reportProgress(progress))
  }
}
