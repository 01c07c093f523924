/**
 * The conformance server's features: the tools, resources and prompts that
 * the server scenarios of `@modelcontextprotocol/conformance` (0.1.16, and
 * 0.2.0-alpha.12 with the 2026-07-28 ones of `modern.ts`, the tasks ones of `tasks.ts` and the skills
 * ones of `skills.ts`) call by name, built with our own API (McpTool, McpResource, McpPrompt,
 * McpContent and the request context).
 *
 * `server.ts` serves them over stdio or Streamable HTTP.
 */
import { McpContent, McpPrompt, McpResource, McpSchema, McpServer, McpTool } from "@effect-mcp/core"
import { Effect, Layer, Schema } from "effect"
import * as Modern from "./modern.ts"
import * as Skills from "./skills.ts"
import * as Tasks from "./tasks.ts"

/** A 1×1 PNG, base64. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
/** A tiny silent WAV, base64. */
export const WAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"

const NoInput = Schema.Struct({})

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

export const simpleText = McpTool.make("test_simple_text", {
  description: "Returns one text block",
  input: NoInput,
  handler: () => Effect.succeed("This is a simple text response for testing.")
})

export const imageContent = McpTool.make("test_image_content", {
  description: "Returns one PNG image block",
  input: NoInput,
  handler: () => Effect.succeed(McpContent.image(PNG, "image/png"))
})

export const audioContent = McpTool.make("test_audio_content", {
  description: "Returns one WAV audio block",
  input: NoInput,
  handler: () => Effect.succeed(McpContent.audio(WAV, "audio/wav"))
})

export const embeddedResource = McpTool.make("test_embedded_resource", {
  description: "Returns an embedded text resource",
  input: NoInput,
  handler: () =>
    Effect.succeed(
      McpContent.resource("test://embedded-resource", "This is an embedded resource content.", {
        mimeType: "text/plain"
      })
    )
})

export const multipleContentTypes = McpTool.make("test_multiple_content_types", {
  description: "Returns text, an image and an embedded resource",
  input: NoInput,
  handler: () =>
    Effect.succeed([
      McpContent.text("Multiple content types test:"),
      McpContent.image(PNG, "image/png"),
      McpContent.resource("test://mixed-content-resource", JSON.stringify({ test: "data", value: 123 }), {
        mimeType: "application/json"
      })
    ])
})

export const withLogging = McpTool.make("test_tool_with_logging", {
  description: "Sends three log messages while it runs",
  input: NoInput,
  handler: (_, context) =>
    Effect.gen(function*() {
      for (const step of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
        yield* context.log("info", step, "conformance")
        yield* Effect.sleep("50 millis")
      }
      return "Logging test completed"
    })
})

export const withProgress = McpTool.make("test_tool_with_progress", {
  description: "Reports progress three times (0, 50, 100 of 100)",
  input: NoInput,
  handler: (_, context) =>
    Effect.gen(function*() {
      for (const progress of [0, 50, 100]) {
        yield* context.reportProgress({ progress, total: 100, message: `Completed step ${progress / 50 + 1} of 3` })
        yield* Effect.sleep("50 millis")
      }
      return `Progress test completed (token ${String(context.progressToken)})`
    })
})

export const errorHandling = McpTool.make("test_error_handling", {
  description: "Always fails: the result has isError true",
  input: NoInput,
  handler: () => Effect.fail(new Error("This tool intentionally returns an error for testing"))
})

const textOf = (content: McpSchema.CreateMessageResult["content"]): string => {
  const blocks = Array.isArray(content) ? content : [content]
  return blocks.map((block) => block.type === "text" ? block.text : `[${block.type}]`).join("\n")
}

export const sampling = McpTool.make("test_sampling", {
  description: "Asks the client's LLM for a completion (sampling/createMessage)",
  input: Schema.Struct({ prompt: Schema.String.annotate({ description: "The prompt to send to the LLM" }) }),
  handler: ({ prompt }, context) =>
    Effect.map(
      context.createMessage({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 }),
      (result) => `LLM response: ${textOf(result.content)}`
    )
})

