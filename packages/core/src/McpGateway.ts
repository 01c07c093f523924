/**
 * Many MCP servers served as one: the `McpGroup` in context as an
 * `McpServer`, over any server transport, speaking both eras in front
 * whatever era each server behind it speaks.
 *
 * - The front lists follow the group's views live (new tools are announced
 *   with `list_changed`), under names a model provider accepts; what a
 *   server says of its tools (`_meta`, annotations, schemas, icons, task
 *   support) passes through unchanged.
 * - Calls are forwarded with their progress, logs, cancellation and the
 *   questions a server asks (sampling, elicitation, roots), translated
 *   between the eras: a legacy server's question to a 2026-07-28 client is
 *   an input-required round while the server's call is held.
 * - Filters per server and a policy per request decide what each client
 *   sees; a hidden tool is unknown to it.
 * - Skills (SEP-2640, `io.modelcontextprotocol/skills`): while a server
 *   behind declares the extension, so does the gateway; `skills/list` merges
 *   the servers' skills (URIs unchanged; a skill two serve is the first
 *   server's, in the group's order), and `skills/get`,
 *   `resources/directory/read` and reads of any `skill://` file go to the
 *   server that serves the skill.
 *
 * ```ts
 * const Gateway = McpGateway.layer({ name: "gateway", version: "1.0.0" }).pipe(
 *   Layer.provide(NodeMcpGroup.layer({ servers, nameHook: McpGroup.prefixed() }))
 * )
 * NodeMcpStdio.runServer(Gateway)   // or NodeMcpHttpServer.layer({ port }) over it
 * ```
 *
 * @since 0.3.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Capabilities from "./internal/gateway/capabilities.ts"
import type * as McpAuth from "./McpAuth.ts"
import * as McpGroup from "./McpGroup.ts"
import * as McpServer from "./McpServer.ts"

// -----------------------------------------------------------------------------
// Filters and policies
// -----------------------------------------------------------------------------

/**
 * Which components of a server are served: names (tools, prompts) or URIs
 * and URI templates (resources) as the server gives them, where `*` stands
 * for any run of characters. A component is served when `allow` is absent
 * or matches it, and `deny` does not.
 *
 * @category models
 * @since 0.3.0
 */
export interface Filter {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}

/**
 * The filters of one server: its tools, prompts and resources (resources
 * and resource templates alike, and the files of its skills by URI: a
 * hidden `SKILL.md` hides its skill).
 *
 * @category models
 * @since 0.3.0
 */
export interface Filters {
  readonly tools?: Filter | undefined
  readonly prompts?: Filter | undefined
  readonly resources?: Filter | undefined
}

/**
 * A component offered in front: its kind, its name in front (for resources
 * and templates, the URI or URI template), its server in the group and the
 * server's own name for it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Component {
  readonly kind: McpGroup.ComponentKind
  readonly name: string
  readonly server: string
  readonly upstreamName: string
}

/**
 * Decides per request whether a component is shown to the client and
 * reachable by it: `auth` is the request's verified token (its subject,
 * client and scopes) on a protected endpoint, else `undefined`. A skill's
 * files are asked about as resources (`kind: "resource"`, `name` their URI).
 *
 * @category models
 * @since 0.3.0
 */
export type Policy = (
  component: Component,
  request: { readonly auth: McpAuth.AuthInfo | undefined; readonly context: McpServer.RequestContext }
) => boolean

/**
 * A policy from scopes: a component whose server is listed needs the
 * token to carry one of the server's scopes (`{ billing: ["billing:read"] }`).
 *
 * @category constructors
 * @since 0.3.0
 */
export const scopesPolicy =
  (required: Readonly<Record<string, ReadonlyArray<string>>>): Policy => (component, { auth }) => {
    const scopes = required[component.server]
    return scopes === undefined || (auth !== undefined && scopes.some((scope) => auth.scopes.includes(scope)))
  }

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

/**
 * How the gateway treats one server of the group.
 *
 * @category models
 * @since 0.3.0
 */
export interface UpstreamOptions extends Filters {
  /**
   * The most sessions of its own the gateway opens with the server for
   * calls that must be told apart from the others (see {@link Options});
   * more such calls at once wait for one. Default 8.
   */
  readonly sessions?: number | undefined
}

/**
 * How a gateway runs. Besides its own, the options of `McpServer.layer`
 * (its name and version, `hold`, `requestState`, `cache`, middleware, ...).
 *
 * A server's questions to the client (sampling, elicitation, roots) and its
 * logs say nothing of the call they belong to, unless the server speaks
 * 2026-07-28 (where questions are part of the call's answer) or the
 * connection carries one call at a time; and a legacy server learns a
 * client's extensions (MCP Apps) only from its session. So a call whose
 * client can be asked (it declared sampling, elicitation or roots), asked
 * for logs or declared an extension other than tasks and skills, made to a
 * legacy server, takes a session of its own with that server
 * (one of at most `sessions`, reused by later calls of a client with the
 * same capabilities); so does a call that asked for logs made to a modern
 * server. Other calls share the group's connection.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options extends Partial<McpServer.Options> {
  /** Filters and session limits of each server, by its name in the group. */
  readonly upstreams?: Readonly<Record<string, UpstreamOptions>> | undefined
  /** Decides per request what a client sees (see {@link Policy}). */
  readonly policy?: Policy | undefined
  /**
   * The idle limit of a call to a server: no answer and no progress for
   * this long fails the call (it does not run while the server waits for
   * the client's answer). Default 60 s.
   */
  readonly callTimeout?: Duration.Input | undefined
  /** How long a session of its own stays open unused. Default 5 minutes. */
  readonly sessionIdleTimeout?: Duration.Input | undefined
}

/**
 * The client options a gateway's group should be made with (the gateway on
 * Node uses them): the group's connections declare every question a server
 * may ask (sampling, elicitation, roots), so that each server lists all it
 * offers (some list less to a client that cannot be asked), and refuse them
 * with `-32021` (missing client capability): the group's connection carries
 * the calls of clients that can be asked nothing, and the others go through
 * sessions the gateway opens with the server.
 *
 * @category constructors
 * @since 0.3.0
 */
export const clientOptions: McpGroup.ClientOptions = Capabilities.refusing

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * Makes the gateway's server from the group in context, in the current
 * scope: its definitions follow the group's views until the scope closes.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = Effect.fn("McpGateway.make")(function*(
  options?: Options
): Effect.fn.Return<McpServer.Server, never, McpGroup.McpGroup | Scope.Scope> {
  const group = yield* McpGroup.McpGroup
  const Internal = yield* Effect.promise(() => import("./internal/gateway/gateway.ts"))
  return yield* Internal.make(group, options ?? {})
})

/**
 * The gateway as a layer: the `McpServer` that serves the group in context.
 * Serve it with any server transport (`NodeMcpStdio.runServer`,
 * `NodeMcpHttpServer.layer`, `McpHttpServer.layerRoute`, ...).
 *
 * @category layers
 * @since 0.3.0
 */
export const layer = (options?: Options): Layer.Layer<McpServer.McpServer, never, McpGroup.McpGroup> =>
  Layer.effect(McpServer.McpServer, make(options))
