/**
 * The extensions registered with a server: the handler of each request
 * method they serve (looked up by the session engine for a method outside
 * the protocol's table), the capabilities they declare, and their attachment
 * to the server (told how to announce list changes while registered).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpExtension from "../../McpExtension.ts"
import type * as McpServer from "../../McpServer.ts"
import type * as McpServerSession from "../../McpServerSession.ts"
import type { Registry } from "./registry.ts"

/**
 * The handler of a method an enabled extension serves, made once per request
 * declaration; a request the client may not see (`visible`) is answered as
 * an unknown method.
 *
 * @internal
 */
export const handlerOf = (
  current: () => Registry,
  visible: McpServer.Options["visible"],
  make: (request: McpExtension.Request<any>) => McpServerSession.Handler
): (method: string) => McpServerSession.Handler | undefined => {
  const made = new WeakMap<McpExtension.Request<any>, McpServerSession.Handler>()
  let of: Registry | undefined
  let table = new Map<string, McpServerSession.Handler>()
  return (method) => {
    const registry = current()
    if (registry !== of) {
      of = registry
      table = new Map()
      for (const entry of registry.extensions.values()) {
        if (!entry.enabled) continue
        const extension = entry.definition
        for (const request of extension.requests) {
          let handler = made.get(request)
          if (handler === undefined) {
            made.set(
              request,
              handler = make({
                method: request.method,
                handle: (params, context) =>
                  visible === undefined || visible(extension, context)
                    ? request.handle(params, context)
                    : Effect.fail(
                      McpError.protocol(JsonRpc.ErrorCode.MethodNotFound, `Method not found: ${request.method.name}`)
                    )
              })
            )
          }
          table.set(request.method.name, handler)
        }
      }
    }
    return table.get(method)
  }
}

/** The definitions with each extension's own (its resources, tools, …) after it. @internal */
export const withParts = <D extends McpServer.Definition<any>>(definitions: ReadonlyArray<D>): ReadonlyArray<D> =>
  definitions.some((definition) => definition._tag === "McpExtension" && definition.definitions !== undefined)
    ? definitions.flatMap((definition) =>
      definition._tag === "McpExtension" && definition.definitions !== undefined
        ? [definition, ...definition.definitions as ReadonlyArray<D>]
        : [definition]
    )
    : definitions

/** `capabilities.extensions` of the enabled extensions (`undefined`: none). @internal */
export const declared = (registry: Registry): Record<string, unknown> | undefined => {
  let out: Record<string, unknown> | undefined
  for (const entry of registry.extensions.values()) {
    if (entry.enabled) (out ??= {})[entry.definition.id] = entry.definition.settings
  }
  return out
}

/** The extensions attached to a server, and what they are given. @internal */
export interface Attachments {
  readonly server: McpExtension.Attached
  readonly detach: Map<McpExtension.McpExtension<any>, () => void>
}

/** @internal */
export const attachments = (server: McpExtension.Attached): Attachments => ({ server, detach: new Map() })

/** Detaches the extensions no longer registered and attaches the new ones. @internal */
export const reattach = (attachments: Attachments, before: Registry, after: Registry): void => {
  const now = new Set<McpExtension.McpExtension<any>>()
  for (const entry of after.extensions.values()) now.add(entry.definition)
  for (const entry of before.extensions.values()) {
    const extension = entry.definition
    if (now.has(extension)) continue
    attachments.detach.get(extension)?.()
    attachments.detach.delete(extension)
  }
  for (const extension of now) {
    if (attachments.detach.has(extension) || extension.attach === undefined) continue
    attachments.detach.set(extension, extension.attach(attachments.server))
  }
}