export const elicitation = McpTool.make("test_elicitation", {
  description: "Asks the user for a username and an email (elicitation/create)",
  input: Schema.Struct({ message: Schema.String.annotate({ description: "The message to show the user" }) }),
  handler: ({ message }, context) =>
    Effect.map(
      context.elicit({
        message,
        schema: Schema.Struct({
          username: Schema.optionalKey(Schema.String.annotate({ description: "User's response" })),
          email: Schema.optionalKey(Schema.String.annotate({ description: "User's email address" }))
        })
      }),
      (answer) =>
        `User response: action=${answer.action}, content=${
          JSON.stringify(answer.action === "accept" ? answer.content : {})
        }`
    )
})

// SEP-1034: every primitive kind with a default; our elicit turns the Schema
// and the defaults into the requested schema (and checks the defaults fit).
const DefaultsForm = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  age: Schema.optionalKey(Schema.Int),
  score: Schema.optionalKey(Schema.Finite),
  status: Schema.optionalKey(Schema.Literals(["active", "inactive", "pending"])),
  verified: Schema.optionalKey(Schema.Boolean)
})

export const elicitationDefaults = McpTool.make("test_elicitation_sep1034_defaults", {
  description: "Elicitation whose fields have defaults (SEP-1034)",
  input: NoInput,
  handler: (_, context) =>
    Effect.map(
      context.elicit({
        message: "Please review and update the form fields with defaults",
        schema: DefaultsForm,
        defaults: { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true }
      }),
      (answer) =>
        `Elicitation completed: action=${answer.action}, content=${
          JSON.stringify(answer.action === "accept" ? answer.content : {})
        }`
    )
})

// SEP-1330: the five enum forms. The legacy `enumNames` form cannot be written
// as a Schema (it is the deprecated 2025-06-18 shape), so this request is sent
// as is through the session.
const enumsSchema: McpSchema.ElicitRequestFormParams["requestedSchema"] = {
  type: "object",
  properties: {
    untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
    titledSingle: {
      type: "string",
      oneOf: [
        { const: "value1", title: "First Option" },
        { const: "value2", title: "Second Option" },
        { const: "value3", title: "Third Option" }
      ]
    },
    legacyEnum: {
      type: "string",
      enum: ["opt1", "opt2", "opt3"],
      enumNames: ["Option One", "Option Two", "Option Three"]
    },
    untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
    titledMulti: {
      type: "array",
      items: {
        anyOf: [
          { const: "value1", title: "First Choice" },
          { const: "value2", title: "Second Choice" },
          { const: "value3", title: "Third Choice" }
        ]
      }
    }
  }
}

export const elicitationEnums = McpTool.make("test_elicitation_sep1330_enums", {
  description: "Elicitation with the five enum forms (SEP-1330)",
  input: NoInput,
  // the schema as written (raw JSON Schema): asked with `input`, in either era
  handler: (_, context) =>
    Effect.map(
      context.input(McpSchema.Elicit, {
        mode: "form",
        message: "Please pick from the enum fields",
        requestedSchema: enumsSchema
      }),
      (answer) => `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`
    )
})

// SEP-1613 / SEP-2106: a JSON Schema 2020-12 input schema listed as written
// ($anchor, composition and conditional keywords included).
export const jsonSchema202012 = McpTool.fromJsonSchema("json_schema_2020_12_tool", {
  description: "A tool whose inputSchema is raw JSON Schema 2020-12 ($schema, $defs, $anchor, allOf, if/then/else)",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: {
      address: {
        $anchor: "addressDef",
        type: "object",
        properties: { street: { type: "string" }, city: { type: "string" } }
      }
    },
    properties: {
      name: { type: "string" },
      address: { $ref: "#/$defs/address" },
      contactMethod: { type: "string", enum: ["phone", "email"] },
      phone: { type: "string" },
      email: { type: "string" }
    },
    allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
    if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
    then: { required: ["phone"] },
    else: { required: ["email"] },
    additionalProperties: false
  },
  handler: (input) => Effect.succeed(`called with ${JSON.stringify(input)}`)
})

/**
 * SEP-1699 (`server-sse-polling`): the scenario wants the server to close the
 * POST's SSE stream mid-call and the client to resume it. `closeStream` does
 * that where the transport can (HTTP); over stdio there is nothing to close.
 */
export const reconnection = (closeStream: (context: McpServer.RequestContext) => Effect.Effect<void>) =>
  McpTool.make("test_reconnection", {
    description: "Closes the SSE stream of its own call, then answers (SEP-1699)",
    input: NoInput,
    handler: (_, context) =>
      Effect.gen(function*() {
        yield* closeStream(context)
        yield* Effect.sleep("100 millis")
        return "Reconnection test completed successfully"
      })
  })

