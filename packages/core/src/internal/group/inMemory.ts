/**
 * The transport of an in-memory server of a group: the server's layer built
 * in the transport's scope (with a memo map of its own, so that every
 * connection builds it afresh), one session served over an in-memory link;
 * and the connector of groups of in-memory servers only.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpError from "../../McpError.ts"
import type { Connector } from "../../McpGroup.ts"
import * as McpServer from "../../McpServer.ts"
import { makeInMemoryPair, McpTransport } from "../../McpTransport.ts"

/** The transport of an in-memory server. @internal */
export const transport = (
  server: Layer.Layer<McpServer.McpServer, unknown>
): Layer.Layer<McpTransport, McpError.McpError> =>
  Layer.effect(
    McpTransport,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const context = yield* Layer.buildWithMemoMap(server, Layer.makeMemoMapUnsafe(), scope).pipe(
        Effect.mapError((error) =>
          McpError.isMcpError(error)
            ? error
            : McpError.transport(`the in-memory server could not start: ${McpError.messageOf(error)}`, {
              cause: error
            })
        )
      )
      const [client, serverEnd] = yield* makeInMemoryPair
      yield* McpServer.serve.pipe(
        Effect.provideService(McpServer.McpServer, Context.get(context, McpServer.McpServer)),
        Effect.provideService(McpTransport, serverEnd)
      )
      return client
    })
  )

/** Connects in-memory servers, and fails to connect any other kind. @internal */
export const connector: Connector["Service"] = {
  transport: (params) =>
    params._tag === "InMemory"
      ? transport(params.server)
      : params._tag === "Unresolved"
      ? Layer.effect(McpTransport, Effect.fail(params.error))
      : Layer.effect(
        McpTransport,
        Effect.fail(McpError.transport(
          `no transport for ${params._tag} servers: this connector connects in-memory servers only ` +
            `(on Node, provide NodeMcpGroup.layerConnector())`
        ))
      )
}
