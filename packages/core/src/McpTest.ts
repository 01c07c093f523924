/**
 * A test kit: an `McpClient` connected to a server layer in memory, in one
 * call. Everything between them is the real thing (the client, the session
 * engine, the server's dispatch, the era's handshake) except the wire, an
 * in-memory link that passes the JSON-RPC objects as they are. Nothing on
 * that path reads the real clock, so under `TestClock` (what `it.effect`
 * provides) timeouts, progress and keep-alive pings move only with
 * `TestClock.adjust`.
 *
 * The server's requests to the client (`context.createMessage`,
 * `context.elicit`, `context.listRoots`) are answered by the handlers of
 * {@link Options}, as an `McpClient` answers them.
 *
 * ```ts
 * const Server = McpServer.layer({ name: "notes", version: "1.0.0" }, addNote)
 *
 * it.effect("adds a note", () =>
 *   Effect.gen(function*() {
 *     const client = yield* McpTest.client(Server)
 *     const result = yield* client.callTool("add_note", { text: "hi" })
 *     assert.isUndefined(result.isError)
 *   }))
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "./JsonRpc.ts"
import * as McpClient from "./McpClient.ts"
import type * as McpClientSession from "./McpClientSession.ts"
import type * as McpError from "./McpError.ts"
import type * as McpSchema from "./McpSchema.ts"
import type * as McpServer from "./McpServer.ts"

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

/**
 * How the test client runs: every option of `McpClient.layer` (`sampling`,
 * `elicitation` and `roots` answer the server's requests; notification
 * handlers, `requestTimeout`, `keepAlive`, ...), with `clientInfo` optional,
 * the era pinned, and a tap on the link.
 *
 * @category options
 * @since 0.2.0
 */
export interface Options extends Omit<McpClient.Options, "clientInfo" | "era"> {
  /** Default {@link defaultClientInfo}. */
  readonly clientInfo?: McpSchema.Implementation | undefined
  /**
   * The era of the connection. Default `"modern"` (2026-07-28): the current
   * revision, and what an `McpClient` (era `"auto"`) settles on with a
   * server of this SDK. `"legacy"` connects with `initialize` (2025-11-25 …
   * 2024-11-05): server→client requests instead of input-required rounds,
   * keep-alive pings from the server, a session-wide logging level.
   */
  readonly era?: McpClientSession.Era | undefined
  /**
   * Sees every frame sent over the link (`from` the client or the server),
   * before it is delivered: to assert what went over the wire.
   */
  readonly onFrame?: ((from: "client" | "server", frame: JsonRpc.Frame) => Effect.Effect<void>) | undefined
}

/**
 * The `clientInfo` of a test client when none is given.
 *
 * @category options
 * @since 0.2.0
 */
export const defaultClientInfo: McpSchema.Implementation = { name: "mcp-test", version: "0.0.0" }

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

/**
 * A client connected in memory to the server `server` provides, as a scoped
 * layer: building it builds the server (in the same layer graph: a test that
 * also provides `server`, e.g. with `Layer.provideMerge(server)`, gets the
 * same `McpServer`), serves one connection and performs the handshake;
 * closing it ends the client's session, then the server's (pending requests
 * on both sides fail with a `ClosedError`), then the server, unless the
 * graph shares it.
 *
 * @example
 * ```ts
 * import { McpClient, McpServer, McpTest, McpTool } from "@effect-mcp/core"
 * import { assert, layer } from "@effect/vitest"
 * import { Effect, Schema } from "effect"
 *
 * const addNote = McpTool.make("add_note", {
 *   input: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed(`added ${text}`)
 * })
 * const Server = McpServer.layer({ name: "notes", version: "1.0.0" }, addNote)
 *
 * layer(McpTest.layer(Server, { era: "legacy" }))("notes", (it) => {
 *   it.effect("lists the tool", () =>
 *     Effect.gen(function*() {
 *       const client = yield* McpClient.McpClient
 *       assert.deepStrictEqual((yield* client.tools.get).map((tool) => tool.name), ["add_note"])
 *     }))
 * })
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options?: Options
): Layer.Layer<McpClient.McpClient, McpError.McpError | E, R> => {
  const { clientInfo, era, onFrame, ...client } = options ?? {}
  return McpClient.layer({ ...client, clientInfo: clientInfo ?? defaultClientInfo, era: era ?? "modern" }).pipe(
    // the in-memory link is loaded when the layer is built, not with this module
    Layer.provide(Layer.unwrap(Effect.map(
      Effect.promise(() => import("./internal/test/connect.ts")),
      (Internal) => Internal.transport(server, onFrame)
    )))
  )
}

/**
 * A client connected in memory to the server `server` provides, in the
 * current scope (see {@link layer}).
 *
 * @category constructors
 * @since 0.2.0
 */
export const client: <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options?: Options
) => Effect.Effect<McpClient.Client, McpError.McpError | E, R | Scope.Scope> = Effect.fn("McpTest.client")(
  function*<E, R>(server: Layer.Layer<McpServer.McpServer, E, R>, options?: Options) {
    const context = yield* Layer.build(layer(server, options))
    return Context.get(context, McpClient.McpClient)
  }
)
