/**
 * The in-memory connection of `McpTest`: the server's layer built in the
 * ambient layer graph (so a test that also provides it talks to the same
 * server), one session served over an in-memory link, and the link's client
 * end as the client's transport. Both ends optionally report what they send.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as JsonRpc from "../../JsonRpc.ts"
import * as McpServer from "../../McpServer.ts"
import { makeInMemoryPair, McpTransport } from "../../McpTransport.ts"

/** Who sent a frame. @internal */
export type Sender = "client" | "server"

/** Sees every frame sent over the link, before it is delivered. @internal */
export type OnFrame = (from: Sender, frame: JsonRpc.Frame) => Effect.Effect<void>

const tapped = (
  transport: McpTransport["Service"],
  from: Sender,
  onFrame: OnFrame | undefined
): McpTransport["Service"] =>
  onFrame === undefined
    ? transport
    : McpTransport.of({ ...transport, send: (frame) => Effect.andThen(onFrame(from, frame), transport.send(frame)) })

/** The client's transport to a server served in memory. @internal */
export const transport = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  onFrame: OnFrame | undefined
): Layer.Layer<McpTransport, E, R> =>
  Layer.effect(
    McpTransport,
    Effect.gen(function*() {
      // released in reverse: the server's session ends, then the link closes
      const [clientEnd, serverEnd] = yield* makeInMemoryPair
      yield* McpServer.serve.pipe(Effect.provideService(McpTransport, tapped(serverEnd, "server", onFrame)))
      return tapped(clientEnd, "client", onFrame)
    })
  ).pipe(Layer.provide(server))