// -----------------------------------------------------------------------------
// Resources
// -----------------------------------------------------------------------------

export const staticText = McpResource.make({
  uri: "test://static-text",
  name: "static-text",
  description: "A static text resource",
  mimeType: "text/plain",
  read: () => Effect.succeed("This is the content of the static text resource.")
})

const pngBytes = Uint8Array.from(atob(PNG), (char) => char.charCodeAt(0))

export const staticBinary = McpResource.make({
  uri: "test://static-binary",
  name: "static-binary",
  description: "A static binary resource (PNG)",
  mimeType: "image/png",
  read: () => Effect.succeed(pngBytes)
})

export const template = McpResource.template({
  uriTemplate: "test://template/{id}/data",
  name: "template",
  description: "A resource template with an id",
  mimeType: "application/json",
  // (an explicit variable Schema: without any, the template's requirements type is inferred as `any`)
  variables: { id: Schema.String },
  read: ({ id }) => Effect.succeed(JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }))
})

export const watched = McpResource.make({
  uri: "test://watched-resource",
  name: "watched-resource",
  description: "A resource to subscribe to",
  mimeType: "text/plain",
  read: () => Effect.succeed("Watched resource content")
})

// -----------------------------------------------------------------------------
// Prompts
// -----------------------------------------------------------------------------

export const simplePrompt = McpPrompt.make({
  name: "test_simple_prompt",
  description: "A prompt without arguments",
  get: () => Effect.succeed("This is a simple prompt for testing.")
})

export const promptWithArguments = McpPrompt.make({
  name: "test_prompt_with_arguments",
  description: "A prompt with two required arguments",
  arguments: Schema.Struct({
    arg1: Schema.String.annotate({ description: "First test argument" }),
    arg2: Schema.String.annotate({ description: "Second test argument" })
  }),
  complete: {
    arg1: (value) => Effect.succeed(["test1", "test2", "other"].filter((option) => option.startsWith(value)))
  },
  get: ({ arg1, arg2 }) => Effect.succeed(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`)
})

export const promptWithEmbeddedResource = McpPrompt.make({
  name: "test_prompt_with_embedded_resource",
  description: "A prompt that embeds a resource",
  arguments: Schema.Struct({ resourceUri: Schema.String.annotate({ description: "URI of the resource to embed" }) }),
  get: ({ resourceUri }) =>
    Effect.succeed([
      {
        role: "user" as const,
        content: McpContent.resource(resourceUri, "Embedded resource content for testing.", { mimeType: "text/plain" })
      },
      { role: "user" as const, content: McpContent.text("Please process the embedded resource above.") }
    ])
})

export const promptWithImage = McpPrompt.make({
  name: "test_prompt_with_image",
  description: "A prompt with an image",
  get: () =>
    Effect.succeed([
      { role: "user" as const, content: McpContent.image(PNG, "image/png") },
      { role: "user" as const, content: McpContent.text("Please analyze the image above.") }
    ])
})

// -----------------------------------------------------------------------------
// The server
// -----------------------------------------------------------------------------

/**
 * The conformance server with everything registered. `closeStream` is what
 * `test_reconnection` does to its own SSE stream (nothing, over stdio).
 */
export const layer = (options?: {
  readonly closeStream?: ((context: McpServer.RequestContext) => Effect.Effect<void>) | undefined
}) =>
  McpServer.register(
    simpleText,
    imageContent,
    audioContent,
    embeddedResource,
    multipleContentTypes,
    withLogging,
    withProgress,
    errorHandling,
    sampling,
    elicitation,
    elicitationDefaults,
    elicitationEnums,
    jsonSchema202012,
    reconnection(options?.closeStream ?? (() => Effect.void)),
    staticText,
    staticBinary,
    template,
    watched,
    simplePrompt,
    promptWithArguments,
    promptWithEmbeddedResource,
    promptWithImage,
    ...Modern.definitions,
    ...Tasks.definitions
  ).pipe(
    // the skills extension (SEP-2640, skills.ts)
    Layer.merge(Skills.layer),
    Layer.provideMerge(McpServer.layer({ name: "effect-mcp-conformance-server", version: "0.1.0" }))
  )
