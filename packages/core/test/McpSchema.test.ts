import { assert, describe, it } from "@effect/vitest"
import { Exit, Option, Schema } from "effect"
import * as McpMethod from "../src/McpMethod.ts"
import * as McpSchema from "../src/McpSchema.ts"

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------

/** Asserts that the value validates and returns what the validator returned. */
const accepts = <A>(validate: McpMethod.Validate<A>, input: unknown): A => {
  const exit = validate(input)
  if (Exit.isFailure(exit)) {
    return assert.fail(
      `expected ${JSON.stringify(input)} to validate, got: ${Option.getOrUndefined(Exit.findErrorOption(exit))}`
    )
  }
  return exit.value
}

/** Asserts that the value is rejected and returns the message. */
const rejects = <A>(validate: McpMethod.Validate<A>, input: unknown): string => {
  const exit = validate(input)
  if (Exit.isSuccess(exit)) return assert.fail(`expected ${JSON.stringify(input)} to be rejected`)
  return Option.getOrElse(Exit.findErrorOption(exit), () => assert.fail("expected a typed failure"))
}

const params = <M extends McpMethod.Any>(method: M, input: unknown) => accepts(method.validateParams, input)
const result = <M extends McpMethod.Request>(method: M, input: unknown) => accepts(method.validateResult, input)

// -----------------------------------------------------------------------------
// Samples, one revision at a time
// -----------------------------------------------------------------------------

