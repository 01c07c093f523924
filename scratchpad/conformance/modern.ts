/**
 * The conformance server's features for the 2026-07-28 scenarios of
 * `@modelcontextprotocol/conformance` 0.2.0-alpha.12: the input-required
 * (multi round-trip) tools and prompt, and the stateless scenario's
 * diagnostic tools. They are written with the same API as every other tool:
 * `context.elicit`, `context.createMessage` and `context.listRoots` ask the
 * client, whatever the era (an input-required round for a modern request, a
 * server→client request in a legacy session). `inputKey` names the input
 * where a scenario expects a given key.
 */
import { McpPrompt, McpSchema, McpServer, McpTool } from "@effect-mcp/core"
import { Effect, Schema } from "effect"

const NoInput = Schema.Struct({})

const textOf = (result: McpSchema.CreateMessageResult): string => {
  const content = Array.isArray(result.content) ? result.content[0] : result.content
  return content !== undefined && content.type === "text" ? content.text : "(no text)"
}

const askName = (context: McpServer.RequestContext, message = "What is your name?", inputKey = "user_name") =>
  Effect.map(
    context.elicit({ message, schema: Schema.Struct({ name: Schema.String }), inputKey }),
    (answer) => answer.action === "accept" ? answer.content.name : "stranger"
  )

const capitalQuestion: McpSchema.CreateMessageRequestParams = {
  messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
  maxTokens: 100
}

// -----------------------------------------------------------------------------
// Input-required results
// -----------------------------------------------------------------------------

export const inputElicitation = McpTool.make("test_input_required_result_elicitation", {
  description: "Asks for the user's name, then greets them",
  input: NoInput,
  handler: (_, context) => Effect.map(askName(context), (name) => `Hello, ${name}!`)
})

export const inputSampling = McpTool.make("test_input_required_result_sampling", {
  description: "Asks the client's model a question and returns its answer",
  input: NoInput,
  handler: (_, context) =>
    Effect.map(
      context.createMessage(capitalQuestion, { inputKey: "capital_question" }),
      (answer) => `The model answered: ${textOf(answer)}`
    )
})

export const inputListRoots = McpTool.make("test_input_required_result_list_roots", {
  description: "Asks for the client's roots and lists them",
  input: NoInput,
  handler: (_, context) =>
    Effect.map(
      context.listRoots({ inputKey: "client_roots" }),
      (roots) => `The client has ${roots.length} root(s): ${roots.map((root) => root.uri).join(", ")}`
    )
})

export const inputRequestState = McpTool.make("test_input_required_result_request_state", {
  description: "Asks for a confirmation; its sealed request state is checked on the retry",
  input: NoInput,
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Please confirm", schema: Schema.Struct({ ok: Schema.Boolean }), inputKey: "confirm" }),
      (answer) => `state-ok: confirmed=${answer.action === "accept" && answer.content.ok}`
    )
})

export const inputMultiple = McpTool.make("test_input_required_result_multiple_inputs", {
  description: "Asks for a name, a greeting and the roots at once",
  input: NoInput,
  handler: (_, context) =>
    Effect.map(
      Effect.all([
        askName(context),
        context.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
          maxTokens: 50
        }, { inputKey: "greeting" }),
        context.listRoots({ inputKey: "client_roots" })
      ], { concurrency: "unbounded" }),
      ([name, greeting, roots]) => `${textOf(greeting)} ${name} (${roots.length} root(s))`
    )
})

export const inputMultiRound = McpTool.make("test_input_required_result_multi_round", {
  description: "Asks for a name, then for a favourite colour",
  input: NoInput,
  handler: (_, context) =>
    Effect.gen(function*() {
      const name = yield* askName(context, "Step 1: What is your name?", "step1")
      const color = yield* context.elicit({
        message: "Step 2: What is your favorite color?",
        schema: Schema.Struct({ color: Schema.String }),
        inputKey: "step2"
      })
      return `${name} likes ${color.action === "accept" ? color.content.color : "no colour in particular"}`
    })
})

export const inputTamperedState = McpTool.make("test_input_required_result_tampered_state", {
  description: "Asks for a confirmation; a tampered request state is refused",
  input: NoInput,
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Please confirm", schema: Schema.Struct({ ok: Schema.Boolean }) }),
      (answer) => `confirmed: ${answer.action === "accept" && answer.content.ok}`
    )
})

