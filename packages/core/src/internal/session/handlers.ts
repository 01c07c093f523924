/**
 * The session engine's method → handler tables: one table per handler list,
 * so the sessions of a server, given the same list, share it. Every request
 * table answers `ping`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpSession from "../../McpSession.ts"

const handlerTables = new WeakMap<ReadonlyArray<McpSession.Handler>, ReadonlyMap<string, McpSession.Handler>>()
const notificationTables = new WeakMap<
  ReadonlyArray<McpSession.NotificationHandler>,
  ReadonlyMap<string, McpSession.NotificationHandler>
>()

/** @internal */
export const noHandlers: ReadonlyArray<never> = []

const pingHandler: McpSession.Handler = {
  method: McpSchema.Ping,
  handle: () => Effect.succeed({})
}

/** @internal */
export const handlerTable = (list: ReadonlyArray<McpSession.Handler>): ReadonlyMap<string, McpSession.Handler> => {
  let table = handlerTables.get(list)
  if (table === undefined) {
    const map = new Map<string, McpSession.Handler>()
    for (const handler of list) map.set(handler.method.name, handler)
    if (!map.has(McpSchema.Ping.name)) map.set(McpSchema.Ping.name, pingHandler)
    handlerTables.set(list, table = map)
  }
  return table
}

/** @internal */
export const notificationTable = (
  list: ReadonlyArray<McpSession.NotificationHandler>
): ReadonlyMap<string, McpSession.NotificationHandler> => {
  let table = notificationTables.get(list)
  if (table === undefined) {
    const map = new Map<string, McpSession.NotificationHandler>()
    for (const handler of list) map.set(handler.method.name, handler)
    notificationTables.set(list, table = map)
  }
  return table
}
