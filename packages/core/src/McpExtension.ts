/**
 * Extensions of the protocol (SEP-2133): a server declares one under
 * `capabilities.extensions[id]` with its settings and serves its requests,
 * methods outside the specification's table (`skills/list`, …), in both eras.
 * An extension is registered with a server like a tool or a resource
 * (`McpServer.layer(options, extension)`); a client declares the extensions it
 * takes with `McpClient.Options.extensions` and sends their requests with
 * `client.session.request(method, params)`.
 *
 * A handler learns whether the requesting client declared an extension with
 * {@link clientDeclares}: per request in the 2026-07-28 era (its `_meta`
 * capabilities), per session in the legacy one.
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"
import type * as McpError from "./McpError.ts"
import * as McpMethod from "./McpMethod.ts"
import type * as McpServer from "./McpServer.ts"

/**
 * One request method an extension serves, with its handler.
 *
 * @category models
 * @since 0.3.0
 */
export interface Request<out R = never> {
  readonly method: McpMethod.Request
  readonly handle: (params: any, context: McpServer.RequestContext) => Effect.Effect<any, McpError.McpError, R>
}

/**
 * An extension a server serves: its id, the settings it declares, the
 * requests it answers, and what it is told when it is registered with a
 * server (its list changes) and unregistered.
 *
 * @category models
 * @since 0.3.0
 */
export interface McpExtension<out R = never> {
  readonly _tag: "McpExtension"
  /** The extension's id, e.g. `io.modelcontextprotocol/skills`. */
  readonly id: string
  /** Declared as `capabilities.extensions[id]`. */
  readonly settings: Readonly<Record<string, unknown>>
  readonly requests: ReadonlyArray<Request<R>>
  /** Definitions registered (enabled, disabled, unregistered) with the extension: its resources, tools, prompts. */
  readonly definitions?: ReadonlyArray<McpServer.Definition<R>> | undefined
  /**
   * Called when the extension is registered with a server, with what tells
   * that server's clients that a list changed; the effect returned is run
   * when it is unregistered.
   */
  readonly attach?: ((server: Attached) => () => void) | undefined
}

/**
 * What an extension registered with a server may do to it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Attached {
  /** Tells the server's clients (and, with a change bus, the other replicas') that a list changed. */
  readonly listChanged: (kind: "tools" | "resources" | "prompts") => Effect.Effect<void>
}

/**
 * Declares one request an extension serves.
 *
 * @category constructors
 * @since 0.3.0
 */
export const request = <M extends McpMethod.Request, R = never>(
  method: M,
  handle: (
    params: McpMethod.Params<M>,
    context: McpServer.RequestContext
  ) => Effect.Effect<McpMethod.Result<M>, McpError.McpError, R>
): Request<R> => ({ method, handle })

/**
 * Makes an extension.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = <R = never>(options: {
  readonly id: string
  readonly settings?: Readonly<Record<string, unknown>> | undefined
  readonly requests: ReadonlyArray<Request<R>>
  readonly definitions?: ReadonlyArray<McpServer.Definition<R>> | undefined
  readonly attach?: ((server: Attached) => () => void) | undefined
}): McpExtension<R> => ({
  _tag: "McpExtension",
  id: options.id,
  settings: options.settings ?? {},
  requests: options.requests,
  definitions: options.definitions,
  attach: options.attach
})

/**
 * The settings the requesting client declared for extension `id`
 * (`capabilities.extensions[id]`), or `undefined` when it did not declare it.
 *
 * @category capabilities
 * @since 0.3.0
 */
export const clientSettings = (
  context: Pick<McpServer.NotificationContext, "clientCapabilities">,
  id: string
): Readonly<Record<string, unknown>> | undefined => {
  const extensions = (context.clientCapabilities as { readonly extensions?: unknown }).extensions
  if (typeof extensions !== "object" || extensions === null) return undefined
  const settings = (extensions as Record<string, unknown>)[id]
  return typeof settings === "object" && settings !== null && !Array.isArray(settings)
    ? settings as Readonly<Record<string, unknown>>
    : undefined
}

/**
 * `true` when the requesting client declared extension `id`.
 *
 * @category capabilities
 * @since 0.3.0
 */
export const clientDeclares = (
  context: Pick<McpServer.NotificationContext, "clientCapabilities">,
  id: string
): boolean => clientSettings(context, id) !== undefined

/**
 * The capability of extension `id` on a side (for `McpMethod.request`'s
 * `capability`): a client checks the server declared it before sending.
 *
 * @category capabilities
 * @since 0.3.0
 */
export const capability = (side: "client" | "server", id: string): McpMethod.Capability =>
  side === "server" ? McpMethod.serverCapability("extensions", id) : McpMethod.clientCapability("extensions", id)
