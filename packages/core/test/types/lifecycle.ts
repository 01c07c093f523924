/**
 * Type-level tests of the client lifecycle, compiled by `npm run typecheck`
 * (`tsc -b`): each `@ts-expect-error` line must fail to compile, or the build
 * fails. Nothing here runs.
 */
import { Effect, Layer } from "effect"
import * as McpClientSession from "../../src/McpClientSession.ts"
import * as McpSchema from "../../src/McpSchema.ts"
import * as McpTransport from "../../src/McpTransport.ts"

declare const transport: Layer.Layer<McpTransport.McpTransport>
const Client = McpClientSession.layer({ clientInfo: { name: "types", version: "0" } }).pipe(Layer.provide(transport))

// A call needs an McpClientSession, which only the layer provides, after the handshake.
const listTools = Effect.gen(function*() {
  const session = yield* McpClientSession.McpClientSession
  return yield* session.request(McpSchema.ListTools, {})
})

// Calling before initialize: the program still requires the session, so it cannot be run.
// @ts-expect-error McpClientSession is not provided
Effect.runFork(listTools)

// With the layer the requirement is met and the program runs.
Effect.runFork(listTools.pipe(Effect.provide(Client)))

// There is no initialize to call on an initialized session...
Effect.gen(function*() {
  const session = yield* McpClientSession.McpClientSession
  // @ts-expect-error the session has no initialize method
  yield* session.initialize()
  // ...and `request` refuses the initialize method: a second handshake does not compile
  yield* session.request(
    // @ts-expect-error initialize was sent by the layer
    McpSchema.Initialize,
    { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "0" } }
  )
  // @ts-expect-error notifications/initialized was sent by the layer
  yield* session.notify(McpSchema.Initialized, {})
  // other methods are fine
  yield* session.request(McpSchema.Ping, {})
  yield* session.notify(McpSchema.RootsListChanged, {})
}).pipe(Effect.provide(Client))

// After close: the session lives in the layer's scope; once the program that
// provided it ends, nothing outside can ask for it.
const program = listTools.pipe(Effect.provide(Client))
const afterClose = Effect.gen(function*() {
  yield* program
  return yield* McpClientSession.McpClientSession
})
// @ts-expect-error the session is gone once its scope has closed
Effect.runFork(afterClose)

// Params are typed from the method's declaration.
Effect.gen(function*() {
  const session = yield* McpClientSession.McpClientSession
  // @ts-expect-error tools/call needs a name
  yield* session.request(McpSchema.CallTool, { arguments: {} })
}).pipe(Effect.provide(Client))
