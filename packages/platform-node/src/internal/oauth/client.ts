/**
 * The OAuth client of `NodeMcpOAuth`: core's (`McpOAuth.make`) on the Node
 * platform (`http.ts`: undici, the DNS-checked egress), with its store and
 * authorizer given, and `network` the seam of tests (name resolution, hosts
 * declared "remote").
 *
 * @internal
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import type * as McpError from "@effect-mcp/core/McpError"
import * as McpOAuth from "@effect-mcp/core/McpOAuth"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Egress from "./egress.ts"
import * as Http from "./http.ts"

/** @internal */
export const make = (
  options: McpOAuth.Options,
  store: McpAuth.McpAuthStore["Service"],
  authorizer: McpAuth.McpAuthorizer["Service"] | undefined,
  network?: Egress.Network
): Effect.Effect<McpAuth.ClientAuth, McpError.McpError, Scope.Scope> => {
  const client = McpOAuth.make(options, Http.platform(network)).pipe(
    Effect.provideService(McpAuth.McpAuthStore, store)
  )
  return authorizer === undefined ? client : Effect.provideService(client, McpAuth.McpAuthorizer, authorizer)
}
