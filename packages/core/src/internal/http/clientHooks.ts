/**
 * What the Streamable HTTP client transport tells whoever builds it, beside
 * its messages: read from the context when the transport is made, so that a
 * caller (the `McpGroup`) provides them to the transport's layer without a
 * public option.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/**
 * Runs each time a connection of the session's GET stream ends (the server
 * closed it, or it dropped), before the transport tries to resume it.
 *
 * @internal
 */
export const OnListenEnd = Context.Reference<Effect.Effect<void>>("@effect-mcp/core/McpHttpClient/OnListenEnd", {
  defaultValue: () => Effect.void
})
