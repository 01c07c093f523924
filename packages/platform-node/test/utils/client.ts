/**
 * Our client in tests: its identity, reading a tool result's text, and
 * connecting it over a transport layer or to a spawned stdio server, in a
 * scope of its own when the test closes it by hand.
 */
import { McpClient, McpTransport } from "@effect-mcp/core"
import type { McpError } from "@effect-mcp/core"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as NodeJsonSchemaValidator from "../../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpStdio from "../../src/NodeMcpStdio.ts"

export const clientInfo = { name: "effect-mcp-test-client", version: "0.1.0" }

/** The text of a result's first content block (a test failure when it is not text). */
export const textOf = (result: object): string => {
  const content = "content" in result && Array.isArray(result.content) ? result.content : []
  const first = content[0] as { readonly type?: string; readonly text?: string } | undefined
  if (first?.type !== "text" || first.text === undefined) throw new Error(`not a text block: ${JSON.stringify(first)}`)
  return first.text
}

/** A connected client over `transport`, in the test's scope. */
export const connectOver = (
  transport: Layer.Layer<McpTransport.McpTransport, McpError.McpError>,
  options: Partial<McpClient.Options> = {}
) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ clientInfo, ...options }).pipe(Layer.provide([transport, NodeJsonSchemaValidator.layer]))
    ),
    (context) => Context.get(context, McpClient.McpClient)
  )

/**
 * A client over a spawned stdio server, both in a scope of their own (closed
 * with the test's, or earlier by the test).
 */
export const connectStdio = (options: NodeMcpStdio.ClientOptions, client: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const transport = yield* NodeMcpStdio.makeClient(options).pipe(Scope.provide(scope))
    const context = yield* Layer.buildWithScope(
      McpClient.layer({ clientInfo, ...client }).pipe(
        Layer.provide([Layer.succeed(McpTransport.McpTransport, transport), NodeJsonSchemaValidator.layer])
      ),
      scope
    )
    return { scope, transport, client: Context.get(context, McpClient.McpClient) }
  })