describe("McpSchema", () => {
  describe("2024-11-05 messages", () => {
    it("lifecycle", () => {
      params(McpSchema.Initialize, {
        protocolVersion: "2024-11-05",
        capabilities: { roots: { listChanged: true }, sampling: {}, experimental: { "x-feature": {} } },
        clientInfo: { name: "claude-desktop", version: "0.7.1" }
      })
      result(McpSchema.Initialize, {
        protocolVersion: "2024-11-05",
        capabilities: {
          logging: {},
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          tools: { listChanged: true }
        },
        serverInfo: { name: "example-server", version: "1.0.0" }
      })
      params(McpSchema.Initialized, {})
      params(McpSchema.Ping, {})
      result(McpSchema.Ping, {})
      params(McpSchema.Cancelled, { requestId: 123, reason: "User requested cancellation" })
      params(McpSchema.Progress, { progressToken: "abc123", progress: 50, total: 100 })
      params(McpSchema.Progress, { progressToken: 7, progress: 0.5 })
    })

    it("tools", () => {
      params(McpSchema.ListTools, {})
      params(McpSchema.ListTools, { cursor: "page-2" })
      result(McpSchema.ListTools, {
        tools: [{
          name: "get_weather",
          description: "Get current weather information for a location",
          inputSchema: {
            type: "object",
            properties: { location: { type: "string", description: "City name or zip code" } },
            required: ["location"]
          }
        }],
        nextCursor: "next-page-cursor"
      })
      params(McpSchema.CallTool, { name: "get_weather", arguments: { location: "New York" } })
      result(McpSchema.CallTool, {
        content: [
          { type: "text", text: "Current weather in New York: 72°F" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          {
            type: "resource",
            resource: { uri: "file:///report.txt", mimeType: "text/plain", text: "report" },
            annotations: { audience: ["user"], priority: 0.8 }
          }
        ],
        isError: false
      })
      // the pre-release `{ toolResult }` shape has a schema of its own; CallTool wants content
      assert.isTrue(Schema.is(McpSchema.LegacyCallToolResult)({ toolResult: { temperature: 72 } }))
      assert.isTrue(Exit.isFailure(McpSchema.CallTool.validateResult({ toolResult: { temperature: 72 } })))
      params(McpSchema.ToolListChanged, {})
    })

    it("resources, prompts, completion and logging", () => {
      result(McpSchema.ListResources, {
        resources: [{
          uri: "file:///project/src/main.rs",
          name: "main.rs",
          description: "Primary entry point",
          mimeType: "text/x-rust"
        }]
      })
      result(McpSchema.ListResourceTemplates, {
        resourceTemplates: [{
          uriTemplate: "file:///{path}",
          name: "Project Files",
          mimeType: "application/octet-stream"
        }]
      })
      params(McpSchema.ReadResource, { uri: "file:///project/src/main.rs" })
      result(McpSchema.ReadResource, {
        contents: [
          { uri: "file:///project/src/main.rs", mimeType: "text/x-rust", text: "fn main() {}" },
          { uri: "file:///logo.png", mimeType: "image/png", blob: "iVBORw0KGgo=" }
        ]
      })
      params(McpSchema.Subscribe, { uri: "file:///project/src/main.rs" })
      result(McpSchema.Subscribe, {})
      params(McpSchema.ResourceUpdated, { uri: "file:///project/src/main.rs" })
      result(McpSchema.ListPrompts, {
        prompts: [{
          name: "code_review",
          description: "Asks the LLM to analyze code quality",
          arguments: [{ name: "code", description: "The code to review", required: true }]
        }]
      })
      params(McpSchema.GetPrompt, { name: "code_review", arguments: { code: "def hello():\n    print('world')" } })
      result(McpSchema.GetPrompt, {
        description: "Code review prompt",
        messages: [{ role: "user", content: { type: "text", text: "Please review this Python code" } }]
      })
      params(McpSchema.Complete, {
        ref: { type: "ref/prompt", name: "code_review" },
        argument: { name: "language", value: "py" }
      })
      params(McpSchema.Complete, {
        ref: { type: "ref/resource", uri: "file:///{path}" },
        argument: { name: "path", value: "sr" }
      })
      result(McpSchema.Complete, { completion: { values: ["python", "pytorch", "pyside"], total: 10, hasMore: true } })
      params(McpSchema.SetLevel, { level: "info" })
      params(McpSchema.LoggingMessage, { level: "error", logger: "database", data: { error: "Connection failed" } })
    })

    it("sampling and roots", () => {
      params(McpSchema.CreateMessage, {
        messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
        modelPreferences: { hints: [{ name: "claude-3-sonnet" }], intelligencePriority: 0.8, speedPriority: 0.5 },
        systemPrompt: "You are a helpful assistant.",
        includeContext: "thisServer",
        maxTokens: 100,
        stopSequences: ["\n\n"],
        metadata: { provider: "x" }
      })
      result(McpSchema.CreateMessage, {
        role: "assistant",
        content: { type: "text", text: "The capital of France is Paris." },
        model: "claude-3-sonnet-20240307",
        stopReason: "endTurn"
      })
      params(McpSchema.ListRoots, {})
      result(McpSchema.ListRoots, { roots: [{ uri: "file:///home/user/projects/myproject", name: "My Project" }] })
      params(McpSchema.RootsListChanged, {})
    })
  })

  describe("2025-03-26 messages", () => {
    it("audio, tool annotations, completions and progress messages", () => {
      result(McpSchema.Initialize, {
        protocolVersion: "2025-03-26",
        capabilities: { completions: {}, logging: {}, tools: { listChanged: false } },
        serverInfo: { name: "s", version: "2" },
        instructions: "Use the search tool first."
      })
      result(McpSchema.ListTools, {
        tools: [{
          name: "delete_file",
          description: "Deletes a file",
          inputSchema: { type: "object", properties: { path: { type: "string" } }, additionalProperties: false },
          annotations: {
            title: "Delete",
            readOnlyHint: false,
            destructiveHint: true,
            idempotentHint: true,
            openWorldHint: false
          }
        }]
      })
      result(McpSchema.CallTool, {
        content: [{ type: "audio", data: "UklGRg==", mimeType: "audio/wav", annotations: { priority: 1 } }]
      })
      params(McpSchema.Progress, { progressToken: "t", progress: 3, total: 10, message: "Reticulating splines" })
      params(McpSchema.CreateMessage, {
        messages: [{ role: "user", content: { type: "audio", data: "UklGRg==", mimeType: "audio/wav" } }],
        maxTokens: 10
      })
    })
  })

  describe("2025-06-18 messages", () => {
    it("titles, structured output and resource links", () => {
      result(McpSchema.ListTools, {
        tools: [{
          name: "get_weather_data",
          title: "Weather Data Retriever",
          description: "Get current weather data for a location",
          inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
          outputSchema: {
            type: "object",
            properties: { temperature: { type: "number" }, conditions: { type: "string" } },
            required: ["temperature", "conditions"]
          },
          _meta: { "example.com/owner": "weather-team" }
        }]
      })
      result(McpSchema.CallTool, {
        content: [
          { type: "text", text: "{\"temperature\": 22.5}" },
          {
            type: "resource_link",
            uri: "file:///project/src/main.rs",
            name: "main.rs",
            description: "Primary application entry point",
            mimeType: "text/x-rust",
            annotations: { audience: ["assistant"], lastModified: "2025-01-12T15:00:58Z" }
          }
        ],
        structuredContent: { temperature: 22.5, conditions: "Partly cloudy" }
      })
      params(McpSchema.Complete, {
        ref: { type: "ref/resource", uri: "github://repos/{owner}/{repo}" },
        argument: { name: "repo", value: "" },
        context: { arguments: { owner: "modelcontextprotocol" } }
      })
      params(McpSchema.CallTool, { name: "x", arguments: {}, _meta: { progressToken: 1 } })
    })

    it("form elicitation with 2025-06-18 primitive schemas", () => {
      params(McpSchema.Elicit, {
        message: "Please provide your contact information",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", title: "Full name", minLength: 1, maxLength: 100 },
            email: { type: "string", format: "email" },
            age: { type: "integer", minimum: 18, maximum: 150 },
            subscribe: { type: "boolean", default: false },
            color: { type: "string", enum: ["red", "green"], enumNames: ["Red", "Green"] }
          },
          required: ["name", "email"]
        }
      })
      result(McpSchema.Elicit, {
        action: "accept",
        content: { name: "Ada", email: "ada@example.com", age: 36, subscribe: true }
      })
      result(McpSchema.Elicit, { action: "decline" })
      result(McpSchema.Elicit, { action: "cancel" })
    })
  })

  describe("2025-11-25 messages", () => {
    it("icons, implementation details and new capabilities", () => {
      const icons = [
        { src: "https://example.com/icon.png", mimeType: "image/png", sizes: ["48x48"], theme: "light" },
        { src: "data:image/svg+xml;base64,PHN2Zz4=", sizes: ["any"] }
      ]
      params(McpSchema.Initialize, {
        protocolVersion: "2025-11-25",
        capabilities: {
          roots: { listChanged: true },
          sampling: { context: {}, tools: {} },
          elicitation: { form: {}, url: {} },
          tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } }
        },
        clientInfo: {
          name: "ExampleClient",
          title: "Example Client",
          version: "1.0.0",
          description: "An example",
          icons,
          websiteUrl: "https://example.com"
        }
      })
      result(McpSchema.Initialize, {
        protocolVersion: "2025-11-25",
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }, completions: {} },
        serverInfo: { name: "s", version: "1", icons }
      })
      result(McpSchema.ListPrompts, { prompts: [{ name: "p", title: "P", icons }] })
      result(McpSchema.ListResources, { resources: [{ uri: "file:///a", name: "a", size: 1024, icons }] })
      result(McpSchema.ListTools, {
        tools: [{
          name: "t",
          inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" },
          icons,
          execution: { taskSupport: "optional" }
        }]
      })
      params(McpSchema.Cancelled, { reason: "no id in 2025-11-25" })
    })

    it("sampling with tools", () => {
      const createParams = params(McpSchema.CreateMessage, {
        messages: [
          { role: "user", content: { type: "text", text: "What's the weather in Paris?" } },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }]
          },
          {
            role: "user",
            content: [{
              type: "tool_result",
              toolUseId: "call_1",
              content: [{ type: "text", text: "18°C" }],
              structuredContent: { celsius: 18 },
              isError: false
            }]
          }
        ],
        tools: [{ name: "get_weather", inputSchema: { type: "object", properties: { city: { type: "string" } } } }],
        toolChoice: { mode: "auto" },
        maxTokens: 1000
      })
      assert.deepStrictEqual(
        McpSchema.CreateMessage.capability(createParams),
        McpMethod.clientCapability("sampling", "tools")
      )
      result(McpSchema.CreateMessage, {
        role: "assistant",
        content: [{ type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Lyon" } }],
        model: "claude-sonnet-4",
        stopReason: "toolUse"
      })
    })

    it("URL elicitation and its completion", () => {
      const urlParams = params(McpSchema.Elicit, {
        mode: "url",
        message: "Please authorize access to your files",
        elicitationId: "550e8400-e29b-41d4-a716-446655440000",
        url: "https://mcp.example.com/connect?elicitationId=550e8400"
      })
      assert.deepStrictEqual(McpSchema.Elicit.capability(urlParams), McpMethod.clientCapability("elicitation", "url"))
      result(McpSchema.Elicit, { action: "accept" })
      params(McpSchema.ElicitationComplete, { elicitationId: "550e8400-e29b-41d4-a716-446655440000" })
      const data = {
        elicitations: [{
          mode: "url",
          elicitationId: "e1",
          url: "https://example.com/oauth",
          message: "Authorization is required"
        }]
      }
      accepts(McpMethod.validator(McpSchema.URLElicitationRequiredErrorData), data)
      accepts(McpMethod.validator(McpSchema.URLElicitationRequiredError), {
        code: -32042,
        message: "This request requires more information.",
        data
      })
      rejects(McpMethod.validator(McpSchema.URLElicitationRequiredError), { code: -32000, message: "x", data })
    })

    it("tasks", () => {
      const task = {
        taskId: "786512e2-9e0d-44bd-8f29-789f320fe840",
        status: "working",
        statusMessage: "The operation is now in progress.",
        createdAt: "2025-11-25T10:30:00Z",
        lastUpdatedAt: "2025-11-25T10:40:00Z",
        ttl: 60000,
        pollInterval: 5000
      }
      params(McpSchema.CallTool, { name: "get_weather", arguments: { city: "New York" }, task: { ttl: 60000 } })
      result(McpSchema.CallToolTask, { task })
      params(McpSchema.CreateMessage, { messages: [], maxTokens: 5, task: {} })
      result(McpSchema.CreateMessageTask, { task })
      result(McpSchema.ElicitTask, { task: { ...task, ttl: null } })
      params(McpSchema.GetTask, { taskId: task.taskId })
      result(McpSchema.GetTask, task)
      params(McpSchema.GetTaskPayload, { taskId: task.taskId })
      result(McpSchema.GetTaskPayload, {
        content: [{ type: "text", text: "72°F" }],
        isError: false,
        _meta: { [McpSchema.RELATED_TASK_META_KEY]: { taskId: task.taskId } }
      })
      params(McpSchema.ListTasks, { cursor: "c" })
      result(McpSchema.ListTasks, { tasks: [task, { ...task, taskId: "b", status: "completed" }], nextCursor: "n" })
      params(McpSchema.CancelTask, { taskId: task.taskId })
      result(McpSchema.CancelTask, { ...task, status: "cancelled" })
      params(McpSchema.TaskStatusNotification, { ...task, status: "input_required" })
      rejects(McpSchema.GetTask.validateResult, { ...task, status: "paused" })
      rejects(McpSchema.GetTask.validateParams, {})
    })

    it("elicitation enum forms and defaults", () => {
      const form = (property: unknown) => ({
        mode: "form",
        message: "Pick",
        requestedSchema: { type: "object", properties: { field: property } }
      })
      const valid = [
        { type: "string", title: "Name", minLength: 1, maxLength: 50, format: "uri", default: "https://a.b" },
        { type: "number", minimum: 0.5, maximum: 9.5, default: 1.5 },
        { type: "integer", default: 3 },
        { type: "boolean", default: true },
        { type: "string", enum: ["red", "green"], default: "red" },
        {
          type: "string",
          oneOf: [{ const: "#f00", title: "Red" }, { const: "#0f0", title: "Green" }],
          default: "#f00"
        },
        { type: "array", minItems: 1, maxItems: 2, items: { type: "string", enum: ["a", "b", "c"] }, default: ["a"] },
        {
          type: "array",
          items: { anyOf: [{ const: "a", title: "A" }, { const: "b", title: "B" }] },
          default: ["a", "b"]
        },
        { type: "string", enum: ["s", "m"], enumNames: ["Small", "Medium"], default: "m" }
      ]
      for (const property of valid) {
        const p = params(McpSchema.Elicit, form(property))
        assert.deepStrictEqual(McpSchema.Elicit.capability(p), McpMethod.clientCapability("elicitation"))
      }
      const invalid = [
        { type: "string", default: 1 },
        { type: "number", default: "1" },
        { type: "boolean", default: "yes" },
        { type: "string", enum: "red" },
        { type: "string", oneOf: [{ const: "a" }] },
        { type: "array", items: { type: "string", enum: ["a"] }, default: "a" },
        { type: "array", items: { anyOf: [{ const: "a", title: "A" }] }, default: [1] },
        { type: "object", properties: {} },
        { type: "string", format: "phone" }
      ]
      for (const property of invalid) {
        const message = rejects(McpSchema.Elicit.validateParams, form(property))
        assert.include(message, "field", JSON.stringify(property))
      }
      result(McpSchema.Elicit, { action: "accept", content: { colors: ["red", "green"], size: "m", n: 2, ok: false } })
      rejects(McpSchema.Elicit.validateResult, { action: "accept", content: { nested: { a: 1 } } })
      rejects(McpSchema.Elicit.validateResult, { action: "maybe" })
    })
  })

  // ---------------------------------------------------------------------------
  // Behaviour
  // ---------------------------------------------------------------------------

  describe("validation", () => {
    it("keeps unknown fields: the validator returns the original object", () => {
      const input = {
        content: [{ type: "text", text: "hi", futureField: { x: 1 } }],
        isError: false,
        futureTopLevel: [1, 2, 3]
      }
      const output = result(McpSchema.CallTool, input)
      assert.strictEqual(output, input)
      assert.deepStrictEqual((output as unknown as typeof input).futureTopLevel, [1, 2, 3])

      const init = {
        protocolVersion: "2099-01-01",
        capabilities: { futureCapability: { deep: true } },
        clientInfo: { name: "c", version: "1", futureInfo: "x" }
      }
      assert.strictEqual(params(McpSchema.Initialize, init), init)
      const meta = { _meta: { progressToken: "p", "io.modelcontextprotocol/related-task": { taskId: "t" } } }
      assert.strictEqual(params(McpSchema.Ping, meta), meta)
    })

    it("accepts a missing params object (validated as {}) for methods without required params", () => {
      for (
        const method of [
          McpSchema.Ping,
          McpSchema.ListTools,
          McpSchema.ListPrompts,
          McpSchema.ListResources,
          McpSchema.ListResourceTemplates,
          McpSchema.ListRoots,
          McpSchema.ListTasks
        ]
      ) {
        params(method, {})
      }
      for (
        const method of [
          McpSchema.Initialized,
          McpSchema.ToolListChanged,
          McpSchema.PromptListChanged,
          McpSchema.ResourceListChanged,
          McpSchema.RootsListChanged,
          McpSchema.Cancelled
        ]
      ) {
        params(method, {})
      }
    })

    it("names the offending field", () => {
      assert.include(rejects(McpSchema.CallTool.validateParams, { name: 42 }), "[\"name\"]")
      assert.include(rejects(McpSchema.CallTool.validateParams, { name: "t", arguments: [1] }), "[\"arguments\"]")
      assert.include(
        rejects(McpSchema.CreateMessage.validateParams, { messages: [], maxTokens: 1.5 }),
        "[\"maxTokens\"]"
      )
      assert.include(
        rejects(McpSchema.Initialize.validateParams, { protocolVersion: "2025-11-25", capabilities: {} }),
        "clientInfo"
      )
      assert.include(
        rejects(McpSchema.Initialize.validateParams, {
          protocolVersion: "2025-11-25",
          capabilities: { roots: { listChanged: "yes" } },
          clientInfo: { name: "c", version: "1" }
        }),
        "[\"listChanged\"]"
      )
      assert.include(
        rejects(McpSchema.Progress.validateParams, { progressToken: 1.5, progress: 1 }),
        "[\"progressToken\"]"
      )
      assert.include(
        rejects(McpSchema.Progress.validateParams, { progressToken: "t", progress: "1" }),
        "[\"progress\"]"
      )
      assert.include(rejects(McpSchema.SetLevel.validateParams, { level: "verbose" }), "[\"level\"]")
      assert.include(
        rejects(McpSchema.ListTools.validateResult, { tools: [{ name: "t", inputSchema: { type: "array" } }] }),
        "[\"inputSchema\"]"
      )
      assert.include(
        rejects(McpSchema.ReadResource.validateResult, { contents: [{ uri: "file:///a" }] }),
        "[\"contents\"][0]"
      )
      assert.include(
        rejects(McpSchema.GetPrompt.validateResult, { messages: [{ role: "user", content: { type: "video" } }] }),
        "[\"content\"]"
      )
      assert.include(
        rejects(McpSchema.GetPrompt.validateResult, {
          messages: [{ role: "user", content: { type: "text", text: 1 } }]
        }),
        "[\"text\"]"
      )
      assert.include(rejects(McpSchema.CallTool.validateResult, { content: "hello" }), "content")
      assert.include(
        rejects(McpSchema.Complete.validateParams, {
          ref: { type: "ref/tool", name: "x" },
          argument: { name: "a", value: "" }
        }),
        "[\"ref\"]"
      )
      assert.include(
        rejects(McpSchema.ListResources.validateResult, { resources: [{ uri: "u", name: "n", size: 1.5 }] }),
        "[\"size\"]"
      )
      assert.include(rejects(McpSchema.Cancelled.validateParams, { requestId: null }), "[\"requestId\"]")
    })
  })

  describe("capabilities", () => {
    const server = McpMethod.serverCapability
    const client = McpMethod.clientCapability

    it("requests need the receiver's capability", () => {
      assert.deepStrictEqual(McpSchema.CallTool.capability({ name: "t" }), server("tools"))
      assert.deepStrictEqual(McpSchema.ListTools.capability({}), server("tools"))
      assert.deepStrictEqual(McpSchema.ListPrompts.capability({}), server("prompts"))
      assert.deepStrictEqual(McpSchema.ReadResource.capability({ uri: "u" }), server("resources"))
      assert.deepStrictEqual(McpSchema.Subscribe.capability({ uri: "u" }), server("resources", "subscribe"))
      assert.deepStrictEqual(McpSchema.Unsubscribe.capability({ uri: "u" }), server("resources", "subscribe"))
      assert.deepStrictEqual(
        McpSchema.Complete.capability({ ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "" } }),
        server("completions")
      )
      assert.deepStrictEqual(McpSchema.SetLevel.capability({ level: "debug" }), server("logging"))
      assert.deepStrictEqual(McpSchema.ListRoots.capability({}), client("roots"))
      assert.strictEqual(McpSchema.Ping.capability({}), undefined)
      assert.strictEqual(
        McpSchema.Initialize.capability({
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "c", version: "1" }
        }),
        undefined
      )
    })

    it("sampling needs sampling.tools only when tools are offered", () => {
      const base = { messages: [], maxTokens: 10 }
      assert.deepStrictEqual(McpSchema.CreateMessage.capability(base), client("sampling"))
      assert.deepStrictEqual(
        McpSchema.CreateMessage.capability({ ...base, tools: [{ name: "t", inputSchema: { type: "object" } }] }),
        client("sampling", "tools")
      )
      assert.deepStrictEqual(
        McpSchema.CreateMessage.capability({ ...base, toolChoice: { mode: "none" } }),
        client("sampling", "tools")
      )
    })

    it("elicitation needs elicitation.url only in URL mode", () => {
      const form = { message: "m", requestedSchema: { type: "object", properties: {} } } as const
      const url = { mode: "url", message: "m", elicitationId: "e", url: "https://x" } as const
      const formCapability = McpSchema.Elicit.capability(form)
      const urlCapability = McpSchema.Elicit.capability(url)
      assert.deepStrictEqual(formCapability, client("elicitation"))
      assert.deepStrictEqual(McpSchema.Elicit.capability({ ...form, mode: "form" }), client("elicitation"))
      assert.deepStrictEqual(urlCapability, client("elicitation", "url"))
      // a 2025-06-18 client declares `elicitation: {}`: form only
      assert.isTrue(McpMethod.hasCapability({ elicitation: {} }, formCapability!))
      assert.isFalse(McpMethod.hasCapability({ elicitation: {} }, urlCapability!))
      assert.isTrue(McpMethod.hasCapability({ elicitation: { form: {}, url: {} } }, urlCapability!))
    })

    it("notifications need the capability that makes them meaningful", () => {
      assert.deepStrictEqual(McpSchema.ToolListChanged.capability({}), server("tools", "listChanged"))
      assert.deepStrictEqual(McpSchema.PromptListChanged.capability({}), server("prompts", "listChanged"))
      assert.deepStrictEqual(McpSchema.ResourceListChanged.capability({}), server("resources", "listChanged"))
      assert.deepStrictEqual(McpSchema.ResourceUpdated.capability({ uri: "u" }), server("resources", "subscribe"))
      assert.deepStrictEqual(McpSchema.LoggingMessage.capability({ level: "info", data: 1 }), server("logging"))
      assert.deepStrictEqual(McpSchema.RootsListChanged.capability({}), client("roots", "listChanged"))
      assert.deepStrictEqual(
        McpSchema.ElicitationComplete.capability({ elicitationId: "e" }),
        client("elicitation", "url")
      )
      assert.strictEqual(McpSchema.Cancelled.capability({ requestId: 1 }), undefined)
      assert.strictEqual(McpSchema.Progress.capability({ progressToken: 1, progress: 1 }), undefined)
      assert.strictEqual(McpSchema.Initialized.capability({}), undefined)
    })

    it("tasks capabilities depend on the receiver", () => {
      assert.deepStrictEqual(McpSchema.taskRequestCapability("tasks/list", "server"), server("tasks", "list"))
      assert.deepStrictEqual(McpSchema.taskRequestCapability("tasks/cancel", "client"), client("tasks", "cancel"))
      assert.deepStrictEqual(McpSchema.taskRequestCapability("tasks/get", "client"), client("tasks"))
      assert.deepStrictEqual(
        McpSchema.taskAugmentationCapability["tools/call"],
        server("tasks", "requests", "tools", "call")
      )
      assert.deepStrictEqual(
        McpSchema.taskAugmentationCapability["sampling/createMessage"],
        client("tasks", "requests", "sampling", "createMessage")
      )
    })
  })

  describe("lookup tables", () => {
    it("key every declaration by its name", () => {
      const requests = Object.entries(McpSchema.requests)
      const notifications = Object.entries(McpSchema.notifications)
      assert.strictEqual(requests.length, 23)
      assert.strictEqual(notifications.length, 13)
      for (const [key, method] of requests) {
        assert.strictEqual(method.name, key)
        assert.strictEqual(method._tag, "Request")
      }
      for (const [key, method] of notifications) {
        assert.strictEqual(method.name, key)
        assert.strictEqual(method._tag, "Notification")
      }
    })

    it("are typed precisely", () => {
      const callTool: typeof McpSchema.CallTool = McpSchema.requests["tools/call"]
      assert.strictEqual(callTool, McpSchema.CallTool)
      const progress: typeof McpSchema.Progress = McpSchema.notifications["notifications/progress"]
      assert.strictEqual(progress, McpSchema.Progress)
    })

    it("declare who may send each method", () => {
      const clientOnly = [
        "initialize",
        "tools/call",
        "resources/subscribe",
        "completion/complete",
        "logging/setLevel",
        "server/discover",
        "subscriptions/listen"
      ]
      const serverOnly = ["sampling/createMessage", "elicitation/create", "roots/list"]
      for (const name of clientOnly) {
        assert.strictEqual(McpSchema.requests[name as McpSchema.RequestMethod].from, "client")
      }
      for (const name of serverOnly) {
        assert.strictEqual(McpSchema.requests[name as McpSchema.RequestMethod].from, "server")
      }
      assert.strictEqual(McpSchema.requests.ping.from, "both")
      assert.strictEqual(McpSchema.requests["tasks/get"].from, "both")
      assert.strictEqual(McpSchema.notifications["notifications/message"].from, "server")
      assert.strictEqual(McpSchema.notifications["notifications/subscriptions/acknowledged"].from, "server")
      assert.strictEqual(McpSchema.notifications["notifications/roots/list_changed"].from, "client")
    })
  })

  describe("protocol versions", () => {
    it("lists the supported revisions, newest first", () => {
      assert.strictEqual(McpSchema.LATEST_PROTOCOL_VERSION, "2025-11-25")
      assert.deepStrictEqual(McpSchema.SUPPORTED_PROTOCOL_VERSIONS, [
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05"
      ])
      assert.isTrue(McpSchema.isSupportedProtocolVersion("2025-03-26"))
      assert.isFalse(McpSchema.isSupportedProtocolVersion("2024-10-07"))
    })
  })
})
