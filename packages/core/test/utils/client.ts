/**
 * Our client in tests: the identities both sides show, reading a tool
 * result's text, and an `McpClient` connected over a transport layer.
 */
import { Context, Effect, Layer } from "effect"
import * as McpClient from "../../src/McpClient.ts"
import type * as McpError from "../../src/McpError.ts"
import type * as McpTransport from "../../src/McpTransport.ts"
import { ValidatorLayer } from "./validator.ts"

export const clientInfo = { name: "test-client", version: "0.0.1" }
export const serverInfo = { name: "test-server", version: "9.9.9" }

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
    Layer.build(McpClient.layer({ clientInfo, ...options }).pipe(Layer.provide([transport, ValidatorLayer]))),
    (context) => Context.get(context, McpClient.McpClient)
  )