export const inputCapabilities = McpTool.make("test_input_required_result_capabilities", {
  description: "Asks only for what the client declared it can answer",
  input: NoInput,
  handler: (_, context) =>
    Effect.gen(function*() {
      const parts: Array<string> = []
      if (context.checkClientCapability("sampling")) {
        parts.push(textOf(yield* context.createMessage(capitalQuestion, { inputKey: "capital_question" })))
      }
      if (context.checkClientCapability("elicitation")) parts.push(yield* askName(context))
      return parts.length === 0 ? "nothing could be asked" : parts.join("; ")
    })
})

export const inputPrompt = McpPrompt.make({
  name: "test_input_required_result_prompt",
  description: "A prompt that asks what context to use",
  get: (_, context) =>
    Effect.map(
      context.elicit({
        message: "What context should the prompt use?",
        schema: Schema.Struct({ context: Schema.String }),
        inputKey: "user_context"
      }),
      (answer) => `Use this context: ${answer.action === "accept" ? answer.content.context : "none"}`
    )
})

// -----------------------------------------------------------------------------
// The stateless scenario's diagnostic tools
// -----------------------------------------------------------------------------

export const missingCapability = McpTool.make("test_missing_capability", {
  description: "Needs the client's sampling capability (-32021 without it)",
  input: NoInput,
  handler: (_, context) => Effect.map(context.createMessage(capitalQuestion), textOf)
})

export const streamingElicitation = McpTool.make("test_streaming_elicitation", {
  description: "Logs, then asks for the user's name",
  input: NoInput,
  handler: (_, context) =>
    Effect.andThen(
      context.log("info", "about to ask for a name"),
      Effect.map(askName(context), (name) => `Hello, ${name}!`)
    )
})

export const loggingTool = McpTool.make("test_logging_tool", {
  description: "Logs three lines (sent only when the request asked for a log level)",
  input: NoInput,
  handler: (_, context) =>
    Effect.as(
      Effect.forEach(["debug", "info", "warning"] as const, (level) => context.log(level, `a ${level} line`), {
        discard: true
      }),
      "logged"
    )
})

const dynamicTool = McpTool.make("test_dynamic_tool", {
  description: "Comes and goes with test_trigger_tool_change",
  input: NoInput,
  handler: () => Effect.succeed("here")
})

const dynamicPrompt = McpPrompt.make({
  name: "test_dynamic_prompt",
  description: "Comes and goes with test_trigger_prompt_change",
  get: () => Effect.succeed("here")
})

// which toggled definitions each server has registered: the state lives with the server
// (a module-wide flag would be shared by the servers of one process; one made per call, as
// before, said "added" every time and never removed anything)
const toggled = new WeakMap<McpServer.McpServer["Service"], Set<McpServer.Definition>>()

// adds the definition when this server lacks it, removes it when it has it
const toggle = (definition: McpServer.Definition) =>
  Effect.flatMap(McpServer.McpServer, (server) =>
    Effect.suspend(() => {
      let present = toggled.get(server)
      if (present === undefined) toggled.set(server, present = new Set())
      const adding = !present.has(definition)
      if (adding) present.add(definition)
      else present.delete(definition)
      return Effect.as(
        adding ? server.register(definition) : server.unregister(definition),
        adding ? "added" : "removed"
      )
    }))

export const triggerToolChange = McpTool.make("test_trigger_tool_change", {
  description: "Changes the tool list (adds or removes test_dynamic_tool)",
  input: NoInput,
  handler: () => toggle(dynamicTool)
})

export const triggerPromptChange = McpTool.make("test_trigger_prompt_change", {
  description: "Changes the prompt list (adds or removes test_dynamic_prompt)",
  input: NoInput,
  handler: () => toggle(dynamicPrompt)
})

/** A tool with parameters mirrored into `Mcp-Param-*` headers (SEP-2243). */
export const headerParams = McpTool.make("test_header_params", {
  description: "Runs a query in a region; region and priority travel as Mcp-Param-* headers too",
  input: Schema.Struct({
    region: Schema.String.annotate(McpTool.header("Region")),
    priority: Schema.optionalKey(Schema.Int.annotate(McpTool.header("Priority"))),
    query: Schema.String
  }),
  handler: ({ query, region }) => Effect.succeed(`ran ${query} in ${region}`)
})

/** Every definition of this file. */
export const definitions = [
  inputElicitation,
  inputSampling,
  inputListRoots,
  inputRequestState,
  inputMultiple,
  inputMultiRound,
  inputTamperedState,
  inputCapabilities,
  inputPrompt,
  missingCapability,
  streamingElicitation,
  loggingTool,
  triggerToolChange,
  triggerPromptChange,
  headerParams
] as const
