/**
 * The OAuth client's platform on Node (`McpOAuth.Platform`): undici's
 * `fetch` with a dispatcher of the client's own (destroyed with its scope: a
 * closed client leaves no keep-alive connection to the authorization server
 * or the MCP server, as the global fetch's pool would) whose connections
 * resolve names through the client's egress rule (`Egress.lookupOf`: a name
 * a server gave may not lead inside the network), and `dns.lookup` as the
 * resolver.
 *
 * @internal
 */
import type * as McpOAuth from "@effect-mcp/core/McpOAuth"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Egress from "./egress.ts"

/** undici's `fetch` on a dispatcher of its own, closed with the scope, connecting through `egress`. */
export const makeFetch = (egress: McpOAuth.Egress): Effect.Effect<McpOAuth.Fetch, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dispatcher = yield* NodeHttpClient.makeDispatcherOptions({ connect: { lookup: Egress.lookupOf(egress) } })
    const undici = yield* Effect.promise(() => import("@effect/platform-node/Undici"))
    const fetch: McpOAuth.Fetch = (url, init) =>
      undici.fetch(url, { ...init, dispatcher } as never) as unknown as Promise<Response>
    return fetch
  })

/** The Node platform of the OAuth client; `network` replaces name resolution or declares hosts' classes (tests). */
export const platform = (network?: Egress.Network | undefined): McpOAuth.Platform => ({
  fetch: makeFetch,
  network: Egress.network(network)
})
