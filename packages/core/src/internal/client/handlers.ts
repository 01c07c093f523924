/**
 * What the client's options turn into for the session: the capabilities it
 * declares and the handlers of server→client requests. Capabilities are
 * derived from the handlers that are given, so the two cannot disagree.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as JsonSchemaValidator from "../../JsonSchemaValidator.ts"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"
import * as McpSession from "../../McpSession.ts"
import { applyDefaults } from "./applyDefaults.ts"

/** The capabilities the options declare. @internal */
export const capabilities = (options: McpClient.Options): McpSchema.ClientCapabilities => {
  const declared: {
    -readonly [K in keyof McpSchema.ClientCapabilities]: McpSchema.ClientCapabilities[K]
  } = {}
  if (options.experimental !== undefined) declared.experimental = options.experimental
  if (options.roots !== undefined || options.listRoots !== undefined) declared.roots = { listChanged: true }
  if (options.sampling !== undefined) {
    declared.sampling = {
      ...(options.sampling.context === true ? { context: {} } : {}),
      ...(options.sampling.tools === true ? { tools: {} } : {})
    }
  }
  const elicitation = options.elicitation
  if (elicitation !== undefined && (elicitation.form !== undefined || elicitation.url !== undefined)) {
    declared.elicitation = {
      ...(elicitation.form !== undefined ? { form: {} } : {}),
      ...(elicitation.url !== undefined ? { url: {} } : {})
    }
  }
  return declared
}

const sampling = (options: McpClient.SamplingOptions): McpSession.Handler =>
  McpSession.handler(McpSchema.CreateMessage, (params, context) => {
    if (options.tools !== true && (params.tools !== undefined || params.toolChoice !== undefined)) {
      return Effect.fail(McpError.invalidParams(
        McpSchema.CreateMessage.name,
        "this client did not declare sampling.tools, so the request must not carry tools or toolChoice"
      ))
    }
    return options.handler(params, context)
  })

const elicitation = (
  options: McpClient.ElicitationOptions,
  validator: JsonSchemaValidator.JsonSchemaValidator.Service
): McpSession.Handler =>
  McpSession.handler(McpSchema.Elicit, (params, context) => {
    if (params.mode === "url") {
      return options.url === undefined
        ? Effect.fail(
          McpError.invalidParams(McpSchema.Elicit.name, "this client does not support URL-mode elicitation")
        )
        : options.url(params, context)
    }
    const form = options.form
    if (form === undefined) {
      return Effect.fail(
        McpError.invalidParams(McpSchema.Elicit.name, "this client does not support form-mode elicitation")
      )
    }
    return Effect.flatMap(form(params, context), (result): Effect.Effect<McpSchema.ElicitResult, McpError.McpError> => {
      if (result.action !== "accept") {
        // only `accept` carries content
        const { content: _content, ...rest } = result
        return Effect.succeed(rest)
      }
      const content = options.applyDefaults === false
        ? { ...result.content }
        : applyDefaults(params.requestedSchema, result.content)
      if (options.validate !== false) {
        const problems = validator.compile(params.requestedSchema)(content)
        if (problems.length > 0) {
          return Effect.fail(McpError.invalidResult(
            McpSchema.Elicit.name,
            `the accepted content does not match the requested schema: ${problems.join("; ")}`
          ))
        }
      }
      return Effect.succeed({ ...result, content })
    })
  })

const roots = (current: Ref.Ref<ReadonlyArray<McpSchema.Root>>): McpSession.Handler =>
  McpSession.handler(McpSchema.ListRoots, () => Effect.map(Ref.get(current), (roots) => ({ roots })))

/** The handlers of server→client requests the options give. @internal */
export const handlers = (
  options: McpClient.Options,
  validator: JsonSchemaValidator.JsonSchemaValidator.Service,
  currentRoots: Ref.Ref<ReadonlyArray<McpSchema.Root>>
): ReadonlyArray<McpSession.Handler> => {
  const list: Array<McpSession.Handler> = []
  if (options.sampling !== undefined) list.push(sampling(options.sampling))
  const elicitationOptions = options.elicitation
  if (
    elicitationOptions !== undefined && (elicitationOptions.form !== undefined || elicitationOptions.url !== undefined)
  ) {
    list.push(elicitation(elicitationOptions, validator))
  }
  if (options.listRoots !== undefined) {
    const listRoots = options.listRoots
    list.push(
      McpSession.handler(McpSchema.ListRoots, (_, context) => Effect.map(listRoots(context), (roots) => ({ roots })))
    )
  } else if (options.roots !== undefined) list.push(roots(currentRoots))
  return list
}
