/**
 * What a server's request may see and reach (`McpServer.Options.visible`):
 * a hidden definition is left out of lists and unknown to calls; and whether
 * a read is held (the resource it reads, or the template that matches it,
 * holds).
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as McpServer from "../../McpServer.ts"
import { enabled, type Entry, type Registry } from "./registry.ts"

type Visible = McpServer.Options["visible"]

/** The items the request's client may see. @internal */
export const shown = <D extends McpServer.Definition<any>>(
  visible: Visible,
  items: Array<D>,
  context: McpServer.RequestContext
): Array<D> => visible === undefined ? items : items.filter((item) => visible(item, context))

/** The definition of an entry, if it is enabled and the request's client may reach it. @internal */
export const reachable = <D extends McpServer.Definition<any>>(
  visible: Visible,
  entry: Entry<D> | undefined,
  context: McpServer.RequestContext
): D | undefined =>
  entry === undefined || !entry.enabled || (visible !== undefined && !visible(entry.definition, context))
    ? undefined
    : entry.definition

/** Whether a read of `uri` is held. @internal */
export const readHolds = (current: Registry, uri: string): boolean => {
  const resource = current.resources.get(uri)
  if (resource !== undefined) return resource.enabled && resource.definition.hold === true
  for (const template of enabled(current.resourceTemplates)) {
    if (Option.isSome(template.match(uri))) return template.hold === true
  }
  return false
}
