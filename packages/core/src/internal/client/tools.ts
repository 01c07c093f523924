/**
 * Tool results: checking `structuredContent` against a tool's `outputSchema`,
 * and decoding it with a caller's Schema.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as JsonSchemaValidator from "../../JsonSchemaValidator.ts"
import * as McpError from "../../McpError.ts"
import * as McpSchema from "../../McpSchema.ts"

const method = McpSchema.CallTool.name

/**
 * Checks a result against the tool's `outputSchema`. Results with
 * `isError: true` are not checked (a tool's failure need not have the shape
 * of its success), nor are results of tools without an `outputSchema`.
 *
 * @internal
 */
export const checkOutput = (
  validator: JsonSchemaValidator.JsonSchemaValidator.Service,
  tool: McpSchema.Tool | undefined,
  result: McpSchema.CallToolResult
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> => {
  if (result.isError === true || tool?.outputSchema === undefined) return Effect.succeed(result)
  if (result.structuredContent === undefined) {
    return Effect.fail(McpError.invalidResult(
      method,
      `tool ${JSON.stringify(tool.name)} declares an outputSchema but returned no structuredContent`
    ))
  }
  const problems = validator.compile(tool.outputSchema)(result.structuredContent)
  return problems.length === 0
    ? Effect.succeed(result)
    : Effect.fail(McpError.invalidResult(
      method,
      `the structuredContent of tool ${JSON.stringify(tool.name)} does not match its outputSchema: ${
        problems.join("; ")
      }`
    ))
}

/** The text blocks of a result, joined. @internal */
export const textOf = (result: McpSchema.CallToolResult): string =>
  result.content.flatMap((block) => block.type === "text" ? [block.text] : []).join("\n")

/**
 * The structured value of a successful result: its `structuredContent`, or,
 * for servers that only send the serialized JSON in a single text block (the
 * 2025-06-18 backwards-compatibility form), that text parsed.
 *
 * @internal
 */
const structuredValue = (name: string, result: McpSchema.CallToolResult): Effect.Effect<unknown, McpError.McpError> => {
  if (result.structuredContent !== undefined) return Effect.succeed(result.structuredContent)
  const [only] = result.content
  if (result.content.length === 1 && only !== undefined && only.type === "text") {
    return Effect.mapError(
      Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Unknown))(only.text),
      () =>
        McpError.invalidResult(
          method,
          `tool ${JSON.stringify(name)} returned no structuredContent and its text is not JSON`
        )
    )
  }
  return Effect.fail(McpError.invalidResult(method, `tool ${JSON.stringify(name)} returned no structuredContent`))
}

/** Decodes the structured value of a result with a Schema. @internal */
export const decodeStructured = <S extends Schema.Top>(
  name: string,
  result: McpSchema.CallToolResult,
  schema: S
): Effect.Effect<S["Type"], McpError.McpError, S["DecodingServices"]> =>
  Effect.flatMap(structuredValue(name, result), (value) =>
    Effect.mapError(
      Schema.decodeUnknownEffect(schema)(value, { errors: "all" }),
      (error) =>
        McpError.invalidResult(
          method,
          `the structuredContent of tool ${JSON.stringify(name)} does not match the given schema: ${error.message}`
        )
    ))
